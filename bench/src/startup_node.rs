//! Startup at scale: how long a node holding many idle partitions takes from `mobiwf-node run` to
//! an API that answers. The data directory is built directly: the pure engine deploys the
//! partitions in memory and its changes are written through the node's own `state::stage_changes`,
//! exactly the records a node that received those deployments keeps, without running that many
//! instances over the mesh first.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mobiwf_engine::{Engine, Input};
use mobiwf_proto::{InstanceId, PartitionId};
use mobiwf_runtime::store::{Batch, Durability, RocksStore, Store};

use crate::procfs;

/// Partitions deployed per written batch while building the data directory.
const PER_BATCH: u64 = 1000;

/// How long the node may take to answer before the measurement gives up.
const STARTUP_LIMIT: Duration = Duration::from_secs(600);

/// What was measured.
#[derive(Debug, Clone)]
pub struct Startup {
    /// Idle partition runs in the node's store.
    pub partitions: u64,
    /// Building the data directory, seconds.
    pub build_s: f64,
    /// From starting `mobiwf-node run` to its first answer of `GET /worklist`, seconds.
    pub answer_s: f64,
    /// The node's resident memory at that moment, MiB.
    pub rss_mib: f64,
}

/// Builds a node data directory with `partitions` idle partitions under `scratch`, starts
/// the node from `bin_dir` on it and times its first answer.
pub async fn measure(bin_dir: &Path, partitions: u64, scratch: &Path) -> anyhow::Result<Startup> {
    let node_dir = scratch.join("startup-node");
    let t0 = Instant::now();
    build(&node_dir, partitions)?;
    let build_s = t0.elapsed().as_secs_f64();
    eprintln!("  built {partitions} idle partitions in {build_s:.1} s");

    // Its controller never answers: the node's registration waits in its outbox, which
    // neither holds the API back nor changes what is loaded.
    let controller = libp2p::identity::Keypair::generate_ed25519()
        .public()
        .to_peer_id();
    let log = std::fs::File::create(scratch.join("startup-node.log"))?;
    let t0 = Instant::now();
    let mut node = Command::new(bin_dir.join("mobiwf-node"))
        .args(["run", "--name", "startup", "--skills", "1"])
        .args(["--listen", "/ip4/127.0.0.1/tcp/0", "--api", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&node_dir)
        .arg("--controller")
        .arg(format!("/ip4/127.0.0.1/tcp/9/p2p/{controller}"))
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?;
    let answered = first_answer(&node_dir, &mut node, t0).await;
    let rss = procfs::rss_mib(node.id());
    let _ = node.kill();
    let _ = node.wait();
    Ok(Startup {
        partitions,
        build_s,
        answer_s: answered?,
        rss_mib: rss?,
    })
}

/// Polls for the node's API address and then for its first answer; seconds since `t0`.
async fn first_answer(
    node_dir: &Path,
    node: &mut std::process::Child,
    t0: Instant,
) -> anyhow::Result<f64> {
    let mut asking = None;
    loop {
        if t0.elapsed() > STARTUP_LIMIT {
            anyhow::bail!("the node did not answer within {STARTUP_LIMIT:?}");
        }
        if let Some(status) = node.try_wait()? {
            anyhow::bail!("the node stopped ({status}); see startup-node.log");
        }
        // The node writes its API token (`api.token`) and address (`api`) as it starts.
        if asking.is_none()
            && let (Ok(api), Ok(token)) = (
                std::fs::read_to_string(node_dir.join("api")),
                std::fs::read_to_string(node_dir.join("api.token")),
            )
        {
            let url = format!("{}/worklist", mobiwf_runtime::api_auth::base_url(&api));
            asking = Some((crate::api::client(token.trim())?, url));
        }
        if let Some((client, url)) = &asking
            && let Ok(reply) = client.get(url).send().await
            && reply.status().is_success()
        {
            return Ok(t0.elapsed().as_secs_f64());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Writes `partitions` deployed, waiting partition runs (the paper's partition 2, each of
/// its own instance, waiting for a predecessor that never finishes) into a node store.
fn build(node_dir: &Path, partitions: u64) -> anyhow::Result<()> {
    std::fs::create_dir_all(node_dir)?;
    let store = RocksStore::open(&node_dir.join("db"))?;
    let elsewhere = libp2p::identity::Keypair::generate_ed25519()
        .public()
        .to_peer_id();
    let elsewhere = format!("/ip4/127.0.0.1/tcp/1/p2p/{elsewhere}");
    let mut engine = Engine::new();
    let mut instance = 0;
    while instance < partitions {
        let mut batch = Batch::default();
        for _ in 0..PER_BATCH.min(partitions - instance) {
            instance += 1;
            let deploy = Input::Deploy(mobiwf_proto::Deploy {
                instance: InstanceId(instance),
                partition: PartitionId(2),
                document: crate::idle::partition(instance, &elsewhere),
                responsible: None,
                hour_ms: None,
                inputs: Default::default(),
                runs_on: Vec::new(),
            });
            engine
                .apply(1_000, deploy)
                .map_err(|refusal| anyhow::anyhow!("deploying {instance}: {refusal:?}"))?;
        }
        let changes = engine
            .take_changes()
            .map_err(|e| anyhow::anyhow!("encoding the runs: {e}"))?;
        mobiwf_node::state::stage_changes(&mut batch, &changes);
        let last = instance >= partitions;
        store.write(
            batch,
            if last {
                Durability::Synced
            } else {
                Durability::Lazy
            },
        )?;
        // Keep the builder's memory flat: the node loads them, not this process.
        engine = Engine::new();
    }
    Ok(())
}
