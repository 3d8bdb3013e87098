//! Memory of a node holding many idle activity instances: the benchmark plays the node's
//! controller (its own libp2p peer), deploys the paper's partition 2 (two activities, each
//! waiting for a remote predecessor that never finishes) as many instances, and reads the
//! node's resident memory once every deployment is acknowledged (that is, on its disk).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use libp2p::{Multiaddr, identity::Keypair};
use mobiwf_proto::{Envelope, Message, MessageId, Register, Reply};
use mobiwf_runtime::mesh;

use crate::procfs;

/// Deployments in flight at once: half the node's per-peer inbound gate
/// (`MAX_INBOUND_IN_FLIGHT_PER_PEER`), which leaves what is past it unanswered.
const IN_FLIGHT: usize = mobiwf_runtime::mesh::limits::MAX_INBOUND_IN_FLIGHT_PER_PEER as usize / 2;

/// Activities per deployed partition (the paper's partition 2: A4 and A5).
pub const ACTIVITIES_PER_PARTITION: u64 = 2;

/// What was measured.
#[derive(Debug, Clone, Default)]
pub struct Idle {
    /// Idle activity instances the node holds.
    pub activities: u64,
    /// Partition runs deployed.
    pub partitions: u64,
    /// The node's resident memory before the first deployment, MiB.
    pub rss_before_mib: f64,
    /// Its resident memory once all are acknowledged, MiB.
    pub rss_after_mib: f64,
    /// Deployments acknowledged per second (each durable on the node first).
    pub deploys_per_s: f64,
}

/// The paper's partition 2 as instance `instance`; its remote adjacent is `elsewhere`.
pub(crate) fn partition(instance: u64, elsewhere: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workflow id=\"{instance}\">\
         <startTime>2007/3/10 16:19:34</startTime><activities>\
         <activity id=\"19\"><nameActivity>A4</nameActivity>\
         <descriptionActivity>Conter vazamento em A4</descriptionActivity><status>0</status>\
         <responseImmediate>1</responseImmediate><timeToWait>0</timeToWait>\
         <contingencyActivityId>-1</contingencyActivityId><preconditions>\
         <precondition id=\"17\"><status>0</status><local>0</local><timeOut>0</timeOut></precondition>\
         </preconditions><adjacents><adjacent id=\"18\"><ip>{elsewhere}</ip></adjacent></adjacents></activity>\
         <activity id=\"20\"><nameActivity>A5</nameActivity>\
         <descriptionActivity>Conter vazamento em A5</descriptionActivity><status>0</status>\
         <responseImmediate>0</responseImmediate><timeToWait>0</timeToWait>\
         <contingencyActivityId>0</contingencyActivityId><preconditions>\
         <precondition id=\"18\"><status>0</status><local>0</local><timeOut>0</timeOut></precondition>\
         </preconditions><adjacents/></activity></activities></workflow>\n"
    )
}

/// How many times one deployment is sent before the measurement gives up.
const TRIES: u32 = 50;

/// Sends `envelope` until the node answers, as the runtime's outbox would: a node sheds what
/// comes past its per-peer rate (`MAX_INBOUND_PER_PEER_PER_SEC`) unanswered, and the sender
/// tries again after a pause.
async fn deliver(
    mesh: &mesh::MeshHandle,
    node: libp2p::PeerId,
    addrs: Vec<Multiaddr>,
    envelope: Envelope,
) -> anyhow::Result<Reply> {
    let mut pause = Duration::from_millis(20);
    for _ in 1..TRIES {
        match mesh.request(node, addrs.clone(), envelope.clone()).await {
            Ok(reply) => return Ok(reply),
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(500));
            }
        }
    }
    Ok(mesh.request(node, addrs, envelope).await?)
}

/// Deploys partitions on a fresh node until it holds `activities` idle activity instances.
pub async fn measure(bin_dir: &Path, activities: u64, scratch: &Path) -> anyhow::Result<Idle> {
    let keypair = Keypair::generate_ed25519();
    let me = keypair.public().to_peer_id();
    let (mesh, mut inbound, my_address) = crate::floor::loopback_mesh(keypair).await?;

    let node_dir = scratch.join("idle-node");
    let log = std::fs::File::create(scratch.join("idle-node.log"))?;
    let mut node = Command::new(bin_dir.join("mobiwf-node"))
        .args(["run", "--name", "idle", "--skills", "1", "--listen"])
        .arg("/ip4/127.0.0.1/tcp/0")
        .arg("--data-dir")
        .arg(&node_dir)
        .arg("--controller")
        .arg(&my_address)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?;
    let result = deploy_all(&mesh, &mut inbound, me, &my_address, node.id(), activities).await;
    let _ = node.kill();
    let _ = node.wait();
    mesh.shutdown().await;
    result
}

async fn deploy_all(
    mesh: &mesh::MeshHandle,
    inbound: &mut tokio::sync::mpsc::Receiver<mesh::Inbound>,
    me: libp2p::PeerId,
    my_address: &str,
    pid: u32,
    activities: u64,
) -> anyhow::Result<Idle> {
    // The node registers first. Nothing else is expected from it: its partitions wait for a
    // predecessor that never finishes, and have no timers.
    let register = tokio::time::timeout(Duration::from_secs(30), inbound.recv())
        .await
        .map_err(|_| anyhow::anyhow!("the node did not register within 30 s"))?
        .ok_or_else(|| anyhow::anyhow!("the mesh stopped"))?;
    let (node, addrs) = match &register.envelope.message {
        Message::Register(Register { addrs, .. }) => (register.from, addrs.clone()),
        other => anyhow::bail!("expected the node's registration, got {}", other.kind()),
    };
    let _ = register.reply.send(Reply::Ack);
    let addrs: Vec<Multiaddr> = addrs.iter().filter_map(|a| a.parse().ok()).collect();
    let rss_before_mib = procfs::rss_mib(pid)?;
    let partitions = activities.div_ceil(ACTIVITIES_PER_PARTITION);
    let t0 = Instant::now();
    let mut replies = futures::stream::iter(1..=partitions)
        .map(|instance| {
            let envelope = Envelope {
                answered_below: 0,
                epoch: None,
                id: MessageId {
                    incarnation: 0,
                    origin: me.to_string().into(),
                    seq: instance,
                },
                message: Message::Deploy(mobiwf_proto::Deploy {
                    instance: mobiwf_proto::InstanceId(instance),
                    partition: mobiwf_proto::PartitionId(2),
                    document: partition(instance, my_address),
                    responsible: None,
                    hour_ms: None,
                    inputs: Default::default(),
                    runs_on: Default::default(),
                }),
            };
            deliver(mesh, node, addrs.clone(), envelope)
        })
        .buffer_unordered(IN_FLIGHT);
    while let Some(reply) = replies.next().await {
        match reply? {
            Reply::Ack => {}
            Reply::Refused { reason } => anyhow::bail!("the node refused a deployment: {reason}"),
            other => anyhow::bail!("the node answered a deployment with {other:?}"),
        }
    }
    let elapsed = t0.elapsed().as_secs_f64();
    Ok(Idle {
        activities: partitions * ACTIVITIES_PER_PARTITION,
        partitions,
        rss_before_mib,
        rss_after_mib: procfs::rss_mib(pid)?,
        deploys_per_s: partitions as f64 / elapsed,
    })
}
