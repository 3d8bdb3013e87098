//! The controller's instance bookkeeping: a pure state machine.
//!
//! `apply(now, input) -> effects`: registrations, submissions, deliveries and the reports of
//! the nodes go in; the messages to send come out. No clock, disk or network inside; the
//! daemon (`crate::daemon`) writes the changes and the messages in one synced batch before it
//! answers or sends anything.

mod placement;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_runtime::wire::{ActivityRecord, ActivityState, Message};
use mobiwf_xml_schema::{DeriveOptions, WorkflowId, derive_partitions};
use serde::{Deserialize, Serialize};

pub use placement::{Placement, PlacementError, place};

/// A registered node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    /// Its peer id.
    pub peer: String,
    /// Its name.
    pub name: String,
    /// The activity types it can run.
    pub skills: Vec<u64>,
    /// Its libp2p addresses.
    pub addrs: Vec<String>,
    /// When it (last) registered.
    pub registered_ms: u64,
    /// The sequence number of its registration message: an older registration (delivered
    /// late by the node's outbox) never replaces a newer one.
    #[serde(default)]
    pub seq: u64,
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
}

impl InstanceState {
    /// True once the instance can no longer change.
    pub fn is_final(self) -> bool {
        matches!(self, InstanceState::Succeeded | InstanceState::Failed)
    }

    /// The word used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            InstanceState::Deploying => "deploying",
            InstanceState::Running => "running",
            InstanceState::Succeeded => "succeeded",
            InstanceState::Failed => "failed",
        }
    }
}

/// One partition of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionView {
    /// The partition id.
    pub id: u64,
    /// The name of the node that runs it.
    pub node: String,
    /// That node's peer id.
    pub peer: String,
    /// True once the node acknowledged the partition.
    pub deployed: bool,
    /// True once its result came back.
    pub finished: bool,
}

/// One activity of an instance as the controller knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityView {
    /// The activity id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// The partition that runs it (none: a contingency activity not placed).
    pub partition: Option<u64>,
    /// The node that runs it.
    pub node: Option<String>,
    /// Its state.
    pub state: ActivityState,
    /// When it started, ms since the epoch.
    pub started_ms: Option<u64>,
    /// When it finished, ms since the epoch.
    pub finished_ms: Option<u64>,
    /// Why it failed or was cancelled.
    pub detail: Option<String>,
    /// Its `contingencyActivityId`: -1 a failure blocks its successors, 0 releases them,
    /// x > 0 activity x runs instead.
    pub contingency: i64,
    /// True when its `timeToWait` ran out and it was started before its preconditions were met.
    #[serde(default)]
    pub emergency: bool,
}

/// One instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Instance {
    /// The instance id (also `workflow@id` in its partition documents).
    pub id: u64,
    /// The id of the workflow definition.
    pub workflow: u64,
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
        instance: u64,
        /// The partition.
        partition: u64,
        /// The refusal's reason, if it was refused.
        refused: Option<String>,
    },
    /// A node reports (`Report` or `PartitionResult`).
    FromNode {
        /// The sending node's peer id (authenticated by the transport).
        peer: String,
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
        to: String,
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
    UnknownInstance(u64),
    /// A report from a node that does not run that partition.
    #[error("peer {peer} does not run partition {partition} of instance {instance}")]
    NotYours {
        /// The sender.
        peer: String,
        /// The instance.
        instance: u64,
        /// The partition.
        partition: u64,
    },
    /// A message the controller does not take.
    #[error("the controller does not take {0} messages")]
    Unexpected(&'static str),
}

/// What `apply` did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Messages to send.
    pub effects: Vec<Effect>,
    /// The new instance, for a submission.
    pub instance: Option<u64>,
}

/// Everything the controller knows.
#[derive(Debug, Default)]
pub struct Book {
    nodes: BTreeMap<String, NodeInfo>,
    instances: BTreeMap<u64, Instance>,
    last_instance: u64,
    dirty_nodes: BTreeSet<String>,
    dirty_instances: BTreeSet<u64>,
}

/// What changed since the last [`Book::take_changes`].
#[derive(Debug, Default)]
pub struct Changes {
    /// Nodes to write.
    pub nodes: Vec<NodeInfo>,
    /// Instances to write.
    pub instances: Vec<Instance>,
    /// The last instance id given.
    pub last_instance: u64,
}

impl Book {
    /// A controller that knows nothing.
    pub fn new() -> Book {
        Book::default()
    }

    /// Rebuilds the book from the store.
    pub fn restore(nodes: Vec<NodeInfo>, instances: Vec<Instance>, last_instance: u64) -> Book {
        Book {
            nodes: nodes.into_iter().map(|n| (n.peer.clone(), n)).collect(),
            instances: instances.into_iter().map(|i| (i.id, i)).collect(),
            last_instance,
            ..Book::default()
        }
    }

    /// Applies one input. On `Err`, nothing changed.
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Applied, BookError> {
        match input {
            Input::Register(mut node) => {
                if self.nodes.get(&node.peer).is_some_and(|n| n.seq > node.seq) {
                    return Ok(Applied::default());
                }
                node.registered_ms = now_ms;
                self.dirty_nodes.insert(node.peer.clone());
                self.nodes.insert(node.peer.clone(), node);
                Ok(Applied::default())
            }
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
                if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
                    p.deployed = refused.is_none();
                }
                if let Some(reason) = refused {
                    if !inst.state.is_final() {
                        inst.state = InstanceState::Failed;
                        inst.finished_ms = Some(now_ms);
                        inst.detail = Some(format!("partition {partition} was refused: {reason}"));
                    }
                } else if inst.state == InstanceState::Deploying
                    && inst.partitions.iter().all(|p| p.deployed)
                {
                    inst.state = InstanceState::Running;
                }
                self.dirty_instances.insert(instance);
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
                let inst = self.instance_mut(instance)?;
                check_sender(inst, &peer, partition)?;
                update(inst, partition, &record);
                self.dirty_instances.insert(instance);
                Ok(Applied::default())
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
                let inst = self.instance_mut(instance)?;
                check_sender(inst, &peer, partition)?;
                for record in &activities {
                    update(inst, partition, record);
                }
                if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
                    p.finished = true;
                    p.deployed = true;
                }
                if !inst.state.is_final() && inst.partitions.iter().all(|p| p.finished) {
                    let failed = inst.activities.iter().any(|a| match a.state {
                        ActivityState::Cancelled => true,
                        ActivityState::Failed => a.contingency != 0,
                        _ => false,
                    });
                    inst.state = if failed {
                        InstanceState::Failed
                    } else {
                        InstanceState::Succeeded
                    };
                    inst.finished_ms = Some(now_ms);
                }
                self.dirty_instances.insert(instance);
                Ok(Applied::default())
            }
            Input::FromNode { message, .. } => Err(BookError::Unexpected(message.kind())),
        }
    }

    fn instance_mut(&mut self, id: u64) -> Result<&mut Instance, BookError> {
        self.instances
            .get_mut(&id)
            .ok_or(BookError::UnknownInstance(id))
    }

    fn submit(&mut self, now_ms: u64, xml: &[u8], source: &str) -> Result<Applied, BookError> {
        let def = mobiwf_xml_schema::load_definition(xml)
            .map_err(|d| BookError::Invalid(d.render(source)))?
            .value;
        let nodes: Vec<NodeInfo> = self.nodes.values().cloned().collect();
        let placement = place(&def, &nodes)?;
        let id = self.last_instance + 1;
        let locations = placement
            .node_of
            .iter()
            .map(|(partner, &i)| {
                (
                    *partner,
                    nodes[i].addrs.first().cloned().unwrap_or_default(),
                )
            })
            .collect();
        let derived = derive_partitions(
            &placement.definition,
            &DeriveOptions {
                workflow_id: Some(WorkflowId(id)),
                start_time: Some(format_time(now_ms)),
                locations,
            },
        );
        let mut effects = Vec::new();
        let mut partitions = Vec::new();
        let mut placed: BTreeMap<u64, (u64, String)> = BTreeMap::new();
        for d in derived {
            let Some(&i) = placement.node_of.get(&d.partner) else {
                continue;
            };
            let node = &nodes[i];
            for act in &d.document.activities {
                placed.insert(act.id.0, (d.partition.0, node.name.clone()));
            }
            partitions.push(PartitionView {
                id: d.partition.0,
                node: node.name.clone(),
                peer: node.peer.clone(),
                deployed: false,
                finished: false,
            });
            effects.push(Effect::Send {
                to: node.peer.clone(),
                addrs: node.addrs.clone(),
                message: Message::Deploy {
                    instance: id,
                    partition: d.partition.0,
                    document: mobiwf_xml_schema::write_partition(&d.document),
                },
            });
        }
        let activities = def
            .activities
            .iter()
            .map(|a| {
                let at = placed.get(&a.id.0);
                ActivityView {
                    id: a.id.0,
                    name: a.name.clone(),
                    partition: at.map(|p| p.0),
                    node: at.map(|p| p.1.clone()),
                    state: ActivityState::Waiting,
                    started_ms: None,
                    finished_ms: None,
                    detail: None,
                    contingency: i64::try_from(a.contingency.code()).unwrap_or(-1),
                    emergency: false,
                }
            })
            .collect();
        self.last_instance = id;
        self.instances.insert(
            id,
            Instance {
                id,
                workflow: def.id.0,
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
        Ok(Applied {
            effects,
            instance: Some(id),
        })
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
        }
    }

    /// One instance.
    pub fn instance(&self, id: u64) -> Option<&Instance> {
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

/// Only the node that runs a partition reports on it.
fn check_sender(inst: &Instance, peer: &str, partition: u64) -> Result<(), BookError> {
    if inst
        .partitions
        .iter()
        .any(|p| p.id == partition && p.peer == peer)
    {
        Ok(())
    } else {
        Err(BookError::NotYours {
            peer: peer.to_owned(),
            instance: inst.id,
            partition,
        })
    }
}

/// Takes a node's word about an activity of its partition, never going back from a final
/// state.
fn update(inst: &mut Instance, partition: u64, record: &ActivityRecord) {
    let Some(a) = inst
        .activities
        .iter_mut()
        .find(|a| a.id == record.activity && a.partition == Some(partition))
    else {
        return;
    };
    // Reports can arrive out of order: an emergency start is kept whenever it is heard.
    a.emergency |= record.emergency;
    if !a.state.is_final() {
        a.state = record.state;
        a.started_ms = record.started_ms.or(a.started_ms);
        a.finished_ms = record.finished_ms;
        a.detail = record.detail.clone();
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

#[cfg(test)]
mod tests;
