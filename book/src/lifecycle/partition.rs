//! A partition's lifecycle as the controller sees it: sent to its node, acknowledged,
//! finished (its result came back), or given up (its partner stopped answering or its
//! `timeOut` passed), possibly with its result coming late.
//!
//! [`PartitionView`](crate::PartitionView) keeps a [`PartitionLifecycle`] as its state, and
//! only [`PartitionLifecycle::step`] changes it. It is stored as the fields it always had
//! (`deployed`, `finished`, `abandoned`: [`PartitionLifecycle::from_fields`] and
//! [`PartitionLifecycle::fields`]), so the stored JSON is unchanged. Facts stay fields: node,
//! peer, deadline, `stands_for`.
//!
//! WorkToDo keeps this lifecycle: its new states are the activities'.

use super::{Refusal, check, kinds};

/// Where a partition is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionLifecycle {
    /// Sent to its node (or refused by it: then its instance failed), not acknowledged.
    Sent,
    /// Its node acknowledged it; its result did not come back yet.
    Deployed,
    /// Its result came back.
    Finished,
    /// The controller gave up on it: its unfinished activities failed then.
    GivenUp {
        /// Why.
        reason: String,
        /// Its node had acknowledged it (or did later).
        acknowledged: bool,
    },
    /// Given up, then its result came back anyway: kept for the record.
    LateResult {
        /// Why it was given up.
        reason: String,
    },
}

/// What happens to a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionEvent {
    /// Its node acknowledged it.
    Acknowledged,
    /// Its node refused it.
    Refused,
    /// Its result came back.
    Result,
    /// The controller gives up on it, for the reason.
    GiveUp(String),
    /// An operator reruns activities of it: it runs again.
    Rerun,
}

kinds! {
    /// The kind of a [`PartitionLifecycle`], without its data.
    pub enum PartitionKind {
        /// [`PartitionLifecycle::Sent`].
        Sent => "sent",
        /// [`PartitionLifecycle::Deployed`].
        Deployed => "deployed",
        /// [`PartitionLifecycle::Finished`].
        Finished => "finished",
        /// [`PartitionLifecycle::GivenUp`].
        GivenUp => "given_up",
        /// [`PartitionLifecycle::LateResult`].
        LateResult => "late_result",
    }
}

kinds! {
    /// The kind of a [`PartitionEvent`], without its data.
    pub enum PartitionEventKind {
        /// [`PartitionEvent::Acknowledged`].
        Acknowledged => "acknowledged",
        /// [`PartitionEvent::Refused`].
        Refused => "refused",
        /// [`PartitionEvent::Result`].
        Result => "result",
        /// [`PartitionEvent::GiveUp`].
        GiveUp => "give_up",
        /// [`PartitionEvent::Rerun`].
        Rerun => "rerun",
    }
}

pub use super::tables::PARTITION as TRANSITIONS;

impl PartitionLifecycle {
    /// The kind of state, as the tables name it.
    pub fn kind(&self) -> PartitionKind {
        match self {
            PartitionLifecycle::Sent => PartitionKind::Sent,
            PartitionLifecycle::Deployed => PartitionKind::Deployed,
            PartitionLifecycle::Finished => PartitionKind::Finished,
            PartitionLifecycle::GivenUp { .. } => PartitionKind::GivenUp,
            PartitionLifecycle::LateResult { .. } => PartitionKind::LateResult,
        }
    }

    /// True when nothing more is expected of it (finished or given up).
    pub fn is_over(&self) -> bool {
        !matches!(
            self,
            PartitionLifecycle::Sent | PartitionLifecycle::Deployed
        )
    }

    /// True once the controller gave up on it.
    pub fn is_given_up(&self) -> bool {
        matches!(
            self,
            PartitionLifecycle::GivenUp { .. } | PartitionLifecycle::LateResult { .. }
        )
    }

    fn target(&self, event: &PartitionEvent) -> Option<PartitionLifecycle> {
        use PartitionEvent as E;
        use PartitionLifecycle as L;
        Some(match (self, event) {
            (L::Sent | L::Deployed, E::Acknowledged) => L::Deployed,
            (L::Sent | L::Deployed, E::Refused) => L::Sent,
            (L::GivenUp { reason, .. }, E::Acknowledged | E::Refused) => L::GivenUp {
                reason: reason.clone(),
                acknowledged: *event == E::Acknowledged,
            },
            (L::Sent | L::Deployed | L::Finished, E::Result) => L::Finished,
            (L::GivenUp { reason, .. } | L::LateResult { reason }, E::Result) => L::LateResult {
                reason: reason.clone(),
            },
            (L::Sent | L::Deployed, E::GiveUp(reason)) => L::GivenUp {
                reason: reason.clone(),
                acknowledged: *self == L::Deployed,
            },
            (L::Finished, E::Rerun) => L::Deployed,
            _ => return None,
        })
    }

    /// The one transition function: the state after `event`, or why there is none.
    pub fn transition(self, event: &PartitionEvent) -> Result<PartitionLifecycle, Refusal> {
        let refusal = Refusal {
            lifecycle: "partition",
            from: self.kind().name(),
            event: event.kind().name(),
        };
        let to = self.target(event).ok_or(refusal)?;
        check(
            "partition",
            TRANSITIONS,
            (self.kind(), event.kind(), to.kind()),
        )?;
        Ok(to)
    }
}

impl PartitionEvent {
    /// The kind of event, as the tables name it.
    pub fn kind(&self) -> PartitionEventKind {
        match self {
            PartitionEvent::Acknowledged => PartitionEventKind::Acknowledged,
            PartitionEvent::Refused => PartitionEventKind::Refused,
            PartitionEvent::Result => PartitionEventKind::Result,
            PartitionEvent::GiveUp(_) => PartitionEventKind::GiveUp,
            PartitionEvent::Rerun => PartitionEventKind::Rerun,
        }
    }
}

impl PartitionLifecycle {
    /// Its node acknowledged it (or sent its result, which says as much).
    pub fn is_acknowledged(&self) -> bool {
        match self {
            PartitionLifecycle::Sent => false,
            PartitionLifecycle::GivenUp { acknowledged, .. } => *acknowledged,
            PartitionLifecycle::Deployed
            | PartitionLifecycle::Finished
            | PartitionLifecycle::LateResult { .. } => true,
        }
    }

    /// Its result came back (in time or late).
    pub fn is_finished(&self) -> bool {
        matches!(
            self,
            PartitionLifecycle::Finished | PartitionLifecycle::LateResult { .. }
        )
    }

    /// Why the controller gave up on it, once it did.
    pub fn abandoned(&self) -> Option<&str> {
        match self {
            PartitionLifecycle::GivenUp { reason, .. }
            | PartitionLifecycle::LateResult { reason } => Some(reason),
            _ => None,
        }
    }

    /// Applies `event`: the state after it, or why there is none (then nothing changed).
    pub(crate) fn step(&mut self, event: &PartitionEvent) -> Result<PartitionLifecycle, Refusal> {
        let to = self.clone().transition(event)?;
        *self = to.clone();
        Ok(to)
    }

    /// The state a partition stored with these fields is in.
    pub(crate) fn from_fields(
        deployed: bool,
        finished: bool,
        abandoned: Option<String>,
    ) -> PartitionLifecycle {
        match (abandoned, finished) {
            (None, false) if deployed => PartitionLifecycle::Deployed,
            (None, false) => PartitionLifecycle::Sent,
            (None, true) => PartitionLifecycle::Finished,
            (Some(reason), false) => PartitionLifecycle::GivenUp {
                reason,
                acknowledged: deployed,
            },
            (Some(reason), true) => PartitionLifecycle::LateResult { reason },
        }
    }

    /// The fields it is stored as: (`deployed`, `finished`, `abandoned`).
    pub(crate) fn fields(&self) -> (bool, bool, Option<String>) {
        (
            self.is_acknowledged(),
            self.is_finished(),
            self.abandoned().map(str::to_owned),
        )
    }
}
