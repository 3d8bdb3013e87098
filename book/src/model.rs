//! The book's data as the store holds it and the API shows it: nodes, instances, their
//! partitions and activities. Kept apart from the transitions so that each input's handling
//! can be read on its own.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, ActivityState, ActivityTypeId, InstanceId, NodeId, NodeName, PartitionId,
};
use mobiwf_xml_schema::{Contingency, UserId, WorkflowId};
use serde::{Deserialize, Serialize};

use crate::{Compensation, InstanceState, ItemSummary, PendingRerun};

/// A registered node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    /// Its peer id.
    pub peer: NodeId,
    /// Its name.
    pub name: NodeName,
    /// The activity types it can run.
    pub skills: Vec<ActivityTypeId>,
    /// Its libp2p addresses.
    pub addrs: Vec<String>,
    /// When it (last) registered.
    pub registered_ms: u64,
    /// The sequence number of its registration message: an older registration (delivered
    /// late by the node's outbox) never replaces a newer one.
    #[serde(default)]
    pub seq: u64,
    /// Why the controller suspects it failed (it stopped answering), while it does.
    #[serde(default)]
    pub suspected: Option<String>,
}

/// A node the failure detector watches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watched {
    /// Its peer id.
    pub peer: NodeId,
    /// Its addresses.
    pub addrs: Vec<String>,
    /// True while it is suspected.
    pub suspected: bool,
}

/// One partition of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionView {
    /// The partition id.
    pub id: PartitionId,
    /// The name of the node that runs it.
    pub node: NodeName,
    /// That node's peer id.
    pub peer: NodeId,
    /// True once the node acknowledged the partition.
    pub deployed: bool,
    /// True once its result came back.
    pub finished: bool,
    /// When the controller gives up on it (its `timeOut`), ms since the epoch.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// For a contingency activity's partition: the failed activity it stands for.
    #[serde(default)]
    pub stands_for: Option<ActivityId>,
    /// Why the controller gave up on it (its partner stopped answering, or its `timeOut`
    /// passed): its unfinished activities failed then.
    #[serde(default)]
    pub abandoned: Option<String>,
}

/// One activity of an instance as the controller knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityView {
    /// The activity id.
    pub id: ActivityId,
    /// Its name.
    pub name: String,
    /// The partition that runs it (none: a contingency activity not placed).
    pub partition: Option<PartitionId>,
    /// The node that runs it.
    pub node: Option<NodeName>,
    /// Its state.
    pub state: ActivityState,
    /// When its preconditions and dependency rule held, ms since the epoch, as its node said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronized_ms: Option<u64>,
    /// When it became ready (a manual one: was offered), as its node said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_ms: Option<u64>,
    /// When it started, ms since the epoch.
    pub started_ms: Option<u64>,
    /// The completion flag it ended with, as its node said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// When it finished, ms since the epoch.
    pub finished_ms: Option<u64>,
    /// `finished_ms` to the microsecond, as its node said: the order of compensations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_us: Option<u64>,
    /// True when it has a `<compensation>`: undone when its instance is cancelled or fails
    /// after it succeeded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compensable: bool,
    /// Why it failed or was cancelled.
    pub detail: Option<String>,
    /// Its `contingencyActivityId`: -1 a failure blocks its successors, 0 releases them,
    /// x > 0 activity x runs instead. Stored and shown as that number.
    #[serde(with = "contingency_code")]
    pub contingency: Contingency,
    /// True when its `timeToWait` ran out and it was started before its preconditions were met.
    #[serde(default)]
    pub emergency: bool,
    /// How many times its command was tried again (`<retries>`).
    #[serde(default)]
    pub retried: u32,
    /// The contingency activity that ran in its place after it failed.
    #[serde(default)]
    pub replaced_by: Option<ActivityId>,
    /// For a contingency activity: the failed activity it ran in place of.
    #[serde(default)]
    pub stands_for: Option<ActivityId>,
    /// Its contingency activity could not be used (already in use): its successors were
    /// cancelled instead.
    #[serde(default)]
    pub blocked_instead: bool,
    /// For a contingency activity placed before the failed one started: the preconditions it
    /// waits for (the controller relays their outcomes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub awaits: Vec<ActivityId>,
    /// Those of `awaits` whose outcome was relayed.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub relayed: BTreeSet<ActivityId>,
    /// A successor waited longer than its precondition `timeOut` for this activity: unless
    /// its own partner reports it final first, the controller withdraws it at this time (ms
    /// since the epoch), for the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overdue: Option<(u64, String)>,
}

/// The reason an operator's cancel gives the activities it ends (the nodes use the same
/// words).
pub const CANCELLED_BY_OPERATOR: &str = "the instance was cancelled by an operator";

/// How many recently submitted definitions the book keeps parsed.
pub const RECENT_DEFINITIONS: usize = 16;

/// How long the controller waits, after a successor's node says a precondition is overdue,
/// for the predecessor's own partner to report it (its own `timeOut` fires at about the same
/// time), before deciding that it failed.
pub const OVERDUE_GRACE_MS: u64 = 2000;

/// One instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// The instance id (also `workflow@id` in its partition documents).
    pub id: InstanceId,
    /// The id of the workflow definition.
    pub workflow: WorkflowId,
    /// The workflow's description.
    pub description: String,
    /// Where it is.
    pub state: InstanceState,
    /// Why it failed, when the reason is not an activity's.
    pub detail: Option<String>,
    /// When it was submitted, ms since the epoch.
    pub submitted_ms: u64,
    /// When it reached its final state.
    pub finished_ms: Option<u64>,
    /// Its partitions.
    pub partitions: Vec<PartitionView>,
    /// Its activities, in definition order.
    pub activities: Vec<ActivityView>,
    /// The user told when it starts, when an activity of it fails or is cancelled, and when
    /// it ends (`--responsible`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsible: Option<UserId>,
    /// Its work items as their hosts tell (`ItemEvents`), by activity: for `status`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub items: BTreeMap<ActivityId, ItemSummary>,
    /// The completion activity that succeeded and completed it, once one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_by: Option<ActivityId>,
    /// Its backward recovery, once it began: the compensations to run and how far they got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compensation: Option<Compensation>,
    /// An operator's rerun whose messages are still going out (forward recovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<PendingRerun>,
}

/// `contingency` as the number the documents use (-1, 0, x), as the store and the API always
/// had it.
mod contingency_code {
    use mobiwf_xml_schema::Contingency;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    pub fn serialize<S: Serializer>(c: &Contingency, s: S) -> Result<S::Ok, S::Error> {
        let code = i64::try_from(c.code()).map_err(serde::ser::Error::custom)?;
        code.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Contingency, D::Error> {
        let code = i64::deserialize(d)?;
        Contingency::from_code(i128::from(code))
            .ok_or_else(|| D::Error::custom(format!("no contingency {code}")))
    }
}

impl Instance {
    /// The peer that runs each placed activity (its partition's node): what a deployment
    /// tells a node, so that it takes a partner's word about an activity only from its peer.
    pub fn runs_on(&self) -> BTreeMap<ActivityId, NodeId> {
        self.activities
            .iter()
            .filter_map(|a| {
                let p = a.partition?;
                let part = self.partitions.iter().find(|v| v.id == p)?;
                Some((a.id, part.peer.clone()))
            })
            .collect()
    }
}
