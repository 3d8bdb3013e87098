//! What the recovery messages carry: the controller asks a node to run an activity's compensation
//! (backward recovery) and hears how it ended, or asks it to run failed and cancelled activities
//! again (forward recovery). Apart from `wire` so that the one enum of messages only names them.

use serde::{Deserialize, Serialize};

use crate::{ActivityId, InstanceId, PartitionId};

/// Controller → node: run the `<compensation>` of this activity of your partition (it
/// succeeded; its instance was cancelled or failed). The node answers with [`Compensated`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compensate {
    /// The instance.
    pub instance: InstanceId,
    /// The partition that ran the activity.
    pub partition: PartitionId,
    /// The activity whose work is undone.
    pub activity: ActivityId,
}

/// Node → controller: how the compensation of an activity ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compensated {
    /// The instance.
    pub instance: InstanceId,
    /// The partition that ran the activity.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// True when its compensation command exited 0.
    pub succeeded: bool,
    /// Why it failed (exit status, or why it could not run), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Controller → node: an operator reruns a failed activity (forward recovery). Every activity
/// listed goes back to waiting: the failed one and those cancelled because of it. The node
/// reruns those of its partition and forgets what it heard of the others' ends, so that their
/// new ends count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rerun {
    /// The instance.
    pub instance: InstanceId,
    /// The partition of the node that holds some of them.
    pub partition: PartitionId,
    /// Every activity rerun (of all partitions), the failed one first.
    pub activities: Vec<ActivityId>,
    /// The number of the instance's latest operator control when the rerun was decided
    /// ([`crate::ControlInstance::order`]; 0, left out: none): a control numbered so far that
    /// reaches the node after its rerun is overtaken by it (the outbox keeps no order; the
    /// rerun ends the interruption the instance ended under, which a late interrupt would
    /// bring back for good).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub controls: u64,
    /// The instance's rerun number (1 for its first; 0, left out: as sent before reruns were
    /// numbered): the node forgets only the words heard from a partner that had not applied
    /// this rerun yet ([`crate::Notify::rerun`]), so an end decided after a partner's rerun
    /// that overtakes this one is kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rerun: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
