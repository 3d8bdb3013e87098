//! `mobiwf-node run`: the partner node daemon.

use mobiwf_node::command_policy::CommandPolicy;
use std::net::SocketAddr;
use std::path::PathBuf;

use libp2p::Multiaddr;
use mobiwf_node::NodeConfig;

/// The daemon's options.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Where the node keeps its identity, database and command runs (created if missing).
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
    /// The controller's address, as its `serve` printed it (ending in /p2p/<peer id>).
    #[arg(long, value_name = "MULTIADDR")]
    pub controller: String,
    /// This node's name; a workflow partner with this name (or id) is run here.
    #[arg(long)]
    pub name: String,
    /// The activity types this node can run, e.g. 1,2,3.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub skills: Vec<u64>,
    /// Where to listen for other peers (repeatable). Use /ip4/0.0.0.0/tcp/PORT to be reachable
    /// from other machines. Default: where this data directory's node listened before (its
    /// `address` file), so that partners and documents that name it still reach it after a
    /// restart; the first time, a free port on 127.0.0.1.
    #[arg(long, value_name = "MULTIADDR")]
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API (worklist, metrics); written to DIR/api (`https://...`
    /// over TLS). Another machine's address (or 0.0.0.0) wants --tls-cert/--tls-key: tokens
    /// would otherwise cross the network in clear text.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    pub api: SocketAddr,
    #[command(flatten)]
    pub tls: mobiwf_runtime::tls::TlsArgs,
    /// Do not copy what lockable work items read in the background (metered networks): a
    /// `disconnect` then copies its user's locked items, and only those.
    #[arg(long)]
    pub no_prefetch: bool,
    /// An application installed on this device (repeatable), by its name in workflow
    /// definitions (`<application id>`): a disconnection does not count its size among what
    /// the device takes along.
    #[arg(long = "application", value_name = "NAME")]
    pub applications: Vec<String>,
    /// The length of an hour for work items' <deadline>s, in ms, for deployments whose
    /// controller does not say (tests and demos use less, e.g. 100).
    #[arg(long, value_name = "MS", default_value_t = mobiwf_proto::DEFAULT_HOUR_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub hour_ms: u64,
    /// A file holding the join token the controller gave (its DIR/join.token, or one from
    /// `mobiwf-controller tokens create`): needed to join the first time, unless the
    /// controller allows this node's peer id.
    #[arg(long, value_name = "FILE", env = "MOBIWF_JOIN_TOKEN_FILE")]
    pub join_token_file: Option<PathBuf>,
    /// For a node nobody can dial (behind NAT or a firewall): be reached through a relay. The
    /// node keeps a reservation on the relay (made again after the relay restarts or the link
    /// comes back) and registers its circuit address, RELAY/p2p-circuit/p2p/<its peer id>,
    /// and only that. RELAY is the relay's full address; without it, the controller's.
    #[arg(long, value_name = "RELAY_MULTIADDR", num_args = 0..=1, default_missing_value = "")]
    pub via_relay: Option<String>,
    /// Serve as a circuit relay for nodes nobody can dial (they name this node's address in
    /// their --via-relay).
    #[arg(long)]
    pub relay_server: bool,
    /// Which activities' <command>s this node runs: `none` (the default: a workflow's
    /// commands come from whoever submits it, so the node's owner opts in), `any`, or
    /// `allow FILE` (one allowed command line a line, or `PREFIX *` for that command with
    /// plain arguments). A refused command fails its activity with the reason.
    #[arg(long, num_args = 1..=2, value_names = ["any|none|allow", "FILE"])]
    pub commands: Vec<String>,
    /// The private mesh's key (the file the controller's `serve --swarm-key-file` made):
    /// needed when the controller runs a private mesh, to connect to it or any member.
    #[arg(long, value_name = "FILE", env = "MOBIWF_SWARM_KEY_FILE")]
    pub swarm_key_file: Option<PathBuf>,
    /// Serve the HTTP API without checking tokens: anyone who reaches it may do anything
    /// (only on a machine and network you trust entirely). By default every request needs a
    /// token; DIR/api.token holds the node administrator's, which the commands given
    /// --data-dir read themselves.
    #[arg(long)]
    pub insecure_no_auth: bool,
    #[command(flatten)]
    pub inbound: mobiwf_runtime::mesh::InboundArgs,
}

/// Runs the node until Ctrl-C or SIGTERM.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let node = mobiwf_node::start(config_of(&args)?).await?;
    node.publish_addresses(&args.data_dir)?;
    println!("mobiwf-node {} (peer {})", args.name, node.peer_id);
    for addr in &node.addrs {
        println!("  listening on {addr}");
    }
    println!("  API on {}", node.api_url());
    if node.served.tls {
        println!("  the CLIs trust its certificate's CA with --api-ca FILE (or MOBIWF_API_CA)");
    }
    if args.insecure_no_auth {
        println!(
            "  the API checks NO tokens (--insecure-no-auth): anyone who reaches it may do anything"
        );
    } else {
        println!(
            "  API token (node administrator) in {}",
            args.data_dir.join(mobiwf_node::API_TOKEN_FILE).display()
        );
    }
    node.run_until_stopped("the node").await
}

/// The node the options ask for: where it listened last time when they name no address, the
/// join token read from its file, the relay parsed.
fn config_of(args: &RunArgs) -> anyhow::Result<NodeConfig> {
    let listen = if args.listen.is_empty() {
        previous_addresses(&args.data_dir)
    } else {
        args.listen.clone()
    };
    let join_token = match &args.join_token_file {
        Some(file) => Some(mobiwf_runtime::secret::read_token_file(file)?),
        None => None,
    };
    let via_relay = match args.via_relay.as_deref() {
        None => None,
        Some("") => Some(args.controller.as_str()),
        Some(relay) => Some(relay),
    }
    .map(|relay| {
        relay
            .parse::<Multiaddr>()
            .map_err(|e| anyhow::anyhow!("--via-relay: {relay:?} is not a multiaddr: {e}"))
    })
    .transpose()?;
    let (commands, swarm_key) = protection(args)?;
    Ok(NodeConfig {
        data_dir: args.data_dir.clone(),
        name: args.name.clone().into(),
        skills: args
            .skills
            .iter()
            .copied()
            .map(mobiwf_proto::ActivityTypeId)
            .collect(),
        controller: mobiwf_runtime::outbox::location(&args.controller)
            .map_err(|e| anyhow::anyhow!("--controller: {e}"))?,
        listen,
        api: args.api,
        api_tls: args.tls.load()?,
        store: None,
        prefetch: !args.no_prefetch,
        hour_ms: args.hour_ms,
        join_token,
        via_relay,
        relay_server: args.relay_server,
        commands,
        swarm_key,
        api_auth: !args.insecure_no_auth,
        inbound: args.inbound.limits(),
        applications: installed(&args.applications)?,
    })
}

/// What `--commands` and `--swarm-key-file` say: the command policy and the private mesh's key.
fn protection(
    args: &RunArgs,
) -> anyhow::Result<(
    CommandPolicy,
    Option<mobiwf_runtime::mesh::private::PreSharedKey>,
)> {
    let commands = match args.commands.as_slice() {
        [] => CommandPolicy::None,
        [mode] => CommandPolicy::from_args(mode, None)?,
        [mode, file, ..] => CommandPolicy::from_args(mode, Some(std::path::Path::new(file)))?,
    };
    let swarm_key = match &args.swarm_key_file {
        Some(file) => Some(mobiwf_runtime::mesh::private::read_key_file(file)?),
        None => None,
    };
    Ok((commands, swarm_key))
}

/// The addresses written by the last run in `data_dir` (without `/p2p/...`; a circuit address
/// is the relay's, not one to listen on), or a free port on loopback when there was none.
fn previous_addresses(data_dir: &std::path::Path) -> Vec<Multiaddr> {
    let previous: Vec<Multiaddr> = std::fs::read_to_string(data_dir.join("address"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.trim().parse::<Multiaddr>().ok())
        .filter(|addr| !mobiwf_runtime::mesh::relay::is_circuit(addr))
        .map(|mut addr| {
            if matches!(
                addr.iter().last(),
                Some(libp2p::multiaddr::Protocol::P2p(_))
            ) {
                addr.pop();
            }
            addr
        })
        .collect();
    if previous.is_empty() {
        let mut loopback = Multiaddr::empty();
        loopback.push(libp2p::multiaddr::Protocol::Ip4(
            std::net::Ipv4Addr::LOCALHOST,
        ));
        loopback.push(libp2p::multiaddr::Protocol::Tcp(0));
        vec![loopback]
    } else {
        previous
    }
}

/// The applications `--application` names, each checked as a definition's application ids are.
fn installed(names: &[String]) -> anyhow::Result<Vec<mobiwf_xml_schema::ApplicationId>> {
    names
        .iter()
        .map(
            |name| match mobiwf_xml_schema::application_id_problem(name) {
                None => Ok(mobiwf_xml_schema::ApplicationId::new(name.as_str())),
                Some(problem) => Err(anyhow::anyhow!("--application: {problem}")),
            },
        )
        .collect()
}
