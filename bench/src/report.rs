//! `BENCHMARKS.md`: the figures of one run, as tables per workload with their ratios to the
//! floor and between the modes, the targets, and the machine and date of the run.

use std::fmt::Write as _;

use crate::baseline::Shape;
use crate::cluster::Mode;
use crate::floor::Floor;
use crate::idle::Idle;
use crate::measure::{Figures, Plan};
use crate::returns::Returns;
use crate::stats::Samples;
use crate::temporal::{Baseline, Setup};
use crate::workloads::Workload;

/// The node memory target: idle activity instances and the RSS they must stay under.
pub const IDLE_TARGET: (u64, f64) = (100_000, 500.0);

/// Everything one run measured.
pub struct Run<'a> {
    /// What was run, and how much.
    pub plan: &'a Plan,
    /// The floor.
    pub floor: &'a Floor,
    /// Per workload: the figures of each mode.
    pub results: Vec<(&'a Workload, Vec<(Mode, Figures)>)>,
    /// The Temporal baseline in each setup run, or why it was skipped.
    pub temporal: Vec<Result<(Setup, Baseline), String>>,
    /// The Restate baseline, or why it was skipped.
    pub restate: Result<crate::restate::Baseline, String>,
    /// The idle-memory measurement, unless left out.
    pub idle: Option<&'a Idle>,
    /// The delivery delay after a link returns, unless left out.
    pub returns: Option<&'a Returns>,
    /// How long the whole run took, s.
    pub elapsed_s: f64,
    /// The command that produced it.
    pub command: String,
}

fn ms(us: Option<f64>) -> String {
    match us {
        Some(v) if v < 100.0 => format!("{:.3} ms", v / 1000.0),
        Some(v) => format!("{:.2} ms", v / 1000.0),
        None => "–".to_owned(),
    }
}

/// `a / b` with one decimal, or two significant digits below 1 (a baseline's throughput is
/// a few hundredths of ours: `0.0×` would say nothing).
pub fn ratio(a: f64, b: f64) -> String {
    if !(a.is_finite() && b.is_finite() && b > 0.0) {
        return "–".to_owned();
    }
    let r = a / b;
    if r >= 0.95 || r == 0.0 {
        format!("{r:.1}×")
    } else {
        let decimals = (1 - r.log10().floor() as i32).clamp(1, 6) as usize;
        format!("{r:.decimals$}×")
    }
}

pub fn first_line(program: &str, args: &[&str]) -> String {
    std::process::Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

pub fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_gib = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cpu}, {cores} cores, {mem_gib:.0} GiB RAM, Linux {}, {}",
        kernel.trim(),
        first_line("rustc", &["--version"])
    )
}

/// The markdown.
pub fn render(run: &Run<'_>) -> String {
    let mut md = String::new();
    let floor_us = run.floor.hop_floor_us();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "Produced by `{}` on {} in {:.0} s. Machine: {}.\n",
        run.command,
        first_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        run.elapsed_s,
        machine()
    );
    let _ = writeln!(
        md,
        "Every process runs on this machine, over loopback, with its data in a temporary \
         directory on the local disk; durability on (every state change and message synced to \
         RocksDB before it is acknowledged or sent; group commit). Activities are automatic and \
         run no command, so the runtime is what is measured. Daemons log at `warn`. Figures per \
         workload and mode come from fresh processes: {} warm-up instances, then {} instances \
         one at a time (hop and end-to-end latency), then {} instances in flight for {} s \
         (throughput, controller messages and CPU per instance; the controller's CPU includes \
         serving the HTTP submissions and waits, the same in both modes).\n",
        run.plan.warmup,
        run.plan.sequential,
        run.plan.concurrency,
        run.plan.duration.as_secs_f64()
    );
    let _ = writeln!(
        md,
        "- **p2p**: partners notify each other directly (the design)."
    );
    let _ = writeln!(
        md,
        "- **hub**: `mobiwf-controller serve --routing hub`: every notification goes to the \
         controller, which relays it to the successor's partner, as a centralized engine moves \
         work. (The partners still send their `responseImmediate` reports as well, so a hub \
         edge costs the controller a report and two notifications; an engine designed around \
         a hub could relay on the report alone.)\n- **hop**: predecessor finished on partner A → successor started on partner B, \
         from the two nodes' own clocks (µs); an activity with several preconditions counts \
         when its last one to finish was on another partner.\n- **end-to-end**: HTTP \
         submission → the controller's answer that the instance is final, as a client sees it.\n"
    );

    floor_section(&mut md, run, floor_us);
    for (workload, modes) in &run.results {
        workload_section(&mut md, run, workload, modes, floor_us);
    }
    returns_section(&mut md, run);
    targets(&mut md, run, floor_us);
    md
}

/// The delivery delay after a link returns (the aim: within 1 s).
fn returns_section(md: &mut String, run: &Run<'_>) {
    let Some(r) = run.returns else {
        return;
    };
    let _ = writeln!(
        md,
        "## Delivery after a link returns

`paper`, p2p: P2 is killed, an instance is \
         submitted, P1 runs its part and its notifications to P2 fail for 1.5 s (past the \
         outbox's longest backoff, 500 ms); then P2 starts again. Measured: P2 listening again \
         (its address published) → its first activity started (P1's notification delivered, \
         written on both sides, applied), on the two processes' clocks.\n"
    );
    let _ = writeln!(
        md,
        "| P2 comes back | samples | p50 | p99 | within 1 s |\n|---|---|---|---|---|"
    );
    for (what, s) in [
        ("at its old address (the link returned)", &r.same_address),
        (
            "on another port (moved; found through the controller)",
            &r.moved,
        ),
    ] {
        let _ = writeln!(
            md,
            "| {what} | {} | {} | {} | {} |",
            s.len(),
            ms(s.p50()),
            ms(s.p99()),
            met(s.percentile(100.0).is_some_and(|v| v <= 1_000_000.0))
        );
    }
    let _ = writeln!(md);
}

fn workload_section(
    md: &mut String,
    run: &Run<'_>,
    workload: &Workload,
    modes: &[(Mode, Figures)],
    floor_us: f64,
) {
    let _ = writeln!(md, "## `{}`\n\n{}.\n", workload.name, workload.shape);
    let _ = writeln!(
        md,
        "| system | hop p50 | hop p99 | hop p50 / floor | end-to-end p50 | end-to-end p99 | instances/s | activities/s | controller msgs / instance | controller CPU / instance | peak RSS (MiB) |\n|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (mode, f) in modes {
        let rss: Vec<String> = f
            .peak_rss_mib
            .iter()
            .map(|(n, v)| format!("{n} {v:.0}"))
            .collect();
        let _ = writeln!(
            md,
            "| mobiwf {} | {} | {} | {} | {} | {} | {:.0} | {:.0} | {:.1} | {:.2} ms | {} |",
            mode.as_str(),
            ms(f.hops.p50()),
            ms(f.hops.p99()),
            ratio(f.hops.p50().unwrap_or(f64::NAN), floor_us),
            ms(f.e2e.p50()),
            ms(f.e2e.p99()),
            f.instances_per_s,
            f.activities_per_s,
            f.controller_messages_total(),
            f.controller_cpu_ms,
            rss.join(", ")
        );
    }
    baseline_rows(md, run, workload, floor_us);
    let _ = writeln!(md);
    baseline_ratios(md, run, workload, modes);
    mode_summary(md, modes);
    let _ = writeln!(md);
}

fn of_mode(modes: &[(Mode, Figures)], mode: Mode) -> Option<&Figures> {
    modes.iter().find(|(m, _)| *m == mode).map(|(_, f)| f)
}

fn figures<'a>(run: &'a Run<'_>, workload: &str, mode: Mode) -> Option<&'a Figures> {
    let (_, modes) = run.results.iter().find(|(w, _)| w.name == workload)?;
    of_mode(modes, mode)
}

fn met(yes: bool) -> &'static str {
    if yes { "met" } else { "**not met**" }
}

fn targets(md: &mut String, run: &Run<'_>, floor_us: f64) {
    let _ = writeln!(md, "## Targets\n\n| target | measured | |\n|---|---|---|");
    let durable_us = run.floor.durable_hop_floor_us();
    for (w, _) in &run.results {
        if let Some(p) = figures(run, w.name, Mode::P2p) {
            let hop = p.hops.p50().unwrap_or(f64::NAN);
            let _ = writeln!(
                md,
                "| p2p hop p50 within 2× of the floor ({}) | `{}`: {} = {} (and {} of one-way + two synced writes, {}, which counts a write the hop does not span) | {} |",
                ms(Some(floor_us)),
                w.name,
                ms(Some(hop)),
                ratio(hop, floor_us),
                ratio(hop, durable_us),
                ms(Some(durable_us)),
                met(hop <= 2.0 * floor_us)
            );
        }
    }
    paper_targets(md, run);
    idle_target(md, run);
    let _ = writeln!(md);
    temporal_notes(md, run);
    restate_notes(md, run);
}

/// The floor: the bare round trip and synced write, and what a hop is compared with.
fn floor_section(md: &mut String, run: &Run<'_>, floor_us: f64) {
    let _ = writeln!(md, "## The floor\n");
    let _ = writeln!(md, "| what | p50 | p99 |\n|---|---|---|");
    let rt = &run.floor.round_trip;
    let _ = writeln!(
        md,
        "| libp2p request → reply between two processes (TCP + Noise + Yamux, `{}`) | {} | {} |",
        mobiwf_proto::PROTOCOL,
        ms(rt.p50()),
        ms(rt.p99())
    );
    let w = &run.floor.synced_write;
    let _ = writeln!(
        md,
        "| synced RocksDB write of a notification ({} bytes) | {} | {} |",
        run.floor.notification_bytes,
        ms(w.p50()),
        ms(w.p99())
    );
    let _ = writeln!(
        md,
        "| **hop floor**: one-way message (half the round trip) + one synced write | {} | |",
        ms(Some(floor_us))
    );
    let _ = writeln!(
        md,
        "| one-way message + two synced writes (up to the successor's start on disk) | {} | |\n",
        ms(Some(run.floor.durable_hop_floor_us()))
    );
    let _ = writeln!(
        md,
        "A node stamps an activity's start and end when it decides them, before its commit. A \
         measured hop therefore spans the predecessor's decision, its node's synced write, the \
         message and the wait on the successor's node up to its decision, but not the \
         successor's own write: its floor is one-way + **one** synced write, and the ratios \
         below are to that. (To the successor's start on disk, add one synced write to both \
         the hop and the floor.)\n"
    );
}

/// The baselines' figures on a workload, when it has a twin there: (label, figures).
fn baselines<'a>(run: &'a Run<'_>, workload: &Workload) -> Vec<(&'static str, &'a Shape)> {
    if !workload.has_temporal_twin() {
        return Vec::new();
    }
    let temporal = run.temporal.iter().filter_map(|r| r.as_ref().ok());
    let mut found: Vec<(&'static str, &Shape)> = temporal
        .filter_map(|(setup, b)| Some((setup.label(), b.workloads.get(workload.name)?)))
        .collect();
    if let Ok(b) = &run.restate
        && let Some(shape) = b.workloads.get(workload.name)
    {
        found.push((crate::restate::LABEL, shape));
    }
    found
}

/// The baselines' rows of a workload's table.
fn baseline_rows(md: &mut String, run: &Run<'_>, workload: &Workload, floor_us: f64) {
    for (label, t) in baselines(run, workload) {
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {} | {} | {} | {:.0} | {:.0} | | {:.2} ms (server) | server {:.0}, worker {:.0} |",
            ms(Some(t.hop_p50_us)),
            ms(Some(t.hop_p99_us)),
            ratio(t.hop_p50_us, floor_us),
            ms(Some(t.e2e_p50_us)),
            ms(Some(t.e2e_p99_us)),
            t.throughput_instances_per_s,
            t.throughput_activities_per_s,
            t.server_cpu_s_per_instance * 1000.0,
            t.server_peak_rss_mb,
            t.worker_peak_rss_mb
        );
    }
}

/// Each baseline against mobiwf p2p measured in the same run, under a workload's table.
fn baseline_ratios(md: &mut String, run: &Run<'_>, workload: &Workload, modes: &[(Mode, Figures)]) {
    let Some(p) = of_mode(modes, Mode::P2p) else {
        return;
    };
    for (label, t) in baselines(run, workload) {
        let _ = writeln!(
            md,
            "{label} ÷ mobiwf p2p: hop p50 {}, end-to-end p50 {}, throughput {}.\n",
            ratio(t.hop_p50_us, p.hops.p50().unwrap_or(f64::NAN)),
            ratio(t.e2e_p50_us, p.e2e.p50().unwrap_or(f64::NAN)),
            ratio(t.throughput_instances_per_s, p.instances_per_s),
        );
    }
}

/// The hub ÷ p2p ratios and the controller's messages by kind, under a workload's table.
fn mode_summary(md: &mut String, modes: &[(Mode, Figures)]) {
    if let (Some(p), Some(h)) = (of_mode(modes, Mode::P2p), of_mode(modes, Mode::Hub)) {
        let _ = writeln!(
            md,
            "hub ÷ p2p: hop p50 {}, end-to-end p50 {}, throughput {}, controller messages {}, controller CPU {}.\n",
            ratio(
                h.hops.p50().unwrap_or(f64::NAN),
                p.hops.p50().unwrap_or(f64::NAN)
            ),
            ratio(
                h.e2e.p50().unwrap_or(f64::NAN),
                p.e2e.p50().unwrap_or(f64::NAN)
            ),
            ratio(h.instances_per_s, p.instances_per_s),
            ratio(h.controller_messages_total(), p.controller_messages_total()),
            ratio(h.controller_cpu_ms, p.controller_cpu_ms),
        );
    }
    for (mode, f) in modes {
        let kinds: Vec<String> = f
            .controller_messages
            .iter()
            .map(|(k, v)| format!("{k} {v:.1}"))
            .collect();
        let _ = writeln!(
            md,
            "- controller messages per instance, {} ({} instances, {} hop samples): {}",
            mode.as_str(),
            f.throughput_instances,
            f.hops.len(),
            kinds.join(", ")
        );
    }
}

/// The targets measured on `paper`: throughput, controller messages and CPU.
fn paper_targets(md: &mut String, run: &Run<'_>) {
    if let Some(p) = figures(run, "paper", Mode::P2p) {
        let _ = writeln!(
            md,
            "| p2p throughput on `paper`: 1,000 instances/s | {:.0} instances/s | {} |",
            p.instances_per_s,
            met(p.instances_per_s >= 1000.0)
        );
        let allowed = ["deploy", "report", "partition_result"];
        let extra: Vec<&String> = p
            .controller_messages
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .collect();
        let _ = writeln!(
            md,
            "| p2p controller messages per `paper` instance: partitions out, immediate responses and partition results only | {:.1} ({}) | {} |",
            p.controller_messages_total(),
            if extra.is_empty() {
                "no other kind".to_owned()
            } else {
                format!("also {extra:?}")
            },
            met(extra.is_empty())
        );
        if let Some(h) = figures(run, "paper", Mode::Hub) {
            let _ = writeln!(
                md,
                "| p2p controller CPU per `paper` instance at most ⅓ of hub | {:.2} ms vs {:.2} ms: {} | {} |",
                p.controller_cpu_ms,
                h.controller_cpu_ms,
                ratio(p.controller_cpu_ms, h.controller_cpu_ms),
                met(p.controller_cpu_ms * 3.0 <= h.controller_cpu_ms)
            );
        }
    }
}

/// The idle-memory target.
fn idle_target(md: &mut String, run: &Run<'_>) {
    let (target_activities, target_mib) = IDLE_TARGET;
    if let Some(idle) = run.idle {
        let _ = writeln!(
            md,
            "| a node holding {target_activities} idle activity instances under {target_mib:.0} MB RSS | {} activity instances ({} partitions of the paper's partition 2): {:.0} MiB (idle node {:.0} MiB; {:.0} deployments/s) | {} |",
            idle.activities,
            idle.partitions,
            idle.rss_after_mib,
            idle.rss_before_mib,
            idle.deploys_per_s,
            if idle.activities >= target_activities {
                met(idle.rss_after_mib * 1.048_576 < target_mib)
            } else {
                "(smoke run: fewer instances)"
            }
        );
    }
}

/// How the Temporal baseline was run, or why it was skipped.
fn temporal_notes(md: &mut String, run: &Run<'_>) {
    for result in &run.temporal {
        match result {
            Ok((Setup::Stock, b)) => {
                let _ = writeln!(
                    md,
                    "Temporal baseline: {} with the Python SDK {} (`bench/temporal/run.py`: a dev server per shape on a SQLite file with WAL and fsynced commits, loopback, one Python worker, normal activities; a hop is the end of the last precondition to the start of the activity, inside the worker; at most {} instances one at a time). Stock, its transfer queue is read at most 20 times a second, which puts about 50 ms into each hand-off; *tuned* lifts that limit (`history.transferProcessorMaxPollRPS` 10000).\n",
                    b.temporal_version,
                    b.sdk_version,
                    crate::TEMPORAL_SEQUENTIAL.min(run.plan.sequential)
                );
            }
            Ok((Setup::Tuned, _)) => {}
            Err(why) => {
                let _ = writeln!(md, "Temporal baseline skipped: {why}\n");
            }
        }
    }
}

/// How the Restate baseline was run, or why it was skipped.
fn restate_notes(md: &mut String, run: &Run<'_>) {
    match &run.restate {
        Ok(b) => {
            let _ = writeln!(
                md,
                "Restate baseline: {} with the TypeScript SDK {} on Node.js {} (`bench/restate/run.sh`): a fresh server per shape with its stock configuration (its log is fsynced before it acts; no setting on the data path changed, only its ports, on loopback, its data directory, a temporary one, and telemetry, off); one Node.js endpoint process serving every service over HTTP/2, registered through the admin API. Each activity is a handler of its partner's service (`chain10_B1`, `paper_P2`, ...), each hand-off a durable one-way send (`ctx.serviceSendClient`) to the successor's service; `paper`'s A3, which waits for A2 and A4, is a handler of a virtual object keyed by the instance that counts arrivals in its state (`ctx.objectSendClient`). An instance is submitted by a one-way send through the ingress (HTTP); end-to-end is that submission → its last activity's end, and a hop the end of the last precondition → the start of the activity, both on the endpoint's clock.\n",
                b.restate_version,
                b.sdk_version,
                first_line("node", &["--version"]).trim_start_matches('v')
            );
        }
        Err(why) => {
            let _ = writeln!(md, "Restate baseline skipped: {why}\n");
        }
    }
}

/// Samples as `p50 / p99` text, for the console.
pub fn brief(s: &Samples) -> String {
    format!("{} / {}", ms(s.p50()), ms(s.p99()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ratio_keeps_two_significant_digits_below_one() {
        assert_eq!(ratio(3.0, 2.0), "1.5×");
        assert_eq!(ratio(15.0, 344.0), "0.044×");
        assert_eq!(ratio(255.0, 688.0), "0.37×");
        assert_eq!(ratio(1.0, 0.0), "–");
    }
}
