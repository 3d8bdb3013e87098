//! The controller's instance bookkeeping: a pure state machine.
//!
//! `apply(now, input) -> effects`: registrations, submissions, deliveries and the reports of
//! the nodes go in; the messages to send come out. No clock, disk or network inside; the
//! daemon (`mobiwf-controller`) writes the changes and the messages in one synced batch before it
//! answers or sends anything. Failure decisions (suspected partners, partition and
//! precondition timeouts, contingency activities) are in `recovery`; the event history of each
//! instance in `history`.

mod history;
mod hub;
mod placement;
mod recovery;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, ActivityTypeId, Control, InstanceId, Message,
    NodeId, NodeName, PartitionId,
};
use mobiwf_xml_schema::{
    Contingency, DeriveOptions, WorkflowDefinition, WorkflowId, derive_partitions,
};
use serde::{Deserialize, Serialize};

pub use history::{History, HistoryEvent};
pub use hub::Routing;
pub use placement::{Placement, PlacementError, place};
pub use recovery::MAX_CONTINGENCY_CHAIN;
use recovery::{Ctx, label};

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
    /// When it started, ms since the epoch.
    pub started_ms: Option<u64>,
    /// When it finished, ms since the epoch.
    pub finished_ms: Option<u64>,
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
}

/// What happens to the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A node says who it is.
    Register(NodeInfo),
    /// An operator submits a workflow definition.
    Submit {
        /// The definition, as XML (any encoding its declaration names).
        definition: Vec<u8>,
        /// Its name for error messages (a file name).
        source: String,
    },
    /// A node acknowledged or refused a partition.
    Delivered {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The refusal's reason, if it was refused.
        refused: Option<String>,
    },
    /// The failure detector stopped hearing from a node.
    Suspect {
        /// Its peer id.
        peer: NodeId,
        /// What the detector saw.
        reason: String,
    },
    /// A suspected node answers again.
    Answering {
        /// Its peer id.
        peer: NodeId,
    },
    /// Time passed: partition `timeOut`s that ran out are acted on. Sent at
    /// [`Book::next_deadline`].
    Tick,
    /// An operator interrupts, resumes or cancels an instance.
    Control {
        /// The instance.
        instance: InstanceId,
        /// What to do.
        action: Control,
    },
    /// A node reports (`Report`, `PartitionResult` or `Overdue`).
    FromNode {
        /// The sending node's peer id (authenticated by the transport).
        peer: NodeId,
        /// What it says.
        message: Message,
    },
}

/// Something to do once the changes are on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send a message through the outbox.
    Send {
        /// The receiver's peer id.
        to: NodeId,
        /// Its addresses.
        addrs: Vec<String>,
        /// The message.
        message: Message,
    },
}

/// Why an input was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    /// The submitted definition has problems (rendered `file:line:col: error: ...` lines).
    #[error("{0}")]
    Invalid(String),
    /// The workflow cannot be placed on the registered nodes.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// A report about an instance the controller does not have.
    #[error("no instance {0}")]
    UnknownInstance(InstanceId),
    /// A report from a node that does not run that partition.
    #[error("peer {peer} does not run partition {partition} of instance {instance}")]
    NotYours {
        /// The sender.
        peer: NodeId,
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
    },
    /// A message the controller does not take.
    #[error("the controller does not take {0} messages")]
    Unexpected(&'static str),
    /// The operator's control does not apply to the instance as it is.
    #[error("instance {instance} is {state}: cannot {action} it")]
    NotNow {
        /// The instance.
        instance: InstanceId,
        /// Its state.
        state: &'static str,
        /// What was asked.
        action: &'static str,
    },
}

/// What `apply` did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Messages to send.
    pub effects: Vec<Effect>,
    /// The new instance, for a submission.
    pub instance: Option<InstanceId>,
}

/// Everything the controller knows.
#[derive(Debug)]
pub struct Book {
    nodes: BTreeMap<NodeId, NodeInfo>,
    instances: BTreeMap<InstanceId, Instance>,
    /// Each instance's workflow definition (for contingency activities), parsed.
    definitions: BTreeMap<InstanceId, Arc<WorkflowDefinition>>,
    /// The definitions submitted last, as submitted and parsed: a workflow submitted again
    /// (the usual case: one definition, many instances) is not parsed again, and its
    /// instances share one parsed copy.
    recent: Vec<(Vec<u8>, Arc<WorkflowDefinition>)>,
    history: History,
    last_instance: InstanceId,
    dirty_nodes: BTreeSet<NodeId>,
    dirty_instances: BTreeSet<InstanceId>,
    new_definitions: Vec<(InstanceId, Vec<u8>)>,
    routing: Routing,
    /// The instances not over, so that the per-commit questions (deadlines, nodes to watch)
    /// cost what is under way, not everything ever run.
    live: BTreeSet<InstanceId>,
}

/// What changed since the last [`Book::take_changes`].
#[derive(Debug)]
pub struct Changes {
    /// Nodes to write.
    pub nodes: Vec<NodeInfo>,
    /// Instances to write.
    pub instances: Vec<Instance>,
    /// The last instance id given.
    pub last_instance: InstanceId,
    /// Definitions of new instances, as submitted.
    pub definitions: Vec<(InstanceId, Vec<u8>)>,
    /// History events added: (instance, position, event).
    pub history: Vec<(InstanceId, usize, HistoryEvent)>,
}

impl Default for Book {
    fn default() -> Book {
        Book {
            nodes: BTreeMap::new(),
            instances: BTreeMap::new(),
            definitions: BTreeMap::new(),
            recent: Vec::new(),
            history: History::default(),
            last_instance: InstanceId(0),
            dirty_nodes: BTreeSet::new(),
            dirty_instances: BTreeSet::new(),
            new_definitions: Vec::new(),
            routing: Routing::default(),
            live: BTreeSet::new(),
        }
    }
}

impl Book {
    /// A controller that knows nothing.
    pub fn new() -> Book {
        Book::default()
    }

    /// Rebuilds the book from the store.
    pub fn restore(
        nodes: Vec<NodeInfo>,
        instances: Vec<Instance>,
        definitions: Vec<(InstanceId, Arc<WorkflowDefinition>)>,
        history: History,
        last_instance: InstanceId,
    ) -> Book {
        let live = instances
            .iter()
            .filter(|i| !i.state.is_final())
            .map(|i| i.id)
            .collect();
        Book {
            live,
            nodes: nodes.into_iter().map(|n| (n.peer.clone(), n)).collect(),
            instances: instances.into_iter().map(|i| (i.id, i)).collect(),
            definitions: definitions.into_iter().collect(),
            history,
            last_instance,
            ..Book::default()
        }
    }

    /// The book, routing notifications as `routing` says (peer to peer unless told).
    pub fn with_routing(mut self, routing: Routing) -> Book {
        self.routing = routing;
        self
    }

    /// Applies one input. On `Err`, nothing changed.
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Applied, BookError> {
        match input {
            Input::Register(mut node) => {
                if self.nodes.get(&node.peer).is_some_and(|n| n.seq > node.seq) {
                    return Ok(Applied::default());
                }
                node.registered_ms = now_ms;
                node.suspected = None;
                self.dirty_nodes.insert(node.peer.clone());
                self.nodes.insert(node.peer.clone(), node);
                // A partner that (re)joins may be the one a contingency activity waits for.
                Ok(self.settle_all(now_ms))
            }
            Input::Suspect { peer, reason } => {
                let Some(node) = self.nodes.get_mut(&peer) else {
                    return Ok(Applied::default());
                };
                if node.suspected.is_some() {
                    return Ok(Applied::default());
                }
                node.suspected = Some(reason.clone());
                let name = node.name.clone();
                self.dirty_nodes.insert(peer.clone());
                let why = format!("partner {name} stopped answering ({reason})");
                let mut effects = Vec::new();
                for id in self.live_instances() {
                    let parts: Vec<PartitionId> = self.instances[&id]
                        .partitions
                        .iter()
                        .filter(|p| p.peer == peer && !p.finished && p.abandoned.is_none())
                        .map(|p| p.id)
                        .collect();
                    if parts.is_empty() {
                        continue;
                    }
                    self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
                        for p in parts {
                            recovery::abandon(inst, ctx, p, &why);
                        }
                    })?;
                }
                let mut applied = self.settle_all(now_ms);
                effects.append(&mut applied.effects);
                applied.effects = effects;
                Ok(applied)
            }
            Input::Answering { peer } => {
                let Some(node) = self.nodes.get_mut(&peer) else {
                    return Ok(Applied::default());
                };
                if node.suspected.take().is_none() {
                    return Ok(Applied::default());
                }
                self.dirty_nodes.insert(peer);
                Ok(self.settle_all(now_ms))
            }
            Input::Tick => {
                let mut effects = Vec::new();
                for id in self.live_instances() {
                    let decide: Vec<(ActivityId, String)> = self.instances[&id]
                        .activities
                        .iter()
                        .filter_map(|a| {
                            a.overdue
                                .clone()
                                .filter(|(at, _)| *at <= now_ms)
                                .map(|(_, why)| (a.id, why))
                        })
                        .collect();
                    if !decide.is_empty() {
                        self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
                            for (a, why) in decide {
                                if let Some(v) = recovery::view_mut(inst, a) {
                                    v.overdue = None;
                                }
                                if recovery::view(inst, a).is_some_and(|v| !v.state.is_final()) {
                                    recovery::withdraw(inst, ctx, a, &why);
                                }
                            }
                        })?;
                    }
                    let due: Vec<PartitionId> = self.instances[&id]
                        .partitions
                        .iter()
                        .filter(|p| !p.finished && p.abandoned.is_none())
                        .filter(|p| p.deadline_ms.is_some_and(|d| d <= now_ms))
                        .map(|p| p.id)
                        .collect();
                    if due.is_empty() {
                        continue;
                    }
                    let secs: BTreeMap<PartitionId, u64> = self
                        .definitions
                        .get(&id)
                        .map(|d| {
                            d.partitions
                                .iter()
                                .map(|p| (p.id, u64::from(p.time_out_secs)))
                                .collect()
                        })
                        .unwrap_or_default();
                    self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
                        for p in due {
                            let s = secs.get(&p).copied().unwrap_or(0);
                            let why =
                                format!("partition {p} did not finish within its timeOut of {s} s");
                            recovery::abandon(inst, ctx, p, &why);
                        }
                    })?;
                }
                Ok(Applied {
                    effects,
                    instance: None,
                })
            }
            Input::Control { instance, action } => self.control(now_ms, instance, action),
            Input::Submit { definition, source } => self.submit(now_ms, &definition, &source),
            Input::Delivered {
                instance,
                partition,
                refused,
            } => {
                let inst = self.instance_mut(instance)?;
                if inst.state.is_final() {
                    return Ok(Applied::default());
                }
                let mut node = None;
                if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
                    p.deployed = refused.is_none();
                    node = Some(p.node.clone());
                }
                if let Some(reason) = &refused {
                    inst.state = InstanceState::Failed;
                    inst.finished_ms = Some(now_ms);
                    inst.detail = Some(format!("partition {partition} was refused: {reason}"));
                } else if inst.state == InstanceState::Deploying && all_deployed(inst) {
                    inst.state = InstanceState::Running;
                }
                let what = match &refused {
                    Some(reason) => format!("partition {partition} refused: {reason}"),
                    None => format!("partition {partition} deployed"),
                };
                self.history
                    .push(instance, now_ms, None, node.as_ref(), what);
                self.dirty_instances.insert(instance);
                self.track(instance);
                Ok(Applied::default())
            }
            Input::FromNode {
                peer,
                message:
                    Message::Report {
                        instance,
                        partition,
                        record,
                    },
            } => {
                check_sender(self.instance_mut(instance)?, &peer, partition)?;
                let mut effects = Vec::new();
                self.with_instance(instance, now_ms, &mut effects, |inst, ctx| {
                    update(inst, ctx, partition, &record);
                })?;
                Ok(Applied {
                    effects,
                    instance: None,
                })
            }
            Input::FromNode {
                peer,
                message:
                    Message::PartitionResult {
                        instance,
                        partition,
                        activities,
                    },
            } => {
                check_sender(self.instance_mut(instance)?, &peer, partition)?;
                let mut effects = Vec::new();
                self.with_instance(instance, now_ms, &mut effects, |inst, ctx| {
                    for record in &activities {
                        update(inst, ctx, partition, record);
                    }
                    if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
                        p.finished = true;
                        p.deployed = true;
                        let (late, node) = (p.abandoned.is_some(), p.node.clone());
                        let what = if late {
                            format!("partition {partition} result came after it was given up: kept for the record only")
                        } else {
                            format!("partition {partition} finished")
                        };
                        ctx.history.push(inst.id, ctx.now, None, Some(&node), what);
                    }
                })?;
                Ok(Applied {
                    effects,
                    instance: None,
                })
            }
            Input::FromNode {
                peer,
                message:
                    Message::Overdue {
                        instance,
                        waiting,
                        precondition,
                        time_out_secs,
                    },
            } => {
                let inst = self.instance_mut(instance)?;
                let partition = inst
                    .activities
                    .iter()
                    .find(|a| a.id == waiting)
                    .and_then(|a| a.partition)
                    .unwrap_or(PartitionId(0));
                check_sender(inst, &peer, partition)?;
                let mut effects = Vec::new();
                self.with_instance(instance, now_ms, &mut effects, |inst, ctx| {
                    overdue(inst, ctx, &peer, waiting, precondition, time_out_secs);
                })?;
                Ok(Applied {
                    effects,
                    instance: None,
                })
            }
            Input::FromNode {
                peer,
                message:
                    Message::Notify {
                        instance,
                        activity,
                        outcome,
                    },
            } if matches!(self.routing, Routing::Hub { .. }) => {
                let inst = self
                    .instances
                    .get(&instance)
                    .ok_or(BookError::UnknownInstance(instance))?;
                let def = self.definitions.get(&instance).map(|d| &**d);
                let effects = hub::relay(inst, def, &self.nodes, &peer, activity, outcome)?;
                Ok(Applied {
                    effects,
                    instance: None,
                })
            }
            Input::FromNode { message, .. } => Err(BookError::Unexpected(message.kind())),
        }
    }

    fn instance_mut(&mut self, id: InstanceId) -> Result<&mut Instance, BookError> {
        self.instances
            .get_mut(&id)
            .ok_or(BookError::UnknownInstance(id))
    }

    /// The definition in `xml`, parsed (or as parsed when it was submitted lately).
    fn parsed(&mut self, xml: &[u8], source: &str) -> Result<Arc<WorkflowDefinition>, BookError> {
        if let Some(i) = self.recent.iter().position(|(bytes, _)| bytes == xml) {
            let hit = self.recent.remove(i);
            let def = hit.1.clone();
            self.recent.insert(0, hit);
            return Ok(def);
        }
        let def = mobiwf_xml_schema::load_definition(xml)
            .map_err(|d| BookError::Invalid(d.render(source)))?
            .value;
        let def = Arc::new(def);
        self.recent.insert(0, (xml.to_vec(), def.clone()));
        self.recent.truncate(RECENT_DEFINITIONS);
        Ok(def)
    }

    fn submit(&mut self, now_ms: u64, xml: &[u8], source: &str) -> Result<Applied, BookError> {
        let def = self.parsed(xml, source)?;
        let nodes: Vec<NodeInfo> = self.nodes.values().cloned().collect();
        let placement = place(&def, &nodes)?;
        let id = InstanceId(self.last_instance.0 + 1);
        let locations = placement
            .node_of
            .iter()
            .map(|(partner, &i)| {
                (
                    *partner,
                    self.routing
                        .location(nodes[i].addrs.first().map_or("", String::as_str)),
                )
            })
            .collect();
        let derived = derive_partitions(
            &placement.definition,
            &DeriveOptions {
                workflow_id: Some(WorkflowId::from(id)),
                start_time: Some(format_time(now_ms)),
                locations,
            },
        );
        let mut effects = Vec::new();
        let mut partitions = Vec::new();
        let mut placed: BTreeMap<ActivityId, (PartitionId, NodeName)> = BTreeMap::new();
        for d in derived {
            let Some(&i) = placement.node_of.get(&d.partner) else {
                continue;
            };
            let node = &nodes[i];
            for act in &d.document.activities {
                placed.insert(act.id, (d.partition, node.name.clone()));
            }
            let time_out = placement
                .definition
                .partitions
                .iter()
                .find(|p| p.id == d.partition)
                .map_or(0, |p| p.time_out_secs);
            partitions.push(PartitionView {
                id: d.partition,
                node: node.name.clone(),
                peer: node.peer.clone(),
                deployed: false,
                finished: false,
                deadline_ms: (time_out > 0).then(|| now_ms + u64::from(time_out) * 1000),
                stands_for: None,
                abandoned: None,
            });
            effects.push(Effect::Send {
                to: node.peer.clone(),
                addrs: node.addrs.clone(),
                message: Message::Deploy {
                    instance: id,
                    partition: d.partition,
                    document: mobiwf_xml_schema::write_partition(&d.document),
                },
            });
        }
        let activities = def
            .activities
            .iter()
            .map(|a| {
                let at = placed.get(&a.id);
                ActivityView {
                    id: a.id,
                    name: a.name.clone(),
                    partition: at.map(|p| p.0),
                    node: at.map(|p| p.1.clone()),
                    state: ActivityState::Waiting,
                    started_ms: None,
                    finished_ms: None,
                    detail: None,
                    contingency: a.contingency,
                    emergency: false,
                    retried: 0,
                    replaced_by: None,
                    stands_for: None,
                    blocked_instead: false,
                    awaits: Vec::new(),
                    relayed: BTreeSet::new(),
                    overdue: None,
                }
            })
            .collect();
        self.last_instance = id;
        self.instances.insert(
            id,
            Instance {
                id,
                workflow: def.id,
                description: def.description.clone(),
                state: InstanceState::Deploying,
                detail: None,
                submitted_ms: now_ms,
                finished_ms: None,
                partitions,
                activities,
            },
        );
        self.dirty_instances.insert(id);
        self.track(id);
        let placed: Vec<String> = self.instances[&id]
            .partitions
            .iter()
            .map(|p| format!("{} on {}", p.id, p.node))
            .collect();
        self.history.push(
            id,
            now_ms,
            None,
            None,
            format!("submitted ({source}); partitions {}", placed.join(", ")),
        );
        self.new_definitions.push((id, xml.to_vec()));
        self.definitions.insert(id, def);
        Ok(Applied {
            effects,
            instance: Some(id),
        })
    }

    /// Runs `f` on an instance with what the recovery rules need, then settles it.
    fn with_instance(
        &mut self,
        id: InstanceId,
        now_ms: u64,
        effects: &mut Vec<Effect>,
        f: impl FnOnce(&mut Instance, &mut Ctx<'_>),
    ) -> Result<(), BookError> {
        let inst = self
            .instances
            .get_mut(&id)
            .ok_or(BookError::UnknownInstance(id))?;
        let mut ctx = Ctx {
            nodes: &self.nodes,
            def: self.definitions.get(&id).map(|d| &**d),
            history: &mut self.history,
            effects,
            now: now_ms,
            routing: &self.routing,
        };
        f(inst, &mut ctx);
        recovery::settle(inst, &mut ctx);
        if inst.state == InstanceState::Deploying && all_deployed(inst) {
            inst.state = InstanceState::Running;
        }
        self.dirty_instances.insert(id);
        self.track(id);
        Ok(())
    }

    /// Keeps `live` true after instance `id` changed.
    fn track(&mut self, id: InstanceId) {
        match self.instances.get(&id) {
            Some(i) if !i.state.is_final() => self.live.insert(id),
            _ => self.live.remove(&id),
        };
    }

    /// The instances not over (ids collected, so the book can change while going through
    /// them).
    fn live_instances(&self) -> Vec<InstanceId> {
        self.live.iter().copied().collect()
    }

    fn live(&self) -> impl Iterator<Item = &Instance> {
        self.live.iter().filter_map(|id| self.instances.get(id))
    }

    /// Settles every instance that is not over (a node joined or answers again).
    fn settle_all(&mut self, now_ms: u64) -> Applied {
        let mut effects = Vec::new();
        for id in self.live_instances() {
            // The instance exists: it was just listed.
            let _ = self.with_instance(id, now_ms, &mut effects, |_, _| {});
        }
        Applied {
            effects,
            instance: None,
        }
    }

    /// An operator interrupts, resumes or cancels an instance; every partner of it is told.
    fn control(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        action: Control,
    ) -> Result<Applied, BookError> {
        let inst = self.instance_mut(id)?;
        let allowed = match action {
            Control::Interrupt => {
                matches!(
                    inst.state,
                    InstanceState::Deploying | InstanceState::Running
                )
            }
            Control::Resume => inst.state == InstanceState::Interrupted,
            Control::Cancel => !inst.state.is_final(),
        };
        if !allowed {
            return Err(BookError::NotNow {
                instance: id,
                state: inst.state.as_str(),
                action: action.as_str(),
            });
        }
        match action {
            Control::Interrupt => inst.state = InstanceState::Interrupted,
            Control::Resume => {
                inst.state = if all_deployed(inst) {
                    InstanceState::Running
                } else {
                    InstanceState::Deploying
                };
            }
            Control::Cancel => {
                inst.state = InstanceState::Cancelled;
                inst.finished_ms = Some(now_ms);
                inst.detail = Some("cancelled by an operator".to_owned());
                for a in inst.activities.iter_mut() {
                    if a.partition.is_some() && !a.state.is_final() {
                        a.state = ActivityState::Cancelled;
                        a.finished_ms = Some(now_ms);
                        a.detail = Some(CANCELLED_BY_OPERATOR.to_owned());
                    }
                }
            }
        }
        let peers: BTreeSet<NodeId> = inst
            .partitions
            .iter()
            .filter(|p| p.abandoned.is_none())
            .map(|p| p.peer.clone())
            .collect();
        let mut effects: Vec<Effect> = peers
            .iter()
            .filter_map(|peer| self.nodes.get(peer))
            .map(|node| Effect::Send {
                to: node.peer.clone(),
                addrs: node.addrs.clone(),
                message: Message::Control {
                    instance: id,
                    action,
                },
            })
            .collect();
        self.history.push(
            id,
            now_ms,
            None,
            None,
            format!(
                "operator: {} (told {} partners)",
                action.as_str(),
                peers.len()
            ),
        );
        self.dirty_instances.insert(id);
        self.track(id);
        if action == Control::Resume {
            // What waited for the resumption: contingency activities to place.
            self.with_instance(id, now_ms, &mut effects, |_, _| {})?;
        }
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// When the next partition `timeOut` runs out, ms since the epoch.
    pub fn next_deadline(&self) -> Option<u64> {
        let partitions = self
            .live()
            .flat_map(|i| i.partitions.iter())
            .filter(|p| !p.finished && p.abandoned.is_none())
            .filter_map(|p| p.deadline_ms);
        let overdue = self
            .live()
            .flat_map(|i| i.activities.iter())
            .filter_map(|a| a.overdue.as_ref().map(|(at, _)| *at));
        partitions.chain(overdue).min()
    }

    /// The nodes the failure detector should watch: those running unfinished partitions of
    /// instances not over, and the suspected ones (to notice when they answer again).
    pub fn watched(&self) -> Vec<Watched> {
        let mut peers: BTreeSet<&NodeId> = self
            .live()
            .flat_map(|i| i.partitions.iter())
            .filter(|p| !p.finished && p.abandoned.is_none())
            .map(|p| &p.peer)
            .collect();
        peers.extend(
            self.nodes
                .values()
                .filter(|n| n.suspected.is_some())
                .map(|n| &n.peer),
        );
        peers
            .into_iter()
            .filter_map(|p| self.nodes.get(p))
            .map(|n| Watched {
                peer: n.peer.clone(),
                addrs: n.addrs.clone(),
                suspected: n.suspected.is_some(),
            })
            .collect()
    }

    /// One instance's history.
    pub fn history(&self, id: InstanceId) -> Option<&[HistoryEvent]> {
        self.instances
            .contains_key(&id)
            .then(|| self.history.of(id))
    }

    /// Hands over what changed since the last call.
    pub fn take_changes(&mut self) -> Changes {
        Changes {
            nodes: std::mem::take(&mut self.dirty_nodes)
                .into_iter()
                .filter_map(|p| self.nodes.get(&p).cloned())
                .collect(),
            instances: std::mem::take(&mut self.dirty_instances)
                .into_iter()
                .filter_map(|i| self.instances.get(&i).cloned())
                .collect(),
            last_instance: self.last_instance,
            definitions: std::mem::take(&mut self.new_definitions),
            history: self.history.take_new(),
        }
    }

    /// One instance.
    pub fn instance(&self, id: InstanceId) -> Option<&Instance> {
        self.instances.get(&id)
    }

    /// Every instance, by id.
    pub fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.instances.values()
    }

    /// Every registered node.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }
}

/// True when no partition waits for its node's acknowledgement any more: each was
/// acknowledged, finished, or given up (a partition given up before its node acknowledged it
/// never will be).
fn all_deployed(inst: &Instance) -> bool {
    inst.partitions
        .iter()
        .all(|p| p.deployed || p.finished || p.abandoned.is_some())
}

/// Only the node that runs a partition reports on it.
pub(crate) fn check_sender(
    inst: &Instance,
    peer: &NodeId,
    partition: PartitionId,
) -> Result<(), BookError> {
    if inst
        .partitions
        .iter()
        .any(|p| p.id == partition && &p.peer == peer)
    {
        Ok(())
    } else {
        Err(BookError::NotYours {
            peer: peer.clone(),
            instance: inst.id,
            partition,
        })
    }
}

/// Takes a node's word about an activity of its partition, never going back from a final
/// state; records what it learnt in the history (a word that comes after the controller
/// decided otherwise is recorded as late and ignored).
fn update(inst: &mut Instance, ctx: &mut Ctx<'_>, partition: PartitionId, record: &ActivityRecord) {
    let Some(i) = inst
        .activities
        .iter()
        .position(|a| a.id == record.activity && a.partition == Some(partition))
    else {
        return;
    };
    let name = label(inst, record.activity);
    let a = &mut inst.activities[i];
    let node = a.node.clone();
    let mut events = Vec::new();
    // Reports can arrive out of order: an emergency start is kept whenever it is heard.
    if record.emergency && !a.emergency {
        events.push((
            record.started_ms,
            format!("{name} started by its timeToWait emergency trigger"),
        ));
    }
    a.emergency |= record.emergency;
    let was_started = a.started_ms.is_some();
    let was_retried = a.retried;
    if !was_started && record.started_ms.is_some() && !record.emergency {
        events.push((record.started_ms, format!("{name} started")));
    }
    // What the node did is a fact even when the controller decided the state: when it started,
    // how often it was tried.
    a.started_ms = a.started_ms.or(record.started_ms);
    a.retried = a.retried.max(record.retried);
    // An operator's cancel is marked at once on everything not known final; a node's word
    // that the activity had finished (or was cancelled) on it is the truth, not a late word.
    let by_operator = a.detail.as_deref() == Some(CANCELLED_BY_OPERATOR);
    if by_operator && record.state.is_final() {
        if record.state != ActivityState::Cancelled {
            events.push((
                record.finished_ms,
                format!(
                    "{name} {} before the cancel reached it",
                    record.state.as_str()
                ),
            ));
        }
        a.state = record.state;
        a.finished_ms = record.finished_ms;
        a.detail = record.detail.clone();
    } else if a.state.is_final() {
        if record.state.is_final() && record.state != a.state {
            events.push((
                Some(ctx.now),
                format!(
                    "late word ignored: {name} {} on {}, but the controller had decided it {} ({})",
                    record.state.as_str(),
                    node.as_ref().map_or("?", NodeName::as_str),
                    a.state.as_str(),
                    a.detail.as_deref().unwrap_or("")
                ),
            ));
        }
    } else {
        if record.retried > was_retried {
            events.push((
                record.finished_ms.or(record.started_ms),
                format!("{name} was tried {} more times", record.retried),
            ));
        }
        if record.state.is_final() {
            let what = match &record.detail {
                Some(d) => format!("{name} {}: {d}", record.state.as_str()),
                None => format!("{name} {}", record.state.as_str()),
            };
            events.push((record.finished_ms, what));
        }
        a.state = record.state;
        a.started_ms = record.started_ms.or(a.started_ms);
        a.finished_ms = record.finished_ms;
        a.detail = record.detail.clone();
        a.retried = record.retried;
    }
    for (at, what) in events {
        ctx.history.push(
            inst.id,
            at.unwrap_or(ctx.now),
            Some(record.activity),
            node.as_ref(),
            what,
        );
    }
}

/// A node says one of its activities waited longer than a precondition's `timeOut`: if the
/// controller knows the predecessor's outcome it relays it; otherwise the predecessor is
/// withdrawn (failed) and its contingency applies.
fn overdue(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    from_peer: &NodeId,
    waiting: ActivityId,
    precondition: ActivityId,
    time_out_secs: u32,
) {
    let node = ctx.nodes.get(from_peer).map(|n| n.name.clone());
    let waited = format!(
        "{} on {} waited more than {time_out_secs} s (its precondition timeOut) for {}",
        label(inst, waiting),
        node.as_ref().map_or("?", NodeName::as_str),
        label(inst, precondition)
    );
    if let Some(outcome) = recovery::effective_outcome(inst, precondition) {
        ctx.history.push(
            inst.id,
            ctx.now,
            Some(precondition),
            node.as_ref(),
            format!("{waited}; its outcome is known, sent again"),
        );
        recovery::notify_peer(inst, ctx, from_peer, precondition, outcome);
        return;
    }
    let undecided = recovery::view(inst, precondition).is_some_and(|v| !v.state.is_final());
    let pending = recovery::view(inst, precondition).is_some_and(|v| v.overdue.is_some());
    if undecided {
        if !pending {
            ctx.history.push(
                inst.id,
                ctx.now,
                Some(precondition),
                node.as_ref(),
                format!(
                    "{waited}; the controller decides in {} s unless its partner reports it",
                    OVERDUE_GRACE_MS / 1000
                ),
            );
            if let Some(v) = recovery::view_mut(inst, precondition) {
                v.overdue = Some((ctx.now + OVERDUE_GRACE_MS, waited));
            }
        }
    } else {
        // It failed and its successors wait for its contingency activity (or a chain of them).
        let mut stand_in = precondition;
        for _ in 0..MAX_CONTINGENCY_CHAIN {
            match recovery::view(inst, stand_in).and_then(|v| v.replaced_by) {
                Some(x) => stand_in = x,
                None => break,
            }
        }
        let what = if stand_in == precondition {
            format!("{waited}; its contingency activity is not placed yet")
        } else {
            format!(
                "{waited}; it failed and {} runs in its place, not finished yet",
                label(inst, stand_in)
            )
        };
        ctx.history
            .push(inst.id, ctx.now, Some(precondition), node.as_ref(), what);
    }
}

/// A time as the documents' `startTime` writes it: `2007/3/10 16:19:34` (UTC).
pub fn format_time(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year}/{month}/{day} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
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

#[cfg(test)]
mod tests;
