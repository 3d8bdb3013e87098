//! What a node tells the controller about the run of its partitions: an activity that must be
//! reported at once ended, a whole partition is final, a remote predecessor is overdue. Named
//! structs, apart from `wire`, so that the controller's book takes each whole; each is the
//! content of its [`crate::Message`] variant, and its bytes are the ones that variant always
//! had.

use serde::{Deserialize, Serialize};

use crate::wire::ActivityRecord;
use crate::{ActivityId, InstanceId, PartitionId};

/// Node → controller: an activity with `responseImmediate` 1 finished
/// ([`crate::Message::Report`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The instance.
    pub instance: InstanceId,
    /// The partition the activity belongs to.
    pub partition: PartitionId,
    /// The activity.
    pub record: ActivityRecord,
}

/// Node → controller: every activity of the partition is final
/// ([`crate::Message::PartitionResult`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionResult {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// Every activity of the partition.
    pub activities: Vec<ActivityRecord>,
}

/// Node → controller: an activity waited longer than its precondition's `timeOut` for the
/// notification of a remote predecessor. The controller decides whether that predecessor
/// failed ([`crate::Message::Overdue`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overdue {
    /// The instance.
    pub instance: InstanceId,
    /// The waiting activity.
    pub waiting: ActivityId,
    /// The predecessor it waits for.
    pub precondition: ActivityId,
    /// The precondition's `timeOut`, in seconds.
    pub time_out_secs: u32,
}
