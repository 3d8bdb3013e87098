//! The `scale` section of BENCHMARKS.md: the same 128-activity chain over 16 and over 100
//! partner nodes on one machine, to show whether the controller's cost per activity report
//! stays flat as partners are added (in the design it should: a report is a report, whoever
//! sends it). Run only when asked for (`--scale`, or `--workload scale16`/`scale100`): a
//! hundred nodes are not part of the default run.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cluster::{Cluster, Mode};
use crate::measure::{self, Figures, Plan};
use crate::procfs;
use crate::report::{brief, first_line, machine, ratio};
use crate::workloads::Workload;

/// At most this many instances one at a time: 10 chains are 1270 hops, plenty for p50/p99.
const SEQUENTIAL: usize = 10;

/// At most this many instances in flight in the throughput phase (why: the section says).
const CONCURRENCY: usize = 16;

/// How long the controller's idle CPU is sampled, every node connected, before the runs.
const IDLE_WINDOW: Duration = Duration::from_secs(5);

/// A ratio of controller CPU per activity (100 partners over 16) up to this counts as flat:
/// a margin for run-to-run noise.
const FLAT: f64 = 1.2;

/// The plan of a scale run, from the main run's.
pub fn plan(base: &Plan) -> Plan {
    Plan {
        warmup: base.warmup.min(2),
        sequential: base.sequential.min(SEQUENTIAL),
        concurrency: base.concurrency.min(CONCURRENCY),
        duration: base.duration,
    }
}

/// What one scale workload measured.
pub struct Row {
    /// Partner nodes.
    pub partners: usize,
    /// Hand-offs between partners per second in the throughput phase: every instance it ran
    /// over its whole time (a 128-activity instance is long against the window: counting
    /// only those finished within it would count few, or none in a short run).
    pub hops_per_s: f64,
    /// Controller CPU per instance, ms.
    pub cpu_ms_per_instance: f64,
    /// Controller CPU per activity, µs.
    pub cpu_us_per_activity: f64,
    /// Controller CPU with every node connected and nothing running, ms per s.
    pub idle_ms_per_s: f64,
    /// Controller CPU per activity with that idle rate taken out, µs: what the reports cost.
    pub net_us_per_activity: f64,
    /// Controller peak RSS, MiB.
    pub controller_rss_mib: f64,
    /// The largest node peak RSS, and all nodes' together, MiB.
    pub node_rss_mib: (f64, f64),
    /// From the controller's start to every node registered, s.
    pub startup_s: f64,
    /// The hop latency, one instance at a time.
    pub hops: String,
}

impl Row {
    fn new(w: &Workload, f: &Figures, startup_s: f64, idle_ms_per_s: f64) -> Row {
        // Activities that wait for one on another partner: each start is a hand-off.
        let hops_per_instance = w
            .preconditions
            .iter()
            .filter(|(a, pre)| {
                pre.iter()
                    .any(|p| w.partner_of.get(p) != w.partner_of.get(*a))
            })
            .count() as f64;
        let activities = w.activities().max(1) as f64;
        let idle_ms_per_instance = idle_ms_per_s * f.throughput_s / f.throughput_instances as f64;
        let nodes: Vec<f64> = f.peak_rss_mib.iter().skip(1).map(|(_, m)| *m).collect();
        Row {
            partners: w.partners.len(),
            hops_per_s: f.throughput_instances as f64 * hops_per_instance / f.throughput_s,
            cpu_ms_per_instance: f.controller_cpu_ms,
            cpu_us_per_activity: f.controller_cpu_ms * 1000.0 / activities,
            idle_ms_per_s,
            net_us_per_activity: (f.controller_cpu_ms - idle_ms_per_instance).max(0.0) * 1000.0
                / activities,
            controller_rss_mib: f.peak_rss_mib.first().map_or(f64::NAN, |(_, m)| *m),
            node_rss_mib: (
                nodes.iter().copied().fold(0.0, f64::max),
                nodes.iter().sum(),
            ),
            startup_s,
            hops: brief(&f.hops),
        }
    }
}

/// Runs each scale workload, p2p, on a cluster of its own.
pub async fn run(bin_dir: &Path, workloads: &[Workload], plan: &Plan) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for w in workloads {
        eprintln!("{} / p2p: starting {} nodes ...", w.name, w.partners.len());
        let t0 = Instant::now();
        let cluster = Cluster::start(bin_dir, Mode::P2p, &w.partners).await?;
        let startup_s = t0.elapsed().as_secs_f64();
        let idle_ms_per_s = idle_cpu(&cluster).await?;
        eprintln!("  cluster up in {startup_s:.1} s; controller idle {idle_ms_per_s:.1} ms CPU/s");
        let figures = measure::run(&cluster, w, plan).await?;
        drop(cluster);
        let row = Row::new(w, &figures, startup_s, idle_ms_per_s);
        eprintln!(
            "  hop {}, {:.0} hops/s, controller {:.1} µs CPU per activity, {:.0} MiB peak RSS",
            row.hops, row.hops_per_s, row.cpu_us_per_activity, row.controller_rss_mib
        );
        rows.push(row);
    }
    Ok(rows)
}

/// The controller's CPU rate over [`IDLE_WINDOW`] with every node connected and no instance
/// running, ms per s: what the partners cost it however little they do (their connections,
/// heartbeats), to tell apart from what each activity report costs.
async fn idle_cpu(cluster: &Cluster) -> anyhow::Result<f64> {
    let pid = cluster.controller.pid();
    let before = procfs::cpu_seconds(pid)?;
    let t0 = Instant::now();
    tokio::time::sleep(IDLE_WINDOW).await;
    Ok((procfs::cpu_seconds(pid)? - before) * 1000.0 / t0.elapsed().as_secs_f64())
}

/// The sentence comparing the most partners with the fewest: the two ratios and whether the
/// controller's cost per activity stayed flat.
pub fn verdict(first: &Row, last: &Row) -> String {
    let cpu = last.net_us_per_activity / first.net_us_per_activity;
    let judged = if !cpu.is_finite() {
        "cannot be judged (no CPU measured)".to_owned()
    } else if cpu <= FLAT {
        format!(
            "is flat (within {:.0} %, the margin allowed for run-to-run noise)",
            (FLAT - 1.0) * 100.0
        )
    } else {
        format!(
            "grows with the partners ({} of the smaller cluster's)",
            ratio(cpu, 1.0)
        )
    };
    format!(
        "{} vs {} partners: hops/s {}, controller CPU per activity {} ({} with its idle rate \
         taken out): the controller's cost per activity {judged}.",
        last.partners,
        first.partners,
        ratio(last.hops_per_s, first.hops_per_s),
        ratio(last.cpu_us_per_activity, first.cpu_us_per_activity),
        ratio(last.net_us_per_activity, first.net_us_per_activity),
    )
}

/// The section's markdown.
pub fn section(plan: &Plan, rows: &[Row], command: &str) -> String {
    let mut md = String::from("## Scale: many partners on one machine\n\n");
    let _ = writeln!(
        md,
        "Produced by `{command}` on {}. Machine: {}.\n",
        first_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        machine()
    );
    let _ = writeln!(
        md,
        "A chain of 128 sequential activities, activity i on partner (i − 1) mod N, every one \
         of the N partners its own `mobiwf-node` process, p2p; every hop crosses partners. \
         Fresh processes for each N: {} warm-up instances, {} one at a time (hop latency), \
         then {} in flight for {} s (throughput, controller CPU). Fewer in flight than the \
         other workloads: an instance here is 128 activities, so {} instances keep about one \
         activity running per partner at N = 16, and the same load at N = 100 then differs \
         only in how many partners send the reports; more would measure a hundred processes \
         contending for the cores rather than the controller. hops/s: 127 hops per instance, \
         every instance the phase ran (those still in flight at the end of the {} s finish) \
         over the phase's whole time. The controller's CPU includes \
         serving the HTTP submissions and waits (per instance, so the same for both N), and \
         what the partners cost it even idle (connections, heartbeats), which grows with N: \
         its idle rate is sampled for {} s with every node connected before the runs, and \
         \"net\" is the CPU per activity with that rate over the phase taken out, the cost of \
         the reports themselves; the verdict judges the net figure.\n",
        plan.warmup,
        plan.sequential,
        plan.concurrency,
        plan.duration.as_secs_f64(),
        plan.concurrency,
        plan.duration.as_secs_f64(),
        IDLE_WINDOW.as_secs(),
    );
    let _ = writeln!(
        md,
        "| partners | cluster up | hop p50 / p99 | hops/s | controller CPU / instance | \
         controller CPU / activity (net) | controller idle CPU | controller peak RSS | \
         node peak RSS (largest / all) |\n|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {:.1} s | {} | {:.0} | {:.2} ms | {:.1} µs ({:.1} µs) | {:.1} ms/s | {:.0} MiB \
             | {:.0} / {:.0} MiB |",
            r.partners,
            r.startup_s,
            r.hops,
            r.hops_per_s,
            r.cpu_ms_per_instance,
            r.cpu_us_per_activity,
            r.net_us_per_activity,
            r.idle_ms_per_s,
            r.controller_rss_mib,
            r.node_rss_mib.0,
            r.node_rss_mib.1,
        );
    }
    let _ = writeln!(md);
    match (rows.first(), rows.last()) {
        (Some(first), Some(last)) if rows.len() > 1 => {
            let _ = writeln!(md, "{}", verdict(first, last));
        }
        _ => {
            let _ = writeln!(
                md,
                "Only one partner count was run: no ratio (`--scale` runs both)."
            );
        }
    }
    md
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn row(partners: usize, hops_per_s: f64, cpu_us_per_activity: f64) -> Row {
        Row {
            partners,
            hops_per_s,
            cpu_ms_per_instance: cpu_us_per_activity * 128.0 / 1000.0,
            cpu_us_per_activity,
            idle_ms_per_s: 1.0,
            net_us_per_activity: cpu_us_per_activity * 0.8,
            controller_rss_mib: 30.0,
            node_rss_mib: (20.0, 320.0),
            startup_s: 1.0,
            hops: "p50 1.0 ms".to_owned(),
        }
    }

    #[test]
    fn the_verdict_gives_both_ratios_and_judges_the_cpu_per_activity() {
        let flat = verdict(&row(16, 2000.0, 50.0), &row(100, 1800.0, 55.0));
        assert_eq!(
            flat,
            "100 vs 16 partners: hops/s 0.90×, controller CPU per activity 1.1× (1.1× with its \
             idle rate taken out): the controller's cost per activity is flat (within 20 %, the margin \
             allowed for run-to-run noise)."
        );
        let grows = verdict(&row(16, 2000.0, 50.0), &row(100, 1000.0, 150.0));
        assert!(grows.contains("hops/s 0.50×"), "{grows}");
        assert!(
            grows.ends_with("grows with the partners (3.0× of the smaller cluster's)."),
            "{grows}"
        );
        let none = verdict(&row(16, 2000.0, 0.0), &row(100, 1000.0, 0.0));
        assert!(none.contains("cannot be judged"), "{none}");
    }

    #[test]
    fn the_plan_keeps_fewer_instances_in_flight_and_one_at_a_time() {
        let base = Plan {
            warmup: 20,
            sequential: 200,
            concurrency: 64,
            duration: Duration::from_secs(30),
        };
        let p = plan(&base);
        assert_eq!((p.warmup, p.sequential, p.concurrency), (2, 10, 16));
        assert_eq!(p.duration, base.duration);
        let section = section(&p, &[row(16, 2000.0, 50.0)], "scripts/bench --scale");
        assert!(section.contains("| 16 | 1.0 s |"), "{section}");
        assert!(section.contains("no ratio"), "{section}");
    }
}
