//! Running the real daemons and commands of the workspace as separate processes: a controller
//! and nodes that are killed when the test ends (even by a panic), command-line calls with a
//! time limit, polling with deadlines, the node's Prometheus metrics, and workflow files. The
//! processes and namespaces are `mobiwf-testkit`'s (shared with the chaos run), whose errors
//! are panics here.
//!
//! Every helper that waits has a deadline and panics with a message saying what it was
//! waiting for; a panicking test prints the end of each daemon's log as its guard is dropped.
//! (These helpers panic on purpose: they are the assertions of the tests that use them.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Display;
use std::io::Write;
use std::time::{Duration, Instant};

mod daemons;
mod etcd;
mod etcd_cluster;
mod http;
mod netns;
mod process;
mod run_log;
mod workflows;

pub use daemons::*;
pub use etcd::*;
pub use etcd_cluster::*;
pub use http::*;
pub use netns::*;
pub use process::*;
pub use run_log::*;
pub use workflows::*;

/// How long a daemon may take to write its `address` and `api` files.
pub use mobiwf_testkit::process::STARTUP;
/// How long one command-line call (not `wait`) may take.
pub const CLI_TIMEOUT: Duration = Duration::from_secs(30);
/// How often conditions are polled.
pub const POLL: Duration = Duration::from_millis(50);

/// Polls `poll` every [`POLL`] until it gives a value; panics after `timeout` saying that it
/// was waiting for `what`.
pub fn wait_for<T>(
    what: impl Display,
    timeout: Duration,
    mut poll: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = poll() {
            return value;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting for {what}");
        }
        std::thread::sleep(POLL);
    }
}

/// The environment variable naming a file each skipped test appends a line to.
pub const SKIP_LOG: &str = "MOBIWF_SKIP_LOG";

/// Skips the running test because of `what`: says so on stderr and in [`SKIP_LOG`]'s file;
/// panics instead when the environment variable `require` is `1` (the test must run).
pub fn skip(require: &str, what: &str) {
    assert!(
        std::env::var_os(require).is_none_or(|v| v != "1"),
        "{what}; {require}=1 says this test must run, not skip"
    );
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    eprintln!("skipped {test}: {what}");
    if let Some(file) = std::env::var_os(SKIP_LOG) {
        let line = format!("{test}: {what}\n");
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            eprintln!("cannot list the skip in {}: {e}", file.to_string_lossy());
        }
    }
}
