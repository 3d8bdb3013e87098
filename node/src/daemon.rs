//! The node daemon: the thin I/O shell around the partition engine.
//!
//! One task (the *actor*) owns the engine. It takes events (messages from the mesh,
//! finished commands, people completing work, queries), applies them to the engine, and writes
//! every change together with the messages it produced and the ids of the messages it applied
//! in **one synced batch**; only then does it acknowledge, send (through the durable outbox)
//! and start commands. Events that arrive together are committed together (group commit, up
//! to [`daemon::MAX_GROUP`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{
    ActivityId, ActivityState, ActivityTypeId, Envelope, InstanceId, Message, MessageId, NodeId,
    NodeName, PartitionId, Reply,
};
use mobiwf_runtime::daemon::{self, EVENT_QUEUE, Running, Seen};
use mobiwf_runtime::mesh::{self, Inbound, MeshConfig};
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::outbox::{self, Outbox, Outgoing};
use mobiwf_runtime::store::{Batch, Durability, Store};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use crate::executor::{self, Ended, Execution};
use crate::state;
use mobiwf_engine::{Effect, Engine, Finisher, Input, Refusal, Run, Target, WorkItem};

/// How to start a node.
pub struct NodeConfig {
    /// Where the node keeps its identity, database and command runs.
    pub data_dir: PathBuf,
    /// The node's name (matched against workflow partners' names or ids).
    pub name: String,
    /// The activity types this node can run.
    pub skills: Vec<u64>,
    /// The controller's full multiaddr (ending in `/p2p/<peer id>`).
    pub controller: String,
    /// Where to listen for other peers.
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API.
    pub api: SocketAddr,
    /// The store to use; `None` opens RocksDB in `data_dir/db`.
    pub store: Option<Arc<dyn Store>>,
}

/// A running node.
pub struct Node {
    /// The node's peer id.
    pub peer_id: PeerId,
    /// Its libp2p addresses (with `/p2p/<peer id>`).
    pub addrs: Vec<String>,
    /// Where its HTTP API listens.
    pub api_addr: SocketAddr,
    client: NodeClient,
    running: Running,
}

/// Asks the running node things; used by the HTTP API.
#[derive(Clone)]
pub struct NodeClient {
    events: mpsc::Sender<Event>,
    /// The node's metrics.
    pub metrics: Arc<Metrics>,
}

/// One partition run as the API shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunView {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// True once every activity is final.
    pub done: bool,
    /// Each activity.
    pub activities: Vec<mobiwf_proto::ActivityRecord>,
}

enum Event {
    Inbound(Inbound),
    /// A `timeToWait` deadline came.
    Tick,
    Ended {
        execution: Execution,
        ended: Ended,
    },
    Complete {
        instance: InstanceId,
        activity: ActivityId,
        succeeded: bool,
        detail: Option<String>,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
    Worklist(oneshot::Sender<Vec<WorkItem>>),
    Runs(oneshot::Sender<Vec<RunView>>),
}

impl NodeClient {
    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Event) -> anyhow::Result<T> {
        daemon::ask(&self.events, make).await
    }

    /// The manual work waiting for a person.
    pub async fn worklist(&self) -> anyhow::Result<Vec<WorkItem>> {
        self.ask(Event::Worklist).await
    }

    /// Every partition run on the node.
    pub async fn runs(&self) -> anyhow::Result<Vec<RunView>> {
        self.ask(Event::Runs).await
    }

    /// A person finishes a manual activity. `Ok(Err(_))`: the engine refused.
    pub async fn complete(
        &self,
        instance: InstanceId,
        activity: ActivityId,
        succeeded: bool,
        detail: Option<String>,
    ) -> anyhow::Result<Result<(), Refusal>> {
        self.ask(|reply| Event::Complete {
            instance,
            activity,
            succeeded,
            detail,
            reply,
        })
        .await
    }
}

impl Node {
    /// Opens the data directory, joins the mesh, registers with the controller, resumes
    /// whatever was under way and serves the API.
    pub async fn start(config: NodeConfig) -> anyhow::Result<Node> {
        let (controller_peer, controller_addr) = outbox::peer_of(&config.controller)
            .map_err(|e| anyhow::anyhow!("--controller: {e}"))?;
        let store = daemon::open_store(&config.data_dir, config.store.clone())?;
        let keypair = mobiwf_runtime::identity::load_or_create(&config.data_dir)?;
        let (mesh, inbound) = mesh::start(MeshConfig::new(keypair, config.listen.clone())).await?;
        let peer_id = mesh.peer_id();
        let addrs: Vec<String> = mesh.listen_addrs().iter().map(|a| a.to_string()).collect();
        let metrics = Arc::new(Metrics::new());
        let (events_tx, events) = mpsc::channel(EVENT_QUEUE);
        let (local_tx, local) = mpsc::channel::<Inbound>(EVENT_QUEUE);
        let outbox = Outbox::start(store.clone(), mesh.clone(), local_tx, metrics.clone(), None)?;
        let (engine, seq) = state::load(store.as_ref())?;

        let mut tasks = vec![
            daemon::forward(inbound, events_tx.clone(), Event::Inbound),
            daemon::forward(local, events_tx.clone(), Event::Inbound),
        ];

        let (deadline, deadline_rx) = watch::channel(engine.next_deadline());
        let mut actor = Actor {
            deadline,
            engine,
            seq,
            store,
            outbox: outbox.clone(),
            metrics: metrics.clone(),
            me: peer_id.to_string(),
            name: config.name.clone(),
            data_dir: config.data_dir.clone(),
            controller_peer,
            controller_addr: controller_addr.to_string(),
            events: events_tx.clone(),
        };
        actor.register(&config.skills, &addrs)?;
        let resumed = actor.engine.resume();
        actor.carry_out(resumed);
        tasks.push(daemon::timer(deadline_rx, events_tx.clone(), || {
            Event::Tick
        }));
        let span = tracing::info_span!("node", name = %config.name);
        let (fatal_tx, fatal) = watch::channel(None);
        tasks.push(tokio::spawn(
            daemon::run_groups(events, fatal_tx, move |group| actor.handle_group(group))
                .instrument(span),
        ));

        let client = NodeClient {
            events: events_tx,
            metrics,
        };
        let (api_addr, api) =
            daemon::serve_api(config.api, crate::api::router(client.clone())).await?;
        tasks.push(api);
        Ok(Node {
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

    /// Asks the node things, as the API does.
    pub fn client(&self) -> NodeClient {
        self.client.clone()
    }

    /// Returns when the daemon stopped on an error it cannot go on after (the store failed),
    /// with the reason; the process should exit.
    pub async fn failed(&self) -> String {
        self.running.failed().await
    }

    /// Stops everything this node runs in this process (commands already started go on).
    pub async fn stop(self) {
        self.running.stop().await;
    }
}

struct Actor {
    engine: Engine,
    seq: u64,
    store: Arc<dyn Store>,
    outbox: Outbox,
    metrics: Arc<Metrics>,
    /// Our peer id, as text: the origin of every message id we give.
    me: String,
    name: String,
    data_dir: PathBuf,
    controller_peer: PeerId,
    controller_addr: String,
    events: mpsc::Sender<Event>,
    /// The engine's next `timeToWait` deadline, for the timer task.
    deadline: watch::Sender<Option<u64>>,
}

/// A person's completion waiting for its answer, and the answer.
type Completion = (oneshot::Sender<Result<(), Refusal>>, Result<(), Refusal>);

/// What to do once a group of events is on disk.
#[derive(Default)]
struct After {
    acks: Vec<(oneshot::Sender<Reply>, Reply)>,
    completions: Vec<Completion>,
    effects: Vec<Effect>,
    /// Questions, answered after the write so that no answer shows an unwritten state.
    queries: Vec<Event>,
}

impl Actor {
    fn register(&mut self, skills: &[u64], addrs: &[String]) -> anyhow::Result<()> {
        let mut batch = Batch::default();
        let msg = self.outgoing(
            &mut batch,
            Target::Controller,
            Message::Register {
                name: NodeName::new(self.name.clone()),
                skills: skills.iter().copied().map(ActivityTypeId).collect(),
                addrs: addrs.to_vec(),
            },
        )?;
        state::stage_seq(&mut batch, self.seq);
        self.store.write(batch, Durability::Synced)?;
        self.outbox.dispatch(vec![msg]);
        Ok(())
    }

    fn outgoing(
        &mut self,
        batch: &mut Batch,
        to: Target,
        message: Message,
    ) -> anyhow::Result<Outgoing> {
        self.seq += 1;
        let (peer, addr, role) = match to {
            Target::Controller => (
                self.controller_peer,
                self.controller_addr.clone(),
                Peer::Controller,
            ),
            Target::Partner(location) => {
                let (peer, addr) = outbox::peer_of(&location).map_err(|e| anyhow::anyhow!(e))?;
                (peer, addr.to_string(), Peer::Partner)
            }
        };
        let msg = Outgoing {
            to: peer.to_string(),
            addrs: vec![addr],
            role,
            envelope: Envelope {
                id: MessageId {
                    origin: NodeId::new(self.me.clone()),
                    seq: self.seq,
                },
                message,
            },
        };
        outbox::stage(batch, &msg);
        Ok(msg)
    }

    fn handle_group(&mut self, group: Vec<Event>) -> anyhow::Result<()> {
        let now = mobiwf_runtime::process::now_us();
        let mut batch = Batch::default();
        let mut after = After::default();
        let mut seen = Seen::default();
        for event in group {
            self.handle(now, event, &mut batch, &mut after, &mut seen)?;
        }
        // An encoding failure stops the daemon before anything is written (the store is not
        // given an empty value for a run), as a failed write does.
        let changes = self.engine.take_changes()?;
        state::stage_changes(&mut batch, &changes);
        let mut outgoing = Vec::new();
        let mut rest = Vec::new();
        for effect in std::mem::take(&mut after.effects) {
            match effect {
                Effect::Send { to, message } => match self.outgoing(&mut batch, to, message) {
                    Ok(msg) => outgoing.push(msg),
                    Err(e) => tracing::error!("cannot address a message: {e:#}"),
                },
                other => rest.push(other),
            }
        }
        state::stage_seq(&mut batch, self.seq);
        if !batch.is_empty() {
            self.store.write(batch, Durability::Synced)?;
        }
        // On disk: now act.
        for t in self.engine.take_transitions() {
            let span = tracing::info_span!("activity", instance = t.key.instance.0, activity = t.activity.0, name = %t.name);
            let _enter = span.enter();
            tracing::info!(state = t.state.as_str(), "activity {}", t.state.as_str());
            match t.state {
                ActivityState::Running => self.metrics.activity_started(),
                s if s.is_final() => self.metrics.activity_finished(s.as_str()),
                _ => {}
            }
        }
        self.deadline.send_replace(self.engine.next_deadline());
        self.outbox.dispatch(outgoing);
        self.carry_out(rest);
        for (tx, reply) in after.acks {
            let _ = tx.send(reply);
        }
        for (tx, result) in after.completions {
            let _ = tx.send(result);
        }
        for query in after.queries {
            self.answer(query);
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
                if matches!(message, Message::Probe) {
                    // The controller's failure detector: answering proves we are alive.
                    after.acks.push((reply, Reply::Ack));
                    return Ok(());
                }
                if seen.contains(self.store.as_ref(), &id)? {
                    self.metrics.duplicate();
                    after.acks.push((reply, Reply::Ack));
                    return Ok(());
                }
                let role = if from == self.controller_peer {
                    Peer::Controller
                } else {
                    Peer::Partner
                };
                let kind = message.kind();
                let from_controller_only = matches!(
                    message,
                    Message::Deploy { .. }
                        | Message::Withdraw { .. }
                        | Message::Substitute { .. }
                        | Message::Control { .. }
                );
                if from_controller_only && from != self.controller_peer {
                    tracing::warn!(peer = %from, kind, "refused a controller's message from a peer that is not our controller");
                    after.acks.push((
                        reply,
                        Reply::Refused {
                            reason: format!("only this node's controller sends {kind} messages"),
                        },
                    ));
                    return Ok(());
                }
                let input = match message {
                    Message::Deploy {
                        instance,
                        partition,
                        document,
                    } => {
                        let span = tracing::info_span!("instance", instance = instance.0);
                        let _enter = span.enter();
                        tracing::info!(partition = partition.0, "partition deployed");
                        Input::Deploy {
                            instance,
                            partition,
                            document,
                        }
                    }
                    Message::Notify {
                        instance,
                        activity,
                        outcome,
                    } => Input::Notified {
                        instance,
                        activity,
                        outcome,
                    },
                    Message::Withdraw {
                        instance,
                        partition,
                        activities,
                        reason,
                    } => {
                        let ids: Vec<u64> = activities.iter().map(|a| a.0).collect();
                        tracing::warn!(instance = instance.0, partition = partition.0, activities = ?ids, %reason, "the controller withdrew activities");
                        Input::Withdraw {
                            instance,
                            activities,
                            reason,
                        }
                    }
                    Message::Substitute {
                        instance,
                        replaced,
                        by,
                        location,
                    } => {
                        tracing::info!(instance = instance.0, replaced = replaced.0, by = by.0, %location, "contingency activity runs instead");
                        Input::Substitute {
                            instance,
                            replaced,
                            by,
                        }
                    }
                    Message::Control { instance, action } => {
                        tracing::info!(
                            instance = instance.0,
                            action = action.as_str(),
                            "operator control"
                        );
                        Input::Control { instance, action }
                    }
                    other => {
                        after.acks.push((
                            reply,
                            Reply::Refused {
                                reason: format!("a node does not take {} messages", other.kind()),
                            },
                        ));
                        return Ok(());
                    }
                };
                if let Input::Deploy { document, .. } = &input
                    && let Err(reason) = check_locations(document)
                {
                    after.acks.push((reply, Reply::Refused { reason }));
                    return Ok(());
                }
                match self.engine.apply_us(now, input) {
                    Ok(effects) => {
                        self.metrics.received(kind, role);
                        after.effects.extend(effects);
                        seen.record(batch, id);
                        after.acks.push((reply, Reply::Ack));
                    }
                    Err(refusal) => {
                        tracing::warn!("refused a {kind} message: {refusal}");
                        after.acks.push((
                            reply,
                            Reply::Refused {
                                reason: refusal.to_string(),
                            },
                        ));
                    }
                }
            }
            Event::Tick => match self.engine.apply_us(now, Input::Tick) {
                Ok(effects) => after.effects.extend(effects),
                Err(e) => tracing::warn!("timer: {e}"),
            },
            Event::Ended { execution, ended } => {
                let input = Input::Finished {
                    instance: execution.instance,
                    activity: execution.activity,
                    succeeded: ended.succeeded,
                    detail: ended.detail,
                    by: Finisher::Command,
                    attempt: execution.attempt,
                };
                match self.engine.apply_us(now, input) {
                    Ok(effects) => after.effects.extend(effects),
                    // Its activity was decided before (timeOut, withdrawal, cancel): the
                    // command had been killed, or its word comes too late.
                    Err(e) => tracing::info!("a command ended after its activity was decided: {e}"),
                }
            }
            Event::Complete {
                instance,
                activity,
                succeeded,
                detail,
                reply,
            } => {
                let input = Input::Finished {
                    instance,
                    activity,
                    succeeded,
                    detail,
                    by: Finisher::Person,
                    attempt: 0,
                };
                let result = self.engine.apply_us(now, input).map(|effects| {
                    after.effects.extend(effects);
                });
                after.completions.push((reply, result));
            }
            query @ (Event::Worklist(_) | Event::Runs(_)) => after.queries.push(query),
        }
        Ok(())
    }

    fn answer(&self, query: Event) {
        match query {
            Event::Worklist(reply) => {
                let _ = reply.send(self.engine.worklist());
            }
            Event::Runs(reply) => {
                let _ = reply.send(self.engine.runs().map(view).collect());
            }
            _ => {}
        }
    }

    /// Starts the commands the engine asked for (after the state saying so is on disk).
    fn carry_out(&self, effects: Vec<Effect>) {
        for effect in effects {
            if let Effect::Kill {
                key,
                activity,
                attempt,
                why,
            } = effect
            {
                let span = tracing::info_span!(
                    "activity",
                    instance = key.instance.0,
                    activity = activity.0
                );
                let _enter = span.enter();
                let execution = Execution {
                    instance: key.instance,
                    partition: key.partition,
                    activity,
                    attempt,
                    command: String::new(),
                    partner: self.name.clone(),
                };
                match executor::kill(&self.data_dir, &execution) {
                    Ok(()) => tracing::info!("command killed: {why}"),
                    Err(e) => tracing::warn!("cannot kill the command: {e}"),
                }
                continue;
            }
            if let Effect::Execute {
                key,
                activity,
                attempt,
                command,
            } = effect
            {
                let execution = Execution {
                    instance: key.instance,
                    partition: key.partition,
                    activity,
                    attempt,
                    command,
                    partner: self.name.clone(),
                };
                let data_dir = self.data_dir.clone();
                let events = self.events.clone();
                let span = tracing::info_span!(
                    "activity",
                    instance = key.instance.0,
                    activity = activity.0
                );
                tokio::spawn(
                    async move {
                        let ended = executor::execute(&data_dir, &execution).await;
                        tracing::info!(succeeded = ended.succeeded, "command ended");
                        let _ = events.send(Event::Ended { execution, ended }).await;
                    }
                    .instrument(span),
                );
            }
        }
    }
}

fn view(run: &Run) -> RunView {
    RunView {
        instance: run.key.instance,
        partition: run.key.partition,
        done: run.all_final(),
        activities: run.records(),
    }
}

/// Every adjacent's location must be a full libp2p address, or its notification could never be
/// delivered.
fn check_locations(document: &str) -> Result<(), String> {
    let doc = mobiwf_xml_schema::read_partition(document.as_bytes())
        .map_err(|d| d.render("partition document"))?
        .value;
    for act in &doc.activities {
        for adj in &act.adjacents {
            let local = doc.activities.iter().any(|a| a.id == adj.id);
            if !local {
                outbox::peer_of(&adj.location)
                    .map_err(|e| format!("activity {}: adjacent {}: {e}", act.id.0, adj.id.0))?;
            }
        }
    }
    Ok(())
}
