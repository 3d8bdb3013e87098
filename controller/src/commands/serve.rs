//! `serve`: the controller daemon.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use libp2p::Multiaddr;
use mobiwf_controller::{Controller, ControllerConfig};
use mobiwf_runtime::process::{wait_for_stop, write_atomically};

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
    /// Where to serve the operators' HTTP API.
    #[arg(long, value_name = "HOST:PORT", default_value = super::api_client::DEFAULT_API)]
    pub api: SocketAddr,
}

/// Runs the controller until Ctrl-C or SIGTERM.
pub async fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let controller = Controller::start(ControllerConfig {
        data_dir: args.data_dir.clone(),
        listen: args.listen.clone(),
        api: args.api,
        store: None,
    })
    .await?;
    write_atomically(
        &args.data_dir.join("address"),
        &(controller.addrs.join("\n") + "\n"),
    )?;
    write_atomically(
        &args.data_dir.join("api"),
        &format!("{}\n", controller.api_addr),
    )?;
    println!("mobiwf-controller (peer {})", controller.peer_id);
    for addr in &controller.addrs {
        println!("  listening on {addr}");
    }
    println!("  API on http://{}", controller.api_addr);
    println!(
        "  address and API written to {} and {}",
        args.data_dir.join("address").display(),
        args.data_dir.join("api").display()
    );
    tokio::select! {
        r = wait_for_stop() => r?,
        why = controller.failed() => {
            controller.stop().await;
            anyhow::bail!("the controller stopped: {why}");
        }
    }
    controller.stop().await;
    Ok(ExitCode::SUCCESS)
}
