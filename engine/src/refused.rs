//! The transitions the engine asked for and the lifecycle table refused. The engine asks only
//! for what its guards allowed, so a refusal is a bug: loud under test, and in production it
//! changes nothing but is recorded here (counted, the latest kept) so that the daemon logs it
//! and counts it in its metrics instead of it passing unseen.

use std::collections::VecDeque;

use mobiwf_proto::ActivityId;

use crate::Engine;
use crate::lifecycle::NotAllowed;
use crate::run::RunKey;

/// The most refusals kept between two takes by the daemon; older ones are still counted.
pub const MAX_REFUSALS_KEPT: usize = 64;

/// A transition of an activity that the lifecycle table refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefusedTransition {
    /// The partition run.
    pub key: RunKey,
    /// The activity.
    pub activity: ActivityId,
    /// The state it was in and the event it did not take.
    pub not_allowed: NotAllowed,
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
    /// Records that moving `activity` of `key` was refused: nothing else changes.
    pub(crate) fn record_refused(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        not_allowed: NotAllowed,
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
        e.record_refused(key(), ActivityId(3), refused());
        let taken = e.take_refused_transitions();
        assert_eq!(taken.count, 1);
        assert_eq!(
            taken.latest.into_iter().collect::<Vec<_>>(),
            vec![RefusedTransition {
                key: key(),
                activity: ActivityId(3),
                not_allowed: refused(),
            }]
        );
        assert_eq!(
            e.take_refused_transitions(),
            Refusals::default(),
            "taken once"
        );
    }

    #[test]
    fn past_the_bound_the_oldest_refusals_go_and_the_count_goes_on() {
        let mut e = Engine::new();
        let many = MAX_REFUSALS_KEPT + 5;
        for a in 0..many {
            e.record_refused(key(), ActivityId(a as u64), refused());
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
