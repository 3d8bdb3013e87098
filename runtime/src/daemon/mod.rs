//! The I/O shell both daemons (controller and node) are built from.
//!
//! - `start`: what both do before their actor runs (store, identity, mesh, outbox, queues)
//!   and the running [`Daemon`] both return (`client`, `failed`, `stop`);
//! - `actor`: the [`Actor`] trait and the loop that applies events in groups and writes each
//!   group in one synced batch before anything of it is sent or acknowledged;
//! - `group`: one group on its way to disk, and the apply-once prelude of inbound messages;
//! - `sequencer`: the [`Sequencer`] that numbers outgoing messages (with the store's
//!   incarnation), and parses the partner addresses they go to;
//! - `seen`: which inbound messages were applied, per sender a floor and the keys above it
//!   (the rule pure in `mobiwf_delivery::seen`, the store's reads and writes around it);
//! - here: forwarding queues into the actor's, asking the actor a question, the timer that
//!   wakes it at its next stored deadline, and serving the HTTP API (over TLS by `crate::tls`
//!   when the daemon has a certificate);
//! - `accept`: the API's accept loop, plain or over TLS, within the connection limits of
//!   `crate::http_limits`.

mod accept;
mod actor;
mod group;
mod seen;
mod sequencer;
mod start;
#[cfg(test)]
mod tests;

pub use actor::{Actor, MAX_GROUP, Shell, run};
pub use group::{Destination, Group, NotApplied};
pub use seen::{MAX_FORGOTTEN_PER_GROUP, MAX_SEEN_ABOVE_FLOOR};
pub use sequencer::{INCARNATION_KEY, MAX_CACHED_ADDRESSES, SEQ_KEY, Sequencer};
pub use start::{Base, Daemon, Setup};

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::store::{RocksStore, Store};
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

/// Where [`forward`] takes from: a bounded channel, or an unbounded one (news the sender must
/// never wait to give: the outbox's deliveries and link news).
pub trait Source<T>: Send + 'static {
    /// The next item; `None` once every sender is gone.
    fn next(&mut self) -> impl std::future::Future<Output = Option<T>> + Send;
}

impl<T: Send + 'static> Source<T> for mpsc::Receiver<T> {
    fn next(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        self.recv()
    }
}

impl<T: Send + 'static> Source<T> for mpsc::UnboundedReceiver<T> {
    fn next(&mut self) -> impl std::future::Future<Output = Option<T>> + Send {
        self.recv()
    }
}

/// Forwards everything `from` yields into `to`, wrapped by `wrap`, until either side closes.
pub fn forward<T, E>(
    mut from: impl Source<T>,
    to: mpsc::Sender<E>,
    wrap: fn(T) -> E,
) -> JoinHandle<()>
where
    T: Send + 'static,
    E: Send + 'static,
{
    tokio::spawn(async move {
        while let Some(item) = from.next().await {
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

/// How a daemon serves its HTTP API.
pub struct Api {
    /// Where.
    pub addr: SocketAddr,
    /// Over TLS with this certificate (`--tls-cert`, `--tls-key`); plain HTTP when `None`.
    pub tls: Option<crate::tls::ServerTls>,
    /// The routes (the token check included).
    pub router: axum::Router,
}

/// Serves `api` (within `crate::http_limits`' limits); the address it is bound to, and the
/// serving task (abort it to stop: the connections close gracefully). Every request carries
/// how the API is served ([`crate::tls::Served`]). An API reachable from other machines
/// without TLS is warned about: its tokens and cookies would cross the network in clear.
pub async fn serve_api(api: Api) -> anyhow::Result<(SocketAddr, JoinHandle<()>)> {
    crate::http_limits::raise_open_files();
    let served = crate::tls::Served::with(api.tls.as_ref());
    let router = crate::http_limits::limited(api.router).layer(axum::Extension(served));
    let listener = tokio::net::TcpListener::bind(api.addr)
        .await
        .with_context(|| format!("cannot serve the API on {}", api.addr))?;
    let bound = listener.local_addr()?;
    if in_clear_text(bound, served.tls) {
        warn_clear_text(bound);
    }
    let tls = api
        .tls
        .map(|tls| tokio_rustls::TlsAcceptor::from(tls.config()));
    let limits = crate::http_limits::ConnectionLimits::API;
    let task = tokio::spawn(accept::serve(listener, router, tls, limits));
    Ok((bound, task))
}

/// Whether an API bound to `bound`, over TLS or not, lets tokens cross a network in clear
/// text: plain HTTP on anything but loopback (an unspecified 0.0.0.0 or :: included).
pub(crate) fn in_clear_text(bound: SocketAddr, tls: bool) -> bool {
    !tls && !bound.ip().is_loopback()
}

/// Says loudly that the API on `bound`, which other machines may reach, is plain HTTP.
fn warn_clear_text(bound: SocketAddr) {
    tracing::warn!(
        "the HTTP API on {bound} is reachable from other machines WITHOUT TLS: API tokens and \
         session cookies travel in clear text, for anyone on the network to read and reuse; \
         serve it over https with --tls-cert FILE --tls-key FILE (PEM; see docs/operating.md, \
         \"TLS\"), or listen on 127.0.0.1"
    );
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
