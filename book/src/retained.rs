//! Finished instances leave the book, so that memory stays bounded: the book holds the instances
//! that are not settled, and a settled one only while an input about it is applied.
//!
//! The daemon asks the book to let settled instances go once their changes are taken
//! ([`Book::evict_settled`]); before it applies an input that names an instance the book does
//! not hold ([`Input::instance`]), it reads that instance back from its store and hands it in
//! as [`Input::Recall`] (a late report, a rerun, a compensation's answer, an operator's
//! control that is then refused with the reason). The book stays pure: the store is the
//! daemon's. [`InstanceSummary`] is the small record the daemon keeps per instance so that a
//! page of the instance list is read without the full instances.

use mobiwf_proto::{InstanceId, Message};
use mobiwf_xml_schema::{Language, UserId, WorkflowId};
use serde::{Deserialize, Serialize};

use crate::{
    Applied, Book, BookError, DefinitionRef, HistoryEvent, Input, Instance, InstanceState,
};

/// What the instance list shows of an instance (kept by the daemon beside the instance).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceSummary {
    /// The instance id.
    pub id: InstanceId,
    /// The id of the workflow definition.
    pub workflow: WorkflowId,
    /// The workflow's description.
    pub description: String,
    /// Where it is.
    pub state: InstanceState,
    /// Why it failed, when the reason is not an activity's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When it was submitted, ms since the epoch.
    pub submitted_ms: u64,
    /// When it reached its final state.
    pub finished_ms: Option<u64>,
    /// Its responsible user, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsible: Option<UserId>,
    /// True once it is final and has no compensation still to plan.
    pub settled: bool,
    /// The deployed definition it was started from, when started by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<DefinitionRef>,
}

impl Instance {
    /// What the instance list shows of it.
    pub fn summary(&self) -> InstanceSummary {
        InstanceSummary {
            id: self.id,
            workflow: self.workflow,
            description: self.description.clone(),
            state: self.state(),
            detail: self.detail.clone(),
            submitted_ms: self.submitted_ms,
            finished_ms: self.finished_ms,
            responsible: self.responsible.clone(),
            settled: self.is_settled(),
            definition: self.definition.clone(),
        }
    }
}

/// A settled instance read back from the store, to be handed to the book.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The instance as stored.
    pub instance: Instance,
    /// Its workflow definition as submitted; none when it names a deployed definition
    /// (`Instance::definition`), which the book's registry holds.
    pub definition: Option<Vec<u8>>,
    /// Its history, in the order the controller learnt it.
    pub history: Vec<HistoryEvent>,
}

impl Input {
    /// The instance this input is about, if it is about one: the daemon recalls it first when
    /// the book does not hold it.
    pub fn instance(&self) -> Option<InstanceId> {
        match self {
            Input::Control { instance, .. }
            | Input::Pause { instance, .. }
            | Input::Worklist { instance, .. }
            | Input::Delivered { instance, .. }
            | Input::Rerun { instance, .. }
            | Input::RerunDelivered { instance, .. } => Some(*instance),
            Input::FromNode { message, .. } => message_instance(message),
            Input::Recall(recalled) => Some(recalled.instance.id),
            Input::Register(_)
            | Input::Submit { .. }
            | Input::Start(_)
            | Input::Suspect { .. }
            | Input::RemoveNode { .. }
            | Input::Answering { .. }
            | Input::Tick
            | Input::Organisation { .. }
            | Input::Classes { .. }
            | Input::Orderings { .. } => None,
        }
    }
}

/// The instance a node's message is about, if any.
fn message_instance(message: &Message) -> Option<InstanceId> {
    match message {
        Message::Report(report) => Some(report.instance),
        Message::PartitionResult(result) => Some(result.instance),
        Message::Overdue(overdue) => Some(overdue.instance),
        Message::Notify(notify) => Some(notify.instance),
        Message::StateChanged(change) => Some(change.instance),
        Message::ItemEvents(told) => Some(told.instance),
        Message::Item(snapshot) => Some(snapshot.info.instance),
        Message::Compensated(answer) => Some(answer.instance),
        Message::BeginSync(begin) => Some(begin.ticket.instance),
        Message::EndSync(end) => Some(end.ticket.instance),
        Message::PauseReport(report) => Some(report.instance),
        // About no instance, or not a node's word to the controller (the book refuses it).
        Message::Register(_)
        | Message::Presence(_)
        | Message::Probe(_)
        | Message::Locate(_)
        | Message::Deploy(_)
        | Message::Completed(_)
        | Message::Withdraw(_)
        | Message::Substitute(_)
        | Message::Control(_)
        | Message::Directory(_)
        | Message::NewPass(_)
        | Message::Claim(_)
        | Message::Answer(_)
        | Message::Fetch(_)
        | Message::ReadData(_)
        | Message::ItemData(_)
        | Message::Notice(_)
        | Message::Compensate(_)
        | Message::SyncGranted(_)
        | Message::SyncRefused(_)
        | Message::Pause(_)
        | Message::Rerun(_) => None,
    }
}

impl Book {
    /// True when the book holds instance `id` (not settled, or recalled and not let go yet).
    pub fn holds(&self, id: InstanceId) -> bool {
        self.instances.contains_key(&id)
    }

    /// How many instances the book holds.
    pub fn resident(&self) -> usize {
        self.instances.len()
    }

    /// Takes a settled instance back (`Input::Recall`). One the book holds already stays as
    /// it is.
    pub(crate) fn recall(&mut self, recalled: Recalled) -> Result<Applied, BookError> {
        let Recalled {
            instance,
            definition,
            history,
        } = recalled;
        let id = instance.id;
        if self.instances.contains_key(&id) {
            return Ok(Applied::default());
        }
        let def = match (&instance.definition, definition) {
            (Some(at), _) => self
                .registry
                .get(at)
                .ok_or_else(|| {
                    BookError::Invalid(format!(
                        "stored instance {id} names definition {at}, which the controller does \
                         not have"
                    ))
                })?
                .definition
                .clone(),
            (None, Some(xml)) => {
                // Stored bytes are MobiWfMS XML whatever the document was submitted in.
                let source = format!("stored definition of instance {id}");
                self.parsed(Language::MobiWfMs, &xml, &source)?.def
            }
            (None, None) => {
                return Err(BookError::Invalid(format!(
                    "stored instance {id} has no definition"
                )));
            }
        };
        if !instance.state().is_final() {
            self.live.insert(id);
        }
        self.definitions.insert(id, def);
        self.history.recall(id, history);
        self.instances.insert(id, instance);
        Ok(Applied::default())
    }

    /// Lets go of those of `ids` that are settled and whose changes were taken
    /// ([`Book::take_changes`]): they are in the store, and are recalled when an input names
    /// them. Returns the ids let go.
    pub fn evict_settled(&mut self, ids: impl IntoIterator<Item = InstanceId>) -> Vec<InstanceId> {
        let mut gone = Vec::new();
        for id in ids {
            let settled = self.instances.get(&id).is_some_and(Instance::is_settled);
            if !settled
                || self.live.contains(&id)
                || self.dirty_instances.contains(&id)
                || self.history.has_new(id)
            {
                continue;
            }
            self.instances.remove(&id);
            self.definitions.remove(&id);
            self.history.forget(id);
            gone.push(id);
        }
        gone
    }
}
