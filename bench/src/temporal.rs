//! The baseline a user would pick instead: the same `chain10` and `paper` shapes on the
//! Temporal dev server (SQLite file, loopback, a Python worker), run by
//! `bench/temporal/run.py`. Optional: when it cannot be installed the report says why.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::baseline::{Drive, Shape};

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
pub fn run(repo: &Path, setup: Setup, drive: &Drive) -> anyhow::Result<Result<Baseline, String>> {
    let mut command = Command::new("python3");
    command.arg(repo.join("bench/temporal/run.py"));
    if setup == Setup::Tuned {
        command.arg("--tuned");
    }
    crate::baseline::run_script("Temporal", command, drive)
}
