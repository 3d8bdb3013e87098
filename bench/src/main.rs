//! `mobiwf-bench`: measures what a hand-off between partners costs, peer to peer and through
//! a hub, against the physical floor and the Temporal and Restate baselines, and writes
//! `BENCHMARKS.md`.
//! `scripts/bench` builds the release binaries and runs it.

mod api;
mod baseline;
mod cluster;
mod floor;
mod idle;
mod measure;
mod procfs;
mod report;
mod restate;
mod returns;
mod scale;
mod sections;
mod soak;
mod startup_controller;
mod startup_node;
mod stats;
mod temporal;
mod workloads;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};

use cluster::{Cluster, Mode};
use measure::Plan;

#[derive(Parser)]
#[command(name = "mobiwf-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// The echo peer of the floor measurement (started by the benchmark itself).
    #[command(hide = true)]
    FloorPeer {
        /// Where to write its address.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Paper instances at a steady rate for a long while; the first and the last minute's
    /// throughput, latency and every process's memory side by side (the `soak` section of the
    /// report).
    Soak {
        /// How long to submit, in minutes (at least 2).
        #[arg(long, default_value_t = 10.0)]
        minutes: f64,
        /// Instances submitted a second.
        #[arg(long, default_value_t = 20.0)]
        rate: f64,
        /// The report whose `soak` section is written.
        #[arg(long, default_value = "BENCHMARKS.md")]
        out: PathBuf,
        /// Where `mobiwf-controller` and `mobiwf-node` are (default: next to this binary).
        #[arg(long)]
        bin_dir: Option<PathBuf>,
    },
    /// Startup at scale: builds a node data directory holding this many idle partitions,
    /// starts `mobiwf-node run` on it and times its first API answer.
    StartupNode {
        /// Idle partitions in the node's store.
        #[arg(long, default_value_t = 50_000)]
        partitions: u64,
        /// Where `mobiwf-node` is (default: next to this binary).
        #[arg(long)]
        bin_dir: Option<PathBuf>,
    },
    /// Startup at scale: a controller data directory with many finished and some live
    /// instances, then the time from `mobiwf-controller serve` to its first answer about a
    /// live instance.
    StartupController {
        /// Finished (settled) instances in the directory.
        #[arg(long, default_value_t = 100_000)]
        finished: u64,
        /// Live instances in the directory.
        #[arg(long, default_value_t = 1000)]
        live: u64,
        /// How many times the controller is started on it.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Where `mobiwf-controller` is (default: next to this binary).
        #[arg(long)]
        bin_dir: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Where to write the report.
    #[arg(long, default_value = "BENCHMARKS.md")]
    out: PathBuf,
    /// Where `mobiwf-controller` and `mobiwf-node` are (default: next to this binary).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// The repository (for `bench/temporal/run.py` and `bench/restate/run.sh`).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// Instances run one at a time per workload and mode.
    #[arg(long, default_value_t = 200)]
    sequential: usize,
    /// Instances in flight in the throughput phase.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Seconds the throughput phase lasts (long enough for the stores to flush and compact).
    #[arg(long, default_value_t = 30.0)]
    duration: f64,
    /// Idle activity instances the memory measurement deploys on one node.
    #[arg(long, default_value_t = report::IDLE_TARGET.0)]
    idle: u64,
    /// Samples of each floor measurement.
    #[arg(long, default_value_t = 1000)]
    floor_samples: usize,
    /// Run only this workload (repeatable; default: all but the scale ones), e.g. to profile
    /// one. `scale16` and `scale100` (a 128-activity chain over 16 and 100 partner nodes) run
    /// only when named here or with --scale.
    #[arg(long, value_name = "NAME")]
    workload: Vec<String>,
    /// Run the scale workloads (`scale16` and `scale100`, p2p) and write the report's `scale`
    /// section (the rest of the report stays, unless other workloads are named too). Starts
    /// 100 `mobiwf-node` processes: a few GiB of memory.
    #[arg(long)]
    scale: bool,
    /// Run only this mode (`p2p` or `hub`; repeatable; default: both).
    #[arg(long, value_name = "MODE")]
    mode: Vec<String>,
    /// Leave out the idle-memory measurement.
    #[arg(long)]
    no_idle: bool,
    /// Samples of the delivery delay after a link returns (each kind).
    #[arg(long, default_value_t = 10)]
    returns: usize,
    /// Leave out the delivery delay after a link returns.
    #[arg(long)]
    no_returns: bool,
    /// Leave out the Temporal baseline.
    #[arg(long)]
    no_temporal: bool,
    /// Leave out the Restate baseline.
    #[arg(long)]
    no_restate: bool,
    /// Tiny numbers everywhere: checks that everything runs.
    #[arg(long)]
    smoke: bool,
}

/// At most this many instances one at a time on the Temporal baseline.
pub const TEMPORAL_SEQUENTIAL: usize = 100;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Some(Cmd::FloorPeer { dir }) => floor::serve_peer(&dir).await,
            Some(Cmd::Soak {
                minutes,
                rate,
                out,
                bin_dir,
            }) => {
                let bin_dir = release_binaries(bin_dir.as_ref())?;
                let plan = soak::Plan {
                    seconds: minutes * 60.0,
                    rate,
                };
                let section = soak::run(&bin_dir, &plan).await?;
                println!("{section}");
                sections::write(&out, "soak", &section)
            }
            Some(Cmd::StartupNode {
                partitions,
                bin_dir,
            }) => startup(partitions, bin_dir.as_ref()).await,
            Some(Cmd::StartupController {
                finished,
                live,
                runs,
                bin_dir,
            }) => match release_binaries(bin_dir.as_ref()) {
                Ok(bin_dir) => startup_controller::run(&bin_dir, finished, live, runs).await,
                Err(e) => Err(e),
            },
            None => run(cli.run).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `mobiwf-bench startup-node`: prints the figures (they go into BENCHMARKS.md by hand, with the
/// build they were measured on).
async fn startup(partitions: u64, bin_dir: Option<&PathBuf>) -> anyhow::Result<()> {
    let bin_dir = release_binaries(bin_dir)?;
    let scratch = tempfile::Builder::new()
        .prefix("mobiwf-bench-startup-")
        .tempdir()?;
    let measured = startup_node::measure(&bin_dir, partitions, scratch.path()).await?;
    println!(
        "node startup: {} idle partitions, API answered {:.2} s after start, RSS {:.0} MiB \
         (data directory built in {:.1} s)",
        measured.partitions, measured.answer_s, measured.rss_mib, measured.build_s
    );
    Ok(())
}

/// `scripts/bench` with the options this run was given (less where the binaries and the
/// repository are, which the script passes itself).
fn command_line() -> String {
    let mut words = vec!["scripts/bench".to_owned()];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--repo" | "--bin-dir" => {
                args.next();
            }
            a if a.starts_with("--repo=") || a.starts_with("--bin-dir=") => {}
            _ => words.push(arg),
        }
    }
    words.join(" ")
}

async fn run(mut args: RunArgs) -> anyhow::Result<()> {
    if args.smoke {
        args.sequential = args.sequential.min(5);
        args.concurrency = args.concurrency.min(4);
        args.duration = args.duration.min(1.0);
        args.idle = args.idle.min(1000);
        args.floor_samples = args.floor_samples.min(50);
        args.returns = args.returns.min(1);
    }
    let started = Instant::now();
    let bin_dir = release_binaries(args.bin_dir.as_ref())?;
    let plan = Plan {
        warmup: if args.smoke { 2 } else { 20 },
        sequential: args.sequential,
        concurrency: args.concurrency,
        duration: Duration::from_secs_f64(args.duration),
    };
    let scale = chosen_scale(&args)?;
    if !scale.is_empty() {
        // The main report first (when asked for too): it carries the old scale section,
        // which the new one then replaces.
        if args.workload.iter().any(|n| !is_scale(n)) {
            main_report(&args, &bin_dir, &plan, started).await?;
        }
        let plan = scale::plan(&plan);
        let rows = scale::run(&bin_dir, &scale, &plan).await?;
        sections::write(
            &args.out,
            "scale",
            &scale::section(&plan, &rows, &command_line()),
        )?;
        eprintln!("wrote the scale section of {}", args.out.display());
        return Ok(());
    }
    main_report(&args, &bin_dir, &plan, started).await
}

/// True for the name of a scale workload.
fn is_scale(name: &str) -> bool {
    workloads::SCALE.iter().any(|(n, _, _)| *n == name)
}

/// The scale workloads `--scale` or `--workload` names.
fn chosen_scale(args: &RunArgs) -> anyhow::Result<Vec<workloads::Workload>> {
    let mut scale = workloads::scale()?;
    if !args.scale {
        scale.retain(|w| args.workload.iter().any(|n| n == w.name));
    }
    Ok(scale)
}

/// Every measurement but the scale ones, written as the report (its marked sections kept).
async fn main_report(
    args: &RunArgs,
    bin_dir: &std::path::Path,
    plan: &Plan,
    started: Instant,
) -> anyhow::Result<()> {
    let scratch = tempfile::Builder::new().prefix("mobiwf-bench-").tempdir()?;

    eprintln!("floor: libp2p round trips and synced writes ...");
    let floor = floor::measure(args.floor_samples, scratch.path()).await?;
    eprintln!(
        "  round trip {}, synced write {}, hop floor {:.0} µs",
        report::brief(&floor.round_trip),
        report::brief(&floor.synced_write),
        floor.hop_floor_us()
    );

    let workloads = chosen_workloads(args)?;
    let results = measure_workloads(bin_dir, &workloads, &chosen_modes(args), plan).await?;
    let idle = if args.no_idle {
        None
    } else {
        Some(measure_idle(bin_dir, args.idle, scratch.path()).await?)
    };
    let returns = if args.no_returns {
        None
    } else {
        Some(measure_returns(bin_dir, args.returns).await?)
    };
    let temporal = temporal_baselines(args, scratch.path()).await?;
    let restate = restate_baseline(args, scratch.path()).await?;

    let command = command_line();
    let markdown = report::render(&report::Run {
        plan,
        floor: &floor,
        results,
        temporal,
        restate,
        idle: idle.as_ref(),
        returns: returns.as_ref(),
        elapsed_s: started.elapsed().as_secs_f64(),
        command,
    });
    std::fs::write(&args.out, sections::carried(&args.out, &markdown))?;
    eprintln!("wrote {}", args.out.display());
    Ok(())
}

/// Where the release binaries are (`--bin-dir`, else beside this one), checked to be there.
fn release_binaries(given: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    let bin_dir = match given {
        Some(d) => d.clone(),
        None => std::env::current_exe()?
            .parent()
            .map(PathBuf::from)
            .ok_or_else(|| anyhow::anyhow!("cannot tell where this binary is"))?,
    };
    for exe in ["mobiwf-controller", "mobiwf-node"] {
        if !bin_dir.join(exe).is_file() {
            anyhow::bail!(
                "{} not found: build the release binaries first (`cargo build --release --workspace`) or pass --bin-dir",
                bin_dir.join(exe).display()
            );
        }
    }
    Ok(bin_dir)
}

/// The workloads `--workload` names (all of them without it, or when it names only scale
/// ones).
fn chosen_workloads(args: &RunArgs) -> anyhow::Result<Vec<workloads::Workload>> {
    let mut workloads = workloads::all()?;
    if args.workload.iter().any(|n| !is_scale(n)) {
        workloads.retain(|w| args.workload.iter().any(|n| n == w.name));
    }
    Ok(workloads)
}

/// The modes `--mode` names (both without it).
fn chosen_modes(args: &RunArgs) -> Vec<Mode> {
    [Mode::P2p, Mode::Hub]
        .into_iter()
        .filter(|m| args.mode.is_empty() || args.mode.iter().any(|n| n == m.as_str()))
        .collect()
}

/// Each workload in each mode, on a cluster of its own.
async fn measure_workloads<'w>(
    bin_dir: &std::path::Path,
    workloads: &'w [workloads::Workload],
    modes: &[Mode],
    plan: &Plan,
) -> anyhow::Result<Vec<(&'w workloads::Workload, Vec<(Mode, measure::Figures)>)>> {
    let mut results = Vec::new();
    for w in workloads {
        let mut figures_by_mode = Vec::new();
        for &mode in modes {
            eprintln!("{} / {} ...", w.name, mode.as_str());
            let cluster = Cluster::start(bin_dir, mode, &w.partners).await?;
            let figures = measure::run(&cluster, w, plan).await?;
            eprintln!(
                "  hop {}, end-to-end {}, {:.0} instances/s, controller {:.1} msgs and {:.2} ms CPU per instance",
                report::brief(&figures.hops),
                report::brief(&figures.e2e),
                figures.instances_per_s,
                figures.controller_messages_total(),
                figures.controller_cpu_ms
            );
            drop(cluster);
            figures_by_mode.push((mode, figures));
        }
        results.push((w, figures_by_mode));
    }
    Ok(results)
}

/// The memory of one node holding `count` idle activity instances.
async fn measure_idle(
    bin_dir: &std::path::Path,
    count: u64,
    scratch: &std::path::Path,
) -> anyhow::Result<idle::Idle> {
    eprintln!("idle memory: {count} activity instances on one node ...");
    let idle = idle::measure(bin_dir, count, scratch).await?;
    eprintln!(
        "  {:.0} MiB RSS ({:.0} before), {:.0} deployments/s",
        idle.rss_after_mib, idle.rss_before_mib, idle.deploys_per_s
    );
    Ok(idle)
}

/// The delivery delay after a link returns, on the paper workload.
async fn measure_returns(
    bin_dir: &std::path::Path,
    samples: usize,
) -> anyhow::Result<returns::Returns> {
    eprintln!("delivery after a link returns: {samples} samples of each kind ...");
    let paper = workloads::all()?
        .into_iter()
        .find(|w| w.name == "paper")
        .ok_or_else(|| anyhow::anyhow!("no paper workload"))?;
    let r = returns::measure(bin_dir, &paper, samples).await?;
    eprintln!(
        "  same address {}, moved {}",
        report::brief(&r.same_address),
        report::brief(&r.moved)
    );
    Ok(r)
}

/// How the baseline scripts are driven, as the run's arguments say.
fn drive(args: &RunArgs, scratch: &std::path::Path) -> baseline::Drive {
    baseline::Drive {
        sequential: args.sequential,
        concurrency: args.concurrency,
        duration_secs: args.duration,
        scratch: scratch.to_owned(),
    }
}

/// The Temporal baseline, stock then tuned, or why it is left out.
async fn temporal_baselines(
    args: &RunArgs,
    scratch: &std::path::Path,
) -> anyhow::Result<Vec<Result<(temporal::Setup, temporal::Baseline), String>>> {
    let mut temporal = Vec::new();
    if args.no_temporal {
        temporal.push(Err("left out (--no-temporal)".to_owned()));
        return Ok(temporal);
    }
    let drive = baseline::Drive {
        // One instance at a time takes about half a second there: fewer of them.
        sequential: args.sequential.min(TEMPORAL_SEQUENTIAL),
        ..drive(args, scratch)
    };
    for setup in [temporal::Setup::Stock, temporal::Setup::Tuned] {
        eprintln!("{} ...", setup.label());
        let (repo, drive) = (args.repo.clone(), drive.clone());
        let result =
            tokio::task::spawn_blocking(move || temporal::run(&repo, setup, &drive)).await??;
        match result {
            Ok(baseline) => temporal.push(Ok((setup, baseline))),
            Err(why) => {
                eprintln!("  {why}");
                temporal.push(Err(why));
                break;
            }
        }
    }
    Ok(temporal)
}

/// The Restate baseline, or why it is left out.
async fn restate_baseline(
    args: &RunArgs,
    scratch: &std::path::Path,
) -> anyhow::Result<Result<restate::Baseline, String>> {
    if args.no_restate {
        return Ok(Err("left out (--no-restate)".to_owned()));
    }
    eprintln!("{} ...", restate::LABEL);
    let (repo, drive) = (args.repo.clone(), drive(args, scratch));
    let result = tokio::task::spawn_blocking(move || restate::run(&repo, &drive)).await??;
    match &result {
        Ok(b) => {
            for (shape, s) in &b.workloads {
                eprintln!(
                    "  {shape}: hop p50 {:.2} ms, end-to-end p50 {:.2} ms, {:.0} instances/s",
                    s.hop_p50_us / 1000.0,
                    s.e2e_p50_us / 1000.0,
                    s.throughput_instances_per_s
                );
            }
        }
        Err(why) => eprintln!("  {why}"),
    }
    Ok(result)
}
