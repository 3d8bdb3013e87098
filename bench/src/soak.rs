//! `mobiwf-bench soak`: paper instances at a steady rate for a long while (10 minutes by
//! default) on a controller and its nodes, sampling every process's resident memory; the first
//! and the last minute side by side show whether throughput, latency and memory stay flat as
//! instances pile up (they must: finished work leaves memory). Submissions the controller
//! sheds at the door (429, its admission control) are counted apart from failed instances.
//! Writes the `soak` section of BENCHMARKS.md.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::cluster::{Cluster, Mode};

/// How often every process's RSS is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(5);

/// The window compared at both ends of the run.
const WINDOW: Duration = Duration::from_secs(60);

/// Instances under way beyond which the soak stops submitting (the system fell behind the
/// rate: the report says how many were left out).
const MAX_IN_FLIGHT: usize = 2_000;

/// How long the instances still under way at the end may take.
const DRAIN: Duration = Duration::from_secs(120);

/// What the soak is asked for.
pub struct Plan {
    /// How long to submit, in seconds.
    pub seconds: f64,
    /// Instances submitted a second.
    pub rate: f64,
}

/// How one submission ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The instance succeeded.
    Succeeded,
    /// It was refused otherwise, failed, or did not end in time.
    Failed,
    /// The controller shed it at the door (429): nothing of it was stored.
    Shed,
}

/// One submission's end: when (since the start), how long it took, how it ended.
type End = (Duration, Duration, Outcome);

/// What one soak measured, for its section.
struct Measured {
    /// The daemons, in the order of each sample's figures.
    names: Vec<String>,
    /// When (since the start), each daemon's resident memory in MiB.
    samples: Vec<(Duration, Vec<f64>)>,
    /// Every instance submitted that ended.
    ends: Vec<End>,
    /// Instances submitted.
    submitted: u64,
    /// Ticks at which nothing was submitted, [`MAX_IN_FLIGHT`] being under way.
    skipped: u64,
    /// How long instances were submitted.
    length: Duration,
}

/// Runs the soak with the binaries in `bin_dir`; the section's markdown.
pub async fn run(bin_dir: &Path, plan: &Plan) -> anyhow::Result<String> {
    if plan.seconds < 2.0 * WINDOW.as_secs_f64() {
        anyhow::bail!(
            "a soak of {} s cannot compare a first and a last minute: give --minutes 2 or more",
            plan.seconds
        );
    }
    let paper = crate::workloads::all()?
        .into_iter()
        .find(|w| w.name == "paper")
        .ok_or_else(|| anyhow::anyhow!("no paper workload"))?;
    let cluster = Cluster::start(bin_dir, Mode::P2p, &paper.partners).await?;
    let mut daemons: Vec<(String, u32)> = vec![("controller".into(), cluster.controller.pid())];
    daemons.extend(cluster.nodes.iter().map(|n| (n.name.clone(), n.pid())));
    let measured = submit_and_sample(&cluster, &paper.xml, plan, daemons).await;
    let resident = in_memory(&cluster).await?;
    let mut out = section(plan, &measured);
    out.push_str(&by_minute(&measured.names, &measured.samples));
    out.push_str(&format!("\nHeld in memory at the end: {resident}.\n"));
    Ok(out)
}

/// Submits `xml` at the plan's rate for its length (none while [`MAX_IN_FLIGHT`] are under
/// way), sampling each of `daemons`' resident memory every [`SAMPLE_EVERY`], then waits up to
/// [`DRAIN`] for what is under way to end.
async fn submit_and_sample(
    cluster: &Cluster,
    xml: &str,
    plan: &Plan,
    daemons: Vec<(String, u32)>,
) -> Measured {
    let ends: Arc<Mutex<Vec<End>>> = Arc::default();
    let mut samples: Vec<(Duration, Vec<f64>)> = Vec::new();
    let (mut submitted, mut skipped) = (0u64, 0u64);
    let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let length = Duration::from_secs_f64(plan.seconds);
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / plan.rate));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut next_sample = Duration::ZERO;
    while started.elapsed() < length {
        ticks.tick().await;
        if started.elapsed() >= next_sample {
            samples.push((started.elapsed(), rss_of(&daemons)));
            next_sample += SAMPLE_EVERY;
        }
        if in_flight.load(std::sync::atomic::Ordering::Relaxed) >= MAX_IN_FLIGHT {
            skipped += 1;
            continue;
        }
        submitted += 1;
        in_flight.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (api, xml, ends, in_flight) = (
            cluster.api.clone(),
            xml.to_owned(),
            ends.clone(),
            in_flight.clone(),
        );
        tokio::spawn(async move {
            let at = Instant::now();
            let outcome = match api.submit(&xml).await {
                Ok(id) => match api.wait_succeeded(id).await {
                    Ok(()) => Outcome::Succeeded,
                    Err(_) => Outcome::Failed,
                },
                Err(e) if e.is::<crate::api::Shed>() => Outcome::Shed,
                Err(_) => Outcome::Failed,
            };
            let end = (started.elapsed(), at.elapsed(), outcome);
            ends.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(end);
            in_flight.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        });
    }
    let drained = Instant::now();
    while in_flight.load(std::sync::atomic::Ordering::Relaxed) > 0 && drained.elapsed() < DRAIN {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    samples.push((started.elapsed(), rss_of(&daemons)));
    let ends = ends.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let names: Vec<String> = daemons.into_iter().map(|(n, _)| n).collect();
    Measured {
        names,
        samples,
        ends,
        submitted,
        skipped,
        length,
    }
}

/// What the daemons hold in memory once the soak drained (finished work must have left).
async fn in_memory(cluster: &Cluster) -> anyhow::Result<String> {
    let instances = cluster.api.gauge("mobiwf_instances_in_memory").await?;
    let mut held = vec![format!("controller {instances:.0} instances")];
    for (name, api) in &cluster.node_apis {
        let runs = api.gauge("mobiwf_runs_in_memory").await?;
        held.push(format!("{name} {runs:.0} runs"));
    }
    Ok(held.join(", "))
}

/// Each process's mean RSS minute by minute: whether it levels off or keeps growing.
fn by_minute(names: &[String], samples: &[(Duration, Vec<f64>)]) -> String {
    let mut out = format!(
        "\nRSS (MiB), the mean of each minute's samples (each store's RocksDB memtables fill \
         up to their flush size, 64 MiB by default, over the first minutes; after that the RSS \
         should only swing as they are flushed):\n\n| minute | {} |\n|---|{}\n",
        names.join(" | "),
        "---|".repeat(names.len())
    );
    let minutes = samples.last().map_or(0, |(at, _)| at.as_secs() / 60 + 1);
    for minute in 0..minutes {
        let inside: Vec<&Vec<f64>> = samples
            .iter()
            .filter(|(at, _)| at.as_secs() / 60 == minute)
            .map(|(_, rss)| rss)
            .collect();
        if inside.is_empty() {
            continue;
        }
        let means: Vec<String> = (0..names.len())
            .map(|i| {
                let sum: f64 = inside.iter().map(|r| r[i]).sum();
                format!("{:.1}", sum / inside.len() as f64)
            })
            .collect();
        out.push_str(&format!("| {} | {} |\n", minute + 1, means.join(" | ")));
    }
    out
}

fn rss_of(daemons: &[(String, u32)]) -> Vec<f64> {
    daemons
        .iter()
        .map(|(_, pid)| crate::procfs::rss_mib(*pid).unwrap_or(f64::NAN))
        .collect()
}

/// The figures of one window: instances finished a second, submissions shed a second, e2e
/// p50 and p99 (ms), and each process's mean RSS (MiB).
struct Window {
    throughput: f64,
    shed: f64,
    p50_ms: f64,
    p99_ms: f64,
    rss: Vec<f64>,
}

fn window(from: Duration, to: Duration, samples: &[(Duration, Vec<f64>)], ends: &[End]) -> Window {
    let mut latencies: Vec<f64> = ends
        .iter()
        .filter(|(at, _, outcome)| *outcome == Outcome::Succeeded && *at >= from && *at < to)
        .map(|(_, took, _)| took.as_secs_f64() * 1000.0)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        let at = ((latencies.len() as f64 - 1.0) * q).round();
        latencies
            .get(at.max(0.0) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let inside: Vec<&Vec<f64>> = samples
        .iter()
        .filter(|(at, _)| *at >= from && *at <= to)
        .map(|(_, rss)| rss)
        .collect();
    let processes = samples.first().map_or(0, |(_, r)| r.len());
    let rss = (0..processes)
        .map(|i| inside.iter().map(|r| r[i]).sum::<f64>() / inside.len().max(1) as f64)
        .collect();
    let shed = ends
        .iter()
        .filter(|(at, _, outcome)| *outcome == Outcome::Shed && *at >= from && *at < to)
        .count();
    Window {
        throughput: latencies.len() as f64 / (to - from).as_secs_f64(),
        shed: shed as f64 / (to - from).as_secs_f64(),
        p50_ms: pick(0.5),
        p99_ms: pick(0.99),
        rss,
    }
}

fn section(plan: &Plan, measured: &Measured) -> String {
    let Measured {
        names,
        samples,
        ends,
        submitted,
        skipped,
        length,
    } = measured;
    let length = *length;
    let first = window(Duration::ZERO, WINDOW, samples, ends);
    let last = window(length - WINDOW, length, samples, ends);
    let count = |which: Outcome| ends.iter().filter(|(_, _, o)| *o == which).count();
    let (succeeded, failed, shed) = (
        count(Outcome::Succeeded),
        count(Outcome::Failed),
        count(Outcome::Shed),
    );
    let row = |what: &str, a: f64, b: f64| {
        let change = if a > 0.0 {
            (b - a) / a * 100.0
        } else {
            f64::NAN
        };
        format!("| {what} | {a:.1} | {b:.1} | {change:+.1}% |\n")
    };
    let mut out = format!(
        "## Soak: the first and the last minute\n\n\
         `mobiwf-bench soak --minutes {} --rate {}`: `paper` instances submitted at {} a \
         second for {:.0} minutes to a controller and its two nodes (release binaries, peer \
         to peer, loopback); each process's resident memory sampled every {} s. {submitted} \
         submitted: {succeeded} succeeded, {failed} failed, {shed} shed at the door (answered \
         429 Too Many Requests by the controller's admission control, past its limit of \
         instances under way: nothing of them was stored, so they are not failures); \
         {skipped} not submitted because {MAX_IN_FLIGHT} were already under way.\n\n\
         | | first minute | last minute | change |\n|---|---|---|---|\n",
        plan.seconds / 60.0,
        plan.rate,
        plan.rate,
        plan.seconds / 60.0,
        SAMPLE_EVERY.as_secs(),
    );
    out.push_str(&row(
        "instances finished / s",
        first.throughput,
        last.throughput,
    ));
    out.push_str(&row("submissions shed (429) / s", first.shed, last.shed));
    out.push_str(&row("end-to-end p50, ms", first.p50_ms, last.p50_ms));
    out.push_str(&row("end-to-end p99, ms", first.p99_ms, last.p99_ms));
    for (i, name) in names.iter().enumerate() {
        let (a, b) = (first.rss[i], last.rss[i]);
        out.push_str(&row(&format!("RSS {name}, MiB"), a, b));
    }
    out
}
