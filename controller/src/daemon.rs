//! The controller daemon: the thin I/O shell around the bookkeeping (`mobiwf_book`).
//!
//! One task (the *actor*) owns the book. Each group of events (node messages, deliveries,
//! submissions) is applied, then the changes, the messages they cause and the ids of the
//! applied messages are written in **one synced batch**; only then are acknowledgements,
//! answers and messages sent. Readers (the API) ask the actor, and wait for changes on a
//! version counter that the actor bumps after each commit, or, for one instance, for the
//! actor's word that it became final (`wait`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Control, Envelope, InstanceId, Message, MessageId, NodeId, Reply};
use mobiwf_runtime::daemon::{self, EVENT_QUEUE, Running, Seen};
use mobiwf_runtime::mesh::{self, Inbound, MeshConfig};
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::outbox::{self, Delivered, Outbox, Outgoing};
use mobiwf_runtime::store::{Batch, Durability, Store};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::detector::{self, DetectorConfig, Verdict};
use crate::state;
use mobiwf_book::{
    Book, BookError, Effect, HistoryEvent, Input, Instance, NodeInfo, Routing, Watched,
};

/// How to start a controller.
pub struct ControllerConfig {
    /// Where it keeps its identity and database.
    pub data_dir: PathBuf,
    /// Where to listen for nodes.
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API.
    pub api: SocketAddr,
    /// The store; `None` opens RocksDB in `data_dir/db`.
    pub store: Option<Arc<dyn Store>>,
    /// How eagerly partners that stop answering are suspected.
    pub detector: DetectorConfig,
    /// Route every notification through the controller (`serve --routing hub`), the
    /// centralized design the benchmark compares with; peer to peer when false.
    pub hub_routing: bool,
}

/// A running controller.
pub struct Controller {
    /// Its peer id.
    pub peer_id: PeerId,
    /// Its libp2p addresses (with `/p2p/<peer id>`): what nodes are given as `--controller`.
    pub addrs: Vec<String>,
    /// Where its HTTP API listens.
    pub api_addr: SocketAddr,
    client: ControllerClient,
    running: Running,
}

/// Asks the running controller things; used by the API and the demo.
#[derive(Clone)]
pub struct ControllerClient {
    events: mpsc::Sender<Event>,
    version: watch::Receiver<u64>,
    /// The instances that became final, as each commit makes them so.
    finished: broadcast::Sender<u64>,
    /// The controller's metrics.
    pub metrics: Arc<Metrics>,
}

/// How many instances that became final a waiter may fall behind on before it asks the
/// actor again (`broadcast` capacity).
pub const FINISHED_QUEUE: usize = 4096;

enum Event {
    Inbound(Inbound),
    Delivered(Delivered),
    Submit {
        definition: Vec<u8>,
        source: String,
        reply: oneshot::Sender<Result<u64, BookError>>,
    },
    /// A partition `timeOut` came.
    Tick,
    Verdict(Verdict),
    Control {
        instance: u64,
        action: Control,
        reply: oneshot::Sender<Result<Instance, BookError>>,
    },
    Instance(u64, oneshot::Sender<Option<Instance>>),
    Instances(oneshot::Sender<Vec<Instance>>),
    Nodes(oneshot::Sender<Vec<NodeInfo>>),
    History(u64, oneshot::Sender<Option<Vec<HistoryEvent>>>),
}

impl ControllerClient {
    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Event) -> anyhow::Result<T> {
        daemon::ask(&self.events, make).await
    }

    /// Submits a workflow definition; the new instance's id, or why it was refused.
    pub async fn submit(
        &self,
        definition: Vec<u8>,
        source: String,
    ) -> anyhow::Result<Result<u64, BookError>> {
        self.ask(|reply| Event::Submit {
            definition,
            source,
            reply,
        })
        .await
    }

    /// One instance.
    pub async fn instance(&self, id: u64) -> anyhow::Result<Option<Instance>> {
        self.ask(|reply| Event::Instance(id, reply)).await
    }

    /// Every instance.
    pub async fn instances(&self) -> anyhow::Result<Vec<Instance>> {
        self.ask(Event::Instances).await
    }

    /// Every registered node.
    pub async fn nodes(&self) -> anyhow::Result<Vec<NodeInfo>> {
        self.ask(Event::Nodes).await
    }

    /// Interrupts, resumes or cancels an instance (every partner of it is told); the instance
    /// afterwards, or why not.
    pub async fn control(
        &self,
        instance: u64,
        action: Control,
    ) -> anyhow::Result<Result<Instance, BookError>> {
        self.ask(|reply| Event::Control {
            instance,
            action,
            reply,
        })
        .await
    }

    /// The event history of an instance; `None` when there is no such instance.
    pub async fn history(&self, instance: u64) -> anyhow::Result<Option<Vec<HistoryEvent>>> {
        self.ask(|reply| Event::History(instance, reply)).await
    }

    /// Waits until something changes (or `deadline` passes); false on the deadline.
    pub async fn changed(&self, seen: u64, deadline: tokio::time::Instant) -> bool {
        let mut version = self.version.clone();
        tokio::time::timeout_at(deadline, version.wait_for(|v| *v != seen))
            .await
            .is_ok()
    }

    /// The current change counter.
    pub fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Waits until instance `id` is final or `deadline` passes, and returns it.
    pub async fn wait(
        &self,
        id: u64,
        deadline: tokio::time::Instant,
    ) -> anyhow::Result<Option<Instance>> {
        // Listen before asking, so that no word is missed between the two. Each commit only
        // wakes the waiters; the actor is asked again once this instance is final (or words
        // were missed), not at every change of any instance.
        let mut finished = self.finished.subscribe();
        loop {
            match self.instance(id).await? {
                Some(i) if !i.state.is_final() => {}
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

impl Controller {
    /// Opens the data directory, joins the mesh, resumes delivery and serves the API.
    pub async fn start(config: ControllerConfig) -> anyhow::Result<Controller> {
        let store = daemon::open_store(&config.data_dir, config.store.clone())?;
        let keypair = mobiwf_runtime::identity::load_or_create(&config.data_dir)?;
        let (mesh, inbound) = mesh::start(MeshConfig::new(keypair, config.listen.clone())).await?;
        let peer_id = mesh.peer_id();
        let addrs: Vec<String> = mesh.listen_addrs().iter().map(|a| a.to_string()).collect();
        let metrics = Arc::new(Metrics::new());
        let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
        let (local_tx, local) = mpsc::channel::<Inbound>(EVENT_QUEUE);
        let (delivered_tx, mut delivered) = mpsc::unbounded_channel();
        let (book, seq) = state::load(store.as_ref())?;
        let book = if config.hub_routing {
            let address = addrs.first().cloned().ok_or_else(|| {
                anyhow::anyhow!("--routing hub needs the controller to listen somewhere (--listen)")
            })?;
            book.with_routing(Routing::Hub { address })
        } else {
            book
        };
        let (version_tx, version) = watch::channel(0);
        let (finished, _) = broadcast::channel(FINISHED_QUEUE);

        let mut tasks = vec![
            daemon::forward(inbound, events_tx.clone(), Event::Inbound),
            daemon::forward(local, events_tx.clone(), Event::Inbound),
        ];
        let tx = events_tx.clone();
        tasks.push(tokio::spawn(async move {
            while let Some(d) = delivered.recv().await {
                if tx.send(Event::Delivered(d)).await.is_err() {
                    break;
                }
            }
        }));
        let outbox = Outbox::start(
            store.clone(),
            mesh.clone(),
            local_tx,
            metrics.clone(),
            Some(delivered_tx),
        )?;
        let (deadline, deadline_rx) = watch::channel(book.next_deadline());
        let (watched, watched_rx) = watch::channel(book.watched());
        let (verdicts_tx, verdicts) = mpsc::channel(EVENT_QUEUE);
        tasks.push(daemon::forward(verdicts, events_tx.clone(), Event::Verdict));
        tasks.push(detector::start(
            config.detector,
            mesh.clone(),
            peer_id,
            watched_rx,
            verdicts_tx,
        ));
        tasks.push(daemon::timer(deadline_rx, events_tx.clone(), || {
            Event::Tick
        }));
        let mut actor = Actor {
            book,
            seq,
            store,
            outbox: outbox.clone(),
            metrics: metrics.clone(),
            me: NodeId::new(peer_id.to_string()),
            version: version_tx,
            finished: finished.clone(),
            deadline,
            watched,
        };
        let (fatal_tx, fatal) = watch::channel(None);
        tasks.push(tokio::spawn(daemon::run_groups(
            events,
            fatal_tx,
            move |group| actor.handle_group(group),
        )));

        let client = ControllerClient {
            events: events_tx,
            version,
            finished,
            metrics,
        };
        let (api_addr, api) =
            daemon::serve_api(config.api, crate::api::router(client.clone())).await?;
        tasks.push(api);
        Ok(Controller {
            peer_id,
            addrs,
            api_addr,
            client,
            running: Running {
                mesh,
                outbox,
                tasks,
                fatal,
            },
        })
    }

    /// Asks the controller things, as the API does.
    pub fn client(&self) -> ControllerClient {
        self.client.clone()
    }

    /// Returns when the daemon stopped on an error it cannot go on after (the store failed),
    /// with the reason; the process should exit.
    pub async fn failed(&self) -> String {
        self.running.failed().await
    }

    /// Stops everything the controller runs in this process.
    pub async fn stop(self) {
        self.running.stop().await;
    }
}

struct Actor {
    book: Book,
    seq: u64,
    store: Arc<dyn Store>,
    outbox: Outbox,
    metrics: Arc<Metrics>,
    /// Our peer id, as text: the origin of every message id we give.
    me: NodeId,
    version: watch::Sender<u64>,
    finished: broadcast::Sender<u64>,
    /// The book's next partition `timeOut`, for the timer task.
    deadline: watch::Sender<Option<u64>>,
    /// The nodes the failure detector watches.
    watched: watch::Sender<Vec<Watched>>,
}

/// A submission waiting for its answer, and the answer.
type Submitted = (
    oneshot::Sender<Result<u64, BookError>>,
    Result<u64, BookError>,
);

/// An operator's control waiting for its answer, and the answer.
type Controlled = (
    oneshot::Sender<Result<Instance, BookError>>,
    Result<Instance, BookError>,
);

/// What to do once a group of events is on disk.
#[derive(Default)]
struct After {
    acks: Vec<(oneshot::Sender<Reply>, Reply)>,
    submitted: Vec<Submitted>,
    controlled: Vec<Controlled>,
    effects: Vec<Effect>,
    /// Questions, answered after the write so that no answer shows an unwritten state.
    queries: Vec<Event>,
}

impl Actor {
    fn handle_group(&mut self, group: Vec<Event>) -> anyhow::Result<()> {
        let now = mobiwf_runtime::process::now_ms();
        let mut batch = Batch::default();
        let mut after = After::default();
        let mut seen = Seen::default();
        for event in group {
            self.handle(now, event, &mut batch, &mut after, &mut seen)?;
        }
        let mut outgoing = Vec::new();
        for effect in std::mem::take(&mut after.effects) {
            let (to, addrs, message) = match effect {
                Effect::Send { to, addrs, message } => (to, addrs, message),
                Effect::Suspected { name, reason } => {
                    tracing::warn!(partner = %name, %reason, "partner suspected");
                    continue;
                }
                Effect::AnswersAgain { name } => {
                    tracing::info!(partner = %name, "partner answers again");
                    continue;
                }
            };
            self.seq += 1;
            let msg = Outgoing {
                to: to.to_string(),
                addrs,
                role: Peer::Partner,
                envelope: Envelope {
                    id: MessageId {
                        origin: self.me.clone(),
                        seq: self.seq,
                    },
                    message,
                },
            };
            outbox::stage(&mut batch, &msg);
            outgoing.push(msg);
        }
        let changes = self.book.take_changes();
        let changed = !batch.is_empty()
            || !changes.nodes.is_empty()
            || !changes.instances.is_empty()
            || !changes.history.is_empty();
        if changed {
            state::stage(&mut batch, &changes, self.seq)?;
            self.store.write(batch, Durability::Synced)?;
        }
        let mut now_final = Vec::new();
        for inst in &changes.instances {
            tracing::info!(
                instance = inst.id.0,
                state = inst.state.as_str(),
                "instance updated"
            );
            if inst.state.is_final() {
                now_final.push(inst.id.0);
            }
        }
        self.outbox.dispatch(outgoing);
        for (tx, reply) in after.acks {
            let _ = tx.send(reply);
        }
        self.deadline.send_replace(self.book.next_deadline());
        let watched = self.book.watched();
        self.watched.send_if_modified(|w| {
            let differs = *w != watched;
            *w = watched;
            differs
        });
        for (tx, result) in after.controlled {
            let _ = tx.send(result);
        }
        for (tx, result) in after.submitted {
            let _ = tx.send(result);
        }
        for query in after.queries {
            self.answer(query);
        }
        if changed {
            self.version.send_modify(|v| *v += 1);
        }
        for id in now_final {
            // Nobody waiting is fine.
            let _ = self.finished.send(id);
        }
        Ok(())
    }

    fn handle(
        &mut self,
        now: u64,
        event: Event,
        batch: &mut Batch,
        after: &mut After,
        seen: &mut Seen,
    ) -> anyhow::Result<()> {
        match event {
            Event::Inbound(Inbound {
                from,
                envelope,
                reply,
            }) => {
                let Envelope { id, message } = envelope;
                if seen.contains(self.store.as_ref(), &id)? {
                    self.metrics.duplicate();
                    after.acks.push((reply, Reply::Ack));
                    return Ok(());
                }
                let kind = message.kind();
                let input = match message {
                    Message::Register {
                        name,
                        skills,
                        addrs,
                    } => {
                        tracing::info!(%name, peer = %from, "node registered");
                        Input::Register(NodeInfo {
                            peer: NodeId::new(from.to_string()),
                            name,
                            skills,
                            addrs,
                            registered_ms: now,
                            seq: id.seq,
                            suspected: None,
                        })
                    }
                    other => Input::FromNode {
                        peer: NodeId::new(from.to_string()),
                        message: other,
                    },
                };
                match self.book.apply(now, input) {
                    Ok(applied) => {
                        self.metrics.received(kind, Peer::Partner);
                        after.effects.extend(applied.effects);
                        seen.record(batch, id);
                        after.acks.push((reply, Reply::Ack));
                    }
                    Err(e) => {
                        tracing::warn!("refused a {kind} message from {from}: {e}");
                        after.acks.push((
                            reply,
                            Reply::Refused {
                                reason: e.to_string(),
                            },
                        ));
                    }
                }
            }
            Event::Delivered(Delivered { message, reply }) => {
                outbox::stage_answered(batch, &message, &reply);
                if let Message::Deploy {
                    instance,
                    partition,
                    ..
                } = message.envelope.message
                {
                    let refused = match reply {
                        Reply::Ack => None,
                        Reply::Refused { reason } => Some(reason),
                    };
                    if let Err(e) = self.book.apply(
                        now,
                        Input::Delivered {
                            instance,
                            partition,
                            refused,
                        },
                    ) {
                        tracing::warn!("a delivery: {e}");
                    }
                }
            }
            Event::Submit {
                definition,
                source,
                reply,
            } => {
                let result = self
                    .book
                    .apply(now, Input::Submit { definition, source })
                    .map(|applied| {
                        after.effects.extend(applied.effects);
                        applied.instance.map_or(0, |i| i.0)
                    });
                if let Ok(id) = result {
                    tracing::info_span!("instance", instance = id)
                        .in_scope(|| tracing::info!("instance submitted"));
                }
                after.submitted.push((reply, result));
            }
            Event::Tick => self.apply_internal(now, Input::Tick, after),
            Event::Verdict(Verdict::Suspect { peer, reason }) => {
                let peer = NodeId::new(peer);
                self.apply_internal(now, Input::Suspect { peer, reason }, after);
            }
            Event::Verdict(Verdict::Answering { peer }) => {
                let peer = NodeId::new(peer);
                self.apply_internal(now, Input::Answering { peer }, after);
            }
            Event::Control {
                instance,
                action,
                reply,
            } => {
                let instance = InstanceId(instance);
                let result = self
                    .book
                    .apply(now, Input::Control { instance, action })
                    .map(|applied| {
                        after.effects.extend(applied.effects);
                        tracing::info!(
                            instance = instance.0,
                            action = action.as_str(),
                            "operator control"
                        );
                    })
                    .and_then(|()| {
                        self.book
                            .instance(instance)
                            .cloned()
                            .ok_or(BookError::UnknownInstance(instance))
                    });
                after.controlled.push((reply, result));
            }
            query @ (Event::Instance(..)
            | Event::Instances(_)
            | Event::Nodes(_)
            | Event::History(..)) => {
                after.queries.push(query);
            }
        }
        Ok(())
    }

    /// Applies an input the controller gives itself (timers, the failure detector).
    fn apply_internal(&mut self, now: u64, input: Input, after: &mut After) {
        match self.book.apply(now, input) {
            Ok(applied) => after.effects.extend(applied.effects),
            Err(e) => tracing::warn!("{e}"),
        }
    }

    fn answer(&self, query: Event) {
        match query {
            Event::Instance(id, reply) => {
                let _ = reply.send(self.book.instance(InstanceId(id)).cloned());
            }
            Event::Instances(reply) => {
                let _ = reply.send(self.book.instances().cloned().collect());
            }
            Event::Nodes(reply) => {
                let _ = reply.send(self.book.nodes().cloned().collect());
            }
            Event::History(id, reply) => {
                let history = self.book.history(InstanceId(id));
                let _ = reply.send(history.map(<[HistoryEvent]>::to_vec));
            }
            _ => {}
        }
    }
}
