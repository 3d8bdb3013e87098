//! The controller's instance bookkeeping: a pure state machine.
//!
//! `apply(now, input) -> effects`: registrations, submissions, deliveries and the reports of
//! the nodes go in; the messages to send come out. No clock, disk, network or log inside; the
//! daemon (`mobiwf-controller`) writes the changes and the messages in one synced batch before
//! it answers or sends anything. This file holds the types and the dispatch of the inputs;
//! each input's handling is in a file of its own (`submit`, `delivered`, `reports`, `overdue`,
//! `nodes`, `tick`, `control`, `hub`); failure decisions in `recovery` and `contingency`; the
//! event history of each instance in `history`.

mod chain;
mod contingency;
mod control;
mod delivered;
mod history;
mod hub;
mod lifecycle;
mod model;
mod nodes;
mod overdue;
mod placement;
mod recovery;
mod reports;
mod submit;
mod tick;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mobiwf_proto::{Control, InstanceId, Message, NodeId, NodeName, PartitionId};
use mobiwf_xml_schema::WorkflowDefinition;

pub use chain::MAX_CONTINGENCY_CHAIN;
pub use history::{Event, History, HistoryEvent, Label, OverdueThen};
pub use hub::Routing;
pub use lifecycle::instance::InstanceState;
pub use lifecycle::{
    ActivityEvent, ActivityLifecycle, Grace, InstanceEvent, PartitionEvent, PartitionLifecycle,
    Refusal, Replacement, Transition, Undecided,
};
pub use model::{
    ActivityView, CANCELLED_BY_OPERATOR, Instance, NodeInfo, OVERDUE_GRACE_MS, PartitionView,
    RECENT_DEFINITIONS, Watched,
};
pub use placement::{Placement, PlacementError, place};
use recovery::Ctx;
pub use submit::format_time;

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
    /// A partner became suspected: nothing to carry out, worth the daemon's log.
    Suspected {
        /// Its name.
        name: NodeName,
        /// What the failure detector saw.
        reason: String,
    },
    /// A suspected partner answers again: worth the daemon's log.
    AnswersAgain {
        /// Its name.
        name: NodeName,
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
            Input::Register(node) => Ok(self.register(now_ms, node)),
            Input::Suspect { peer, reason } => self.suspect(now_ms, &peer, &reason),
            Input::Answering { peer } => Ok(self.answering(now_ms, &peer)),
            Input::Tick => self.tick(now_ms),
            Input::Control { instance, action } => self.control(now_ms, instance, action),
            Input::Submit { definition, source } => self.submit(now_ms, &definition, &source),
            Input::Delivered {
                instance,
                partition,
                refused,
            } => self.delivered(now_ms, instance, partition, refused),
            Input::FromNode { peer, message } => self.message(now_ms, &peer, message),
        }
    }

    /// A node's message: each kind to its own handling.
    fn message(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        message: Message,
    ) -> Result<Applied, BookError> {
        match message {
            Message::Report {
                instance,
                partition,
                record,
            } => self.report(now_ms, peer, instance, partition, &record),
            Message::PartitionResult {
                instance,
                partition,
                activities,
            } => self.partition_result(now_ms, peer, instance, partition, &activities),
            Message::Overdue {
                instance,
                waiting,
                precondition,
                time_out_secs,
            } => self.overdue(
                now_ms,
                peer,
                instance,
                (waiting, precondition),
                time_out_secs,
            ),
            Message::Notify {
                instance,
                activity,
                outcome,
            } if matches!(self.routing, Routing::Hub { .. }) => {
                self.relay(peer, instance, activity, outcome)
            }
            other => Err(BookError::Unexpected(other.kind())),
        }
    }

    fn instance_mut(&mut self, id: InstanceId) -> Result<&mut Instance, BookError> {
        self.instances
            .get_mut(&id)
            .ok_or(BookError::UnknownInstance(id))
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
            // Allowed from `Deploying`, just checked.
            let _ = inst.step(InstanceEvent::AllDeployed);
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
        .all(|p| p.lifecycle() != PartitionLifecycle::Sent)
}

/// Only the node that runs a partition reports on it.
fn check_sender(inst: &Instance, peer: &NodeId, partition: PartitionId) -> Result<(), BookError> {
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

#[cfg(test)]
mod tests;
