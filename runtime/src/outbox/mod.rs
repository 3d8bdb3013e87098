//! The durable outbox: every message a controller or node sends is first written to the store
//! in the same synced batch as the state change that caused it, then delivered by a task that
//! retries with backoff until the receiver acknowledges (or refuses) it.
//!
//! Delivery is at least once; receivers deduplicate by [`MessageId`](mobiwf_proto::MessageId),
//! which makes the effect exactly once. Messages to oneself (two partitions of one instance on
//! the same node) go through the same path, delivered to the local inbound queue.
//!
//! What an entry is and how it is staged and removed is `entry`; delivering it is here.
//!
//! Deliveries go in per-destination lanes (`lanes`, their decisions pure in
//! `mobiwf_delivery::lane`): a cap per peer under the global one, and a backoff per peer that
//! resets the moment the peer is connected again. What one delivery makes of each try (settle,
//! pause, try again) and how an answered entry is removed are pure too
//! (`mobiwf_delivery::attempt`, which the simulator drives as well); the task here only sends,
//! waits and writes. A peer is addressed by its id: the mesh dials it where it was last heard to
//! be, and after a failure a node asks its controller where the peer is now (`link`).
//!
//! Every try tells the receiver `answered_below`: the lowest sequence number still unanswered
//! among this outbox's messages to it (`unanswered`). Everything it was sent numbered below
//! was answered and is never sent again, so the receiver forgets those ids (`daemon::seen`).
//! A message leaves that count only once its answer cannot be asked for again with another
//! answer: an acknowledgement at once (asked again, a receiver acknowledges a duplicate too), a
//! refusal once the entry's removal is on disk (synced), or, for an owner that removes entries
//! itself, once the owner's group that removed it is written ([`Outbox::release`]).

mod entry;
mod lanes;
mod link;
#[cfg(test)]
mod tests;
mod unanswered;

pub use entry::{
    OUTBOX_PREFIX, Outgoing, REFUSED_PREFIX, location, peer_of, stage, stage_answered,
};
pub use lanes::{Backoff, MAX_IN_FLIGHT_PER_PEER, UNREACHABLE_AFTER_FAILURES};
pub use link::{LOCATE_TIMEOUT, Link, LinkError, MeshLink};

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use libp2p::{Multiaddr, PeerId};
use tokio::sync::{Semaphore, broadcast, mpsc, oneshot, watch};

use crate::mesh::Inbound;
use crate::metrics::Metrics;
use crate::store::{Batch, Durability, Store, StoreError};
use lanes::Lanes;
use mobiwf_delivery::{Next, Removal, Tries};
use mobiwf_proto::{Envelope, NodeId, Reply};
use unanswered::Unanswered;

/// Most deliveries attempted at the same time, all peers together.
pub const MAX_IN_FLIGHT: usize = 256;
/// First wait before a retry to a peer; it doubles on every failure.
pub const RETRY_MIN: Duration = Duration::from_millis(50);
/// Longest wait between tries of a peer that fails. Short: while a peer fails only one
/// delivery at a time tries it (a dial, refused or unreachable at once on a dead link), and a
/// peer whose link comes back without connecting to us is found within this.
pub const RETRY_MAX: Duration = Duration::from_millis(500);
/// Least time between two questions to the controller about where one peer is.
pub const LOCATE_EVERY: Duration = Duration::from_secs(1);
pub use mobiwf_delivery::{UNANSWERED_PAUSE_MAX, UNANSWERED_PAUSE_MIN};

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

/// Where the answers an owner takes go, and which they are: the owner removes those entries
/// itself ([`stage_answered`]) with what it makes of the answer; the outbox removes the rest.
pub struct DeliveredTo {
    /// Where the answers go.
    pub to: mpsc::UnboundedSender<Delivered>,
    /// Whether the owner takes this answer to this message.
    pub takes: fn(&Outgoing, &Reply) -> bool,
}

impl DeliveredTo {
    /// Every answer goes to the owner (the controller, which learns how a deployment or a
    /// rerun was taken).
    pub fn all(to: mpsc::UnboundedSender<Delivered>) -> DeliveredTo {
        DeliveredTo {
            to,
            takes: |_, _| true,
        }
    }
}

/// The delivery side of the outbox.
#[derive(Clone)]
pub struct Outbox {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    link: Arc<dyn Link>,
    local: mpsc::Sender<Inbound>,
    metrics: Arc<Metrics>,
    delivered: Option<DeliveredTo>,
    stop_on_refusal: Option<StopOnRefusal>,
    link_news: Option<mpsc::UnboundedSender<LinkNews>>,
    depth: AtomicUsize,
    unanswered: Unanswered,
    slots: Semaphore,
    lanes: Lanes,
    backoff: Backoff,
    stop: watch::Receiver<bool>,
    stop_tx: watch::Sender<bool>,
}

/// Where an outbox delivers and reports.
pub struct Wiring {
    /// The way out (the mesh).
    pub link: Arc<dyn Link>,
    /// Receives the messages addressed to this peer.
    pub local: mpsc::Sender<Inbound>,
    /// The daemon's metrics.
    pub metrics: Arc<Metrics>,
    /// Where answered messages go, for an owner that removes them itself.
    pub delivered: Option<DeliveredTo>,
    /// Refusals the daemon cannot go on after (a node's registration).
    pub stop_on_refusal: Option<StopOnRefusal>,
    /// Where news of peers becoming unreachable and reachable again goes, for a daemon that
    /// wants it.
    pub link_news: Option<mpsc::UnboundedSender<LinkNews>>,
}

/// A peer became unreachable (deliveries to it failed [`lanes::UNREACHABLE_AFTER_FAILURES`]
/// times in a row) or answered again after that: for a daemon that acts on it (a host marks
/// a device's users inactive; a device disables the host's items).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkNews {
    /// The peer.
    pub peer: PeerId,
    /// True when it answered again.
    pub reachable: bool,
}

/// Message kinds whose refusal stops the daemon, and where to say so (the daemon's fatal
/// news, what `Daemon::failed` returns).
#[derive(Clone)]
pub struct StopOnRefusal {
    /// The kinds (`Message::kind`), e.g. `register`.
    pub kinds: &'static [&'static str],
    /// The daemon's fatal news.
    pub fatal: Arc<watch::Sender<Option<String>>>,
}

impl Outbox {
    /// Starts delivering with the default backoff ([`RETRY_MIN`] to [`RETRY_MAX`]): first every
    /// entry left in the store by an earlier run, then whatever [`Outbox::dispatch`] is given.
    pub fn start(store: Arc<dyn Store>, wiring: Wiring) -> Result<Outbox, StoreError> {
        let backoff = Backoff {
            min: RETRY_MIN,
            max: RETRY_MAX,
        };
        Outbox::start_with(store, wiring, backoff)
    }

    /// Like [`Outbox::start`] with another backoff.
    pub fn start_with(
        store: Arc<dyn Store>,
        wiring: Wiring,
        backoff: Backoff,
    ) -> Result<Outbox, StoreError> {
        let (stop_tx, stop) = watch::channel(false);
        let seen = wiring.link.seen();
        let outbox = Outbox {
            inner: Arc::new(Inner {
                store: store.clone(),
                link: wiring.link,
                local: wiring.local,
                metrics: wiring.metrics,
                delivered: wiring.delivered,
                stop_on_refusal: wiring.stop_on_refusal,
                link_news: wiring.link_news,
                depth: AtomicUsize::new(0),
                unanswered: Unanswered::default(),
                slots: Semaphore::new(MAX_IN_FLIGHT),
                lanes: Lanes::default(),
                backoff,
                stop,
                stop_tx,
            }),
        };
        tokio::spawn(watch_peers(Arc::downgrade(&outbox.inner), seen));
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
            self.inner.unanswered.add(&msg.to, msg.envelope.id.seq);
            let depth = self.inner.depth.fetch_add(1, Ordering::SeqCst) + 1;
            self.inner.metrics.set_outbox_depth(depth);
            let inner = self.inner.clone();
            tokio::spawn(async move { inner.deliver(msg).await });
        }
    }

    /// An owner's group that removed these answered messages ([`stage_answered`]) is on disk:
    /// their numbers no longer hold back what receivers are told (`answered_below`).
    pub fn release(&self, answered: &[(NodeId, u64)]) {
        for (to, seq) in answered {
            self.inner.unanswered.remove(to, *seq);
        }
    }

    /// The lowest number among the unanswered messages to `to`, if any.
    pub fn lowest_unanswered(&self, to: &NodeId) -> Option<u64> {
        self.inner.unanswered.lowest(to)
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

/// Wakes the lane of every peer that connects, for as long as the outbox lives.
async fn watch_peers(inner: std::sync::Weak<Inner>, mut seen: broadcast::Receiver<PeerId>) {
    loop {
        let event = seen.recv().await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match event {
            Ok(peer) => inner.lanes.seen(&peer),
            Err(broadcast::error::RecvError::Lagged(_)) => inner.lanes.seen_all(),
            Err(broadcast::error::RecvError::Closed) => return,
        }
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
        let (to, addrs) = match msg.destination() {
            Ok(d) => d,
            Err(reason) => {
                self.finish(msg, Reply::Refused { reason });
                return;
            }
        };
        let lane = self.lanes.of(to, self.backoff);
        let mut tries = Tries::default();
        loop {
            let attempt = {
                let Some(_turn) = lane.turn().await else {
                    break;
                };
                let Ok(_slot) = self.slots.acquire().await else {
                    break;
                };
                self.attempt(to, &addrs, self.stamped(msg)).await
            };
            let next = tries.after(attempt);
            if next.peer_failed() {
                self.metrics.send_failed(kind, msg.role);
                lane.failed();
            } else {
                lane.succeeded();
            }
            if let (Some(reachable), Some(news)) = (lane.reachability_news(), &self.link_news) {
                let _ = news.send(LinkNews {
                    peer: to,
                    reachable,
                });
            }
            match next {
                Next::Settle(reply) => {
                    if reply == Reply::Ack {
                        self.metrics.sent(kind, msg.role);
                    }
                    self.finish(msg, reply);
                    break;
                }
                Next::Pause { pause, why } => {
                    tracing::debug!(id = %msg.envelope.id, %to, "left unanswered, again in {pause:?}: {why}");
                    tokio::time::sleep(pause).await;
                }
                Next::Retry { why } => {
                    tracing::debug!(id = %msg.envelope.id, %to, "send failed, retrying: {why}");
                    if lane.locate_due(LOCATE_EVERY) {
                        // The peer seen again meanwhile ends the wait for the answer: the
                        // next try goes at once, not up to LOCATE_TIMEOUT later.
                        tokio::select! {
                            moved = self.link.relocate(to) => if moved {
                                lane.reset();
                            },
                            () = lane.changed() => {}
                        }
                    }
                }
            }
        }
        self.lanes.done(to, lane);
    }

    /// The envelope of one try, telling the receiver the lowest number still unanswered
    /// among this outbox's messages to it (at most this message's own).
    fn stamped(&self, msg: &Outgoing) -> Envelope {
        let mut envelope = msg.envelope.clone();
        envelope.answered_below =
            mobiwf_delivery::answered_below(self.unanswered.lowest(&msg.to), envelope.id.seq);
        envelope
    }

    async fn attempt(
        &self,
        to: PeerId,
        addrs: &[Multiaddr],
        envelope: Envelope,
    ) -> Result<Reply, LinkError> {
        if to == self.link.me() {
            let (reply, answer) = oneshot::channel();
            let inbound = Inbound {
                from: to,
                envelope,
                reply,
            };
            self.local
                .send(inbound)
                .await
                .map_err(|_| LinkError::Failed("local inbound queue closed".to_owned()))?;
            answer
                .await
                .map_err(|_| LinkError::Unanswered("this daemon will take it later".to_owned()))
        } else {
            self.link.request(to, addrs.to_vec(), envelope).await
        }
    }

    fn finish(&self, msg: &Outgoing, reply: Reply) {
        if let Reply::Refused { reason } = &reply {
            let kind = msg.envelope.message.kind();
            tracing::error!(id = %msg.envelope.id, to = %msg.to, kind, "message refused: {reason}");
            if let Some(stop) = &self.stop_on_refusal
                && stop.kinds.contains(&kind)
            {
                stop.fatal.send_replace(Some(format!(
                    "{} refused our {kind} message: {reason}",
                    msg.to
                )));
            }
        }
        if let Some(delivered) = &self.delivered
            && (delivered.takes)(msg, &reply)
        {
            // The owner removes the entry with what it makes of the answer.
            let _ = delivered.to.send(Delivered {
                message: msg.clone(),
                reply,
            });
            return;
        }
        let mut batch = Batch::default();
        let removal = Removal::of(&reply);
        let written = stage_answered(&mut batch, msg, &reply)
            .and_then(|()| self.store.write(batch, durability(removal)));
        if let Err(e) = &written {
            let what = removal.what();
            tracing::error!("cannot remove {what} from the outbox: {e}");
        }
        if written.is_ok() || removal.released_unwritten() {
            self.unanswered.remove(&msg.to, msg.envelope.id.seq);
        }
    }
}

/// How the removal of an answered entry is written: a refusal's synced, an acknowledgement's
/// lazily (asked again, the receiver acknowledges the duplicate).
fn durability(removal: Removal) -> Durability {
    if removal.synced() {
        Durability::Synced
    } else {
        Durability::Lazy
    }
}
