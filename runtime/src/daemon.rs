//! The I/O shell both daemons (controller and node) are built from: opening the store, the
//! actor loop that applies events in groups (group commit), forwarding queues into the
//! actor's, asking the actor a question, the timer that wakes the actor at its next stored
//! deadline, serving the HTTP API, and stopping.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::mesh::MeshHandle;
use crate::outbox::Outbox;
use crate::store::{Batch, RocksStore, Store, StoreError};
use mobiwf_proto::MessageId;

/// Most events committed in one synced write.
pub const MAX_GROUP: usize = 256;
/// Capacity of an actor's event queue.
pub const EVENT_QUEUE: usize = 4096;

/// Creates `data_dir` and opens the store: `given` (tests), or RocksDB in `data_dir/db`.
pub fn open_store(
    data_dir: &Path,
    given: Option<Arc<dyn Store>>,
) -> anyhow::Result<Arc<dyn Store>> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create {}", data_dir.display()))?;
    Ok(match given {
        Some(store) => store,
        None => Arc::new(RocksStore::open(&data_dir.join("db"))?),
    })
}

/// Forwards everything `from` yields into `to`, wrapped by `wrap`, until either side closes.
pub fn forward<T, E>(
    mut from: mpsc::Receiver<T>,
    to: mpsc::Sender<E>,
    wrap: fn(T) -> E,
) -> JoinHandle<()>
where
    T: Send + 'static,
    E: Send + 'static,
{
    tokio::spawn(async move {
        while let Some(item) = from.recv().await {
            if to.send(wrap(item)).await.is_err() {
                break;
            }
        }
    })
}

/// Sends the actor a question made by `make` and waits for the answer.
pub async fn ask<E, T>(
    events: &mpsc::Sender<E>,
    make: impl FnOnce(oneshot::Sender<T>) -> E,
) -> anyhow::Result<T> {
    let (tx, rx) = oneshot::channel();
    events
        .send(make(tx))
        .await
        .map_err(|_| anyhow::anyhow!("the daemon is stopping"))?;
    rx.await
        .map_err(|_| anyhow::anyhow!("the daemon is stopping"))
}

/// The actor loop: takes the events that are waiting (at most [`MAX_GROUP`]) and gives them
/// to `handle` together, so that they share one synced write. When `handle` fails (the store
/// failed, and nothing of the group was acknowledged or sent) the loop stops rather than go on
/// with a state the disk does not have, and says why through `fatal`.
pub async fn run_groups<E>(
    mut events: mpsc::Receiver<E>,
    fatal: watch::Sender<Option<String>>,
    mut handle: impl FnMut(Vec<E>) -> anyhow::Result<()>,
) {
    while let Some(first) = events.recv().await {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match events.try_recv() {
                Ok(e) => group.push(e),
                Err(_) => break,
            }
        }
        if let Err(e) = handle(group) {
            tracing::error!("stopping: {e:#}");
            let _ = fatal.send(Some(format!("{e:#}")));
            return;
        }
    }
}

/// The messages applied so far, for applying each one once: those of the group being built
/// (not yet written) and, through the store, those of earlier groups (`seen/` keys).
#[derive(Debug, Default)]
pub struct Seen(BTreeSet<MessageId>);

impl Seen {
    /// True when `id` was applied before, in this group or an earlier one.
    pub fn contains(&self, store: &dyn Store, id: &MessageId) -> Result<bool, StoreError> {
        Ok(self.0.contains(id) || store.get(id.seen_key().as_bytes())?.is_some())
    }

    /// Records `id` as applied: in `batch`, written with the changes it caused, and in this
    /// group.
    pub fn record(&mut self, batch: &mut Batch, id: MessageId) {
        batch.put(id.seen_key(), Vec::new());
        self.0.insert(id);
    }
}

/// Serves `router` on `addr`; the address it is bound to, and the serving task.
pub async fn serve_api(
    addr: SocketAddr,
    router: axum::Router,
) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot serve the API on {addr}"))?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!("API server stopped: {e}");
        }
    });
    Ok((bound, task))
}

/// What a running daemon holds besides its actor's state: its mesh, its outbox, its tasks,
/// and the news of a fatal error.
pub struct Running {
    /// The mesh.
    pub mesh: MeshHandle,
    /// The outbox.
    pub outbox: Outbox,
    /// Every task the daemon spawned.
    pub tasks: Vec<JoinHandle<()>>,
    /// Set by [`run_groups`] when the actor stops on an error.
    pub fatal: watch::Receiver<Option<String>>,
}

impl Running {
    /// Returns when the daemon stopped on an error it cannot go on after (the store failed),
    /// with the reason; the process should exit.
    pub async fn failed(&self) -> String {
        let mut fatal = self.fatal.clone();
        match fatal.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the daemon stopped".to_owned(),
        }
    }

    /// Stops everything the daemon runs in this process; what is undelivered stays in the
    /// outbox for the next start.
    pub async fn stop(self) {
        self.outbox.shutdown();
        for t in &self.tasks {
            t.abort();
        }
        self.mesh.shutdown().await;
    }
}

/// Sends `tick()` to the actor when its next deadline (ms since the epoch, published on
/// `deadline`) comes; waits again whenever the actor publishes a new one (it publishes after
/// every group, so a tick is followed by the next deadline).
pub fn timer<E: Send + 'static>(
    mut deadline: watch::Receiver<Option<u64>>,
    events: mpsc::Sender<E>,
    tick: fn() -> E,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let next = *deadline.borrow_and_update();
            match next {
                None => {
                    if deadline.changed().await.is_err() {
                        return;
                    }
                }
                Some(at) => {
                    let wait = at.saturating_sub(crate::process::now_ms());
                    tokio::select! {
                        _ = tokio::time::sleep(std::time::Duration::from_millis(wait)) => {
                            if events.send(tick()).await.is_err() {
                                return;
                            }
                            if deadline.changed().await.is_err() {
                                return;
                            }
                        }
                        changed = deadline.changed() => {
                            if changed.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        }
    })
}
