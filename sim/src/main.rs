//! The simulator's command line: a campaign of seeds (`--seeds N [--first-seed S]`: the steps
//! per second, and the first failing seed with its whole trace, played again), or one seed
//! replayed exactly (`--seed S`: its whole trace).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;

/// Plays seeds of the deterministic simulator of a mobiwf mesh.
#[derive(Parser, Debug)]
#[command(name = "mobiwf-sim", about)]
struct Args {
    /// How many seeds to play (a campaign).
    #[arg(long, conflicts_with = "seed")]
    seeds: Option<u64>,
    /// The campaign's first seed.
    #[arg(long, default_value_t = 0)]
    first_seed: u64,
    /// Replay one seed, printing its whole trace.
    #[arg(long)]
    seed: Option<u64>,
    /// Play every seed of the campaign, and list each failing one with what broke first
    /// (instead of stopping at the first).
    #[arg(long)]
    keep_going: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match (args.seed, args.seeds) {
        (Some(seed), _) => replay(seed),
        (None, Some(count)) if args.keep_going => survey(args.first_seed, count),
        (None, Some(count)) => campaign(args.first_seed, count),
        (None, None) => {
            eprintln!("mobiwf-sim: give --seeds N [--first-seed S], or --seed S");
            ExitCode::from(2)
        }
    }
}

/// Plays one seed and prints its whole trace.
fn replay(seed: u64) -> ExitCode {
    let outcome = mobiwf_sim::run(seed, true);
    let mut out = std::io::stdout().lock();
    for line in &outcome.trace {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "seed {seed}: {} steps, {:.1} s simulated, trace digest {:016x}",
        outcome.steps,
        outcome.simulated_us as f64 / 1e6,
        outcome.digest
    );
    if outcome.passed() {
        ExitCode::SUCCESS
    } else {
        let _ = writeln!(out, "seed {seed} FAILED: {}", outcome.violations.join("; "));
        ExitCode::FAILURE
    }
}

/// Plays seeds `first..first + count`; stops at the first that fails and shows it.
fn campaign(first: u64, count: u64) -> ExitCode {
    let started = Instant::now();
    let (mut steps, mut simulated) = (0u64, 0u64);
    for seed in first..first.saturating_add(count) {
        let outcome = mobiwf_sim::run(seed, false);
        steps += outcome.steps;
        simulated += outcome.simulated_us;
        if !outcome.passed() {
            report(started, seed - first + 1, steps, simulated);
            println!(
                "first failing seed: {seed}: {}",
                outcome.violations.join("; ")
            );
            println!("replay it with: cargo run -p mobiwf-sim -- --seed {seed}");
            println!("--- its trace ---");
            let again = mobiwf_sim::run(seed, true);
            for line in &again.trace {
                println!("{line}");
            }
            return ExitCode::FAILURE;
        }
    }
    report(started, count, steps, simulated);
    println!("all {count} seeds passed");
    ExitCode::SUCCESS
}

/// Plays seeds `first..first + count` and lists every failing one.
fn survey(first: u64, count: u64) -> ExitCode {
    let started = Instant::now();
    let (mut steps, mut simulated, mut failed) = (0u64, 0u64, 0u64);
    for seed in first..first.saturating_add(count) {
        let outcome = mobiwf_sim::run(seed, false);
        steps += outcome.steps;
        simulated += outcome.simulated_us;
        if let Some(first) = outcome.violations.first() {
            failed += 1;
            println!("seed {seed}: {first}");
        }
    }
    report(started, count, steps, simulated);
    println!("{failed} of {count} seeds failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn report(started: Instant, seeds: u64, steps: u64, simulated_us: u64) {
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    println!(
        "{seeds} seeds, {steps} steps in {secs:.2} s: {:.0} steps/s, {:.0} s simulated",
        steps as f64 / secs,
        simulated_us as f64 / 1e6
    );
}
