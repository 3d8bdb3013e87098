//! What one delivery makes of each try, pure: the answer settles the entry; a message its
//! receiver left unanswered waits a pause before it is tried again (the pause doubling, the
//! peer counted as alive); a failed link is tried again when the lane lets it (the lane backs
//! off: `lane`). And how an answered entry leaves the outbox: a refusal is synced before its
//! number leaves the count of the unanswered ([`answered_below`]). The outbox's delivery task
//! (`mobiwf_runtime::outbox`) and the simulator's (`mobiwf-sim`) do the sending, the waiting
//! and the writes.

use std::time::Duration;

use mobiwf_proto::Reply;

/// First pause before a message its receiver left unanswered (shed past a limit, or to be
/// taken later) is tried again; it doubles each time, up to [`UNANSWERED_PAUSE_MAX`]. The
/// receiver's link works: this one message waits, the others to it go on.
pub const UNANSWERED_PAUSE_MIN: Duration = Duration::from_millis(100);
/// Longest pause before a message left unanswered is tried again.
pub const UNANSWERED_PAUSE_MAX: Duration = Duration::from_secs(5);

/// Why a delivery got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// The peer took it and let it go unanswered (it shed it, or will take it later): the
    /// link works; the message is tried again after a pause.
    #[error("left unanswered: {0}")]
    Unanswered(String),
    /// The peer could not be reached, or the exchange failed.
    #[error("{0}")]
    Failed(String),
}

/// One message's delivery, across its tries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tries {
    /// The pause before the next try of a message left unanswered.
    pause: Duration,
}

impl Default for Tries {
    fn default() -> Tries {
        Tries {
            pause: UNANSWERED_PAUSE_MIN,
        }
    }
}

/// What the delivery does after a try.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Answered: the entry is settled with the answer.
    Settle(Reply),
    /// Left unanswered by a live peer: the same message again after `pause`.
    Pause {
        /// How long.
        pause: Duration,
        /// What the receiver's side said.
        why: String,
    },
    /// The peer could not be reached: again when its lane lets a try go.
    Retry {
        /// What failed.
        why: String,
    },
}

impl Next {
    /// Whether the try tells the lane its peer failed: a message left unanswered still
    /// reached a live peer, so its lane goes on as after an answer.
    pub fn peer_failed(&self) -> bool {
        matches!(self, Next::Retry { .. })
    }
}

impl Tries {
    /// What to do after a try that ended with `attempt`.
    pub fn after(&mut self, attempt: Result<Reply, LinkError>) -> Next {
        match attempt {
            Ok(reply) => Next::Settle(reply),
            Err(LinkError::Unanswered(why)) => {
                let pause = self.pause;
                self.pause = (pause * 2).min(UNANSWERED_PAUSE_MAX);
                Next::Pause { pause, why }
            }
            Err(LinkError::Failed(why)) => Next::Retry { why },
        }
    }
}

/// How an answered entry leaves the outbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Acknowledged (or any other answer but a refusal): asked again, the receiver gives the
    /// same answer (a duplicate is acknowledged), so losing the removal with the machine only
    /// costs one more delivery.
    Answered,
    /// Refused: asked again after the receiver forgot the id, it would be acknowledged instead,
    /// so the removal is synced before the number leaves the count, and stays counted when it
    /// cannot be written.
    Refused,
}

impl Removal {
    /// How the entry answered with `reply` leaves.
    pub fn of(reply: &Reply) -> Removal {
        match reply {
            Reply::Refused { .. } => Removal::Refused,
            _ => Removal::Answered,
        }
    }

    /// Whether the removal is written synced (else lazily: it may be lost with the machine).
    pub fn synced(self) -> bool {
        match self {
            Removal::Answered => false,
            Removal::Refused => true,
        }
    }

    /// Whether the message's number leaves the count of the unanswered even when its removal
    /// could not be written.
    pub fn released_unwritten(self) -> bool {
        match self {
            Removal::Answered => true,
            Removal::Refused => false,
        }
    }

    /// What the entry is, for the log.
    pub fn what(self) -> &'static str {
        match self {
            Removal::Answered => "a delivered message",
            Removal::Refused => "a refused message",
        }
    }
}

/// What a try of message `seq` tells its receiver as `answered_below`: the lowest number still
/// unanswered among the messages to it (`lowest`), never above the message's own (which is not
/// answered yet; `lowest` is missing only for a message not counted, which is never tried).
pub fn answered_below(lowest: Option<u64>, seq: u64) -> u64 {
    lowest.unwrap_or(seq).min(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_try_tells_the_lowest_unanswered_never_above_its_own_number() {
        let rows = [
            (Some(3), 7, 3),
            (Some(7), 7, 7),
            (Some(9), 7, 7),
            (None, 7, 7),
        ];
        for (lowest, seq, told) in rows {
            assert_eq!(answered_below(lowest, seq), told, "{lowest:?} {seq}");
        }
    }

    fn unanswered() -> Result<Reply, LinkError> {
        Err(LinkError::Unanswered("shed".to_owned()))
    }

    #[test]
    fn each_outcome_leads_to_its_next_step() {
        let failed = || Err(LinkError::Failed("unreachable".to_owned()));
        let refused = Reply::Refused {
            reason: "no".to_owned(),
        };
        let rows = [
            (Ok(Reply::Ack), Next::Settle(Reply::Ack), false),
            (Ok(refused.clone()), Next::Settle(refused), false),
            (
                unanswered(),
                Next::Pause {
                    pause: UNANSWERED_PAUSE_MIN,
                    why: "shed".to_owned(),
                },
                false,
            ),
            (
                failed(),
                Next::Retry {
                    why: "unreachable".to_owned(),
                },
                true,
            ),
        ];
        for (attempt, next, peer_failed) in rows {
            let got = Tries::default().after(attempt);
            assert_eq!(got.peer_failed(), peer_failed, "{got:?}");
            assert_eq!(got, next);
        }
    }

    #[test]
    fn the_pause_doubles_up_to_the_longest_and_only_unanswered_tries_count() {
        let mut tries = Tries::default();
        let mut pauses = Vec::new();
        while pauses.last() != Some(&UNANSWERED_PAUSE_MAX) {
            // A failed link in between neither doubles the pause nor starts it over.
            assert!(
                tries
                    .after(Err(LinkError::Failed("down".to_owned())))
                    .peer_failed()
            );
            match tries.after(unanswered()) {
                Next::Pause { pause, .. } => pauses.push(pause),
                other => panic!("{other:?}"),
            }
        }
        let doubling: Vec<Duration> = (0..pauses.len() as u32 - 1)
            .map(|k| UNANSWERED_PAUSE_MIN * 2_u32.pow(k))
            .chain([UNANSWERED_PAUSE_MAX])
            .collect();
        assert_eq!(pauses, doubling);
        assert_eq!(
            tries.after(unanswered()),
            Next::Pause {
                pause: UNANSWERED_PAUSE_MAX,
                why: "shed".to_owned()
            }
        );
    }

    #[test]
    fn a_refusal_is_synced_and_stays_counted_until_its_removal_is_written() {
        let refused = Removal::of(&Reply::Refused {
            reason: "no".to_owned(),
        });
        assert_eq!(refused, Removal::Refused);
        assert!(refused.synced());
        assert!(!refused.released_unwritten());
        for reply in [Reply::Ack, Reply::Located { addrs: Vec::new() }] {
            let answered = Removal::of(&reply);
            assert_eq!(answered, Removal::Answered, "{reply:?}");
            assert!(!answered.synced());
            assert!(answered.released_unwritten());
        }
    }
}
