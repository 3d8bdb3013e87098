//! The controller daemon: the thin I/O shell around the bookkeeping (`mobiwf_book`).
//!
//! Built on `mobiwf_runtime::daemon`: one actor (`actor`) owns the book (its operators'
//! commands are `operators`, what it is asked is `queries`). Each group of events
//! (node messages, deliveries, commands, timer and failure-detector news) is applied, then
//! the changes, the messages they cause and the ids of the applied messages are written in
//! **one synced batch**; only then are acknowledgements, answers and messages sent. Readers
//! (`client`, behind the API) ask the actor, and wait for changes on a version counter that
//! the actor bumps after each commit, or, for one instance, for the actor's word that it
//! became final (`wait`) or changed (`touched`, what the console's live pages follow).

mod actor;
mod client;
mod client_enrol;
mod definitions;
mod enrol;
mod graph;
mod operators;
mod queries;
mod recall;
mod refused;
mod registration;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use libp2p::Multiaddr;
use mobiwf_book::{BookError, HistoryEvent, Instance, NodeInfo, Routing, Watched};
use mobiwf_proto::{Control, InstanceId};
use mobiwf_runtime::api_auth;
use mobiwf_runtime::daemon::{self, Base, Daemon, Setup};
use mobiwf_runtime::mesh::Inbound;
use mobiwf_runtime::outbox::Delivered;
use mobiwf_runtime::store::Store;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::detector::{self, DetectorConfig, Verdict};
use crate::state;

pub use client::{ControllerClient, DocumentLimit};
pub use client_enrol::JOIN_TOKEN_FILE;
pub use definitions::ShownDefinition;
pub(crate) use enrol::EnrolAction;
pub use enrol::{EnrolAnswer, TokenView};

/// How to start a controller.
pub struct ControllerConfig {
    /// Where it keeps its identity and database.
    pub data_dir: PathBuf,
    /// Where to listen for nodes.
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API.
    pub api: SocketAddr,
    /// Serve it over TLS with this certificate and key (`serve --tls-cert/--tls-key`).
    pub api_tls: Option<mobiwf_runtime::tls::ServerTls>,
    /// The store; `None` opens RocksDB in `data_dir/db`.
    pub store: Option<Arc<dyn Store>>,
    /// How eagerly partners that stop answering are suspected.
    pub detector: DetectorConfig,
    /// Route every notification through the controller (`serve --routing hub`), the
    /// centralized design the benchmark compares with; peer to peer when false.
    pub hub_routing: bool,
    /// The length of an hour for `<deadline>`s, in ms (`--hour-ms`): sent with each
    /// deployment of a partition that has one.
    pub hour_ms: u64,
    /// Anyone who can reach the controller may join (`serve --open-enrolment`); otherwise a
    /// node needs a join token or its peer id on the allow list.
    pub open_enrolment: bool,
    /// Serve as a circuit relay for nodes nobody can dial (`serve --no-relay` turns it off;
    /// limits in `mobiwf_runtime::mesh::relay`).
    pub relay_server: bool,
    /// A private mesh's key (`serve --swarm-key-file`): a peer without it cannot connect.
    pub swarm_key: Option<mobiwf_runtime::mesh::private::PreSharedKey>,
    /// Check the API's bearer tokens and roles; false only by the operator's explicit
    /// choice (`serve --insecure-no-auth`).
    pub api_auth: bool,
    /// The per-peer limits on requests from the mesh (`--inbound-in-flight-per-peer`,
    /// `--inbound-per-peer-per-sec`).
    pub inbound: mobiwf_runtime::mesh::InboundLimits,
    /// Delete settled instances that finished longer ago than this, with their history
    /// (`serve --retain-finished`); `None` keeps them.
    pub retain_finished: Option<std::time::Duration>,
    /// How many instances may be under way before a submission is answered 429
    /// (`serve --admission-limit`; `crate::admission`).
    pub admission: crate::admission::Policy,
}

impl ControllerConfig {
    /// How the HTTP API is served (over TLS or not), for whoever builds its routes.
    pub fn served(&self) -> mobiwf_runtime::tls::Served {
        mobiwf_runtime::tls::Served::with(self.api_tls.as_ref())
    }
}

/// The file in the controller's data directory that holds an administrator's API token
/// (0600), written by `serve` when missing or no longer known.
pub const OPERATOR_TOKEN_FILE: &str = "operator.token";

/// A running controller.
pub type Controller = Daemon<ControllerClient>;

/// How many instances that became final a waiter may fall behind on before it asks the
/// actor again (`broadcast` capacity).
pub const FINISHED_QUEUE: usize = 4096;

/// How many changed instances a live page may fall behind on before it reads its instance
/// again anyway (`broadcast` capacity of `ControllerClient::touched`).
pub const TOUCHED_QUEUE: usize = 4096;

/// What the controller's actor is sent.
enum Event {
    /// A message from a node.
    Inbound(Inbound),
    /// A node answered a message of ours (the controller learns of deployments so).
    Delivered(Delivered),
    /// A partition `timeOut` or an overdue decision came.
    Tick,
    /// The failure detector's news.
    Verdict(Verdict),
    /// An operator wants the book changed.
    Command(Command),
    /// Someone wants to know something; answered after the group is on disk.
    Query(Query),
    /// Time for a retention sweep; answered true when more instances may be due.
    Sweep(oneshot::Sender<bool>),
}

/// What changes the book on an operator's word.
enum Command {
    Submit {
        definition: Vec<u8>,
        source: String,
        start: mobiwf_book::StartWith,
        starter: mobiwf_book::Starter,
        reply: oneshot::Sender<Result<InstanceId, BookError>>,
    },
    /// An operator applies an organisation document (validated by the API).
    Organisation {
        document: String,
        org: mobiwf_xml_schema::Organisation,
        reply: oneshot::Sender<Result<u64, BookError>>,
    },
    /// An operator applies a class document (validated by the API).
    Classes {
        document: String,
        classes: mobiwf_xml_schema::ClassDocument,
        reply: oneshot::Sender<Result<usize, BookError>>,
    },
    /// An operator applies an ordering document (read and resolved by the book); how many
    /// orderings it holds.
    Orderings {
        source: String,
        document: String,
        reply: oneshot::Sender<Result<usize, BookError>>,
    },
    /// An operator's insert, remove or delegate of a work item.
    Worklist {
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        user: mobiwf_proto::UserId,
        action: mobiwf_proto::ItemAction,
        reply: oneshot::Sender<Result<String, BookError>>,
    },
    Control {
        instance: InstanceId,
        action: Control,
        reply: oneshot::Sender<Result<Instance, BookError>>,
    },
    /// An operator pauses or resumes one activity.
    Pause {
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        action: mobiwf_proto::PauseAction,
        by: String,
        reply: oneshot::Sender<Result<Instance, BookError>>,
    },
    /// An operator reruns a failed activity.
    Rerun {
        instance: InstanceId,
        activity: mobiwf_proto::ActivityId,
        reply: oneshot::Sender<Result<Instance, BookError>>,
    },
    /// An operator's word on the deployed definitions (deploy, remove, start by name).
    Definitions(definitions::DefinitionCommand),
    /// An operator's enrolment command (join tokens, the allow list, removing a node).
    Enrol {
        action: EnrolAction,
        reply: enrol::EnrolReply,
    },
}

/// What the API asks.
enum Query {
    Instance(InstanceId, oneshot::Sender<Option<Instance>>),
    Nodes(oneshot::Sender<Vec<NodeInfo>>),
    History(InstanceId, oneshot::Sender<Option<Vec<HistoryEvent>>>),
    /// An instance and its definition, for its graph.
    Graph(InstanceId, oneshot::Sender<Option<graph::ToDraw>>),
    Directory(oneshot::Sender<mobiwf_people::Directory>),
    /// The class document in force, as applied.
    Classes(oneshot::Sender<(mobiwf_xml_schema::ClassDocument, mobiwf_book::ClassesRecord)>),
    /// The synchronization manager's holders and waiters.
    Sync(oneshot::Sender<mobiwf_book::SyncView>),
    /// The ordering document in force, as applied.
    Orderings(oneshot::Sender<(mobiwf_xml_schema::Orderings, mobiwf_book::OrderingsRecord)>),
    /// The deployed definitions, or one of them.
    Definitions(definitions::DefinitionQuery),
}

/// Opens the data directory, joins the mesh, resumes delivery and serves the API.
pub async fn start(config: ControllerConfig) -> anyhow::Result<Controller> {
    let (delivered_tx, delivered) = mpsc::unbounded_channel();
    let setup = Setup {
        data_dir: &config.data_dir,
        store: config.store.clone(),
        listen: config.listen.clone(),
        delivered: Some(mobiwf_runtime::outbox::DeliveredTo::all(delivered_tx)),
        locator: None,
        stop_on_refusal: &[],
        via_relay: None,
        relay_server: config.relay_server,
        swarm_key: config.swarm_key,
        inbound: config.inbound,
        link_news: None,
    };
    let mut base = Base::start(setup, Event::Inbound).await?;
    let seq = base.sequencer()?;
    let book = book_of(&base, &config)?;
    learn_registered(&base, &book).await;
    base.metrics.set_instances_in_memory(book.resident());
    base.tasks.push(daemon::forward(
        delivered,
        base.events.clone(),
        Event::Delivered,
    ));
    let (version_tx, version) = watch::channel(0);
    let (finished, _) = broadcast::channel(FINISHED_QUEUE);
    let (touched, _) = broadcast::channel(TOUCHED_QUEUE);
    let (deadline, deadline_rx) = watch::channel(book.next_deadline());
    let (watched, watched_rx) = watch::channel(book.watched());
    spawn_detector(&mut base, config.detector, watched_rx);
    spawn_ticks(&mut base, deadline_rx);
    let retain_ms = spawn_sweeper(&mut base, config.retain_finished);
    let enrolment = enrolment_of(base.store.as_ref(), config.open_enrolment)?;
    let actor = actor::ControllerActor {
        book,
        enrolment,
        store: base.store.clone(),
        metrics: base.metrics.clone(),
        version: version_tx,
        finished: finished.clone(),
        touched: touched.clone(),
        deadline,
        watched,
        me: base.peer_id,
        retain_ms,
        swept: std::collections::BTreeSet::new(),
        recalled: Vec::new(),
    };
    let admission = crate::api_admission::Gate::new(config.admission, base.metrics.clone());
    base.tasks.push(admission.follow(finished.subscribe()));
    let client = ControllerClient {
        admission,
        events: base.events.clone(),
        version,
        finished,
        touched,
        metrics: base.metrics.clone(),
        mesh: base.mesh.clone(),
        store: base.store.clone(),
    };
    let web = mobiwf_runtime::web::Web::open(base.store.clone(), web_settings(&base, &config))?;
    let api = crate::api::router(client.clone()).merge(web.link_routes());
    let router = base
        .guarded(auth_settings(&config), api)?
        .merge(crate::console::router(client.clone(), web));
    let api = daemon::Api {
        addr: config.api,
        tls: config.api_tls.clone(),
        router,
    };
    let span = tracing::info_span!("controller");
    let controller = base.launch(actor, seq, span, client, api).await?;
    controller
        .client()
        .ensure_join_token_file(&config.data_dir.join(JOIN_TOKEN_FILE))
        .await?;
    Ok(controller)
}

/// Tells the mesh's address book where every registered node said it is (its last
/// registration), before anything is delivered: the book is in memory only, and the entries
/// of the outbox carry the addresses their messages were staged with, which a node that moved
/// and registered again while the controller was down has left (it may never connect to the
/// controller by itself to be identified).
async fn learn_registered<E>(base: &Base<E>, book: &mobiwf_book::Book) {
    for node in book.nodes() {
        let Ok(peer) = node.peer.as_str().parse::<libp2p::PeerId>() else {
            continue;
        };
        let addrs: Vec<Multiaddr> = node.addrs.iter().filter_map(|a| a.parse().ok()).collect();
        let fresh = mobiwf_runtime::mesh::Freshness::Fresh;
        base.mesh.learn(peer, addrs, fresh).await;
    }
}

/// Ticks the actor at the book's next deadline (`deadline`, as the actor publishes it).
fn spawn_ticks(base: &mut Base<Event>, deadline: watch::Receiver<Option<u64>>) {
    let events = base.events.clone();
    base.tasks
        .push(daemon::timer(deadline, events, || Event::Tick));
}

/// Starts the failure detector on the nodes the book says to watch (`watched`, as the actor
/// publishes it); its verdicts come to the actor as events.
fn spawn_detector(
    base: &mut Base<Event>,
    config: DetectorConfig,
    watched: watch::Receiver<Vec<Watched>>,
) {
    let (verdicts_tx, verdicts) = mpsc::channel(daemon::EVENT_QUEUE);
    base.tasks.push(daemon::forward(
        verdicts,
        base.events.clone(),
        Event::Verdict,
    ));
    base.tasks.push(detector::start(
        config,
        base.mesh.clone(),
        base.peer_id,
        watched,
        verdicts_tx,
    ));
}

/// How the console is served: a session cookie named after the controller's peer id,
/// `Secure` when the API is served over TLS, links for a role.
fn web_settings(base: &Base<Event>, config: &ControllerConfig) -> mobiwf_runtime::web::WebSettings {
    mobiwf_runtime::web::WebSettings {
        cookie: mobiwf_runtime::web::rules::cookie_name(&base.peer_id.to_string()),
        secure: config.served().tls,
        how_to_sign_in: "mobiwf-controller login-link --role viewer|operator|administrator",
        grants: mobiwf_runtime::web::LinkGrants::Role,
    }
}

/// Who may use the API: its token check, the administrator's token file, what each route
/// needs.
fn auth_settings(config: &ControllerConfig) -> api_auth::AuthSettings {
    api_auth::AuthSettings {
        enforce: config.api_auth,
        users: false,
        command: "mobiwf-controller",
        token_file: config.data_dir.join(OPERATOR_TOKEN_FILE),
        need: crate::api_access::need,
    }
}

/// Starts the retention sweeps when `retain` is set (`--retain-finished`); the retention in
/// ms.
fn spawn_sweeper(base: &mut Base<Event>, retain: Option<std::time::Duration>) -> Option<u64> {
    let retain = retain?;
    let every = crate::retention::sweep_every(retain);
    base.tasks
        .push(tokio::spawn(sweeper(base.events.clone(), every)));
    Some(u64::try_from(retain.as_millis()).unwrap_or(u64::MAX))
}

/// Asks the actor for a retention sweep every `every`, and again at once while more are due.
async fn sweeper(events: mpsc::Sender<Event>, every: std::time::Duration) {
    loop {
        tokio::time::sleep(every).await;
        loop {
            match daemon::ask(&events, Event::Sweep).await {
                Ok(true) => {}
                Ok(false) => break,
                // The controller is stopping.
                Err(_) => return,
            }
        }
    }
}

/// Who may join, as the store holds it, open or not as `serve` was told.
fn enrolment_of(store: &dyn Store, open: bool) -> anyhow::Result<crate::enrolment::Enrolment> {
    let mut enrolment = crate::enrolment::load(store)?;
    enrolment.open = open;
    Ok(enrolment)
}

/// The book as the store holds it, with the controller's hour and routing.
fn book_of<E>(base: &Base<E>, config: &ControllerConfig) -> anyhow::Result<mobiwf_book::Book> {
    config.detector.check().map_err(anyhow::Error::msg)?;
    let lease_ms = u64::try_from(config.detector.suspect_after.as_millis() / 2).unwrap_or(u64::MAX);
    let mut book = state::load(base.store.as_ref())?
        .with_hour_ms(config.hour_ms)
        .with_lease_ms(lease_ms);
    // Every document, whichever route brought it (API, console), as given and as stored.
    let limit = DocumentLimit::of(base.store.as_ref());
    if limit.store_write.is_some() {
        book = book.with_largest_document(limit.bytes);
    }
    Ok(if config.hub_routing {
        let address = base.addrs.first().cloned().ok_or_else(|| {
            anyhow::anyhow!("--routing hub needs the controller to listen somewhere (--listen)")
        })?;
        book.with_routing(Routing::Hub { address })
    } else {
        book
    })
}
