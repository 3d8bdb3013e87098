//! `graph INSTANCE` (`GET /instances/{id}/graph`): an instance's graph, drawn by
//! `mobiwf_graph` from the instance and its definition. The actor hands over what it holds
//! parsed (the book's definition of an instance not settled, the registry's version of one
//! started by name); the document stored with a settled submitted instance is read and
//! parsed here, and the drawing made, off the actor.

use std::sync::Arc;

use anyhow::Context;
use mobiwf_book::Instance;
use mobiwf_graph::{Format, Graph};
use mobiwf_proto::InstanceId;
use mobiwf_xml_schema::WorkflowDefinition;

use super::Query;
use super::actor::ControllerActor;
use super::client::ControllerClient;
use crate::state;

/// What an instance's graph is drawn from, as the actor has it.
pub(super) struct ToDraw {
    /// The instance.
    pub(super) instance: Instance,
    /// Its definition, when the controller holds it parsed.
    pub(super) definition: Option<Arc<WorkflowDefinition>>,
}

impl ControllerActor {
    /// The instance and the definition held for it; `None` when there is no such instance.
    pub(super) fn read_to_draw(&self, id: InstanceId) -> Option<ToDraw> {
        let instance = self.read_instance(id)?;
        let definition = match (self.book.definition_of(id), &instance.definition) {
            (Some(def), _) => Some(def.clone()),
            (None, Some(at)) => self.book.registry().get(at).map(|d| d.definition.clone()),
            (None, None) => None,
        };
        Some(ToDraw {
            instance,
            definition,
        })
    }
}

impl ControllerClient {
    /// Instance `id`'s graph in `format`; `None` when there is no such instance. Drawn
    /// without edges when its definition is not stored (an instance stored before
    /// definitions were) or does not read back.
    pub async fn graph(&self, id: InstanceId, format: Format) -> anyhow::Result<Option<String>> {
        let Some(ToDraw {
            instance,
            definition,
        }) = self.query(|reply| Query::Graph(id, reply)).await?
        else {
            return Ok(None);
        };
        let store = self.store.clone();
        let drawn = tokio::task::spawn_blocking(move || {
            let definition = match definition {
                Some(def) => Some(def),
                None if instance.definition.is_none() => stored(store.as_ref(), id),
                None => None,
            };
            let graph = Graph::of_instance(&instance, definition.as_deref());
            format.render(&graph)
        })
        .await
        .context("drawing the graph")?;
        Ok(Some(drawn))
    }
}

/// The definition stored with submitted instance `id`, parsed; none (and logged) when it is
/// missing or does not read back.
fn stored(
    store: &dyn mobiwf_runtime::store::Store,
    id: InstanceId,
) -> Option<Arc<WorkflowDefinition>> {
    let key = state::definition_key(id);
    let xml = match store.get(key.as_bytes()) {
        Ok(Some(xml)) => xml,
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!(instance = %id, "cannot read its definition for its graph: {e}");
            return None;
        }
    };
    match mobiwf_xml_schema::load_definition_in(mobiwf_xml_schema::Language::MobiWfMs, &xml) {
        Ok(read) => Some(Arc::new(read.value)),
        Err(d) => {
            tracing::warn!(
                instance = %id,
                problem = %d.render("stored definition"),
                "its stored definition does not read back: its graph has no edges"
            );
            None
        }
    }
}
