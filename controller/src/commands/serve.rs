//! `serve`: the controller daemon.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use libp2p::Multiaddr;
use mobiwf_controller::cluster::{FENCED_EXIT, Joined};
use mobiwf_controller::{Controller, ControllerConfig};

/// The daemon's options.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Where the controller keeps its identity and database (created if missing).
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
    /// Where to listen for nodes (repeatable). Use /ip4/0.0.0.0/tcp/PORT to be reachable from
    /// other machines.
    #[arg(
        long,
        value_name = "MULTIADDR",
        default_value = "/ip4/127.0.0.1/tcp/7701"
    )]
    pub listen: Vec<Multiaddr>,
    /// Where to serve the operators' HTTP API. Another machine's address (or 0.0.0.0) wants
    /// --tls-cert/--tls-key: tokens would otherwise cross the network in clear text.
    #[arg(long, value_name = "HOST:PORT", default_value = super::api_client::DEFAULT_API)]
    pub api: SocketAddr,
    #[command(flatten)]
    pub tls: mobiwf_runtime::tls::TlsArgs,
    /// How often each partner with unfinished work is probed, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1.0, value_parser = seconds)]
    pub probe_every: f64,
    /// How long a partner may go without answering probes before the controller suspects it
    /// and applies the contingency rules of its unfinished activities, in seconds.
    /// At least 0.1 (`MIN_SUSPECT_AFTER`).
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = suspect_seconds)]
    pub suspect_after: f64,
    /// How notifications travel between partners: `p2p`, partner to partner (the design), or
    /// `hub`, each through the controller, which relays it (a centralized engine, for
    /// comparison: `scripts/bench`).
    #[arg(long, value_enum, default_value_t = RoutingArg::P2p)]
    pub routing: RoutingArg,
    /// The length of an hour for work items' <deadline>s, in ms; it travels with each
    /// deployment that has deadlines (tests and demos use less, e.g. 100).
    #[arg(long, value_name = "MS", default_value_t = mobiwf_proto::DEFAULT_HOUR_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub hour_ms: u64,
    /// Let any node that reaches the controller join, without a join token or the allow
    /// list (a closed mesh is the default: only for a network you trust entirely).
    #[arg(long)]
    pub open_enrolment: bool,
    /// Do not serve as a circuit relay: nodes started `--via-relay` without an address then
    /// cannot be reached through the controller.
    #[arg(long)]
    pub no_relay: bool,
    /// A private mesh: every connection needs the pre-shared key in FILE (libp2p pnet, the
    /// IPFS swarm.key format), made (0600) when FILE does not exist; give the file to each
    /// node (`mobiwf-node run --swarm-key-file`). A peer without it cannot even connect.
    #[arg(long, value_name = "FILE", env = "MOBIWF_SWARM_KEY_FILE")]
    pub swarm_key_file: Option<PathBuf>,
    /// Serve the HTTP API without checking tokens: anyone who reaches it may do anything
    /// (only on a machine and network you trust entirely). By default every request needs a
    /// token; DIR/operator.token holds an administrator's.
    #[arg(long)]
    pub insecure_no_auth: bool,
    /// Delete finished instances (settled: final, compensations over) that finished longer
    /// ago than this, with their definition and history: a whole number and a unit, ms, s,
    /// m, h or d (e.g. 30d, 12h). Off by default: everything is kept.
    #[arg(long, value_name = "DURATION", value_parser = mobiwf_controller::retention::parse_duration)]
    pub retain_finished: Option<std::time::Duration>,
    /// How many instances submitted or started through the API may be under way (not
    /// settled) before a new one is answered 429 Too Many Requests with Retry-After: `auto`
    /// adapts the limit from the instances' latency between MIN_ADMISSION_LIMIT (32) and
    /// MAX_ADMISSION_LIMIT (10000), not counting those under way over a minute (waiting on
    /// people); a number N fixes it, counting each until it settles; `off` sheds nothing.
    #[arg(long, value_name = "auto|off|N", default_value = "auto",
          value_parser = mobiwf_controller::admission::Policy::parse)]
    pub admission_limit: mobiwf_controller::admission::Policy,
    #[command(flatten)]
    pub inbound: mobiwf_runtime::mesh::InboundArgs,
    #[command(flatten)]
    pub cluster: mobiwf_controller::cluster::ClusterArgs,
}

/// `--routing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoutingArg {
    /// Partner to partner.
    P2p,
    /// Through the controller.
    Hub,
}

/// A positive number of seconds (fractions allowed), at most a day.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        Ok(_) => Err("expected more than 0 and at most 86400 seconds".to_owned()),
        Err(_) => Err(format!(
            "{text:?} is not a number of seconds (e.g. 2 or 0.5)"
        )),
    }
}

/// `--suspect-after`: seconds, at least `MIN_SUSPECT_AFTER`.
fn suspect_seconds(text: &str) -> Result<f64, String> {
    let least = mobiwf_controller::detector::MIN_SUSPECT_AFTER.as_secs_f64();
    match seconds(text)? {
        s if s >= least => Ok(s),
        _ => Err(format!(
            "expected at least {least} seconds (MIN_SUSPECT_AFTER): half of it is the lease of \
             a class's grant, which must outlast two looks of a held command's watchdog"
        )),
    }
}

/// Runs the controller until Ctrl-C or SIGTERM.
/// With `--etcd`, it first waits until it owns the book, and stops at once (exit status
/// `FENCED_EXIT`) when it finds it no longer does.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let joined = Joined::join(&args.cluster, &args.data_dir, args.api).await?;
    let mut config = config_of(&args)?;
    if let Some(joined) = &joined {
        config.store = Some(joined.store());
    }
    let controller = mobiwf_controller::start(config).await?;
    controller.publish_addresses(&args.data_dir)?;
    announce(&args, &controller);
    let Some(joined) = joined else {
        controller.run_until_stopped("the controller").await?;
        return Ok(ExitCode::SUCCESS);
    };
    println!(
        "  owns the book in etcd (member {}, epoch {})",
        joined.membership.member,
        joined.store().epoch()
    );
    tokio::select! {
        // A write the fence refused also stops the daemon: the fence is told first.
        biased;
        why = joined.fenced() => {
            // At once, not through the daemon's orderly stop: nothing more may be sent.
            eprintln!("mobiwf-controller: {why}");
            tracing::error!("{why}");
            std::process::exit(i32::from(FENCED_EXIT));
        }
        stopped = controller.run_until_stopped("the controller") => stopped?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The controller the options ask for (the private mesh's key made when its file is missing).
fn config_of(args: &ServeArgs) -> anyhow::Result<ControllerConfig> {
    let swarm_key = match &args.swarm_key_file {
        Some(file) => Some(mobiwf_runtime::mesh::private::ensure_key_file(file)?),
        None => None,
    };
    Ok(ControllerConfig {
        data_dir: args.data_dir.clone(),
        listen: args.listen.clone(),
        api: args.api,
        api_tls: args.tls.load()?,
        store: None,
        detector: mobiwf_controller::detector::DetectorConfig {
            probe_every: std::time::Duration::from_secs_f64(args.probe_every),
            suspect_after: std::time::Duration::from_secs_f64(args.suspect_after),
        },
        hub_routing: args.routing == RoutingArg::Hub,
        hour_ms: args.hour_ms,
        open_enrolment: args.open_enrolment,
        relay_server: !args.no_relay,
        swarm_key,
        api_auth: !args.insecure_no_auth,
        retain_finished: args.retain_finished,
        admission: args.admission_limit,
        inbound: args.inbound.limits(),
    })
}

/// Tells the operator where the running controller is and how to reach it: its addresses,
/// its API and the token for it, and how nodes join.
fn announce(args: &ServeArgs, controller: &Controller) {
    println!("mobiwf-controller (peer {})", controller.peer_id);
    for addr in &controller.addrs {
        println!("  listening on {addr}");
    }
    println!("  API on {}", controller.api_url());
    if controller.served.tls {
        println!("  the CLIs trust its certificate's CA with --api-ca FILE (or MOBIWF_API_CA)");
    }
    println!(
        "  address and API written to {} and {}",
        args.data_dir.join("address").display(),
        args.data_dir.join("api").display()
    );
    let operator_token = args
        .data_dir
        .join(mobiwf_controller::daemon::OPERATOR_TOKEN_FILE);
    if args.insecure_no_auth {
        println!(
            "  the API checks NO tokens (--insecure-no-auth): anyone who reaches it may do anything"
        );
    } else {
        println!(
            "  API token (administrator) in {}: export MOBIWF_TOKEN_FILE={}",
            operator_token.display(),
            operator_token.display()
        );
    }
    let join = args
        .data_dir
        .join(mobiwf_controller::daemon::JOIN_TOKEN_FILE);
    if args.open_enrolment {
        println!("  enrolment OPEN: any node that reaches this controller may join");
        tracing::warn!(
            "enrolment is open (--open-enrolment): any node that reaches the controller may join"
        );
    } else {
        println!(
            "  nodes join with --join-token-file {} (or `mobiwf-controller tokens create`)",
            join.display()
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_suspicion_shorter_than_two_watchdog_periods_of_its_lease_is_refused() {
        assert_eq!(suspect_seconds("0.1"), Ok(0.1));
        assert_eq!(suspect_seconds("10"), Ok(10.0));
        let refused = suspect_seconds("0.05").unwrap_err();
        assert!(refused.contains("MIN_SUSPECT_AFTER"), "{refused}");
        assert!(suspect_seconds("0").unwrap_err().contains("more than 0"));
    }
}
