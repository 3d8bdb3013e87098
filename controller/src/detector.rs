//! The failure detector (a partner that does not answer has failed): probes the nodes with
//! unfinished work and says which stopped answering.
//!
//! Every [`DetectorConfig::probe_every`], each watched node that has no probe in flight gets a
//! `Probe` request (answered by the node without touching its store). A node that has not
//! answered any probe for [`DetectorConfig::suspect_after`] (counted from its last answer, or
//! from when it was first watched, over the time the detector ran: a round that comes more
//! than two rounds late means the controller itself was stopped or starved, and that pause is
//! not counted against the nodes, which nobody probed then) is reported as suspected, with
//! what the last probe saw; a suspected node that answers again is reported as answering. The
//! book decides what a suspicion means for each instance.
//!
//! Each probe has a number, unique for this controller (they count on from its start time in
//! microseconds, so a restarted controller does not use them again), and echoes the number
//! of the latest probe whose answer came back from that node: a node renews the leases of the
//! task classes it holds only on such round trips (`SyncGranted::lease_ms`), up to the time it
//! sent that answer, which is before the answer arrived here, hence more than `suspect_after`
//! (twice the lease) before this detector could suspect it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Envelope, Message, MessageId, Probe, Reply};
use mobiwf_runtime::mesh::MeshHandle;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use mobiwf_book::Watched;

/// Default of [`DetectorConfig::probe_every`].
pub const DEFAULT_PROBE_EVERY: Duration = Duration::from_secs(1);
/// Default of [`DetectorConfig::suspect_after`].
pub const DEFAULT_SUSPECT_AFTER: Duration = Duration::from_secs(10);
/// The shortest [`DetectorConfig::suspect_after`]: half of it is the lease of a class's
/// grant, and a suspected node's hold is safe to end at suspicion only when that lease is at
/// least two of its watchdog's periods (20 ms each at the least), `mobiwf_proto::fence_ms`.
pub const MIN_SUSPECT_AFTER: Duration = Duration::from_millis(100);
/// The fewest probe periods in [`DetectorConfig::suspect_after`]: half of it is the lease of
/// a class's grant, and a node confirms a round trip only once the next probe echoes its
/// answer, so in steady state two probe periods pass between confirmations; the lease must
/// cover those and half a period to spare, or ordinary jitter kills held commands and has
/// every grant that waited asked for again.
pub const MIN_PROBES_PER_SUSPICION: u32 = 5;

/// How eagerly nodes are suspected.
#[derive(Debug, Clone, Copy)]
pub struct DetectorConfig {
    /// How often each watched node is probed.
    pub probe_every: Duration,
    /// How long a node may go without answering before it is suspected.
    pub suspect_after: Duration,
}

impl DetectorConfig {
    /// Why these settings would not keep a class's grant safe and usable, if they would not:
    /// a holder cut off from the controller must have stopped before its node is suspected and
    /// its class counts free (the lease is half the suspicion time, [`MIN_SUSPECT_AFTER`]),
    /// and the lease must outlast the gap between a node's confirmed round trips
    /// ([`MIN_PROBES_PER_SUSPICION`]).
    pub fn check(&self) -> Result<(), String> {
        if self.suspect_after < MIN_SUSPECT_AFTER {
            return Err(format!(
                "the failure detector's suspect_after of {:?} is below {MIN_SUSPECT_AFTER:?} \
                 (MIN_SUSPECT_AFTER): a suspected node's class could count free before its \
                 command is dead",
                self.suspect_after
            ));
        }
        let probes = MIN_PROBES_PER_SUSPICION;
        if self.suspect_after < self.probe_every.saturating_mul(probes) {
            return Err(format!(
                "the failure detector's suspect_after of {:?} is less than {probes} probe \
                 periods of {:?} (MIN_PROBES_PER_SUSPICION): the lease of a class's grant, half \
                 of it, would not outlast the two probe periods between a node's confirmed \
                 round trips; raise --suspect-after or lower --probe-every",
                self.suspect_after, self.probe_every
            ));
        }
        Ok(())
    }
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
    /// The number of the latest probe it answered (0: none yet).
    answered: u64,
}

impl Seen {
    /// Not probed yet, watched from `now`.
    fn new(now: Instant) -> Seen {
        Seen {
            last_answer: now,
            last_error: None,
            reported: false,
            answered: 0,
        }
    }

    /// Probe `seq` came back: answered, or why not.
    fn heard(&mut self, seq: u64, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.last_answer = Instant::now();
                self.last_error = None;
                self.answered = self.answered.max(seq);
            }
            Err(e) => self.last_error = Some(e),
        }
    }

    /// The detector itself did not run for `paused` (its process stopped or starved): nobody
    /// could answer it then, so that time is not the node's silence.
    fn detector_paused(&mut self, paused: Duration, now: Instant) {
        self.last_answer = (self.last_answer + paused).min(now);
    }

    /// Probe `seq` for this node: it echoes the latest answer received.
    fn probe(&self, seq: u64) -> Probe {
        Probe {
            seq,
            echo: self.answered,
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
        let (answers_tx, mut answers) = mpsc::unbounded_channel::<Answer>();
        let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
        let mut in_flight: BTreeSet<String> = BTreeSet::new();
        let mut next_seq = first_seq();
        let mut round = tokio::time::interval(config.probe_every);
        round.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_round = Instant::now();
        loop {
            tokio::select! {
                _ = round.tick() => {}
                answer = answers.recv() => {
                    let Some((peer, seq, result)) = answer else { return };
                    in_flight.remove(&peer);
                    if let Some(s) = seen.get_mut(&peer) {
                        s.heard(seq, result);
                    }
                    continue;
                }
            }
            let now = Instant::now();
            if let Some(paused) = paused_for(last_round, now, config.probe_every) {
                for s in seen.values_mut() {
                    s.detector_paused(paused, now);
                }
            }
            last_round = now;
            let list = watched.borrow().clone();
            let live: BTreeSet<&str> = list.iter().map(|w| w.peer.as_str()).collect();
            seen.retain(|p, _| live.contains(p.as_str()));
            for w in &list {
                let s = seen
                    .entry(w.peer.to_string())
                    .or_insert_with(|| Seen::new(now));
                if let Some(v) = s.verdict(w, now, &config)
                    && verdicts.send(v).await.is_err()
                {
                    return;
                }
                if in_flight.insert(w.peer.to_string()) {
                    next_seq += 1;
                    let sent = s.probe(next_seq);
                    probe(&mesh, me, w, sent, config.suspect_after, answers_tx.clone());
                }
            }
        }
    })
}

/// How long the detector did not run, when its round at `now` comes more than two rounds after
/// the last one at `last`: the time past one round (`None` when it kept its pace).
fn paused_for(last: Instant, now: Instant, probe_every: Duration) -> Option<Duration> {
    let gap = now.saturating_duration_since(last);
    (gap > probe_every * 2).then(|| gap - probe_every)
}

/// A probe's answer: the node, the probe's number, and whether it answered (or why not).
type Answer = (String, u64, Result<(), String>);

/// The first probe number of this run of the controller: its start in microseconds since the
/// epoch, above every number an earlier run used (one probe per microsecond at most).
fn first_seq() -> u64 {
    mobiwf_runtime::process::now_us()
}

/// Sends one probe; its answer (or why there is none) goes to `answers`.
fn probe(
    mesh: &MeshHandle,
    me: PeerId,
    w: &Watched,
    sent: Probe,
    timeout: Duration,
    answers: mpsc::UnboundedSender<Answer>,
) {
    let peer_text = w.peer.to_string();
    let Ok(peer) = w.peer.as_str().parse::<PeerId>() else {
        let _ = answers.send((peer_text, sent.seq, Err("not a peer id".to_owned())));
        return;
    };
    let addrs: Vec<Multiaddr> = w.addrs.iter().filter_map(|a| a.parse().ok()).collect();
    let mesh = mesh.clone();
    tokio::spawn(async move {
        let envelope = Envelope {
            // Probes are never stored or deduplicated: sequence 0.
            answered_below: 0,
            epoch: None,
            id: MessageId {
                incarnation: 0,
                origin: mobiwf_proto::NodeId::new(me.to_string()),
                seq: 0,
            },
            message: Message::Probe(sent),
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
        let _ = answers.send((peer_text, sent.seq, result));
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
            last_error: Some("timeout".to_owned()),
            ..Seen::new(start)
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
        seen.heard(1, Ok(()));
        let now = seen.last_answer;
        assert_eq!(
            seen.verdict(&watched(true), now, &config),
            Some(Verdict::Answering {
                peer: "p".to_owned()
            })
        );
    }

    #[test]
    fn a_pause_of_the_detector_itself_is_not_the_nodes_silence() {
        let config = DetectorConfig::default();
        let start = Instant::now();
        let mut seen = Seen::new(start);
        let quiet = watched(false);
        // The controller was stopped for twice the suspect-after period: its next round.
        let last_round = start + config.probe_every;
        let resumed = last_round + config.suspect_after * 2;
        let paused = paused_for(last_round, resumed, config.probe_every).expect("a pause");
        assert_eq!(paused, config.suspect_after * 2 - config.probe_every);
        seen.detector_paused(paused, resumed);
        assert_eq!(
            seen.verdict(&quiet, resumed, &config),
            None,
            "not suspected"
        );
        // A node still silent a suspect-after period of the detector's own running is.
        let later = resumed + config.suspect_after;
        assert!(matches!(
            seen.verdict(&quiet, later, &config),
            Some(Verdict::Suspect { .. })
        ));
        // Rounds at their pace, or one late by less than a round, are no pause.
        assert_eq!(
            paused_for(start, start + config.probe_every, config.probe_every),
            None
        );
        assert_eq!(
            paused_for(start, start + config.probe_every * 2, config.probe_every),
            None
        );
        // A pause never moves the last answer past now.
        let mut fresh = Seen::new(resumed);
        fresh.detector_paused(config.suspect_after, resumed);
        assert_eq!(fresh.last_answer, resumed);
    }

    #[test]
    fn a_probe_echoes_the_latest_answer_that_came_back_and_no_other() {
        let mut seen = Seen::new(Instant::now());
        assert_eq!(
            seen.probe(10),
            Probe { seq: 10, echo: 0 },
            "nothing came back yet"
        );
        seen.heard(10, Ok(()));
        assert_eq!(seen.probe(11), Probe { seq: 11, echo: 10 });
        // Lost or refused answers echo nothing new; a late answer of an older probe does not
        // take the place of a newer one.
        seen.heard(11, Err("no answer within 10 s".to_owned()));
        seen.heard(9, Ok(()));
        assert_eq!(seen.probe(12), Probe { seq: 12, echo: 10 });
        seen.heard(12, Ok(()));
        assert_eq!(seen.probe(13).echo, 12);
    }

    #[test]
    fn a_suspicion_too_short_for_its_lease_or_its_probes_is_refused() {
        let config = |probe_ms, suspect_ms| DetectorConfig {
            probe_every: Duration::from_millis(probe_ms),
            suspect_after: Duration::from_millis(suspect_ms),
        };
        assert_eq!(DetectorConfig::default().check(), Ok(()));
        assert_eq!(config(20, 100).check(), Ok(()));
        assert_eq!(config(500, 4_000).check(), Ok(()));
        assert_eq!(config(1_000, 5_000).check(), Ok(()));
        let short = config(10, 50).check().unwrap_err();
        assert!(short.contains("MIN_SUSPECT_AFTER"), "{short}");
        let few = config(1_000, 4_000).check().unwrap_err();
        assert!(
            few.contains("MIN_PROBES_PER_SUSPICION") && few.contains("--probe-every"),
            "{few}"
        );
    }
}
