//! The baseline a user would pick instead: the same `chain10` and `paper` shapes on the
//! Temporal dev server (SQLite file, loopback, a Python worker), run by
//! `bench/temporal/run.py`. Optional: when it cannot be installed the report says why.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

/// The exit status with which the script says it cannot run here (no network, no package).
const SKIPPED: i32 = 3;

/// The figures of one shape, as the script reports them (µs, per second, MiB).
#[derive(Debug, Clone, Deserialize)]
pub struct Shape {
    /// Hop p50, µs.
    pub hop_p50_us: f64,
    /// Hop p99, µs.
    pub hop_p99_us: f64,
    /// End-to-end p50, µs.
    pub e2e_p50_us: f64,
    /// End-to-end p99, µs.
    pub e2e_p99_us: f64,
    /// Instances per second.
    pub throughput_instances_per_s: f64,
    /// Activities per second.
    pub throughput_activities_per_s: f64,
    /// Server CPU per instance, s.
    pub server_cpu_s_per_instance: f64,
    /// The server's peak RSS.
    pub server_peak_rss_mb: f64,
    /// The worker's peak RSS.
    pub worker_peak_rss_mb: f64,
}

/// The script's output.
#[derive(Debug, Clone, Deserialize)]
pub struct Baseline {
    /// `temporal --version`.
    pub temporal_version: String,
    /// The Python SDK's version.
    pub sdk_version: String,
    /// By shape name.
    pub workloads: BTreeMap<String, Shape>,
}

/// How the dev server is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// As `temporal server start-dev` comes.
    Stock,
    /// With the history service's transfer-queue read limit (20/s by default, about 50 ms
    /// per hand-off on the dev server's one shard) lifted: `run.py --tuned`.
    Tuned,
}

impl Setup {
    /// Its name in the report.
    pub fn label(self) -> &'static str {
        match self {
            Setup::Stock => "Temporal dev server",
            Setup::Tuned => "Temporal dev server, tuned",
        }
    }
}

/// Runs the baseline: `Ok(Err(why))` when it was skipped.
pub fn run(
    repo: &Path,
    setup: Setup,
    sequential: usize,
    concurrency: usize,
    duration_secs: f64,
    scratch: &Path,
) -> anyhow::Result<Result<Baseline, String>> {
    let out = scratch.join("temporal.json");
    let mut command = Command::new("python3");
    if setup == Setup::Tuned {
        command
            .arg(repo.join("bench/temporal/run.py"))
            .arg("--tuned");
    } else {
        command.arg(repo.join("bench/temporal/run.py"));
    }
    let output = command
        .arg("--out")
        .arg(&out)
        .args(["--sequential", &sequential.to_string()])
        .args(["--concurrency", &concurrency.to_string()])
        .args(["--duration", &duration_secs.to_string()])
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => return Ok(Err(format!("cannot run python3: {e}"))),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => {}
        Some(SKIPPED) => {
            let why = stderr
                .lines()
                .rev()
                .find(|l| l.contains("skipped"))
                .unwrap_or("the script could not set itself up");
            return Ok(Err(why.trim().to_owned()));
        }
        _ => {
            let tail: Vec<&str> = stderr.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::bail!(
                "the Temporal baseline failed ({}):\n{}",
                output.status,
                tail.join("\n")
            );
        }
    }
    Ok(Ok(serde_json::from_slice(&std::fs::read(&out)?)?))
}
