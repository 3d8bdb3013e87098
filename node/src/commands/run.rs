//! `mobiwf-node run`: the partner node daemon.

use std::net::SocketAddr;
use std::path::PathBuf;

use libp2p::Multiaddr;
use mobiwf_node::{Node, NodeConfig};

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
    /// from other machines.
    #[arg(long, value_name = "MULTIADDR", default_value = "/ip4/127.0.0.1/tcp/0")]
    pub listen: Vec<Multiaddr>,
    /// Where to serve the HTTP API (worklist, metrics); written to DIR/api.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:0")]
    pub api: SocketAddr,
}

/// Runs the node until Ctrl-C or SIGTERM.
pub async fn run(args: RunArgs) -> anyhow::Result<()> {
    let node = Node::start(NodeConfig {
        data_dir: args.data_dir.clone(),
        name: args.name.clone(),
        skills: args.skills.clone(),
        controller: args.controller.clone(),
        listen: args.listen.clone(),
        api: args.api,
        store: None,
    })
    .await?;
    mobiwf_runtime::process::write_atomically(
        &args.data_dir.join("address"),
        &(node.addrs.join("\n") + "\n"),
    )?;
    mobiwf_runtime::process::write_atomically(
        &args.data_dir.join("api"),
        &format!("{}\n", node.api_addr),
    )?;
    println!("mobiwf-node {} (peer {})", args.name, node.peer_id);
    for addr in &node.addrs {
        println!("  listening on {addr}");
    }
    println!("  API on http://{}", node.api_addr);
    mobiwf_runtime::process::wait_for_stop().await?;
    node.stop().await;
    Ok(())
}
