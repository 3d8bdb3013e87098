//! What the baselines have in common: the figures a baseline script reports per shape, how
//! hard every script is driven, and running such a script, whose exit status 3 says it cannot
//! run here (no network, no package), which the report then says instead of failing the
//! benchmark.

use std::path::PathBuf;
use std::process::Command;

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The exit status with which a baseline script says it cannot run here.
const SKIPPED: i32 = 3;

/// Lines of a failed script's stderr the error quotes.
const STDERR_TAIL_LINES: usize = 15;

/// The figures of one shape, as a baseline script reports them (µs, per second, MiB).
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
    /// The worker's (or service endpoint's) peak RSS.
    pub worker_peak_rss_mb: f64,
}

/// How a baseline script is driven, the same arguments for every one.
#[derive(Debug, Clone)]
pub struct Drive {
    /// Instances run one at a time (`--sequential`).
    pub sequential: usize,
    /// Instances in flight at once (`--concurrency`).
    pub concurrency: usize,
    /// How long the concurrent run lasts, s (`--duration`).
    pub duration_secs: f64,
    /// Where the script writes its figures.
    pub scratch: PathBuf,
}

/// Runs the baseline script `command` (its interpreter and script, and any arguments of its
/// own) for `what`, driven as `drive` says, and reads the figures it writes:
/// `Ok(Err(why))` when it was skipped (or its interpreter is missing), an error when it failed.
pub fn run_script<T: DeserializeOwned>(
    what: &str,
    mut command: Command,
    drive: &Drive,
) -> anyhow::Result<Result<T, String>> {
    let out = drive.scratch.join(format!("{}.json", what.to_lowercase()));
    command
        .arg("--out")
        .arg(&out)
        .args(["--sequential", &drive.sequential.to_string()])
        .args(["--concurrency", &drive.concurrency.to_string()])
        .args(["--duration", &drive.duration_secs.to_string()]);
    let program = command.get_program().to_string_lossy().into_owned();
    let output = match command.output() {
        Ok(o) => o,
        Err(e) => return Ok(Err(format!("cannot run {program}: {e}"))),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Ok(Ok(serde_json::from_slice(&std::fs::read(out)?)?)),
        Some(SKIPPED) => {
            let why = stderr
                .lines()
                .rev()
                .find(|l| l.contains("skipped"))
                .unwrap_or("the script could not set itself up");
            Ok(Err(why.trim().to_owned()))
        }
        _ => {
            let tail: Vec<&str> = stderr.lines().rev().take(STDERR_TAIL_LINES).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            anyhow::bail!(
                "the {what} baseline failed ({}):\n{}",
                output.status,
                tail.join("\n")
            );
        }
    }
}
