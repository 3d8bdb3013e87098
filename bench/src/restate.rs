//! The second baseline: the same `chain10` and `paper` shapes on Restate, a durable-execution
//! engine in Rust on RocksDB (`restate-server` with its stock configuration, which fsyncs its
//! log before acting, loopback, a Node.js endpoint with the TypeScript SDK), each hand-off a
//! durable one-way send between two services; run by `bench/restate/run.sh`. Optional: when it
//! cannot be installed the report says why.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::baseline::{Drive, Shape};

/// Its name in the report.
pub const LABEL: &str = "Restate (stock)";

/// The script's output.
#[derive(Debug, Clone, Deserialize)]
pub struct Baseline {
    /// `restate-server --version`.
    pub restate_version: String,
    /// The TypeScript SDK's version.
    pub sdk_version: String,
    /// By shape name.
    pub workloads: BTreeMap<String, Shape>,
}

/// Runs the baseline: `Ok(Err(why))` when it was skipped.
pub fn run(repo: &Path, drive: &Drive) -> anyhow::Result<Result<Baseline, String>> {
    let mut command = Command::new("bash");
    command.arg(repo.join("bench/restate/run.sh"));
    crate::baseline::run_script("Restate", command, drive)
}
