//! The failure detector (a partner that does not answer has failed): probes the nodes with
//! unfinished work and says which stopped answering.
//!
//! Every [`DetectorConfig::probe_every`], each watched node that has no probe in flight gets a
//! `Probe` request (answered by the node without touching its store). A node that has not
//! answered any probe for [`DetectorConfig::suspect_after`] (counted from its last answer, or
//! from when it was first watched) is reported as suspected, with what the last probe saw; a
//! suspected node that answers again is reported as answering. The book decides what a
//! suspicion means for each instance.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Envelope, Message, MessageId, Reply};
use mobiwf_runtime::mesh::MeshHandle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use mobiwf_book::Watched;

/// Default of [`DetectorConfig::probe_every`].
pub const DEFAULT_PROBE_EVERY: Duration = Duration::from_secs(1);
/// Default of [`DetectorConfig::suspect_after`].
pub const DEFAULT_SUSPECT_AFTER: Duration = Duration::from_secs(10);

/// How eagerly nodes are suspected.
#[derive(Debug, Clone, Copy)]
pub struct DetectorConfig {
    /// How often each watched node is probed.
    pub probe_every: Duration,
    /// How long a node may go without answering before it is suspected.
    pub suspect_after: Duration,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            probe_every: DEFAULT_PROBE_EVERY,
            suspect_after: DEFAULT_SUSPECT_AFTER,
        }
    }
}

/// What the detector concluded about a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It stopped answering.
    Suspect {
        /// Its peer id.
        peer: String,
        /// What the probes saw.
        reason: String,
    },
    /// It answers again.
    Answering {
        /// Its peer id.
        peer: String,
    },
}

/// What the probes of one watched node saw.
struct Seen {
    last_answer: Instant,
    last_error: Option<String>,
    /// It was reported suspected, and has not answered since.
    reported: bool,
}

impl Seen {
    /// A probe came back: answered, or why not.
    fn heard(&mut self, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.last_answer = Instant::now();
                self.last_error = None;
            }
            Err(e) => self.last_error = Some(e),
        }
    }

    /// What to report of node `w` at `now`, if anything: it answers again (the book suspects
    /// it, and it answered within two rounds), or it stopped answering (silent for
    /// `suspect_after`, not reported yet).
    fn verdict(&mut self, w: &Watched, now: Instant, config: &DetectorConfig) -> Option<Verdict> {
        let silent = now.duration_since(self.last_answer);
        let verdict = if w.suspected && silent < config.probe_every * 2 {
            self.reported = false;
            Some(Verdict::Answering {
                peer: w.peer.to_string(),
            })
        } else if !w.suspected && !self.reported && silent >= config.suspect_after {
            self.reported = true;
            let saw = self.last_error.as_deref().unwrap_or("no answer");
            Some(Verdict::Suspect {
                peer: w.peer.to_string(),
                reason: format!(
                    "no answer to probes for {:.1} s: {saw}",
                    silent.as_secs_f64()
                ),
            })
        } else {
            None
        };
        if !w.suspected && silent < config.suspect_after {
            self.reported = false;
        }
        verdict
    }
}

/// Starts the detector: it watches the nodes published on `watched` and sends verdicts.
pub fn start(
    config: DetectorConfig,
    mesh: MeshHandle,
    me: PeerId,
    watched: watch::Receiver<Vec<Watched>>,
    verdicts: mpsc::Sender<Verdict>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let (answers_tx, mut answers) = mpsc::unbounded_channel::<(String, Result<(), String>)>();
        let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
        let mut in_flight: BTreeSet<String> = BTreeSet::new();
        let mut round = tokio::time::interval(config.probe_every);
        round.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = round.tick() => {}
                answer = answers.recv() => {
                    let Some((peer, result)) = answer else { return };
                    in_flight.remove(&peer);
                    if let Some(s) = seen.get_mut(&peer) {
                        s.heard(result);
                    }
                    continue;
                }
            }
            let now = Instant::now();
            let list = watched.borrow().clone();
            let live: BTreeSet<&str> = list.iter().map(|w| w.peer.as_str()).collect();
            seen.retain(|p, _| live.contains(p.as_str()));
            for w in &list {
                let s = seen.entry(w.peer.to_string()).or_insert(Seen {
                    last_answer: now,
                    last_error: None,
                    reported: false,
                });
                if let Some(v) = s.verdict(w, now, &config)
                    && verdicts.send(v).await.is_err()
                {
                    return;
                }
                if in_flight.insert(w.peer.to_string()) {
                    probe(&mesh, me, w, config.suspect_after, answers_tx.clone());
                }
            }
        }
    })
}

/// Sends one probe; its answer (or why there is none) goes to `answers`.
fn probe(
    mesh: &MeshHandle,
    me: PeerId,
    w: &Watched,
    timeout: Duration,
    answers: mpsc::UnboundedSender<(String, Result<(), String>)>,
) {
    let peer_text = w.peer.to_string();
    let Ok(peer) = w.peer.as_str().parse::<PeerId>() else {
        let _ = answers.send((peer_text, Err("not a peer id".to_owned())));
        return;
    };
    let addrs: Vec<Multiaddr> = w.addrs.iter().filter_map(|a| a.parse().ok()).collect();
    let mesh = mesh.clone();
    tokio::spawn(async move {
        let envelope = Envelope {
            // Probes are never stored or deduplicated: sequence 0.
            answered_below: 0,
            id: MessageId {
                incarnation: 0,
                origin: mobiwf_proto::NodeId::new(me.to_string()),
                seq: 0,
            },
            message: Message::Probe,
        };
        let result = match tokio::time::timeout(timeout, mesh.request(peer, addrs, envelope)).await
        {
            Ok(Ok(Reply::Ack)) => Ok(()),
            Ok(Ok(Reply::Refused { reason })) => Err(format!("refused: {reason}")),
            Ok(Ok(other)) => Err(format!(
                "an answer that is not an acknowledgement: {other:?}"
            )),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} s", timeout.as_secs_f64())),
        };
        let _ = answers.send((peer_text, result));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(suspected: bool) -> Watched {
        Watched {
            peer: mobiwf_proto::NodeId::new("p".to_owned()),
            addrs: Vec::new(),
            suspected,
        }
    }

    #[test]
    fn a_silent_node_is_suspected_once_and_reported_answering_when_it_answers_again() {
        let config = DetectorConfig::default();
        let start = Instant::now();
        let mut seen = Seen {
            last_answer: start,
            last_error: Some("timeout".to_owned()),
            reported: false,
        };
        let quiet = watched(false);
        assert_eq!(
            seen.verdict(&quiet, start + config.probe_every, &config),
            None
        );
        let late = start + config.suspect_after;
        assert_eq!(
            seen.verdict(&quiet, late, &config),
            Some(Verdict::Suspect {
                peer: "p".to_owned(),
                reason: "no answer to probes for 10.0 s: timeout".to_owned(),
            })
        );
        assert_eq!(seen.verdict(&quiet, late, &config), None, "reported once");
        seen.heard(Ok(()));
        let now = seen.last_answer;
        assert_eq!(
            seen.verdict(&watched(true), now, &config),
            Some(Verdict::Answering {
                peer: "p".to_owned()
            })
        );
    }
}
