//! The controller's instance bookkeeping: a pure state machine.
//!
//! `apply(now, input) -> effects`: registrations, submissions, deliveries and the reports of
//! the nodes go in; the messages to send come out. No clock, disk, network or log inside; the
//! daemon (`mobiwf-controller`) writes the changes and the messages in one synced batch before
//! it answers or sends anything. This file holds the book and the dispatch of the inputs
//! (their types in `io`); each input's handling is in a file of its own (`submit`,
//! `delivered`, `reports`, `overdue`, `nodes`, `tick`, `control`, `hub`); failure decisions in
//! `recovery` and `contingency`; the event history of each instance in `history`. The people
//! side: the organisation directory (`directory`), notices to an instance's responsible user
//! (`notices`), work item events from the hosts (`items`) and the operators' worklist
//! administration (`worklist`). The deployed definitions (`definitions`), which instances are
//! started from by name (`start`).

mod chain;
mod compensation;
mod completion;
mod contingency;
mod control;
mod definitions;
mod delivered;
mod directory;
mod history;
mod hub;
mod inputs;
mod io;
mod items;
mod lifecycle;
mod model;
mod nodes;
mod notices;
pub mod ordering;
mod overdue;
mod passes;
mod pause;
mod placement;
mod recovery;
mod refused;
mod reports;
mod rerun;
mod retained;
mod speakers;
mod start;
mod submit;
mod sync;
mod tick;
mod worklist;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mobiwf_people::Directory;
use mobiwf_proto::{InstanceId, Message, NodeId, PartitionId};
use mobiwf_xml_schema::WorkflowDefinition;

pub use chain::MAX_CONTINGENCY_CHAIN;
pub use compensation::Compensation;
pub use definitions::{
    DefinitionRef, DefinitionSummary, DefinitionVersion, Deploy, DeployedVersion, Deployment,
    MAX_DEFINITION_VERSIONS, Registry, RegistryChanges, Removal, UnreadableSummary,
    UnreadableVersion, VersionRecord, VersionRole,
};
pub use directory::PeopleRecord;
pub use history::{Event, History, HistoryEvent, Label, OverdueThen};
pub use hub::Routing;
pub use inputs::{MAX_INPUT_PROBLEMS, StartWith, abbreviate, capped};
pub use io::{Applied, BookError, Effect, Input};
pub use items::ItemSummary;
pub use lifecycle::instance::InstanceState;
pub use lifecycle::{
    ActivityEvent, ActivityEventKind, ActivityKind, ActivityLifecycle, Grace, InstanceEvent,
    InstanceEventKind, Kind, PartitionEvent, PartitionEventKind, PartitionKind, PartitionLifecycle,
    PausedBy, Refusal, Replacement, Transition, Undecided,
};
pub use model::{
    ActivityView, CANCELLED_BY_OPERATOR, Instance, NodeInfo, OVERDUE_GRACE_MS, PartitionView,
    RECENT_DEFINITIONS, Watched,
};
pub use placement::{Placement, PlacementError, place};
use recovery::Ctx;
pub use refused::{MAX_REFUSALS_KEPT, Refusals, RefusedTransition, Subject};
pub use rerun::PendingRerun;
pub use retained::{InstanceSummary, Recalled};
pub use start::{Start, StartedByName, Starter};
pub use submit::format_time;
pub use sync::{
    Blocker, ClassesRecord, DEFAULT_LEASE_MS, EndCause, Ending, OrderWaiter, OrderWaiterView,
    OrderingsRecord, SyncEntry, SyncHolder, SyncRecord, SyncView, SyncWaiter,
};

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
    recent: Vec<submit::Recent>,
    history: History,
    last_instance: InstanceId,
    dirty_nodes: BTreeSet<NodeId>,
    dirty_instances: BTreeSet<InstanceId>,
    new_definitions: Vec<(InstanceId, Vec<u8>)>,
    routing: Routing,
    /// The instances not over, so that the per-commit questions (deadlines, nodes to watch)
    /// cost what is under way, not everything ever run.
    live: BTreeSet<InstanceId>,
    /// The organisation directory: the document applied last and the registered devices.
    directory: Directory,
    /// The last request number given to a claim of the controller's own.
    last_request: u64,
    /// True when the directory or `last_request` changed since the last `take_changes`.
    dirty_people: bool,
    /// The length of an hour for `<deadline>`s, in ms (`--hour-ms`).
    hour_ms: u64,
    /// The largest document taken, as given and as stored ([`Book::with_largest_document`]).
    largest_document: Option<usize>,
    /// The transitions a lifecycle table refused since the daemon last took them.
    refused: Refusals,
    /// The deployed definitions, by name and version.
    registry: definitions::Registry,
    /// The class document in force, parsed, and as applied.
    classes: mobiwf_xml_schema::ClassDocument,
    classes_record: sync::ClassesRecord,
    /// True when the class document changed since the last `take_changes`.
    dirty_classes: bool,
    /// The synchronization manager: who holds a task class, who waits.
    sync: sync::Manager,
    /// The lease a grant carries, ms.
    lease_ms: u64,
    /// The ordering requirements between definitions: the document, the tickets.
    ordering: sync::Ordering,
}

/// What changed since the last [`Book::take_changes`].
#[derive(Debug)]
pub struct Changes {
    /// Nodes to write.
    pub nodes: Vec<NodeInfo>,
    /// Nodes an operator removed, to delete.
    pub removed_nodes: Vec<NodeId>,
    /// Instances to write.
    pub instances: Vec<Instance>,
    /// The last instance id given.
    pub last_instance: InstanceId,
    /// Definitions of new instances, as submitted.
    pub definitions: Vec<(InstanceId, Vec<u8>)>,
    /// History events added: (instance, position, event).
    pub history: Vec<(InstanceId, usize, HistoryEvent)>,
    /// The people side, when it changed (the directory, the last claim request number).
    pub people: Option<PeopleRecord>,
    /// The deployed definitions changed: versions deployed, removed, or named by one more
    /// or one less stored instance.
    pub registry: RegistryChanges,
    /// The class document, when an operator applied one.
    pub classes: Option<ClassesRecord>,
    /// The synchronization manager's holders and waiters (and ordering tickets), when they
    /// changed.
    pub sync: Option<SyncRecord>,
    /// The ordering document, when an operator applied one.
    pub orderings: Option<OrderingsRecord>,
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
            directory: Directory::default(),
            last_request: 0,
            dirty_people: false,
            hour_ms: mobiwf_proto::DEFAULT_HOUR_MS,
            largest_document: None,
            refused: Refusals::default(),
            registry: definitions::Registry::default(),
            classes: mobiwf_xml_schema::ClassDocument::default(),
            classes_record: ClassesRecord::default(),
            dirty_classes: false,
            sync: sync::Manager::default(),
            lease_ms: DEFAULT_LEASE_MS,
            ordering: sync::Ordering::default(),
        }
    }
}

impl Book {
    /// A controller that knows nothing.
    pub fn new() -> Book {
        Book::default()
    }

    /// Rebuilds the book from the store (the people side with [`Book::with_people`]).
    pub fn restore(
        nodes: Vec<NodeInfo>,
        instances: Vec<Instance>,
        definitions: Vec<(InstanceId, Arc<WorkflowDefinition>)>,
        history: History,
        last_instance: InstanceId,
    ) -> Book {
        let live = instances
            .iter()
            .filter(|i| !i.state().is_final())
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

    /// The book, counting hours of `hour_ms` ms for `<deadline>`s (`--hour-ms`): sent with
    /// each deployment of a partition that has one.
    pub fn with_hour_ms(mut self, hour_ms: u64) -> Book {
        self.hour_ms = hour_ms.max(1);
        self
    }

    /// The book, routing notifications as `routing` says (peer to peer unless told).
    pub fn with_routing(mut self, routing: Routing) -> Book {
        self.routing = routing;
        self
    }

    /// Applies one input. On `Err`, nothing changed. After every input the synchronization
    /// manager looks again at its holders and waiters (releases, expiries, grants).
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Applied, BookError> {
        let mut applied = self.dispatch(now_ms, input)?;
        self.sync_after(now_ms, &mut applied.effects);
        Ok(applied)
    }

    /// One input to its own handling.
    fn dispatch(&mut self, now_ms: u64, input: Input) -> Result<Applied, BookError> {
        match input {
            Input::Register(node) => Ok(self.register(now_ms, node)),
            Input::Suspect { peer, reason } => self.suspect(now_ms, &peer, &reason),
            Input::Answering { peer } => Ok(self.answering(now_ms, &peer)),
            Input::RemoveNode { name } => self.remove_node(now_ms, &name),
            Input::Tick => self.tick(now_ms),
            Input::Control { instance, action } => self.control(now_ms, instance, action),
            Input::Pause {
                instance,
                activity,
                action,
                by,
            } => self.pause(now_ms, instance, activity, action, by),
            Input::Submit {
                definition,
                source,
                responsible,
                inputs,
                starter,
            } => {
                let with = StartWith {
                    responsible,
                    inputs,
                };
                let submitted = submit::Submitted {
                    xml: &definition,
                    source: &source,
                    starter: &starter,
                };
                self.submit(now_ms, submitted, with)
            }
            Input::Start(start) => self.start(now_ms, start),
            Input::Organisation { document, org } => self.organisation(document, org),
            Input::Classes { document, classes } => self.apply_classes(now_ms, document, classes),
            Input::Orderings { source, document } => self.apply_orderings(now_ms, source, document),
            Input::Worklist {
                instance,
                activity,
                user,
                action,
            } => self.administer(now_ms, instance, activity, user, action),
            Input::Delivered {
                instance,
                partition,
                refused,
            } => self.delivered(now_ms, instance, partition, refused),
            Input::FromNode { peer, message } => self.message(now_ms, &peer, message),
            Input::Rerun { instance, activity } => self.rerun(now_ms, instance, activity),
            Input::RerunDelivered {
                instance,
                partition,
            } => self.rerun_delivered(now_ms, instance, partition),
            Input::Recall(recalled) => self.recall(*recalled),
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
            Message::Report(report) => self.report(now_ms, peer, &report),
            Message::PartitionResult(result) => self.partition_result(now_ms, peer, &result),
            Message::Overdue(overdue) => self.overdue(now_ms, peer, overdue),
            Message::Notify(mobiwf_proto::Notify {
                instance, activity, ..
            })
            | Message::StateChanged(mobiwf_proto::StateChanged {
                instance, activity, ..
            }) if matches!(self.routing, Routing::Hub { .. }) => {
                self.relay(peer, instance, activity, message.clone())
            }
            Message::ItemEvents(told) => self.item_events(peer, &told),
            Message::Item(mobiwf_proto::ItemSnapshot { info, answer, .. }) => {
                self.answered(now_ms, peer, &info, answer)
            }
            Message::Compensated(answer) => self.compensated(now_ms, peer, &answer),
            Message::Presence(presence) => self.presence(peer, presence),
            Message::PauseReport(report) => self.pause_report(peer, &report),
            // A partner's word goes to its partners, unless the controller is the hub.
            Message::Notify(_) | Message::StateChanged(_) => {
                Err(BookError::Unexpected(message.kind()))
            }
            // Not a node's word to the book: what the controller sends, what a device tells
            // its host, and what the controller's daemon answers or takes before the book.
            Message::Register(_)
            | Message::Deploy(_)
            | Message::Completed(_)
            | Message::Withdraw(_)
            | Message::Substitute(_)
            | Message::Control(_)
            | Message::Probe(_)
            | Message::Directory(_)
            | Message::Claim(_)
            | Message::Answer(_)
            | Message::Fetch(_)
            | Message::ReadData(_)
            | Message::ItemData(_)
            | Message::Notice(_)
            | Message::Compensate(_)
            | Message::Rerun(_)
            | Message::Locate(_)
            | Message::SyncGranted(_)
            | Message::SyncRefused(_)
            | Message::Pause(_)
            | Message::NewPass(_) => Err(BookError::Unexpected(message.kind())),
            Message::BeginSync(begin) => self.begin_sync(now_ms, peer, begin),
            Message::EndSync(end) => self.end_sync(now_ms, peer, &end),
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
        let was_final: Vec<bool> = inst
            .activities
            .iter()
            .map(|a| a.state().is_final())
            .collect();
        let mut ctx = Ctx {
            nodes: &self.nodes,
            def: self.definitions.get(&id).map(|d| &**d),
            history: &mut self.history,
            effects,
            now: now_ms,
            routing: &self.routing,
            hour_ms: self.hour_ms,
            refused: &mut self.refused,
        };
        f(inst, &mut ctx);
        recovery::settle(inst, &mut ctx);
        if inst.state() == InstanceState::Deploying && all_deployed(inst) {
            let step = inst.step(InstanceEvent::AllDeployed);
            ctx.refused.report(id, Subject::Instance, step);
        }
        let ended = notices::newly_ended(inst, &was_final);
        self.dirty_instances.insert(id);
        for (activity, text) in ended {
            self.notice(now_ms, id, Some(activity), notices::FAILED, text, effects);
        }
        self.track(now_ms, id, effects);
        Ok(())
    }

    /// Keeps `live` true after instance `id` changed; an instance that joins it deploying
    /// started, one that leaves it ended (again, after a rerun or its compensations): its responsible user is told (each happens once).
    fn track(&mut self, now_ms: u64, id: InstanceId, effects: &mut Vec<Effect>) {
        let (joined, left) = match self.instances.get(&id) {
            Some(i) if !i.state().is_final() => (self.live.insert(id), false),
            _ => (false, self.live.remove(&id)),
        };
        // One back under way for its recovery (a rerun: running; its compensations) did not
        // start: only a submission joins deploying.
        let started = self
            .instances
            .get(&id)
            .is_some_and(|i| i.state() == InstanceState::Deploying);
        if joined && started {
            let text = notices::started_text(&self.instances[&id]);
            self.notice(now_ms, id, None, notices::STARTED, text, effects);
        }
        if left && let Some(inst) = self.instances.get(&id) {
            let text = notices::ended_text(inst);
            self.notice(now_ms, id, None, notices::ENDED, text, effects);
        }
    }

    /// The instances not over (ids collected, so the book can change while going through
    /// them).
    fn live_instances(&self) -> Vec<InstanceId> {
        self.live.iter().copied().collect()
    }

    fn live(&self) -> impl Iterator<Item = &Instance> {
        self.live.iter().filter_map(|id| self.instances.get(id))
    }

    /// A node says how a compensation ended.
    fn compensated(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        answer: &mobiwf_proto::Compensated,
    ) -> Result<Applied, BookError> {
        check_sender(self.instance_mut(answer.instance)?, peer, answer.partition)?;
        let mut effects = Vec::new();
        self.with_instance(answer.instance, now_ms, &mut effects, |inst, ctx| {
            compensation::on_answer(inst, ctx, answer);
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
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
            .filter(|p| !p.is_over())
            .filter_map(|p| p.deadline_ms);
        let overdue = self
            .live()
            .flat_map(|i| i.activities.iter())
            .filter_map(|a| a.overdue().map(|grace| grace.at_ms));
        partitions.chain(overdue).chain(self.sync_deadline()).min()
    }

    /// One instance's history.
    pub fn history(&self, id: InstanceId) -> Option<&[HistoryEvent]> {
        self.instances
            .contains_key(&id)
            .then(|| self.history.of(id))
    }

    /// Hands over what changed since the last call.
    pub fn take_changes(&mut self) -> Changes {
        let (nodes, removed): (Vec<NodeId>, Vec<NodeId>) = std::mem::take(&mut self.dirty_nodes)
            .into_iter()
            .partition(|p| self.nodes.contains_key(p));
        Changes {
            nodes: nodes
                .iter()
                .filter_map(|p| self.nodes.get(p).cloned())
                .collect(),
            removed_nodes: removed,
            instances: std::mem::take(&mut self.dirty_instances)
                .into_iter()
                .filter_map(|i| self.instances.get(&i).cloned())
                .collect(),
            last_instance: self.last_instance,
            definitions: std::mem::take(&mut self.new_definitions),
            history: self.history.take_new(),
            people: std::mem::take(&mut self.dirty_people).then(|| self.people_record()),
            registry: self.registry.take_changes(),
            classes: std::mem::take(&mut self.dirty_classes).then(|| self.classes_record.clone()),
            sync: self.sync.take_dirty(),
            orderings: self.ordering.take_dirty(),
        }
    }

    /// One instance.
    pub fn instance(&self, id: InstanceId) -> Option<&Instance> {
        self.instances.get(&id)
    }

    /// The workflow definition of an instance the book holds, parsed, as submitted or
    /// deployed; none for an instance it let go (settled) or does not know.
    pub fn definition_of(&self, id: InstanceId) -> Option<&Arc<WorkflowDefinition>> {
        self.definitions.get(&id)
    }

    /// Every instance, by id.
    pub fn instances(&self) -> impl Iterator<Item = &Instance> {
        self.instances.values()
    }

    /// Every registered node.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }

    /// A registered node, by peer id (its latest registration: where it is now).
    pub fn node(&self, peer: &NodeId) -> Option<&NodeInfo> {
        self.nodes.get(peer)
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
