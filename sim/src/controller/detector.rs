//! The controller's failure detector on the simulated clock, with the rule of the daemon's
//! (`mobiwf-controller`, `src/detector.rs`): every round each watched node without a probe in
//! flight is probed; one silent for the suspicion time (from its last answer, or from when it
//! was first watched) is reported suspected once; a suspected one that answered within two
//! rounds is reported answering. Its probes go through the simulated network, numbered as the
//! daemon's are (from the controller's start in µs on), each echoing the number of the latest
//! probe that node's answer came back from: the nodes renew their leases on those round trips.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_book::Watched;
use mobiwf_proto::{NodeId, Probe};

/// How often each watched node is probed, µs (`DEFAULT_PROBE_EVERY`).
pub const PROBE_EVERY_US: u64 = 1_000_000;
/// How long a node may go without answering before it is suspected, µs
/// (`DEFAULT_SUSPECT_AFTER`).
pub const SUSPECT_AFTER_US: u64 = 10_000_000;

/// What the detector concluded about a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It stopped answering.
    Suspect {
        /// Its peer id.
        peer: NodeId,
        /// What the probes saw.
        reason: String,
    },
    /// It answers again.
    Answering {
        /// Its peer id.
        peer: NodeId,
    },
}

#[derive(Debug)]
struct Seen {
    last_answer: u64,
    last_error: Option<String>,
    reported: bool,
    /// The number of the latest probe it answered (0: none yet).
    answered: u64,
}

impl Seen {
    fn verdict(&mut self, w: &Watched, now: u64) -> Option<Verdict> {
        let silent = now.saturating_sub(self.last_answer);
        let verdict = if w.suspected && silent < PROBE_EVERY_US * 2 {
            self.reported = false;
            Some(Verdict::Answering {
                peer: w.peer.clone(),
            })
        } else if !w.suspected && !self.reported && silent >= SUSPECT_AFTER_US {
            self.reported = true;
            let saw = self.last_error.as_deref().unwrap_or("no answer");
            Some(Verdict::Suspect {
                peer: w.peer.clone(),
                reason: format!(
                    "no answer to probes for {:.1} s: {saw}",
                    silent as f64 / 1e6
                ),
            })
        } else {
            None
        };
        if !w.suspected && silent < SUSPECT_AFTER_US {
            self.reported = false;
        }
        verdict
    }
}

/// A probe to send: to whom, at which addresses, with which numbers.
#[derive(Debug, Clone)]
pub struct ProbeOut {
    /// The node.
    pub peer: NodeId,
    /// Its addresses.
    pub addrs: Vec<String>,
    /// The probe.
    pub probe: Probe,
}

/// The detector's state.
#[derive(Debug, Default)]
pub struct Detector {
    seen: BTreeMap<NodeId, Seen>,
    in_flight: BTreeSet<NodeId>,
    /// The number of the last probe sent.
    next_seq: u64,
    /// The nodes the book says to watch (published after each group).
    pub watched: Vec<Watched>,
}

impl Detector {
    /// A detector whose probes are numbered after `first_seq` (`first_seq`: the controller's
    /// start in µs on its clock, above every number an earlier run of it used).
    pub fn numbered_from(first_seq: u64) -> Detector {
        Detector {
            next_seq: first_seq,
            ..Detector::default()
        }
    }

    /// One round at `now`: the verdicts, and the probes to send.
    pub fn round(&mut self, now: u64) -> (Vec<Verdict>, Vec<ProbeOut>) {
        let live: BTreeSet<&NodeId> = self.watched.iter().map(|w| &w.peer).collect();
        self.seen.retain(|p, _| live.contains(p));
        let (mut verdicts, mut probes) = (Vec::new(), Vec::new());
        for w in &self.watched {
            let s = self.seen.entry(w.peer.clone()).or_insert(Seen {
                last_answer: now,
                last_error: None,
                reported: false,
                answered: 0,
            });
            verdicts.extend(s.verdict(w, now));
            if self.in_flight.insert(w.peer.clone()) {
                self.next_seq += 1;
                probes.push(ProbeOut {
                    peer: w.peer.clone(),
                    addrs: w.addrs.clone(),
                    probe: Probe {
                        seq: self.next_seq,
                        echo: s.answered,
                    },
                });
            }
        }
        (verdicts, probes)
    }

    /// Probe `seq` of `peer` came back at `now`: answered, or why not.
    pub fn heard(&mut self, peer: &NodeId, seq: u64, now: u64, result: Result<(), String>) {
        self.in_flight.remove(peer);
        if let Some(s) = self.seen.get_mut(peer) {
            match result {
                Ok(()) => {
                    s.last_answer = now;
                    s.last_error = None;
                    s.answered = s.answered.max(seq);
                }
                Err(e) => s.last_error = Some(e),
            }
        }
    }
}
