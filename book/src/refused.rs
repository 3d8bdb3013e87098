//! The transitions the book asked for and a lifecycle table refused. The book asks only for
//! what its guards allowed, so such a refusal is a bug: loud under test, and in production it
//! changes nothing but is recorded here (counted by lifecycle, state and event, the latest
//! kept) so that the controller logs it and counts it in its metrics instead of it passing
//! unseen. The book itself logs nothing: the refusals are data the daemon takes.

use std::collections::{BTreeMap, VecDeque};

use mobiwf_proto::{ActivityId, InstanceId, PartitionId};

use crate::{Book, Refusal};

/// The most refusals kept between two takes by the daemon; older ones are still counted.
pub const MAX_REFUSALS_KEPT: usize = 64;

/// What of an instance a refused transition was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The instance itself.
    Instance,
    /// One of its partitions.
    Partition(PartitionId),
    /// One of its activities.
    Activity(ActivityId),
}

/// A transition that a lifecycle table of the book refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTransition {
    /// The instance.
    pub instance: InstanceId,
    /// The instance, or which of its partitions or activities.
    pub subject: Subject,
    /// The lifecycle, the state it was in and the event it did not take.
    pub refusal: Refusal,
}

/// The refusals since the daemon last took them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refusals {
    /// How many there were of each (lifecycle, state, event): every one, also those
    /// `latest` no longer holds.
    pub counts: BTreeMap<Refusal, u64>,
    /// The latest of them, oldest first (at most [`MAX_REFUSALS_KEPT`]).
    pub latest: VecDeque<RefusedTransition>,
}

impl Refusals {
    /// How many there were in all.
    pub fn count(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Records that a transition of `subject` of `instance` was refused: nothing else
    /// changes.
    pub(crate) fn record(&mut self, instance: InstanceId, subject: Subject, refusal: Refusal) {
        let count = self.counts.entry(refusal.clone()).or_default();
        *count = count.saturating_add(1);
        if self.latest.len() >= MAX_REFUSALS_KEPT {
            self.latest.pop_front();
        }
        self.latest.push_back(RefusedTransition {
            instance,
            subject,
            refusal,
        });
    }

    /// The outcome of a transition the book's guards allowed (`step`): a refusal is a bug,
    /// loud in tests; otherwise it changed nothing and is recorded for the daemon's log and
    /// metrics.
    pub(crate) fn report<T>(
        &mut self,
        instance: InstanceId,
        subject: Subject,
        step: Result<T, Refusal>,
    ) {
        if let Err(refusal) = step {
            self.record(instance, subject, refusal.clone());
            if cfg!(test) {
                panic!("{refusal} ({subject:?} of instance {instance})");
            }
        }
    }
}

impl Book {
    /// Hands over the refused transitions since the last call (for the log and the metrics).
    pub fn take_refused_transitions(&mut self) -> Refusals {
        std::mem::take(&mut self.refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InstanceEvent, InstanceState};

    /// A transition the table refuses: a succeeded instance is not rerun.
    fn refused() -> Refusal {
        InstanceState::Succeeded
            .transition(InstanceEvent::Rerun)
            .expect_err("a succeeded instance is not rerun")
    }

    #[test]
    fn a_refused_transition_is_counted_and_kept_until_the_daemon_takes_it() {
        let mut book = Book::new();
        book.refused
            .record(InstanceId(7), Subject::Instance, refused());
        let taken = book.take_refused_transitions();
        assert_eq!(taken.count(), 1);
        assert_eq!(taken.counts, BTreeMap::from([(refused(), 1)]));
        assert_eq!(
            taken.latest.into_iter().collect::<Vec<_>>(),
            vec![RefusedTransition {
                instance: InstanceId(7),
                subject: Subject::Instance,
                refusal: refused(),
            }]
        );
        assert_eq!(
            refused().to_string(),
            "instance: no transition from succeeded on rerun"
        );
        assert_eq!(
            book.take_refused_transitions(),
            Refusals::default(),
            "taken once"
        );
    }

    #[test]
    fn past_the_bound_the_oldest_refusals_go_and_the_counts_go_on() {
        let mut refusals = Refusals::default();
        let many = MAX_REFUSALS_KEPT + 5;
        for a in 0..many {
            refusals.record(
                InstanceId(1),
                Subject::Activity(ActivityId(a as u64)),
                refused(),
            );
        }
        assert_eq!(refusals.count(), many as u64);
        assert_eq!(refusals.latest.len(), MAX_REFUSALS_KEPT);
        assert_eq!(
            refusals.latest.front().map(|r| r.subject),
            Some(Subject::Activity(ActivityId(5)))
        );
    }

    #[test]
    fn a_transition_taken_is_not_reported() {
        let mut refusals = Refusals::default();
        let step = InstanceState::Failed.transition(InstanceEvent::Rerun);
        refusals.report(InstanceId(1), Subject::Instance, step);
        assert_eq!(refusals, Refusals::default());
    }

    #[test]
    fn a_refusal_reported_is_recorded_and_loud_under_test() {
        let mut refusals = Refusals::default();
        let subject = Subject::Partition(PartitionId(2));
        let loud = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            refusals.report(InstanceId(1), subject, Err::<(), _>(refused()));
        }));
        assert!(loud.is_err(), "a refusal panics under test");
        assert_eq!(refusals.count(), 1);
        assert_eq!(refusals.latest.back().map(|r| r.subject), Some(subject));
    }
}
