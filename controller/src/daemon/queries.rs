//! What operators and the API ask the actor: answered once the group is written, from the
//! book, or from the store for an instance that settled and left memory.

use mobiwf_book::{HistoryEvent, Instance};
use mobiwf_proto::InstanceId;

use super::Query;
use super::actor::ControllerActor;
use crate::state;

impl ControllerActor {
    /// One instance: the book's, else the store's (a settled one).
    pub(super) fn read_instance(&self, id: InstanceId) -> Option<Instance> {
        if let Some(inst) = self.book.instance(id) {
            return Some(inst.clone());
        }
        state::read_instance(self.store.as_ref(), id)
            .inspect_err(|e| tracing::error!(instance = %id, "cannot read instance: {e}"))
            .ok()
            .flatten()
    }

    /// One instance's history: the book's, else the store's (a settled one).
    fn read_history(&self, id: InstanceId) -> Option<Vec<HistoryEvent>> {
        if let Some(events) = self.book.history(id) {
            return Some(events.to_vec());
        }
        state::read_history(self.store.as_ref(), id)
            .inspect_err(|e| tracing::error!(instance = %id, "cannot read history: {e}"))
            .ok()
            .flatten()
    }

    pub(super) fn answer(&self, query: Query) {
        match query {
            Query::Instance(id, reply) => {
                let _ = reply.send(self.read_instance(id));
            }
            Query::Nodes(reply) => {
                let _ = reply.send(self.book.nodes().cloned().collect());
            }
            Query::History(id, reply) => {
                let _ = reply.send(self.read_history(id));
            }
            Query::Graph(id, reply) => {
                let _ = reply.send(self.read_to_draw(id));
            }
            Query::Directory(reply) => {
                let _ = reply.send(self.book.directory().clone());
            }
            Query::Classes(reply) => {
                let classes = self.book.classes().clone();
                let _ = reply.send((classes, self.book.classes_record().clone()));
            }
            Query::Sync(reply) => {
                let _ = reply.send(self.book.sync_view());
            }
            Query::Orderings(reply) => {
                let orderings = self.book.orderings().clone();
                let _ = reply.send((orderings, self.book.orderings_record().clone()));
            }
            Query::Definitions(query) => self.answer_definitions(query),
        }
    }
}
