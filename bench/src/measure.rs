//! The figures of one workload in one mode, on a fresh cluster: hand-off (hop) latency from
//! the nodes' own timestamps, end-to-end latency one instance at a time, throughput with
//! many instances in flight, and what the controller spent on them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mobiwf_proto::ActivityRecord;

use crate::cluster::Cluster;
use crate::procfs;
use crate::stats::Samples;
use crate::workloads::Workload;

/// How much to run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Instances run before measuring, not counted.
    pub warmup: usize,
    /// Instances run one at a time for the latencies.
    pub sequential: usize,
    /// Instances kept in flight for the throughput.
    pub concurrency: usize,
    /// How long the throughput phase lasts.
    pub duration: Duration,
}

/// What was measured.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Predecessor finished on one partner → successor started on another, µs.
    pub hops: Samples,
    /// Submission → instance final, one at a time, µs.
    pub e2e: Samples,
    /// Instances finished per second with `concurrency` in flight.
    pub instances_per_s: f64,
    /// Activities finished per second, the same.
    pub activities_per_s: f64,
    /// Instances run in the throughput phase (those in flight at its end included).
    pub throughput_instances: u64,
    /// The throughput phase's whole time, s: its window and the last instances finishing.
    pub throughput_s: f64,
    /// Messages the controller received and sent per instance, by kind.
    pub controller_messages: BTreeMap<String, f64>,
    /// Controller CPU per instance, ms.
    pub controller_cpu_ms: f64,
    /// Peak resident memory per process, MiB, controller first.
    pub peak_rss_mib: Vec<(String, f64)>,
}

impl Figures {
    /// Every controller message per instance.
    pub fn controller_messages_total(&self) -> f64 {
        self.controller_messages.values().sum()
    }
}

/// Runs the plan on `cluster`.
pub async fn run(cluster: &Cluster, w: &Workload, plan: &Plan) -> anyhow::Result<Figures> {
    for _ in 0..plan.warmup {
        let id = cluster.api.submit(&w.xml).await?;
        cluster.api.wait_succeeded(id).await?;
    }
    let mut e2e = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..plan.sequential {
        let t0 = Instant::now();
        let id = cluster.api.submit(&w.xml).await?;
        cluster.api.wait_succeeded(id).await?;
        e2e.push(t0.elapsed().as_secs_f64() * 1e6);
        ids.push(id);
    }
    let hops = hops(cluster, w, &ids).await?;
    let mut figures = throughput(cluster, w, plan).await?;
    figures.hops = hops;
    figures.e2e = Samples::new(e2e);
    figures.peak_rss_mib = std::iter::once(&cluster.controller)
        .chain(&cluster.nodes)
        .map(|d| (d.name.clone(), d.peak_rss_mib()))
        .collect();
    Ok(figures)
}

/// For each activity of `ids` whose last precondition to finish ran on another partner: the
/// time from that predecessor's end to the activity's start, as the two nodes recorded them.
async fn hops(cluster: &Cluster, w: &Workload, ids: &[u64]) -> anyhow::Result<Samples> {
    let wanted: std::collections::BTreeSet<u64> = ids.iter().copied().collect();
    let mut records: BTreeMap<(u64, u64), ActivityRecord> = BTreeMap::new();
    for node in cluster.node_apis.values() {
        for run in node.runs().await? {
            if wanted.contains(&run.instance) {
                for r in run.activities {
                    records.insert((run.instance, r.activity.0), r);
                }
            }
        }
    }
    let mut samples = Vec::new();
    for &id in ids {
        for (activity, pre) in &w.preconditions {
            let finished = |a: &u64| records.get(&(id, *a)).and_then(|r| r.finished_us);
            let Some(last) = pre.iter().max_by_key(|a| finished(a)) else {
                continue;
            };
            if w.partner_of.get(last) == w.partner_of.get(activity) {
                continue;
            }
            let started = records.get(&(id, *activity)).and_then(|r| r.started_us);
            match (finished(last), started) {
                (Some(end), Some(start)) => samples.push(start.saturating_sub(end) as f64),
                _ => anyhow::bail!(
                    "instance {id}: activity {activity} or {last} has no microsecond times"
                ),
            }
        }
    }
    Ok(Samples::new(samples))
}

/// Keeps `concurrency` instances in flight for `duration`, then lets the last ones finish.
async fn throughput(cluster: &Cluster, w: &Workload, plan: &Plan) -> anyhow::Result<Figures> {
    let pid = cluster.controller.pid();
    let messages_before = cluster.api.messages().await?;
    let cpu_before = procfs::cpu_seconds(pid)?;
    let start = Instant::now();
    let end = start + plan.duration;
    let in_window = Arc::new(AtomicU64::new(0));
    let total = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for _ in 0..plan.concurrency {
        let (api, xml) = (cluster.api.clone(), w.xml.clone());
        let (in_window, total) = (in_window.clone(), total.clone());
        tasks.push(tokio::spawn(async move {
            while Instant::now() < end {
                let id = api.submit(&xml).await?;
                api.wait_succeeded(id).await?;
                total.fetch_add(1, Ordering::Relaxed);
                if Instant::now() <= end {
                    in_window.fetch_add(1, Ordering::Relaxed);
                }
            }
            anyhow::Ok(())
        }));
    }
    for t in tasks {
        t.await??;
    }
    let cpu = procfs::cpu_seconds(pid)? - cpu_before;
    let messages_after = cluster.api.messages().await?;
    let total = total.load(Ordering::Relaxed).max(1);
    let per_instance = |v: f64| v / total as f64;
    let instances_per_s = in_window.load(Ordering::Relaxed) as f64 / plan.duration.as_secs_f64();
    Ok(Figures {
        instances_per_s,
        activities_per_s: instances_per_s * w.activities() as f64,
        throughput_instances: total,
        throughput_s: start.elapsed().as_secs_f64(),
        controller_messages: messages_after
            .iter()
            .map(|(k, v)| {
                let before = messages_before.get(k).copied().unwrap_or(0.0);
                (k.clone(), per_instance(v - before))
            })
            .filter(|(_, v)| *v > 0.0)
            .collect(),
        controller_cpu_ms: per_instance(cpu * 1000.0),
        ..Figures::default()
    })
}
