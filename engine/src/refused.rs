//! The transitions the engine asked for and a lifecycle table refused: an activity's, or a
//! work item copy's. The engine asks only for what its guards allowed, so a refusal is a bug:
//! loud under test, and in production it changes nothing but is recorded here (counted, the
//! latest kept) so that the daemon logs it and counts it in its metrics instead of it passing
//! unseen.

use std::collections::VecDeque;

use mobiwf_proto::ActivityId;

use crate::Engine;
use crate::items::lifecycle as copy;
use crate::lifecycle::NotAllowed;
use crate::run::RunKey;

/// The most refusals kept between two takes by the daemon; older ones are still counted.
pub const MAX_REFUSALS_KEPT: usize = 64;

/// A transition of an activity, or of a copy of its work item, that a lifecycle table
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedTransition {
    /// The partition run.
    pub key: RunKey,
    /// The activity.
    pub activity: ActivityId,
    /// Which lifecycle, the state it was in and the event it did not take.
    pub not_allowed: Refused,
}

/// Which lifecycle refused a transition, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The activity's own (`crate::lifecycle`).
    #[error("{0}")]
    Activity(NotAllowed),
    /// A copy of its work item's (`crate::items::lifecycle`).
    #[error("{0}")]
    ItemCopy(copy::NotAllowed),
}

impl From<NotAllowed> for Refused {
    fn from(not_allowed: NotAllowed) -> Refused {
        Refused::Activity(not_allowed)
    }
}

impl From<copy::NotAllowed> for Refused {
    fn from(not_allowed: copy::NotAllowed) -> Refused {
        Refused::ItemCopy(not_allowed)
    }
}

/// The refusals since the daemon last took them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusals {
    /// How many there were (more than `latest` holds when over [`MAX_REFUSALS_KEPT`]).
    pub count: u64,
    /// The latest of them, oldest first.
    pub latest: VecDeque<RefusedTransition>,
}

impl Engine {
    /// Records that moving `activity` of `key` (or a copy of its item) was refused: nothing
    /// else changes.
    pub(crate) fn record_refused(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        not_allowed: Refused,
    ) {
        let refusals = &mut self.refusals;
        refusals.count = refusals.count.saturating_add(1);
        if refusals.latest.len() >= MAX_REFUSALS_KEPT {
            refusals.latest.pop_front();
        }
        refusals.latest.push_back(RefusedTransition {
            key,
            activity,
            not_allowed,
        });
    }

    /// Records the events the copies of the item of `activity` of `key` refused although the
    /// engine's guards allowed them (see [`copy::ItemCopy::apply_allowed`]): a bug, loud in
    /// tests; otherwise each changed nothing and is recorded for the daemon's log and
    /// metrics.
    pub(crate) fn record_copies_refused(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        refused: Vec<copy::NotAllowed>,
    ) {
        let Some(first) = refused.first().copied() else {
            return;
        };
        for not_allowed in refused {
            self.record_refused(key, activity, not_allowed.into());
        }
        if cfg!(test) {
            panic!("{first} (activity {activity} of {key:?})");
        }
    }

    /// Hands over the refused transitions since the last call (for the log and the metrics).
    pub fn take_refused_transitions(&mut self) -> Refusals {
        std::mem::take(&mut self.refusals)
    }
}

#[cfg(test)]
mod tests {
    use mobiwf_proto::{InstanceId, PartitionId};

    use super::*;
    use crate::lifecycle::{self, Event, Life};

    fn key() -> RunKey {
        RunKey {
            instance: InstanceId(1),
            partition: PartitionId(1),
        }
    }

    /// A transition the table refuses: a succeeded activity does not start.
    fn refused() -> NotAllowed {
        lifecycle::transition(&Life::Succeeded { detail: None }, Event::Start)
            .expect_err("a succeeded activity does not start")
    }

    #[test]
    fn a_refused_transition_is_counted_and_kept_without_panicking() {
        let mut e = Engine::new();
        e.record_refused(key(), ActivityId(3), refused().into());
        let taken = e.take_refused_transitions();
        assert_eq!(taken.count, 1);
        assert_eq!(
            taken.latest.into_iter().collect::<Vec<_>>(),
            vec![RefusedTransition {
                key: key(),
                activity: ActivityId(3),
                not_allowed: refused().into(),
            }]
        );
        assert_eq!(
            e.take_refused_transitions(),
            Refusals::default(),
            "taken once"
        );
    }

    #[test]
    fn a_copy_refusing_an_allowed_event_is_recorded_and_loud_under_test() {
        let mut e = Engine::new();
        let mut copy = crate::ItemCopy::offered_to(Default::default(), 0);
        let mut refused = Vec::new();
        // An offered copy is not completed: only its holder completes it.
        let complete = copy::CopyEvent::Complete {
            completion: crate::Completion {
                finish: crate::Finish::Succeeded {
                    detail: None,
                    flag: None,
                },
                written: Default::default(),
                ended_ms: 1,
            },
        };
        copy.apply_allowed(complete, &mut refused);
        let not_allowed = copy::NotAllowed {
            from: copy::StateKind::Offered,
            event: copy::EventKind::Complete,
        };
        assert_eq!(refused, vec![not_allowed]);
        let loud = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            e.record_copies_refused(key(), ActivityId(4), refused);
        }));
        assert!(loud.is_err(), "a refusal panics under test");
        let taken = e.take_refused_transitions();
        assert_eq!(taken.count, 1);
        assert_eq!(
            taken.latest.into_iter().collect::<Vec<_>>(),
            vec![RefusedTransition {
                key: key(),
                activity: ActivityId(4),
                not_allowed: Refused::ItemCopy(not_allowed),
            }]
        );
        e.record_copies_refused(key(), ActivityId(4), Vec::new());
        assert_eq!(e.take_refused_transitions(), Refusals::default());
    }

    #[test]
    fn past_the_bound_the_oldest_refusals_go_and_the_count_goes_on() {
        let mut e = Engine::new();
        let many = MAX_REFUSALS_KEPT + 5;
        for a in 0..many {
            e.record_refused(key(), ActivityId(a as u64), refused().into());
        }
        let taken = e.take_refused_transitions();
        assert_eq!(taken.count, many as u64);
        assert_eq!(taken.latest.len(), MAX_REFUSALS_KEPT);
        assert_eq!(
            taken.latest.front().map(|r| r.activity),
            Some(ActivityId(5))
        );
    }
}
