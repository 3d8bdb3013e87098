//! Asking the running controller things: what its API and the demo use. Commands change the
//! book (submit, control); queries read it after the group they arrived in is on disk.

use std::sync::Arc;

use mobiwf_book::{BookError, HistoryEvent, Instance, NodeInfo, Starter};
use mobiwf_proto::{Control, InstanceId};
use mobiwf_runtime::daemon;
use mobiwf_runtime::metrics::Metrics;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::{Command, Event, Query};

/// Asks the running controller things; used by the API and the demo.
#[derive(Clone)]
pub struct ControllerClient {
    pub(super) events: mpsc::Sender<Event>,
    pub(super) version: watch::Receiver<u64>,
    /// The instances that became settled (final, compensations over), as each commit makes
    /// them so.
    pub(super) finished: broadcast::Sender<InstanceId>,
    /// The instances each commit changed (state, activities, history), once it is on disk.
    pub(super) touched: broadcast::Sender<InstanceId>,
    /// The controller's metrics.
    pub metrics: Arc<Metrics>,
    /// The mesh, to ask nodes what they know of an instance's data.
    pub mesh: mobiwf_runtime::mesh::MeshHandle,
    /// The store, for pages of the instance list (read from the summaries committed).
    pub(super) store: Arc<dyn mobiwf_runtime::store::Store>,
    /// Admission control of the routes that create instances (`crate::api_admission`).
    pub admission: crate::api_admission::Gate,
}

impl ControllerClient {
    /// The largest document the API takes: [`MAX_DOCUMENT_BYTES`], or less when the book's
    /// store limits one write (etcd): a quarter of that write, since a document is written
    /// again inside other entries (its definition's record, its partitions' messages), its
    /// text escaped as JSON (up to twice as long), and an entry over the limit would stop the
    /// controller.
    ///
    /// [`MAX_DOCUMENT_BYTES`]: mobiwf_xml_schema::limits::MAX_DOCUMENT_BYTES
    pub fn largest_document(&self) -> DocumentLimit {
        DocumentLimit::of(self.store.as_ref())
    }

    pub(super) async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Event,
    ) -> anyhow::Result<T> {
        daemon::ask(&self.events, make).await
    }

    pub(super) async fn query<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Query,
    ) -> anyhow::Result<T> {
        self.ask(|reply| Event::Query(make(reply))).await
    }

    /// Submits a workflow definition, started as `start` says (its responsible user, its
    /// inputs), by this process itself (no creator role is checked); the new instance's id,
    /// or why it was refused.
    pub async fn submit(
        &self,
        definition: Vec<u8>,
        source: String,
        start: mobiwf_book::StartWith,
    ) -> anyhow::Result<Result<InstanceId, BookError>> {
        self.submit_as(definition, source, start, Starter::Anyone)
            .await
    }

    /// Submits a workflow definition for `starter` (the API's caller), whom its creator
    /// role, if any, is checked against.
    pub async fn submit_as(
        &self,
        definition: Vec<u8>,
        source: String,
        start: mobiwf_book::StartWith,
        starter: Starter,
    ) -> anyhow::Result<Result<InstanceId, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Submit {
                definition,
                source,
                start,
                starter,
                reply,
            })
        })
        .await
    }

    /// Applies an organisation document (already validated); the new directory version.
    pub async fn apply_org(
        &self,
        document: String,
        org: mobiwf_xml_schema::Organisation,
    ) -> anyhow::Result<Result<u64, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Organisation {
                document,
                org,
                reply,
            })
        })
        .await
    }

    /// Applies a class document (already validated); how many classes it declares.
    pub async fn apply_classes(
        &self,
        document: String,
        classes: mobiwf_xml_schema::ClassDocument,
    ) -> anyhow::Result<Result<usize, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Classes {
                document,
                classes,
                reply,
            })
        })
        .await
    }

    /// The class document in force, and as applied.
    pub async fn classes(
        &self,
    ) -> anyhow::Result<(mobiwf_xml_schema::ClassDocument, mobiwf_book::ClassesRecord)> {
        self.query(Query::Classes).await
    }

    /// Applies an ordering document (XML or PDL, told by `source`); how many orderings it
    /// holds, or every problem.
    pub async fn apply_orderings(
        &self,
        source: String,
        document: String,
    ) -> anyhow::Result<Result<usize, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Orderings {
                source,
                document,
                reply,
            })
        })
        .await
    }

    /// The ordering document in force, and as applied.
    pub async fn orderings(
        &self,
    ) -> anyhow::Result<(mobiwf_xml_schema::Orderings, mobiwf_book::OrderingsRecord)> {
        self.query(Query::Orderings).await
    }

    /// The synchronization manager's holders and waiters.
    pub async fn sync_view(&self) -> anyhow::Result<mobiwf_book::SyncView> {
        self.query(Query::Sync).await
    }

    /// The organisation directory.
    pub async fn directory(&self) -> anyhow::Result<mobiwf_people::Directory> {
        self.query(Query::Directory).await
    }

    /// An operator's insert, remove or delegate of a work item, sent to the node hosting it;
    /// that node's name, or why not.
    pub async fn administer(
        &self,
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        user: mobiwf_proto::UserId,
        action: mobiwf_proto::ItemAction,
    ) -> anyhow::Result<Result<String, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Worklist {
                instance,
                activity,
                user,
                action,
                reply,
            })
        })
        .await
    }

    /// One instance.
    pub async fn instance(&self, id: InstanceId) -> anyhow::Result<Option<Instance>> {
        self.query(|reply| Query::Instance(id, reply)).await
    }

    /// A page of the instance list (`crate::listing`), read from the store: everything
    /// committed, without asking the actor.
    pub async fn instances(
        &self,
        filter: crate::listing::Filter,
        after: Option<InstanceId>,
        limit: usize,
    ) -> anyhow::Result<crate::listing::Page> {
        let store = self.store.clone();
        let page = tokio::task::spawn_blocking(move || {
            crate::listing::page(store.as_ref(), &filter, after, limit)
        })
        .await??;
        Ok(page)
    }

    /// Every registered node.
    pub async fn nodes(&self) -> anyhow::Result<Vec<NodeInfo>> {
        self.query(Query::Nodes).await
    }

    /// Interrupts, resumes or cancels an instance (every partner of it is told); the instance
    /// afterwards, or why not.
    pub async fn control(
        &self,
        instance: InstanceId,
        action: Control,
    ) -> anyhow::Result<Result<Instance, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Control {
                instance,
                action,
                reply,
            })
        })
        .await
    }

    /// The event history of an instance; `None` when there is no such instance.
    pub async fn history(&self, instance: InstanceId) -> anyhow::Result<Option<Vec<HistoryEvent>>> {
        self.query(|reply| Query::History(instance, reply)).await
    }

    /// Waits until something changes (or `deadline` passes); false on the deadline.
    pub async fn changed(&self, seen: u64, deadline: tokio::time::Instant) -> bool {
        let mut version = self.version.clone();
        tokio::time::timeout_at(deadline, version.wait_for(|v| *v != seen))
            .await
            .is_ok()
    }

    /// The instances changed from now on, each once its change is on disk: a live page
    /// subscribes before it reads, so that no change after its read goes unseen (one it falls
    /// behind on is `Lagged`: read again).
    pub fn touched(&self) -> broadcast::Receiver<InstanceId> {
        self.touched.subscribe()
    }

    /// The current change counter.
    pub fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Asks the node of `activity` of `instance` to pause or resume it (`by`: who asks); the
    /// instance afterwards, or why not.
    pub async fn pause(
        &self,
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        action: mobiwf_proto::PauseAction,
        by: String,
    ) -> anyhow::Result<Result<Instance, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Pause {
                instance,
                activity,
                action,
                by,
                reply,
            })
        })
        .await
    }

    /// Reruns failed `activity` of failed instance `instance` (forward recovery); the
    /// instance afterwards, or why not.
    pub async fn rerun(
        &self,
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
    ) -> anyhow::Result<Result<Instance, BookError>> {
        self.ask(|reply| {
            Event::Command(Command::Rerun {
                instance,
                activity,
                reply,
            })
        })
        .await
    }

    /// Waits until instance `id` is settled (final, its compensations over) or `deadline`
    /// passes, and returns it.
    pub async fn wait(
        &self,
        id: InstanceId,
        deadline: tokio::time::Instant,
    ) -> anyhow::Result<Option<Instance>> {
        // Listen before asking, so that no word is missed between the two. Each commit only
        // wakes the waiters; the actor is asked again once this instance is final (or words
        // were missed), not at every change of any instance.
        let mut finished = self.finished.subscribe();
        loop {
            match self.instance(id).await? {
                Some(i) if !i.is_settled() => {}
                other => return Ok(other),
            }
            loop {
                match tokio::time::timeout_at(deadline, finished.recv()).await {
                    Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => {
                        return self.instance(id).await;
                    }
                    Ok(Ok(done)) if done != id => continue,
                    Ok(Ok(_) | Err(broadcast::error::RecvError::Lagged(_))) => break,
                }
            }
        }
    }
}

/// The largest document the API takes, and the store's limit it comes from, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentLimit {
    /// The most bytes of a request's body.
    pub bytes: usize,
    /// The largest write of the store it was drawn from (etcd's), when it has one.
    pub store_write: Option<usize>,
}

impl DocumentLimit {
    /// The limit a book kept in `store` takes documents to.
    pub fn of(store: &dyn mobiwf_runtime::store::Store) -> DocumentLimit {
        let most = mobiwf_xml_schema::limits::MAX_DOCUMENT_BYTES;
        match store.largest_write() {
            Some(write) if write / 4 < most => DocumentLimit {
                bytes: write / 4,
                store_write: Some(write),
            },
            _ => DocumentLimit {
                bytes: most,
                store_write: None,
            },
        }
    }

    /// Why a body of `length` bytes (unknown for a body sent without its length, refused as
    /// it was read past the limit) is refused, in words that say what to do.
    pub fn refusal(&self, length: Option<u64>) -> String {
        let body = match length {
            Some(length) => format!("the request's body is {length} bytes"),
            None => "the request's body is over the limit".to_owned(),
        };
        match self.store_write {
            Some(write) => format!(
                "{body}; this controller takes documents up to \
                 {} bytes: its book is in etcd, whose transactions carry at most {write} bytes \
                 (--etcd-max-request-bytes, etcd's --max-request-bytes), and a document is \
                 kept inside larger entries; split the document, or raise etcd's \
                 --max-request-bytes and give the controllers the same",
                self.bytes
            ),
            None => format!(
                "{body}; documents are at most {} bytes \
                 (MAX_DOCUMENT_BYTES)",
                self.bytes
            ),
        }
    }
}
