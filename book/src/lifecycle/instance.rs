//! An instance's lifecycle: deploying, running, interrupted by an operator, and its final
//! states; after a cancel or a failure, its backward recovery (compensating, then compensated
//! or compensation failed), and after a failure an operator's rerun (forward recovery: running
//! again). The lifecycle enum is [`InstanceState`] itself (stored and shown as it always was);
//! an instance keeps it in an [`InstanceLife`], which only its `step` changes.
//!
//! WorkToDo keeps this lifecycle; an instance-wide pause would be `Interrupted`.

use serde::{Deserialize, Serialize};

use super::{Kind, Refusal, check, kinds};

/// Where an instance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceState {
    /// Partitions sent, not all acknowledged.
    Deploying,
    /// Every partition acknowledged, not all finished.
    Running,
    /// Every partition finished; no activity failed without release, none was cancelled.
    Succeeded,
    /// Every partition finished (or one was refused); an activity failed and blocked its
    /// successors, or was cancelled.
    Failed,
    /// An operator interrupted it: nothing new starts until it is resumed.
    Interrupted,
    /// An operator cancelled it: everything not finished was cancelled.
    Cancelled,
    /// Cancelled or failed, it runs the compensations of its succeeded activities, one at a
    /// time, in the reverse order of their ends.
    Compensating,
    /// Every compensation succeeded.
    Compensated,
    /// A compensation failed (the instance says which, and why); the rest were not run.
    CompensationFailed,
}

/// What happens to an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstanceEvent {
    /// No partition waits for its node's acknowledgement any more.
    AllDeployed,
    /// A node refused a partition.
    Refused,
    /// An operator interrupts it.
    Interrupt,
    /// An operator resumes it; `all_deployed`: no partition waits for an acknowledgement.
    Resume {
        /// No partition waits for its node's acknowledgement.
        all_deployed: bool,
    },
    /// An operator cancels it.
    Cancel,
    /// Nothing can change any more; `failed`: an activity blocked or was cancelled.
    Ended {
        /// It failed (else it succeeded).
        failed: bool,
    },
    /// Nothing of it runs any more, and succeeded activities have compensations: they run.
    Compensate,
    /// The last compensation succeeded.
    Compensated,
    /// A compensation failed.
    CompensationFailed,
    /// An operator reruns a failed activity of it.
    Rerun,
}

kinds! {
    /// The kind of an [`InstanceEvent`], without its data.
    pub enum InstanceEventKind {
        /// [`InstanceEvent::AllDeployed`].
        AllDeployed => "all_deployed",
        /// [`InstanceEvent::Refused`].
        Refused => "refused",
        /// [`InstanceEvent::Interrupt`].
        Interrupt => "interrupt",
        /// [`InstanceEvent::Resume`].
        Resume => "resume",
        /// [`InstanceEvent::Cancel`].
        Cancel => "cancel",
        /// [`InstanceEvent::Ended`].
        Ended => "ended",
        /// [`InstanceEvent::Compensate`].
        Compensate => "compensate",
        /// [`InstanceEvent::Compensated`].
        Compensated => "compensated",
        /// [`InstanceEvent::CompensationFailed`].
        CompensationFailed => "compensation_failed",
        /// [`InstanceEvent::Rerun`].
        Rerun => "rerun",
    }
}

/// An instance's state has no data: it is its own kind.
impl Kind for InstanceState {
    fn name(self) -> &'static str {
        self.as_str()
    }
}

pub use super::tables::INSTANCE as TRANSITIONS;

impl InstanceState {
    /// Every state, in the order of the lifecycle.
    pub const ALL: [InstanceState; 9] = [
        InstanceState::Deploying,
        InstanceState::Running,
        InstanceState::Interrupted,
        InstanceState::Succeeded,
        InstanceState::Failed,
        InstanceState::Cancelled,
        InstanceState::Compensating,
        InstanceState::Compensated,
        InstanceState::CompensationFailed,
    ];

    /// True once nothing of the instance runs (but a rerun, or its compensations, may
    /// follow a failure or a cancel: see `Instance::is_settled`).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            InstanceState::Succeeded
                | InstanceState::Failed
                | InstanceState::Cancelled
                | InstanceState::Compensated
                | InstanceState::CompensationFailed
        )
    }

    /// True while its activities run (or may): deploying, running or interrupted.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            InstanceState::Deploying | InstanceState::Running | InstanceState::Interrupted
        )
    }

    /// The word used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceState::Deploying => "deploying",
            InstanceState::Running => "running",
            InstanceState::Succeeded => "succeeded",
            InstanceState::Failed => "failed",
            InstanceState::Interrupted => "interrupted",
            InstanceState::Cancelled => "cancelled",
            InstanceState::Compensating => "compensating",
            InstanceState::Compensated => "compensated",
            InstanceState::CompensationFailed => "compensation_failed",
        }
    }

    fn target(self, event: InstanceEvent) -> Option<InstanceState> {
        use InstanceEvent as E;
        use InstanceState as S;
        let live = self.is_live();
        Some(match (self, event) {
            (S::Deploying, E::AllDeployed) => S::Running,
            (_, E::Refused) if live => S::Failed,
            (S::Deploying | S::Running, E::Interrupt) => S::Interrupted,
            (S::Interrupted, E::Resume { all_deployed: true }) => S::Running,
            (
                S::Interrupted,
                E::Resume {
                    all_deployed: false,
                },
            ) => S::Deploying,
            (_, E::Cancel) if live => S::Cancelled,
            (_, E::Ended { failed: true }) if live => S::Failed,
            (_, E::Ended { failed: false }) if live => S::Succeeded,
            (S::Cancelled | S::Failed, E::Compensate) => S::Compensating,
            (S::Compensating, E::Compensated) => S::Compensated,
            (S::Compensating, E::CompensationFailed) => S::CompensationFailed,
            (S::Failed, E::Rerun) => S::Running,
            _ => return None,
        })
    }

    /// The one transition function: the state after `event`, or why there is none.
    pub fn transition(self, event: InstanceEvent) -> Result<InstanceState, Refusal> {
        let refusal = Refusal {
            lifecycle: "instance",
            from: self.as_str(),
            event: event.kind().name(),
        };
        let to = self.target(event).ok_or(refusal)?;
        check("instance", TRANSITIONS, (self, event.kind(), to))?;
        Ok(to)
    }
}

impl InstanceEvent {
    /// The kind of event, as the tables name it.
    pub fn kind(self) -> InstanceEventKind {
        use InstanceEventKind as K;
        match self {
            InstanceEvent::AllDeployed => K::AllDeployed,
            InstanceEvent::Refused => K::Refused,
            InstanceEvent::Interrupt => K::Interrupt,
            InstanceEvent::Resume { .. } => K::Resume,
            InstanceEvent::Cancel => K::Cancel,
            InstanceEvent::Ended { .. } => K::Ended,
            InstanceEvent::Compensate => K::Compensate,
            InstanceEvent::Compensated => K::Compensated,
            InstanceEvent::CompensationFailed => K::CompensationFailed,
            InstanceEvent::Rerun => K::Rerun,
        }
    }
}

/// An instance's state as the book keeps it: only [`InstanceLife::step`] (the transition
/// function applied in place) changes it. Stored as the bare [`InstanceState`], as the
/// instance's `state` always was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstanceLife(InstanceState);

impl InstanceLife {
    /// A new instance: its partitions sent, none acknowledged.
    pub(crate) fn deploying() -> InstanceLife {
        InstanceLife(InstanceState::Deploying)
    }

    /// Where it is.
    pub fn state(self) -> InstanceState {
        self.0
    }

    /// Applies `event`: the state after it, or why there is none (then nothing changed).
    pub(crate) fn step(&mut self, event: InstanceEvent) -> Result<InstanceState, Refusal> {
        self.0 = self.0.transition(event)?;
        Ok(self.0)
    }
}
