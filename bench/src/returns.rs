//! Delivery delay after a link returns: on loopback, the paper's P2 is killed, an instance is
//! submitted (P1 runs its part, and its notifications to P2 wait, failing, for long enough that
//! the sender's backoff is at its longest), then P2 starts again, at its old address (the link
//! came back) or on another port (it moved: found through the controller). Measured: from
//! the moment P2 listens again to the start of its first activity, which needs P1's
//! notification applied (a synced write on each side and P2's own start in between).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::api::NodeApi;
use crate::cluster::{Cluster, Mode};
use crate::stats::Samples;
use crate::workloads::Workload;

/// How long the notifications wait, failing, before P2 comes back: longer than the outbox's
/// longest backoff, so that each sample is the case where nothing else wakes the sender.
const HELD_DOWN: Duration = Duration::from_millis(1500);
/// How long P2 stays up after a sample: the controller's failure detector (probing every
/// second, suspecting after 10 s without an answer) hears it, so that a run of samples does
/// not look like a node that is gone.
const SETTLE: Duration = Duration::from_millis(1500);
/// How long one sample may take.
const SAMPLE_LIMIT: Duration = Duration::from_secs(60);
/// How often the nodes' runs are read.
const POLL: Duration = Duration::from_millis(5);

/// What was measured, µs.
#[derive(Debug, Clone, Default)]
pub struct Returns {
    /// P2 back at its old address.
    pub same_address: Samples,
    /// P2 back on another port.
    pub moved: Samples,
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Runs `samples` of each kind on the paper workload.
pub async fn measure(
    bin_dir: &std::path::Path,
    paper: &Workload,
    samples: usize,
) -> anyhow::Result<Returns> {
    let mut cluster = Cluster::start(bin_dir, Mode::P2p, &paper.partners).await?;
    let mut same = Vec::new();
    let mut moved = Vec::new();
    for i in 0..samples * 2 {
        let move_it = i % 2 == 1;
        let delay = sample(&mut cluster, paper, move_it).await?;
        if move_it {
            moved.push(delay);
        } else {
            same.push(delay);
        }
    }
    Ok(Returns {
        same_address: Samples::new(same),
        moved: Samples::new(moved),
    })
}

/// P1's activities that precede one of P2's and wait for none of P2's.
fn feeders(paper: &Workload) -> Vec<u64> {
    let on = |a: &u64, p: &str| paper.partner_of.get(a).is_some_and(|n| n == p);
    let mut feeders: Vec<u64> = paper
        .preconditions
        .iter()
        .filter(|(a, _)| on(a, "P2"))
        .flat_map(|(_, pre)| pre.iter().copied())
        .filter(|p| {
            on(p, "P1")
                && !paper
                    .preconditions
                    .get(p)
                    .is_some_and(|pre| pre.iter().any(|q| on(q, "P2")))
        })
        .collect();
    feeders.sort_unstable();
    feeders.dedup();
    feeders
}

/// One instance: P2 away while P1 notifies it, then back; the delay in µs.
async fn sample(cluster: &mut Cluster, paper: &Workload, move_it: bool) -> anyhow::Result<f64> {
    let at = |name: &str| cluster.nodes.iter().position(|n| n.name == name);
    let (Some(p1), Some(p2)) = (at("P1"), at("P2")) else {
        anyhow::bail!("the paper's partners P1 and P2 are not in the cluster");
    };
    let p1_api = NodeApi::new(&cluster.nodes[p1].api, &cluster.nodes[p1].token)?;
    let old = cluster.nodes[p2].address.clone();
    cluster.nodes[p2].kill();
    let id = cluster.api.submit(&paper.xml).await?;
    // P1's activities that P2's wait for (and that wait for nothing of P2's) are over: their
    // notifications to P2 are in P1's outbox.
    let started = Instant::now();
    let feeders = feeders(paper);
    loop {
        let runs = p1_api.runs().await?;
        let done = runs
            .iter()
            .filter(|r| r.instance == id)
            .flat_map(|r| &r.activities)
            .filter(|a| a.state.is_final() && feeders.contains(&a.activity.0))
            .count();
        if done >= feeders.len() {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < SAMPLE_LIMIT,
            "P1 did not finish its part"
        );
        tokio::time::sleep(POLL).await;
    }
    tokio::time::sleep(HELD_DOWN).await;
    let listen = if move_it {
        "/ip4/127.0.0.1/tcp/0".to_owned()
    } else {
        old.split("/p2p/").next().unwrap_or(&old).to_owned()
    };
    cluster.nodes[p2].restart(&listen).await?;
    let back_us = now_us();
    let p2_api = NodeApi::new(&cluster.nodes[p2].api, &cluster.nodes[p2].token)?;
    loop {
        let runs = p2_api.runs().await?;
        let first_start = runs
            .iter()
            .filter(|r| r.instance == id)
            .flat_map(|r| &r.activities)
            .filter_map(|a| a.started_us)
            .min();
        if let Some(started_us) = first_start {
            cluster.api.wait_succeeded(id).await?;
            tokio::time::sleep(SETTLE).await;
            return Ok(started_us.saturating_sub(back_us) as f64);
        }
        anyhow::ensure!(
            started.elapsed() < SAMPLE_LIMIT,
            "P2 did not hear from P1 after coming back"
        );
        tokio::time::sleep(POLL).await;
    }
}
