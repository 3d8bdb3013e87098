//! Starting and stopping a daemon: what the controller and a node both do before their actor
//! runs (store, identity, mesh, outbox, the queues into the actor), and the running daemon
//! they both return.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use libp2p::{Multiaddr, PeerId};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::Instrument;

use super::actor::{self, Actor, Shell};
use super::sequencer::Sequencer;
use super::{Api, EVENT_QUEUE, forward, open_store, serve_api};
use crate::mesh::{self, Inbound, MeshConfig, MeshHandle};
use crate::metrics::Metrics;
use crate::outbox::{DeliveredTo, MeshLink, Outbox, Wiring};
use crate::store::Store;

/// Where and how a daemon starts.
pub struct Setup<'a> {
    /// Its data directory (identity, database).
    pub data_dir: &'a Path,
    /// A store to use instead of RocksDB in `data_dir/db` (tests).
    pub store: Option<Arc<dyn Store>>,
    /// Where to listen for peers.
    pub listen: Vec<Multiaddr>,
    /// Where the outbox reports the answers a daemon takes, and which (the controller all of
    /// them: it learns of deployments this way; a node its users' claims refused outright);
    /// `None`: the outbox removes every entry itself.
    pub delivered: Option<DeliveredTo>,
    /// Whom to ask where a peer is when deliveries to it fail: a node's controller (its
    /// full address); `None` for the controller.
    pub locator: Option<(PeerId, Multiaddr)>,
    /// Message kinds whose refusal stops the daemon (`Daemon::failed` says why): a node's
    /// registration refused by its controller.
    pub stop_on_refusal: &'static [&'static str],
    /// A relay to listen on (its full address), for a daemon nobody can dial: it then gives
    /// its circuit address, and only that, as its address (see `mesh::relay`).
    pub via_relay: Option<Multiaddr>,
    /// Serve as a relay for others.
    pub relay_server: bool,
    /// The private mesh's key (`--swarm-key-file`): every connection needs it.
    pub swarm_key: Option<crate::mesh::private::PreSharedKey>,
    /// Where the outbox tells of peers that became unreachable or reachable again, for a
    /// daemon that acts on it (a node).
    pub link_news: Option<mpsc::UnboundedSender<crate::outbox::LinkNews>>,
    /// The per-peer limits on inbound requests.
    pub inbound: crate::mesh::InboundLimits,
}

/// A daemon started up to its actor: the store, the mesh and the outbox run, messages from
/// peers (and to itself) flow into the actor's queue, which nobody reads yet.
pub struct Base<E> {
    /// The store.
    pub store: Arc<dyn Store>,
    /// The mesh.
    pub mesh: MeshHandle,
    /// This daemon's peer id.
    pub peer_id: PeerId,
    /// Its libp2p addresses (with `/p2p/<peer id>`), as it registers them: behind a relay,
    /// its circuit address only.
    pub addrs: Vec<String>,
    /// Its metrics.
    pub metrics: Arc<Metrics>,
    /// The outbox.
    pub outbox: Outbox,
    /// The actor's queue.
    pub events: mpsc::Sender<E>,
    /// Every task started so far; the daemon adds its own (timers, detectors).
    pub tasks: Vec<JoinHandle<()>>,
    receiver: mpsc::Receiver<E>,
    fatal: (
        Arc<watch::Sender<Option<String>>>,
        watch::Receiver<Option<String>>,
    ),
}

impl<E: Send + 'static> Base<E> {
    /// Opens the data directory and the store, loads the identity, joins the mesh, resumes
    /// the outbox's deliveries and forwards inbound messages into the actor's queue as
    /// `inbound(message)`.
    pub async fn start(setup: Setup<'_>, inbound: fn(Inbound) -> E) -> anyhow::Result<Base<E>> {
        let store = open_store(setup.data_dir, setup.store)?;
        let keypair = crate::identity::load_or_create(setup.data_dir)?;
        let metrics = Arc::new(Metrics::new());
        let config = MeshConfig {
            via_relay: setup.via_relay,
            relay_server: setup.relay_server,
            swarm_key: setup.swarm_key,
            counters: metrics.relay_counters(),
            inbound: setup.inbound,
            shed: metrics.inbound_shed(),
            refused_connections: metrics.connections_refused(),
            epoch: store.owned_at(),
            ..MeshConfig::new(keypair, setup.listen)
        };
        let (mesh, from_mesh) = mesh::start(config).await?;
        let peer_id = mesh.peer_id();
        // Behind a relay, the circuit is the way in: the addresses it listens on are where
        // nobody can dial it.
        let addrs = match mesh.circuit_addr() {
            Some(circuit) => vec![circuit.to_string()],
            None => mesh.listen_addrs().iter().map(|a| a.to_string()).collect(),
        };
        let (events, receiver) = mpsc::channel(EVENT_QUEUE);
        let (local_tx, local) = mpsc::channel::<Inbound>(EVENT_QUEUE);
        let link = MeshLink {
            mesh: mesh.clone(),
            locator: setup.locator.map(|(peer, addr)| (peer, vec![addr])),
        };
        let (fatal_tx, fatal_rx) = watch::channel(None);
        let fatal_tx = Arc::new(fatal_tx);
        let wiring = Wiring {
            link: Arc::new(link),
            local: local_tx,
            metrics: metrics.clone(),
            delivered: setup.delivered,
            stop_on_refusal: Some(crate::outbox::StopOnRefusal {
                kinds: setup.stop_on_refusal,
                fatal: fatal_tx.clone(),
            }),
            link_news: setup.link_news,
        };
        let outbox = Outbox::start(store.clone(), wiring)?;
        let tasks = vec![
            forward(from_mesh, events.clone(), inbound),
            forward(local, events.clone(), inbound),
        ];
        Ok(Base {
            store,
            mesh,
            peer_id,
            addrs,
            metrics,
            outbox,
            events,
            tasks,
            receiver,
            fatal: (fatal_tx, fatal_rx),
        })
    }

    /// The sequence numbers of this daemon's outgoing messages, as the store holds them.
    pub fn sequencer(&self) -> anyhow::Result<Sequencer> {
        Ok(Sequencer::load(self.store.as_ref(), self.peer_id)?)
    }

    /// `router` with the API token routes (`/api-tokens`), behind the token check `auth`
    /// says, once the administrator's token file is there; the tokens in this daemon's store,
    /// refusals counted in its metrics.
    pub fn guarded(
        &self,
        auth: crate::api_auth::AuthSettings,
        router: axum::Router,
    ) -> anyhow::Result<axum::Router> {
        crate::api_auth::protect(self.store.clone(), auth, self.metrics.clone(), router)
    }

    /// Runs `actor` on the queue (inside `span`), serves `api`, and returns the running
    /// daemon with `client` for asking it things.
    pub async fn launch<A, C>(
        mut self,
        actor: A,
        seq: Sequencer,
        span: tracing::Span,
        client: C,
        api: Api,
    ) -> anyhow::Result<Daemon<C>>
    where
        A: Actor<Event = E>,
    {
        let (fatal_tx, fatal) = self.fatal;
        let (stop, stop_rx) = watch::channel(false);
        let shell = Shell {
            store: self.store.clone(),
            outbox: self.outbox.clone(),
            seq,
        };
        let actor = tokio::spawn(
            actor::run(actor, self.receiver, shell, fatal_tx, stop_rx).instrument(span),
        );
        let served = crate::tls::Served::with(api.tls.as_ref());
        let (api_addr, serving) = serve_api(api).await?;
        self.tasks.push(serving);
        Ok(Daemon {
            peer_id: self.peer_id,
            addrs: self.addrs,
            api_addr,
            served,
            client,
            running: Running {
                mesh: self.mesh,
                outbox: self.outbox,
                actor,
                stop,
                tasks: self.tasks,
                fatal,
            },
        })
    }
}

/// A running daemon (a node or the controller), with `C` to ask it things.
pub struct Daemon<C> {
    /// Its peer id.
    pub peer_id: PeerId,
    /// Its libp2p addresses (with `/p2p/<peer id>`), as it registers them: behind a relay,
    /// its circuit address only.
    pub addrs: Vec<String>,
    /// Where its HTTP API listens.
    pub api_addr: SocketAddr,
    /// How its HTTP API is served (over TLS or not).
    pub served: crate::tls::Served,
    client: C,
    running: Running,
}

impl<C: Clone> Daemon<C> {
    /// Asks the daemon things, as its API does.
    pub fn client(&self) -> C {
        self.client.clone()
    }

    /// Returns when the daemon stopped on an error it cannot go on after (the store failed),
    /// with the reason; the process should exit.
    pub async fn failed(&self) -> String {
        self.running.failed().await
    }

    /// Stops everything the daemon runs in this process; what is undelivered stays in the
    /// outbox for the next start (commands a node started go on).
    pub async fn stop(self) {
        self.running.stop().await;
    }

    /// Where its HTTP API is, as its CLIs take it (`--api`): `HOST:PORT` for plain HTTP,
    /// `https://HOST:PORT` over TLS.
    pub fn api_location(&self) -> String {
        if self.served.tls {
            format!("https://{}", self.api_addr)
        } else {
            self.api_addr.to_string()
        }
    }

    /// Its HTTP API's URL, `http://HOST:PORT` or `https://HOST:PORT`.
    pub fn api_url(&self) -> String {
        format!("{}://{}", self.served.scheme(), self.api_addr)
    }

    /// Writes where the daemon listens (`address`, one libp2p address a line) and where its
    /// API is (`api`: [`Daemon::api_location`]) into `data_dir`, where the command lines and
    /// scripts look for a running daemon.
    pub fn publish_addresses(&self, data_dir: &Path) -> anyhow::Result<()> {
        crate::process::write_atomically(
            &data_dir.join("address"),
            &(self.addrs.join("\n") + "\n"),
        )?;
        crate::process::write_atomically(
            &data_dir.join("api"),
            &format!("{}\n", self.api_location()),
        )
    }

    /// Runs until Ctrl-C or SIGTERM, then stops the daemon; an error when it stopped first on
    /// its own (its store failed), saying why (`what`: the daemon, as the error names it).
    pub async fn run_until_stopped(self, what: &str) -> anyhow::Result<()> {
        tokio::select! {
            r = crate::process::wait_for_stop() => r?,
            why = self.failed() => {
                self.stop().await;
                anyhow::bail!("{what} stopped: {why}");
            }
        }
        self.stop().await;
        Ok(())
    }
}

/// What a running daemon holds besides its actor's state: its mesh, its outbox, its actor
/// and other tasks, and the news of a fatal error.
struct Running {
    mesh: MeshHandle,
    outbox: Outbox,
    /// The actor loop, stopped through `stop` so that a group under way finishes.
    actor: JoinHandle<()>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    fatal: watch::Receiver<Option<String>>,
}

impl Running {
    async fn failed(&self) -> String {
        let mut fatal = self.fatal.clone();
        match fatal.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            Err(_) => "the daemon stopped".to_owned(),
        }
    }

    async fn stop(self) {
        self.outbox.shutdown();
        for t in &self.tasks {
            t.abort();
        }
        // The actor finishes the group under way (its write included), then stops.
        let _ = self.stop.send(true);
        let _ = self.actor.await;
        self.mesh.shutdown().await;
    }
}
