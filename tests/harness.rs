//! Running the real daemons and commands of the workspace as separate processes: a controller
//! and nodes that are killed when the test ends (even by a panic), command-line calls with a
//! time limit, polling with deadlines, the node's Prometheus metrics, and workflow files.
//!
//! Every helper that waits has a deadline and panics with a message saying what it was
//! waiting for; a panicking test prints the end of each daemon's log as its guard is dropped.
//! (These helpers panic on purpose: they are the assertions of the tests that use them.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Display;
use std::time::{Duration, Instant};

mod daemons;
mod etcd;
mod http;
mod netns;
mod process;
mod run_log;
mod workflows;

pub use daemons::*;
pub use etcd::*;
pub use http::*;
pub use netns::*;
pub use process::*;
pub use run_log::*;
pub use workflows::*;

/// How long a daemon may take to write its `address` and `api` files.
pub const STARTUP: Duration = Duration::from_secs(30);
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
