//! The book's data as the store holds it and the API shows it: nodes, instances, their
//! partitions and activities. Kept apart from the transitions so that each input's handling
//! can be read on its own.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, ActivityState, ActivityTypeId, InstanceId, InstanceInputs, NodeId, NodeName,
    PartitionId,
};
use mobiwf_xml_schema::{Contingency, UserId, WorkflowDefinition, WorkflowId};
use serde::{Deserialize, Serialize};

use crate::lifecycle::activity::ActivityLife;
use crate::lifecycle::instance::InstanceLife;
use crate::{
    ActivityEvent, ActivityLifecycle, Compensation, DefinitionRef, Grace, InstanceEvent,
    InstanceState, ItemSummary, PartitionEvent, PartitionLifecycle, PendingRerun, Refusal,
};

mod repr;

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

/// One partition of an instance. Stored and shown as it always was (`repr::PartitionRepr`):
/// its state as the fields `deployed`, `finished` and `abandoned`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "repr::PartitionRepr", into = "repr::PartitionRepr")]
pub struct PartitionView {
    /// The partition id.
    pub id: PartitionId,
    /// The name of the node that runs it.
    pub node: NodeName,
    /// That node's peer id.
    pub peer: NodeId,
    /// Where it is; only its transition changes it.
    life: PartitionLifecycle,
    /// When the controller gives up on it (its `timeOut`), ms since the epoch.
    pub deadline_ms: Option<u64>,
    /// For a contingency activity's partition: the failed activity it stands for.
    pub stands_for: Option<ActivityId>,
}

/// One activity of an instance as the controller knows it. Stored and shown as it always
/// was (`repr::ActivityRepr`): its state as the fields `state`, `overdue`, `replaced_by` and
/// `blocked_instead`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "repr::ActivityRepr", into = "repr::ActivityRepr")]
pub struct ActivityView {
    /// The activity id.
    pub id: ActivityId,
    /// Its name.
    pub name: String,
    /// The partition that runs it (none: a contingency activity not placed).
    pub partition: Option<PartitionId>,
    /// The node that runs it.
    pub node: Option<NodeName>,
    /// Where it is; only its transition changes it.
    life: ActivityLife,
    /// When its preconditions and dependency rule held, ms since the epoch, as its node said.
    pub synchronized_ms: Option<u64>,
    /// When it became ready (a manual one: was offered), as its node said.
    pub ready_ms: Option<u64>,
    /// When it started, ms since the epoch.
    pub started_ms: Option<u64>,
    /// The completion flag it ended with, as its node said.
    pub flag: Option<String>,
    /// When it finished, ms since the epoch.
    pub finished_ms: Option<u64>,
    /// `finished_ms` to the microsecond, as its node said: the order of compensations.
    pub finished_us: Option<u64>,
    /// True when it has a `<compensation>`: undone when its instance is cancelled or fails
    /// after it succeeded.
    pub compensable: bool,
    /// Why it failed or was cancelled.
    pub detail: Option<String>,
    /// Its `contingencyActivityId`: -1 a failure blocks its successors, 0 releases them,
    /// x > 0 activity x runs instead. Stored and shown as that number.
    pub contingency: Contingency,
    /// True when its `timeToWait` ran out and it was started before its preconditions were met.
    pub emergency: bool,
    /// How many times its command was tried again (`<retries>`).
    pub retried: u32,
    /// For a contingency activity: the failed activity it ran in place of.
    pub stands_for: Option<ActivityId>,
    /// For a contingency activity placed before the failed one started: the preconditions it
    /// waits for (the controller relays their outcomes).
    pub awaits: Vec<ActivityId>,
    /// Those of `awaits` whose outcome was relayed.
    pub relayed: BTreeSet<ActivityId>,
    /// The pass of a loop's body it is in, as its node last said (the first otherwise).
    pub pass: mobiwf_proto::Pass,
    /// When its node said its latest word on a pause or a resumption of it in this pass (ms
    /// since the epoch, that node's clock): a word said before, arriving after it (the outbox
    /// keeps no order), is stale.
    pub pause_word_ms: Option<u64>,
}

impl PartitionView {
    /// A partition just sent to `node`.
    pub fn sent(
        id: PartitionId,
        node: &NodeInfo,
        deadline_ms: Option<u64>,
        stands_for: Option<ActivityId>,
    ) -> PartitionView {
        PartitionView {
            id,
            node: node.name.clone(),
            peer: node.peer.clone(),
            life: PartitionLifecycle::Sent,
            deadline_ms,
            stands_for,
        }
    }

    /// Where the partition is.
    pub fn lifecycle(&self) -> PartitionLifecycle {
        self.life.clone()
    }

    /// True once its node acknowledged it.
    pub fn is_deployed(&self) -> bool {
        self.life.is_acknowledged()
    }

    /// True once its result came back (in time or late).
    pub fn is_finished(&self) -> bool {
        self.life.is_finished()
    }

    /// True when nothing more is expected of it (finished or given up).
    pub fn is_over(&self) -> bool {
        self.life.is_over()
    }

    /// Why the controller gave up on it (its partner stopped answering, or its `timeOut`
    /// passed), once it did: its unfinished activities failed then.
    pub fn abandoned(&self) -> Option<&str> {
        self.life.abandoned()
    }

    /// Applies `event` to the partition (its one transition function). On `Err`, nothing
    /// changed.
    pub(crate) fn step(&mut self, event: &PartitionEvent) -> Result<PartitionLifecycle, Refusal> {
        self.life.step(event)
    }
}

impl ActivityView {
    /// A new activity, not started: placed on `at` (its partition and node), or a
    /// contingency activity not placed (none).
    pub fn new(
        id: ActivityId,
        name: String,
        at: Option<(PartitionId, NodeName)>,
        contingency: Contingency,
    ) -> ActivityView {
        let life = ActivityLife::new(at.is_some());
        let (partition, node) = at.unzip();
        ActivityView {
            id,
            name,
            partition,
            node,
            life,
            synchronized_ms: None,
            ready_ms: None,
            started_ms: None,
            flag: None,
            finished_ms: None,
            finished_us: None,
            compensable: false,
            detail: None,
            contingency,
            emergency: false,
            retried: 0,
            stands_for: None,
            awaits: Vec::new(),
            relayed: BTreeSet::new(),
            pass: mobiwf_proto::Pass::FIRST,
            pause_word_ms: None,
        }
    }

    /// Where the activity is.
    pub fn lifecycle(&self) -> ActivityLifecycle {
        self.life.lifecycle().clone()
    }

    /// Its state as the nodes and the API say it.
    pub fn state(&self) -> ActivityState {
        self.life.state()
    }

    /// A successor waited longer than its precondition `timeOut` for it: unless its own
    /// partner reports it final first, the controller withdraws it at this time, for this
    /// reason. Also the timer of one that ended during the grace, until the tick drops it.
    pub fn overdue(&self) -> Option<&Grace> {
        self.life.overdue()
    }

    /// Who paused it and when, while its node holds it paused.
    pub fn paused(&self) -> Option<&crate::PausedBy> {
        self.life.paused()
    }

    /// The contingency activity that ran in its place after it failed.
    pub fn replaced_by(&self) -> Option<ActivityId> {
        self.life.replaced_by()
    }

    /// Its contingency activity could not be used (already in use): its successors were
    /// cancelled instead.
    pub fn blocked_instead(&self) -> bool {
        self.life.blocked_instead()
    }

    /// Applies `event` to the activity (its one transition function). On `Err`, nothing
    /// changed.
    pub(crate) fn step(&mut self, event: &ActivityEvent) -> Result<ActivityLifecycle, Refusal> {
        self.life.step(event, &mut self.detail)
    }

    /// Its overdue grace ran out: back to where it was if not final (withdrawn next), its
    /// timer dropped if it ended meanwhile.
    pub(crate) fn grace_over(&mut self) {
        self.life.grace_over();
    }
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
    /// Where it is; only its transition changes it (read it with [`Instance::state`]).
    state: InstanceLife,
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
    /// Its inputs, as given when it started (checked, the defaults filled in): each
    /// partition's deployment carries those its activities read, a contingency activity's
    /// too. Left out when none (as stored before inputs).
    #[serde(default, skip_serializing_if = "InstanceInputs::is_empty")]
    pub inputs: InstanceInputs,
    /// The deployed definition it was started from (`start NAME`): its definition is the
    /// registry's, not stored with it. None: submitted whole (`submit FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<DefinitionRef>,
    /// Its activities an ordering between definitions named when it was placed (marked
    /// `ordered` in its partitions): only their requests wait for its relative order.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub ordered: BTreeSet<ActivityId>,
    /// How many operator's controls (interrupt, resume, cancel) it was given: the number of
    /// the last, which its message carries (`ControlInstance::order`). Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub controls: u64,
    /// How many times an operator reran it: the number of the latest rerun, which its
    /// messages carry (`Rerun::rerun`). Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reruns: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Instance {
    /// A new instance of workflow `def`, submitted at `submitted_ms`: its partitions sent
    /// (deploying), its activities not started.
    pub(crate) fn submitted(
        id: InstanceId,
        def: &WorkflowDefinition,
        submitted_ms: u64,
        partitions: Vec<PartitionView>,
        activities: Vec<ActivityView>,
        responsible: Option<UserId>,
    ) -> Instance {
        Instance {
            id,
            workflow: def.id,
            description: def.description.clone(),
            state: InstanceLife::deploying(),
            detail: None,
            submitted_ms,
            finished_ms: None,
            partitions,
            activities,
            responsible,
            items: BTreeMap::new(),
            completed_by: None,
            compensation: None,
            rerun: None,
            inputs: InstanceInputs::new(),
            definition: None,
            ordered: BTreeSet::new(),
            controls: 0,
            reruns: 0,
        }
    }

    /// Where it is.
    pub fn state(&self) -> InstanceState {
        self.state.state()
    }

    /// Applies `event` to the instance (its one transition function). On `Err`, nothing
    /// changed.
    pub(crate) fn step(&mut self, event: InstanceEvent) -> Result<InstanceState, Refusal> {
        self.state.step(event)
    }

    /// The peer that runs each placed activity (its partition's node): a deployment tells a
    /// node the part of it whose word the node takes (`crate::speakers`), so that it takes a
    /// partner's word about an activity only from its peer.
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
