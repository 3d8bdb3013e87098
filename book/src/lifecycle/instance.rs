//! An instance's lifecycle: deploying, running, interrupted by an operator, and its final
//! states. The lifecycle enum is [`InstanceState`] itself (stored and shown as it always was).
//!
//! WorkToDo keeps this lifecycle; an instance-wide pause would be `Interrupted`.

use serde::{Deserialize, Serialize};

use super::{Refusal, check};

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
}

pub use super::tables::INSTANCE as TRANSITIONS;

impl InstanceState {
    /// True once the instance can no longer change.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            InstanceState::Succeeded | InstanceState::Failed | InstanceState::Cancelled
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
        }
    }

    fn target(self, event: InstanceEvent) -> Option<InstanceState> {
        use InstanceEvent as E;
        use InstanceState as S;
        let live = !self.is_final();
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
            _ => return None,
        })
    }

    /// The one transition function: the state after `event`, or why there is none.
    pub fn transition(self, event: InstanceEvent) -> Result<InstanceState, Refusal> {
        let refusal = Refusal {
            lifecycle: "instance",
            from: self.as_str(),
            event: event.kind(),
        };
        let to = self.target(event).ok_or(refusal)?;
        check(
            "instance",
            TRANSITIONS,
            (self.as_str(), event.kind(), to.as_str()),
        )?;
        Ok(to)
    }
}

impl InstanceEvent {
    /// The kind of event, as the tables name it.
    pub fn kind(self) -> &'static str {
        match self {
            InstanceEvent::AllDeployed => "all_deployed",
            InstanceEvent::Refused => "refused",
            InstanceEvent::Interrupt => "interrupt",
            InstanceEvent::Resume { .. } => "resume",
            InstanceEvent::Cancel => "cancel",
            InstanceEvent::Ended { .. } => "ended",
        }
    }
}

impl crate::Instance {
    /// Applies `event` to the instance's state. On `Err`, nothing changed.
    pub(crate) fn step(&mut self, event: InstanceEvent) -> Result<InstanceState, Refusal> {
        self.state = self.state.transition(event)?;
        Ok(self.state)
    }
}
