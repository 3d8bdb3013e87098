//! The physical floor a hand-off cannot beat, measured in the same run: a bare libp2p
//! request-response round trip on the daemons' own transport (TCP + Noise + Yamux, the
//! `/mobiwf/exec/*` codec) between two processes, and a synced RocksDB write of a
//! notification's size. A hop is one message one way plus the synced write before it (and,
//! until the successor's start is on disk, the one after it).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use libp2p::{Multiaddr, PeerId, identity::Keypair};
use mobiwf_proto::{Envelope, Message, MessageId, Outcome, Reply};
use mobiwf_runtime::mesh::{self, MeshConfig};
use mobiwf_runtime::store::{Batch, Durability, RocksStore, Store};

use crate::stats::Samples;

/// What the floor is made of.
#[derive(Debug, Clone, Default)]
pub struct Floor {
    /// libp2p request → reply between two processes, µs.
    pub round_trip: Samples,
    /// One synced RocksDB batch of a notification's size, µs.
    pub synced_write: Samples,
    /// The size of that notification on the wire, bytes.
    pub notification_bytes: usize,
}

impl Floor {
    /// One-way message + `writes` synced writes, µs (from the medians).
    pub fn floor_us(&self, writes: f64) -> f64 {
        self.round_trip.p50().unwrap_or(f64::NAN) / 2.0
            + writes * self.synced_write.p50().unwrap_or(f64::NAN)
    }

    /// The floor of a measured hop: one-way message + one synced write. A node stamps an
    /// activity's times when it decides, before it commits: a hop runs from the
    /// predecessor's decision through its node's commit and the message to the successor's
    /// decision, and the successor's own commit comes after it.
    pub fn hop_floor_us(&self) -> f64 {
        self.floor_us(1.0)
    }

    /// The floor up to the successor's start being on disk: one-way + two synced writes.
    pub fn durable_hop_floor_us(&self) -> f64 {
        self.floor_us(2.0)
    }
}

fn notification(origin: &PeerId, seq: u64) -> Envelope {
    Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: origin.to_string().into(),
            seq,
        },
        message: Message::Notify(mobiwf_proto::Notify::new(
            mobiwf_proto::InstanceId(1_000_000 + seq),
            mobiwf_proto::ActivityId(17),
            Outcome::Succeeded,
        )),
    }
}

/// Measures the floor with `samples` of each kind; the echo peer is this binary's
/// `floor-peer` command, in its own process.
pub async fn measure(samples: usize, scratch: &Path) -> anyhow::Result<Floor> {
    let keypair = Keypair::generate_ed25519();
    let me = keypair.public().to_peer_id();
    let synced_write = synced_writes(&me, samples, &scratch.join("db"))?;

    let peer_dir = scratch.join("peer");
    std::fs::create_dir_all(&peer_dir)?;
    let mut peer = Command::new(std::env::current_exe()?)
        .args(["floor-peer", "--dir"])
        .arg(&peer_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()?;
    let result = round_trips(keypair, &peer_dir, samples).await;
    let _ = peer.kill();
    let _ = peer.wait();
    let round_trip = result?;
    Ok(Floor {
        round_trip,
        synced_write,
        notification_bytes: serde_json::to_vec(&notification(&me, 1))?.len(),
    })
}

fn synced_writes(me: &PeerId, samples: usize, db: &Path) -> anyhow::Result<Samples> {
    let store = RocksStore::open(db)?;
    let mut times = Vec::new();
    for seq in 0..samples as u64 + 20 {
        let envelope = notification(me, seq);
        let mut batch = Batch::default();
        batch.put(envelope.id.seen_key(), serde_json::to_vec(&envelope)?);
        let t0 = Instant::now();
        store.write(batch, Durability::Synced)?;
        if seq >= 20 {
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(Samples::new(times))
}

async fn round_trips(keypair: Keypair, peer_dir: &Path, samples: usize) -> anyhow::Result<Samples> {
    let address = wait_for_address(peer_dir).await?;
    let location = mobiwf_runtime::outbox::location(&address).map_err(|e| anyhow::anyhow!(e))?;
    let (to, addr) = mobiwf_runtime::outbox::peer_of(&location).map_err(|e| anyhow::anyhow!(e))?;
    let me = keypair.public().to_peer_id();
    let (mesh, _inbound) = mesh::start(MeshConfig::new(keypair, Vec::new())).await?;
    let mut times = Vec::new();
    for seq in 0..samples as u64 + 20 {
        let t0 = Instant::now();
        let reply = mesh
            .request(to, vec![addr.clone()], notification(&me, seq))
            .await?;
        if reply != Reply::Ack {
            anyhow::bail!("the floor peer answered {reply:?}");
        }
        // The first requests open the connection: not part of the floor.
        if seq >= 20 {
            times.push(t0.elapsed().as_secs_f64() * 1e6);
        }
    }
    mesh.shutdown().await;
    Ok(Samples::new(times))
}

async fn wait_for_address(dir: &Path) -> anyhow::Result<String> {
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(dir.join("address")).unwrap_or_default();
        if let Some(line) = text.lines().next().filter(|l| !l.trim().is_empty()) {
            return Ok(line.trim().to_owned());
        }
        if started.elapsed() > Duration::from_secs(30) {
            anyhow::bail!("the floor peer did not publish its address");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A mesh peer of `keypair` listening on a free loopback port, and its full address.
pub async fn loopback_mesh(
    keypair: Keypair,
) -> anyhow::Result<(
    mesh::MeshHandle,
    tokio::sync::mpsc::Receiver<mesh::Inbound>,
    String,
)> {
    let listen: Multiaddr = "/ip4/127.0.0.1/tcp/0".parse()?;
    let (mesh, inbound) = mesh::start(MeshConfig::new(keypair, vec![listen])).await?;
    let address = mesh
        .listen_addrs()
        .first()
        .map(ToString::to_string)
        .ok_or_else(|| anyhow::anyhow!("not listening"))?;
    Ok((mesh, inbound, address))
}

/// The echo peer: answers every request at once, until it is killed.
pub async fn serve_peer(dir: &Path) -> anyhow::Result<()> {
    let (_mesh, mut inbound, address) = loopback_mesh(Keypair::generate_ed25519()).await?;
    mobiwf_runtime::process::write_atomically(&dir.join("address"), &(address + "\n"))?;
    while let Some(request) = inbound.recv().await {
        let _ = request.reply.send(Reply::Ack);
    }
    Ok(())
}
