//! The durable outbox: every message a controller or node sends is first written to the store
//! in the same synced batch as the state change that caused it, then delivered by a task that
//! retries with backoff until the receiver acknowledges (or refuses) it.
//!
//! Delivery is at least once; receivers deduplicate by [`MessageId`](mobiwf_proto::MessageId),
//! which makes the effect exactly once. Messages to oneself (two partitions of one instance on
//! the same node) go through the same path, delivered to the local inbound queue.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use libp2p::{Multiaddr, PeerId};
use serde::{Deserialize, Serialize};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

use crate::mesh::{Inbound, MeshHandle};
use crate::metrics::{Metrics, Peer};
use crate::store::{Batch, Durability, Store, StoreError, encode};
use mobiwf_proto::{Envelope, NodeId, Reply};

/// Key prefix of outbox entries: `out/<origin seq, 20 digits>`.
pub const OUTBOX_PREFIX: &str = "out/";
/// Key prefix of messages the receiver refused (kept for the operator to look at).
pub const REFUSED_PREFIX: &str = "refused/";
/// Most deliveries attempted at the same time.
pub const MAX_IN_FLIGHT: usize = 256;
/// First wait before a retry; it doubles on every failure.
pub const RETRY_MIN: Duration = Duration::from_millis(50);
/// Longest wait between retries.
pub const RETRY_MAX: Duration = Duration::from_secs(5);

/// A message to deliver, as kept in the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outgoing {
    /// The receiver's peer id.
    pub to: NodeId,
    /// Addresses to dial the receiver at.
    pub addrs: Vec<String>,
    /// Whether the receiver is the controller or a partner (for metrics).
    pub role: Peer,
    /// The message.
    pub envelope: Envelope,
    /// `to` and `addrs` parsed, when the sender had them parsed already: delivery then does
    /// not parse them again. Not stored; a message read back from the store is parsed once.
    #[serde(skip)]
    parsed: Option<(PeerId, Vec<Multiaddr>)>,
}

impl PartialEq for Outgoing {
    fn eq(&self, other: &Self) -> bool {
        (&self.to, &self.addrs, self.role, &self.envelope)
            == (&other.to, &other.addrs, other.role, &other.envelope)
    }
}

impl Outgoing {
    /// A message to a peer whose id and addresses are parsed already.
    pub fn parsed(peer: PeerId, addrs: Vec<Multiaddr>, role: Peer, envelope: Envelope) -> Self {
        Outgoing {
            to: NodeId::new(peer.to_string()),
            addrs: addrs.iter().map(ToString::to_string).collect(),
            role,
            envelope,
            parsed: Some((peer, addrs)),
        }
    }

    /// A message to a peer given as text (parsed when it is delivered).
    pub fn text(to: NodeId, addrs: Vec<String>, role: Peer, envelope: Envelope) -> Self {
        Outgoing {
            to,
            addrs,
            role,
            envelope,
            parsed: None,
        }
    }
}

/// A delivered message and its reply, for owners that want to know (the controller learns
/// that a partition was deployed this way). Such an owner removes the entry itself, with
/// [`stage_answered`], in the same batch as what it makes of the answer: so a crash cannot
/// lose the answer (the message is simply delivered again, and deduplicated).
#[derive(Debug, Clone)]
pub struct Delivered {
    /// What was delivered.
    pub message: Outgoing,
    /// What the receiver answered.
    pub reply: Reply,
}

fn key(seq: u64) -> String {
    format!("{OUTBOX_PREFIX}{seq:020}")
}

/// A refused message as kept under [`REFUSED_PREFIX`], for the operator.
#[derive(Serialize)]
struct RefusedRecord<'a> {
    #[serde(flatten)]
    message: &'a Outgoing,
    refused: &'a str,
}

/// Adds to `batch` the removal of an answered message, and the record of a refusal.
pub fn stage_answered(batch: &mut Batch, msg: &Outgoing, reply: &Reply) -> Result<(), StoreError> {
    batch.delete(key(msg.envelope.id.seq));
    if let Reply::Refused { reason } = reply {
        let record = RefusedRecord {
            message: msg,
            refused: reason,
        };
        batch.put(
            format!("{REFUSED_PREFIX}{:020}", msg.envelope.id.seq),
            encode("a refused message", &record)?,
        );
    }
    Ok(())
}

/// Adds `msg` to `batch`, so that it is written with the state change that caused it.
pub fn stage(batch: &mut Batch, msg: &Outgoing) -> Result<(), StoreError> {
    batch.put(
        key(msg.envelope.id.seq),
        encode("an outgoing message", msg)?,
    );
    Ok(())
}

/// The delivery side of the outbox.
#[derive(Clone)]
pub struct Outbox {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    mesh: MeshHandle,
    local: mpsc::Sender<Inbound>,
    metrics: Arc<Metrics>,
    delivered: Option<mpsc::UnboundedSender<Delivered>>,
    depth: AtomicUsize,
    slots: Semaphore,
    stop: watch::Receiver<bool>,
    stop_tx: watch::Sender<bool>,
}

impl Outbox {
    /// Starts delivering: first every entry left in the store by an earlier run, then whatever
    /// [`Outbox::dispatch`] is given. `local` receives the messages addressed to this peer.
    pub fn start(
        store: Arc<dyn Store>,
        mesh: MeshHandle,
        local: mpsc::Sender<Inbound>,
        metrics: Arc<Metrics>,
        delivered: Option<mpsc::UnboundedSender<Delivered>>,
    ) -> Result<Outbox, StoreError> {
        let (stop_tx, stop) = watch::channel(false);
        let outbox = Outbox {
            inner: Arc::new(Inner {
                store: store.clone(),
                mesh,
                local,
                metrics,
                delivered,
                depth: AtomicUsize::new(0),
                slots: Semaphore::new(MAX_IN_FLIGHT),
                stop,
                stop_tx,
            }),
        };
        let mut pending = Vec::new();
        for (k, v) in store.scan_prefix(OUTBOX_PREFIX.as_bytes())? {
            match serde_json::from_slice::<Outgoing>(&v) {
                Ok(msg) => pending.push(msg),
                Err(e) => tracing::error!(
                    key = %String::from_utf8_lossy(&k),
                    "outbox entry unreadable, left in place: {e}"
                ),
            }
        }
        if !pending.is_empty() {
            tracing::info!(count = pending.len(), "resuming delivery of the outbox");
        }
        outbox.dispatch(pending);
        Ok(outbox)
    }

    /// Delivers messages already written to the store with [`stage`].
    pub fn dispatch(&self, msgs: Vec<Outgoing>) {
        for msg in msgs {
            let depth = self.inner.depth.fetch_add(1, Ordering::SeqCst) + 1;
            self.inner.metrics.set_outbox_depth(depth);
            let inner = self.inner.clone();
            tokio::spawn(async move { inner.deliver(msg).await });
        }
    }

    /// Messages not yet acknowledged.
    pub fn depth(&self) -> usize {
        self.inner.depth.load(Ordering::SeqCst)
    }

    /// Stops every delivery; what is undelivered stays in the store for the next start.
    pub fn shutdown(&self) {
        let _ = self.inner.stop_tx.send(true);
    }
}

impl Inner {
    async fn deliver(self: Arc<Self>, msg: Outgoing) {
        let mut stop = self.stop.clone();
        tokio::select! {
            _ = stop.wait_for(|s| *s) => {}
            _ = self.deliver_until_answered(&msg) => {}
        }
        let depth = self.depth.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
        self.metrics.set_outbox_depth(depth);
    }

    async fn deliver_until_answered(&self, msg: &Outgoing) {
        let kind = msg.envelope.message.kind();
        let (to, addrs) = match parse_destination(msg) {
            Ok(d) => d,
            Err(reason) => {
                self.finish(msg, Reply::Refused { reason });
                return;
            }
        };
        let mut wait = RETRY_MIN;
        loop {
            let attempt = {
                let Ok(_slot) = self.slots.acquire().await else {
                    return;
                };
                self.attempt(to, &addrs, &msg.envelope).await
            };
            match attempt {
                Ok(reply) => {
                    if reply == Reply::Ack {
                        self.metrics.sent(kind, msg.role);
                    }
                    self.finish(msg, reply);
                    return;
                }
                Err(e) => {
                    self.metrics.send_failed(kind, msg.role);
                    tracing::debug!(id = %msg.envelope.id, %to, "send failed, retrying in {wait:?}: {e}");
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(RETRY_MAX);
                }
            }
        }
    }

    async fn attempt(
        &self,
        to: PeerId,
        addrs: &[Multiaddr],
        envelope: &Envelope,
    ) -> Result<Reply, String> {
        if to == self.mesh.peer_id() {
            let (reply, answer) = oneshot::channel();
            let inbound = Inbound {
                from: to,
                envelope: envelope.clone(),
                reply,
            };
            self.local
                .send(inbound)
                .await
                .map_err(|_| "local inbound queue closed".to_owned())?;
            answer
                .await
                .map_err(|_| "local receiver dropped the message".to_owned())
        } else {
            self.mesh
                .request(to, addrs.to_vec(), envelope.clone())
                .await
                .map_err(|e| e.to_string())
        }
    }

    fn finish(&self, msg: &Outgoing, reply: Reply) {
        if let Reply::Refused { reason } = &reply {
            tracing::error!(id = %msg.envelope.id, to = %msg.to, kind = msg.envelope.message.kind(), "message refused: {reason}");
        }
        if let Some(delivered) = &self.delivered {
            // The owner removes the entry with what it makes of the answer.
            let _ = delivered.send(Delivered {
                message: msg.clone(),
                reply,
            });
            return;
        }
        let mut batch = Batch::default();
        // Losing this delete with the machine only means one more (deduplicated) delivery.
        let written = stage_answered(&mut batch, msg, &reply)
            .and_then(|()| self.store.write(batch, Durability::Lazy));
        if let Err(e) = written {
            tracing::error!("cannot remove a delivered message from the outbox: {e}");
        }
    }
}

fn parse_destination(msg: &Outgoing) -> Result<(PeerId, Vec<Multiaddr>), String> {
    if let Some(parsed) = &msg.parsed {
        return Ok(parsed.clone());
    }
    let to: PeerId = msg
        .to
        .as_str()
        .parse()
        .map_err(|e| format!("bad peer id {:?}: {e}", msg.to.as_str()))?;
    let mut addrs = Vec::new();
    for a in &msg.addrs {
        let addr: Multiaddr = a.parse().map_err(|e| format!("bad address {a:?}: {e}"))?;
        addrs.push(addr);
    }
    Ok((to, addrs))
}

/// The peer id at the end of a multiaddr (`.../p2p/<peer id>`), as the documents' `ip` give it.
pub fn peer_of(addr: &str) -> Result<(PeerId, Multiaddr), String> {
    let ma: Multiaddr = addr
        .parse()
        .map_err(|e| format!("{addr:?} is not a multiaddr: {e}"))?;
    match ma.iter().last() {
        Some(libp2p::multiaddr::Protocol::P2p(peer)) => Ok((peer, ma)),
        _ => Err(format!(
            "{addr:?} does not end in /p2p/<peer id>; give the partner's full libp2p address"
        )),
    }
}
