//! The node daemon: the thin I/O shell around the partition engine.
//!
//! Built on `mobiwf_runtime::daemon`: one actor (`actor`) owns the engine and takes events
//! (messages from the mesh, finished commands, people's commands, queries); each group of
//! events is applied, written with the messages it caused and the ids of the messages it
//! applied in **one synced batch**, and only then acknowledged, sent and acted on (commands
//! started). Every decision is the pure node core's (`mobiwf_node_core`): what a message
//! means, who may send it, the engine and the desk passing each other messages; this shell
//! reads and writes the disk, talks to the mesh and runs commands.

mod actor;
mod applications;
mod data;
mod directory;
mod epochs;
mod fencing;
mod journal;
mod memory;
mod offline;
mod outbox_news;
mod people;
mod queries;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use libp2p::Multiaddr;
use mobiwf_engine::{Refusal, WorkItem};
use mobiwf_proto::{
    ActivityId, ActivityTypeId, InstanceId, Location, Millis, NodeId, NodeName, PartitionId, UserId,
};
use mobiwf_runtime::api_auth;
use mobiwf_runtime::daemon::{self, Base, Daemon, Setup};
use mobiwf_runtime::mesh::Inbound;
use mobiwf_runtime::metrics::Metrics;
use mobiwf_runtime::outbox;
use mobiwf_runtime::store::Store;
use tokio::sync::{mpsc, oneshot, watch};

use crate::executor::{Ended, Execution};
use crate::state;

pub use memory::{MAX_RUNS_PAGE, RunsWanted};
pub use mobiwf_engine::Finish;
pub use mobiwf_node_core::{ClaimOutcome, PersonEnd, Refused};
pub use offline::Departure;
pub use queries::{CutOff, ItemDetail, ItemsHost, ReadValue, UserLink, Window, WorklistPage};

/// How to start a node.
pub struct NodeConfig {
    /// Where the node keeps its identity, database and command runs.
    pub data_dir: PathBuf,
    /// The node's name (matched against workflow partners' names or ids).
    pub name: NodeName,
    /// The activity types this node can run.
    pub skills: Vec<ActivityTypeId>,
    /// The controller's full multiaddr (ending in `/p2p/<peer id>`): `--controller`, read
    /// with [`outbox::location`].
    pub controller: Location,
    /// Where to listen for other peers.
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API.
    pub api: SocketAddr,
    /// Serve it over TLS with this certificate and key (`run --tls-cert/--tls-key`).
    pub api_tls: Option<mobiwf_runtime::tls::ServerTls>,
    /// The store to use; `None` opens RocksDB in `data_dir/db`.
    pub store: Option<Arc<dyn Store>>,
    /// Copy what lockable items read in the background while connected (`--no-prefetch`
    /// turns it off: then only a disconnection copies, the locked items of its user).
    pub prefetch: bool,
    /// The length of an hour for `<deadline>`s of deployments that do not say, in ms
    /// (`--hour-ms`; the controller's travels with deployments that have deadlines).
    pub hour_ms: u64,
    /// The join token to present when registering (`--join-token-file`): needed the first
    /// time, unless the controller allows this peer id or enrolment is open.
    pub join_token: Option<String>,
    /// A relay to be reached through, for a node nobody can dial (`--via-relay`): its full
    /// address (the controller's for `--via-relay` alone). The node then registers its
    /// circuit address, and only that.
    pub via_relay: Option<Multiaddr>,
    /// Serve as a circuit relay for other nodes (`--relay-server`).
    pub relay_server: bool,
    /// Which `<command>`s of the activities deployed here the node runs (`--commands`).
    pub commands: crate::command_policy::CommandPolicy,
    /// A private mesh's key (`--swarm-key-file`): needed to connect to any member.
    pub swarm_key: Option<mobiwf_runtime::mesh::private::PreSharedKey>,
    /// Check the API's bearer tokens and roles; false only by the operator's explicit
    /// choice (`run --insecure-no-auth`).
    pub api_auth: bool,
    /// The applications installed on this device (`--application NAME`): a disconnection
    /// does not count them among what it takes along.
    pub applications: Vec<mobiwf_xml_schema::ApplicationId>,
    /// The per-peer limits on requests from the mesh (`--inbound-in-flight-per-peer`,
    /// `--inbound-per-peer-per-sec`).
    pub inbound: mobiwf_runtime::mesh::InboundLimits,
}

impl NodeConfig {
    /// How the HTTP API is served (over TLS or not), for whoever builds its routes.
    pub fn served(&self) -> mobiwf_runtime::tls::Served {
        mobiwf_runtime::tls::Served::with(self.api_tls.as_ref())
    }
}

/// The file in the node's data directory that holds the node's administrator API token
/// (0600), written at start when missing or no longer known.
pub const API_TOKEN_FILE: &str = "api.token";

/// A running node.
pub type Node = Daemon<NodeClient>;

/// Asks the running node things; used by the HTTP API.
#[derive(Clone)]
pub struct NodeClient {
    events: mpsc::Sender<Event>,
    /// The node's metrics.
    pub metrics: Arc<Metrics>,
    /// The contents of instance data files (a person's files are kept here before the
    /// completion that names them is applied).
    pub files: crate::files::Files,
    /// The mesh (a disconnection measures the bandwidth to the hosts of its items).
    pub mesh: mobiwf_runtime::mesh::MeshHandle,
    /// A number that goes up once the desk's changes of a group are on disk: what the pages'
    /// live worklists wait on.
    pub desk_news: watch::Receiver<u64>,
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

/// A page of `GET /runs`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunsPage {
    /// The runs, in (instance, partition) order.
    pub runs: Vec<RunView>,
    /// When there are more: the `after` that asks for the next page.
    pub next: Option<u64>,
}

/// What the node's actor is sent. Inbound messages are the common case and the largest
/// (a work item's snapshot); boxing them would allocate for every message.
#[allow(clippy::large_enum_variant)]
enum Event {
    /// A message from a peer (or from this node to itself).
    Inbound(Inbound),
    /// The engine's next deadline came.
    Tick,
    /// A command the engine started ended.
    Ended { execution: Execution, ended: Ended },
    /// The lease of a grant a person's activity holds ran out (`crate::lease`).
    LeaseOut(crate::lease::PersonOut),
    /// Someone wants the engine changed.
    Command(Command),
    /// Someone wants to know something; answered after the group is on disk, so that no
    /// answer shows a state the disk does not have.
    Query(Query),
    /// A file the engine asked for is whole in the file store.
    Fetched(mobiwf_proto::FileRef),
    /// Work without the network: a user's disconnection or reconnection, an item's copy.
    Offline(offline::OfflineCommand),
    /// The application a user of this device selected an item for ended.
    ApplicationEnded {
        key: mobiwf_people::ItemKey,
        user: UserId,
        ended: Ended,
    },
    /// A peer became unreachable, or answered again (the outbox's news, or a message from it).
    Link(mobiwf_runtime::outbox::LinkNews),
    /// A host refused a user's claim outright (`outbox_news::refused_claim`): its entry leaves the outbox
    /// with the answer the desk makes of it, in one group.
    Refused(mobiwf_runtime::outbox::Delivered),
}

/// One item of a user's worklist as the API shows it: the desk's entry, with its host's node
/// name (`host`; the address is `host_address`) and its holder.
#[derive(Debug, Clone)]
pub struct WorklistEntry {
    /// The desk's entry.
    pub entry: mobiwf_people::Entry,
    /// The name of the node hosting the item, when the directory knows it.
    pub host_name: Option<NodeName>,
    /// Whose worklist it is on (the holder when it is held).
    pub user: mobiwf_proto::UserId,
}

impl serde::Serialize for WorklistEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&self.entry).map_err(serde::ser::Error::custom)?;
        if let Some(map) = value.as_object_mut() {
            let address = map.remove("host").unwrap_or_default();
            map.insert("host_address".to_owned(), address);
            let name = self.host_name.as_ref().map(|n| n.as_str().to_owned());
            map.insert("host".to_owned(), name.into());
            let held = self.entry.state != mobiwf_people::EntryState::Offered;
            let holder = held.then(|| self.user.as_str().to_owned());
            map.insert("holder".to_owned(), holder.into());
        }
        value.serialize(serializer)
    }
}

/// The organisation directory as this node holds it (`GET /directory`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct DirectoryView {
    /// Its version (0: none received yet).
    pub version: u64,
    /// The users whose device this node is.
    pub users: Vec<mobiwf_proto::UserId>,
    /// The registered nodes it knows.
    pub devices: Vec<NodeName>,
    /// The devices this node cannot reach (deliveries failed
    /// `UNREACHABLE_AFTER_FAILURES` times in a row, nothing heard since): their users are
    /// inactive here, offered nothing new.
    pub unreachable: Vec<NodeName>,
}

/// What changes the engine on a person's or an operator's word.
enum Command {
    /// A user acts on a work item through this node, their device.
    Claim {
        claim: mobiwf_people::LocalClaim,
        /// The outcome, once decided (now or when the host answers).
        reply: oneshot::Sender<ClaimOutcome>,
        /// The request number and the host, once the claim is on its way to the host.
        sent: oneshot::Sender<(u64, Location)>,
    },
    /// A person finishes a manual activity.
    Complete {
        end: PersonEnd,
        reply: oneshot::Sender<Result<(), Refusal>>,
    },
}

/// What the API asks.
enum Query {
    Worklist(oneshot::Sender<Vec<WorkItem>>),
    Runs(RunsWanted, oneshot::Sender<RunsPage>),
    /// One page of a user's worklist, for the worklist page and the API.
    UserWorklistPage {
        user: mobiwf_proto::UserId,
        order: mobiwf_people::Order,
        window: Window,
        reply: oneshot::Sender<Result<WorklistPage, String>>,
    },
    Notices {
        user: mobiwf_proto::UserId,
        reply: oneshot::Sender<Result<Vec<mobiwf_proto::Notice>, String>>,
    },
    Directory(oneshot::Sender<DirectoryView>),
    Data(InstanceId, oneshot::Sender<Vec<mobiwf_proto::Datum>>),
    /// Whether a user is away and which peers this node cannot reach, for the worklist page.
    Link {
        user: UserId,
        reply: oneshot::Sender<Result<UserLink, String>>,
    },
    /// One item of a user's worklist, for its page.
    Item(
        queries::ItemAsked,
        oneshot::Sender<Result<Option<ItemDetail>, String>>,
    ),
}

impl NodeClient {
    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Event) -> anyhow::Result<T> {
        daemon::ask(&self.events, make).await
    }

    /// The manual work waiting for a person.
    pub async fn worklist(&self) -> anyhow::Result<Vec<WorkItem>> {
        self.ask(|reply| Event::Query(Query::Worklist(reply))).await
    }

    /// What the node knows of an instance's data.
    pub async fn data(&self, instance: InstanceId) -> anyhow::Result<Vec<mobiwf_proto::Datum>> {
        self.ask(|reply| Event::Query(Query::Data(instance, reply)))
            .await
    }

    /// A page of the partition runs on the node.
    pub async fn runs(&self, wanted: RunsWanted) -> anyhow::Result<RunsPage> {
        self.ask(|reply| Event::Query(Query::Runs(wanted, reply)))
            .await
    }

    /// A user's whole worklist on this node, their device; `Ok(Err(why))` when it is not here.
    /// For a process that embeds the node; over HTTP, lists are paged.
    pub async fn user_worklist(
        &self,
        user: mobiwf_proto::UserId,
        order: mobiwf_people::Order,
    ) -> anyhow::Result<Result<Vec<WorklistEntry>, String>> {
        let all = Window {
            from: 0,
            limit: usize::MAX,
        };
        let page = self.user_worklist_page(user, order, all).await?;
        Ok(page.map(|page| page.entries))
    }

    /// The entries of a user's worklist in `window`, and how many it holds; `Ok(Err(why))` when
    /// it is not here.
    pub async fn user_worklist_page(
        &self,
        user: mobiwf_proto::UserId,
        order: mobiwf_people::Order,
        window: Window,
    ) -> anyhow::Result<Result<WorklistPage, String>> {
        self.ask(|reply| {
            Event::Query(Query::UserWorklistPage {
                user,
                order,
                window,
                reply,
            })
        })
        .await
    }

    /// What a user was told, oldest first; `Ok(Err(why))` when their device is another node.
    pub async fn notices(
        &self,
        user: mobiwf_proto::UserId,
    ) -> anyhow::Result<Result<Vec<mobiwf_proto::Notice>, String>> {
        self.ask(|reply| Event::Query(Query::Notices { user, reply }))
            .await
    }

    /// One item of `user`'s worklist with what its page shows; `Ok(Ok(None))` when it is not
    /// (or no longer) on it, `Ok(Err(why))` when the user's device is another node.
    pub async fn item(
        &self,
        user: UserId,
        instance: InstanceId,
        activity: ActivityId,
    ) -> anyhow::Result<Result<Option<ItemDetail>, String>> {
        let asked = queries::ItemAsked {
            user,
            instance,
            activity,
        };
        self.ask(|reply| Event::Query(Query::Item(asked, reply)))
            .await
    }

    /// Since when `user` is away (disconnected), and the peers this device cannot reach;
    /// `Ok(Err(why))` when the user's device is another node.
    pub async fn link(&self, user: UserId) -> anyhow::Result<Result<UserLink, String>> {
        self.ask(|reply| Event::Query(Query::Link { user, reply }))
            .await
    }

    /// The directory version this node holds and its users.
    pub async fn directory(&self) -> anyhow::Result<DirectoryView> {
        self.ask(|reply| Event::Query(Query::Directory(reply)))
            .await
    }

    /// A user acts on a work item. Waits for the answer up to
    /// [`crate::api_people::CLAIM_ANSWER_WAIT`]; then [`ClaimOutcome::Pending`].
    pub async fn claim(
        &self,
        user: mobiwf_proto::UserId,
        instance: InstanceId,
        activity: ActivityId,
        action: mobiwf_proto::ItemAction,
    ) -> anyhow::Result<ClaimOutcome> {
        let (reply, answer) = oneshot::channel();
        let (sent_tx, mut sent) = oneshot::channel();
        let claim = mobiwf_people::LocalClaim {
            user,
            instance,
            activity,
            action,
        };
        let command = Command::Claim {
            claim,
            reply,
            sent: sent_tx,
        };
        self.events
            .send(Event::Command(command))
            .await
            .map_err(|_| anyhow::anyhow!("the node is stopping"))?;
        match tokio::time::timeout(crate::api_people::CLAIM_ANSWER_WAIT, answer).await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(_)) => anyhow::bail!("the node stopped before the claim was answered"),
            Err(_) => {
                let (request, host) = sent.try_recv().unwrap_or_default();
                Ok(ClaimOutcome::Pending { request, host })
            }
        }
    }

    /// What a disconnection of `user` must still copy; starts copying their locked items.
    pub async fn departure(&self, user: UserId) -> anyhow::Result<Result<Departure, Refused>> {
        self.ask(|reply| Event::Offline(offline::OfflineCommand::Plan { user, reply }))
            .await
    }

    /// The user goes away (their desk, and the controller told).
    pub async fn disconnect(&self, user: UserId) -> anyhow::Result<Result<(), Refused>> {
        self.ask(|reply| Event::Offline(offline::OfflineCommand::Disconnect { user, reply }))
            .await
    }

    /// The user comes back.
    pub async fn reconnect(&self, user: UserId) -> anyhow::Result<Result<(), Refused>> {
        self.ask(|reply| Event::Offline(offline::OfflineCommand::Reconnect { user, reply }))
            .await
    }

    /// A person finishes a manual activity. `Ok(Err(_))`: the engine refused.
    pub async fn complete(&self, end: PersonEnd) -> anyhow::Result<Result<(), Refusal>> {
        self.ask(|reply| Event::Command(Command::Complete { end, reply }))
            .await
    }
}

/// Opens the data directory, joins the mesh, registers with the controller, resumes whatever
/// was under way and serves the API.
pub async fn start(config: NodeConfig) -> anyhow::Result<Node> {
    let (controller_peer, controller_addr) =
        outbox::peer_of(&config.controller).map_err(|e| anyhow::anyhow!("--controller: {e}"))?;
    let (news, told) = outbox_news::OutboxNews::channels();
    let setup = Setup {
        data_dir: &config.data_dir,
        store: config.store.clone(),
        listen: config.listen.clone(),
        delivered: Some(news.refused),
        locator: Some((controller_peer, controller_addr.clone())),
        stop_on_refusal: &["register"],
        via_relay: config.via_relay.clone(),
        relay_server: config.relay_server,
        swarm_key: config.swarm_key,
        inbound: config.inbound,
        link_news: Some(news.link),
    };
    let mut base = Base::start(setup, Event::Inbound).await?;
    told.forward(&mut base);
    let mut seq = base.sequencer()?;
    let core = load_core(&base, &config, controller_peer)?;
    let (deadline, deadline_rx) = watch::channel(core.next_deadline());
    let (desk_news, desk_news_rx) = watch::channel(0);
    let mut actor = actor::NodeActor {
        core,
        store: base.store.clone(),
        metrics: base.metrics.clone(),
        data_dir: config.data_dir.clone(),
        commands: Arc::new(config.commands.clone()),
        controller: (controller_peer, controller_addr),
        events: base.events.clone(),
        deadline,
        desk_news,
        waiters: std::collections::HashMap::new(),
        files: crate::files::Files::new(&config.data_dir),
        mesh: base.mesh.clone(),
        fetching: data::Fetching::default(),
        copying: offline::Copying::new(config.prefetch),
        leases: crate::lease::Leases::new(),
        running: applications::Running::default(),
        cut_off: std::collections::BTreeMap::new(),
    };
    let people_out = actor.leases.spawn_refresher();
    base.tasks.push(daemon::forward(
        people_out,
        base.events.clone(),
        Event::LeaseOut,
    ));
    actor.register(
        &mut seq,
        &base.outbox,
        &config.skills,
        config.join_token.clone(),
        &base.addrs,
    )?;
    // Copies for offline work resume at once, not at the first event.
    let now = mobiwf_runtime::process::now_us();
    actor.copy_items(Millis::from_micros(now).as_u64());
    actor.launch_applications();
    base.tasks
        .push(daemon::timer(deadline_rx, base.events.clone(), || {
            Event::Tick
        }));
    let client = NodeClient {
        events: base.events.clone(),
        metrics: base.metrics.clone(),
        files: crate::files::Files::new(&config.data_dir),
        mesh: base.mesh.clone(),
        desk_news: desk_news_rx,
    };
    let span = tracing::info_span!("node", name = %config.name);
    tracing::info!(name = %config.name, "runs {}", config.commands.describe());
    let api = api(&base, &config, &client)?;
    base.launch(actor, seq, span, client, api).await
}

/// What the node serves over HTTP: the API behind its token check (with the login links), and
/// the users' pages, whose session is their check.
fn api(
    base: &Base<Event>,
    config: &NodeConfig,
    client: &NodeClient,
) -> anyhow::Result<daemon::Api> {
    let settings = web_settings(base, config);
    let web = mobiwf_runtime::web::Web::open(base.store.clone(), settings)?;
    let api = crate::api::router(client.clone()).merge(web.link_routes());
    let router = base
        .guarded(auth_settings(config), api)?
        .merge(crate::web::router(client.clone(), web));
    Ok(daemon::Api {
        addr: config.api,
        tls: config.api_tls.clone(),
        router,
    })
}

/// The node's core as its store left it: the engine (addressed where the node listens, with
/// the node's hour), the desk, who the node is, and what the device is (its operating system
/// and `--application`s).
fn load_core(
    base: &Base<Event>,
    config: &NodeConfig,
    controller_peer: libp2p::PeerId,
) -> anyhow::Result<mobiwf_node_core::NodeCore> {
    let mut engine = state::load(base.store.as_ref())?;
    base.metrics.set_runs_in_memory(engine.runs_in_memory());
    // Work items name their host by this address (the devices send claims there).
    let location = base.addrs.first().ok_or_else(|| {
        anyhow::anyhow!("the node listens nowhere: give it an address to listen on (--listen)")
    })?;
    engine.set_location(outbox::location(location).map_err(anyhow::Error::msg)?);
    engine.set_hour_ms(config.hour_ms);
    let desk = state::load_desk(base.store.as_ref())?;
    let who = mobiwf_node_core::Identity {
        me: NodeId::new(base.mesh.peer_id().to_string()),
        name: config.name.clone(),
        controller: NodeId::new(controller_peer.to_string()),
        read_location: outbox::location,
    };
    let known = epochs::load(base.store.as_ref())?;
    epochs::show(&base.metrics, &known);
    let mut core = mobiwf_node_core::NodeCore::new(engine, desk, who).with_epochs(&known);
    core.set_device(mobiwf_people::DeviceProfile {
        os: std::env::consts::OS.to_owned(),
        installed: config.applications.iter().cloned().collect(),
    });
    Ok(core)
}

/// How the node's pages are served: a session cookie named after the node's peer id (`Secure`
/// when the API is served over TLS), links for one user each.
fn web_settings(base: &Base<Event>, config: &NodeConfig) -> mobiwf_runtime::web::WebSettings {
    mobiwf_runtime::web::WebSettings {
        cookie: mobiwf_runtime::web::rules::cookie_name(&base.peer_id.to_string()),
        secure: config.served().tls,
        how_to_sign_in: "mobiwf-node login-link --data-dir DIR --user YOU",
        grants: mobiwf_runtime::web::LinkGrants::User,
    }
}

/// Who may use the API: its token check, the administrator's token file, what each route
/// needs.
fn auth_settings(config: &NodeConfig) -> api_auth::AuthSettings {
    api_auth::AuthSettings {
        enforce: config.api_auth,
        users: true,
        command: "mobiwf-node",
        token_file: config.data_dir.join(API_TOKEN_FILE),
        need: crate::api_access::need,
    }
}
