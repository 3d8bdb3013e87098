//! Helpers for end-to-end tests: build the workspace's binaries once, find them, and give
//! each test its own scratch directory.
//!
//! The binaries of other packages are not built for this package's tests by Cargo, so
//! [`binary`] runs `cargo build` for them (a no-op when they are up to date).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use anyhow::{Context, bail};

pub mod harness;

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The path of workspace binary `name` (e.g. `mobiwf-controller`), built if needed.
///
/// With `MOBIWF_TESTS_PREBUILT` set in the environment, the binaries already in the target
/// directory are used as they are (no `cargo build`, which waits for Cargo's lock).
pub fn binary(name: &str) -> anyhow::Result<PathBuf> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if std::env::var_os("MOBIWF_TESTS_PREBUILT").is_some() {
                return Ok(());
            }
            let mut cargo = Command::new(env!("CARGO"));
            cargo
                .args(["build", "--workspace", "--all-targets", "--locked"])
                .current_dir(repo_root());
            // `cargo test` gives the test process variables describing this package; build
            // scripts that watch them (ring watches CARGO_MANIFEST_DIR) would otherwise be
            // rebuilt, with everything above them, every time a test and a plain build alternate.
            for (key, _) in std::env::vars_os() {
                let key_text = key.to_string_lossy();
                if key_text.starts_with("CARGO_PKG_")
                    || key_text.starts_with("CARGO_MANIFEST_")
                    || key_text.starts_with("CARGO_CRATE_")
                    || key_text.starts_with("CARGO_BIN_")
                    || key_text == "CARGO_PRIMARY_PACKAGE"
                    || key_text == "CARGO_TARGET_TMPDIR"
                    || key_text == "OUT_DIR"
                {
                    cargo.env_remove(&key);
                }
            }
            let status = cargo
                .status()
                .map_err(|e| format!("cannot run cargo: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("cargo build --bins failed: {status}"))
            }
        })
        .clone()
        .map_err(anyhow::Error::msg)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        repo_root().join(target)
    };
    let path = target.join("debug").join(name);
    if !path.exists() {
        bail!("{} was not built", path.display());
    }
    Ok(path)
}

/// A fresh, empty directory for one test (the first call of a process sweeps the directories
/// left by test processes that are gone).
pub fn scratch(test: &str) -> anyhow::Result<PathBuf> {
    static SWEPT: OnceLock<()> = OnceLock::new();
    SWEPT.get_or_init(sweep_scratch);
    let dir = std::env::temp_dir().join(format!("mobiwf-e2e-{}-{test}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
    Ok(dir)
}

/// Removes the scratch directories of test processes that are gone (a run keeps its own, and
/// a failed run's stay until the next, for a look at their logs): data directories with
/// RocksDB logs would otherwise pile up on the disk run after run.
fn sweep_scratch() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("mobiwf-e2e-")) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or_default();
        let alive = Path::new("/proc").join(pid).exists();
        if !alive && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
