//! What the synchronization messages carry (*Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §4.8): before an activity of a task class is ready, its node asks the
//! controller's synchronization manager for the class (beginSync); the manager grants it when no
//! activity of a conflicting class holds one, or refuses it when the wait ran past the class's
//! bound; the node releases it when the activity is final (endSync). Apart from `wire` so that
//! the one enum of messages only names them.
//!
//! An activity an ordering between definitions names (§6.2) asks the same way before it is
//! ready, with its class if it has one, else with none: the manager then admits it once the
//! tasks it must follow are over.
//!
//! One request is named by (instance, partition, activity, round): the round counts the
//! activity's requests on its node (a rerun, or a loop's next pass, asks again with the next
//! one), so that a release or an answer meant for an earlier request is never taken for a later
//! one. A request also names the activity's pass, as every word about an activity does: the
//! controller may hear of a loop's next pass first from it.

use serde::{Deserialize, Serialize};

use crate::{ActivityId, InstanceId, PartitionId, Pass};
pub use mobiwf_xml_schema::ClassName;

/// One request for a class, as every synchronization message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SyncTicket {
    /// The instance.
    pub instance: InstanceId,
    /// The partition that holds the activity.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Which of the activity's requests (0 the first).
    pub round: u32,
}

/// Node → controller: this activity's preconditions hold; may it run (beginSync)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeginSync {
    /// The request.
    pub ticket: SyncTicket,
    /// The activity's class; none for an activity without one that an ordering between
    /// definitions names (it asks only for its relative order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassName>,
    /// The activity's pass (left out for the first, as before loops).
    #[serde(default, skip_serializing_if = "Pass::is_first")]
    pub pass: Pass,
}

/// Controller → node: the class is held for this request; the activity may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncGranted {
    /// The request granted.
    pub ticket: SyncTicket,
    /// How long the holder may go without hearing from the controller before it must have
    /// stopped the activity (ms): the controller counts a silent holder's class free only
    /// after its failure detector suspected the node, which is later than this, so that two
    /// conflicting activities never run at once, even when the holder is cut off.
    pub lease_ms: u64,
}

/// Controller → node: the request waited past its class's bound: the activity fails
/// ("synchronization failed") and its contingency applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRefused {
    /// The request refused.
    pub ticket: SyncTicket,
    /// Why, in words (which class, how long it waited, who held it).
    pub detail: String,
}

/// Node → controller: the activity is final (or will not run): its class is free of it
/// (endSync).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndSync {
    /// The request whose hold (or wait) ends.
    pub ticket: SyncTicket,
}
