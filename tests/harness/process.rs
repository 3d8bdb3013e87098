//! Running commands with a time limit, and daemons killed when the test ends: the
//! workspace's `mobiwf-testkit`, whose errors are the tests' panics here.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use mobiwf_testkit::process::{self as testkit, Program};
pub use mobiwf_testkit::process::{Daemon, Output as CmdOutput, listen_part};

/// The daemons' `RUST_LOG` when the environment sets none.
const LOG_FILTER: &str = "info,mobiwf_runtime=debug";

/// The lines of a daemon's log shown when it exited while it should run.
const SHOWN_LINES: usize = 60;

/// The value of `result`; panics with its error otherwise (a harness helper's failure is
/// the test's).
pub(super) fn or_panic<T>(result: anyhow::Result<T>) -> T {
    result.unwrap_or_else(|e| panic!("{e:#}"))
}

/// `program args` as a daemon of a test (in `netns` when given), named `name` in messages.
pub(super) fn program<'a>(
    name: &'a str,
    path: &'a Path,
    args: &'a [String],
    netns: Option<&'a str>,
) -> Program<'a> {
    Program {
        name,
        path,
        args,
        netns,
        log_filter: LOG_FILTER,
        shown_lines: SHOWN_LINES,
    }
}

/// Runs `cmd` to its end, killing it and panicking after `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> CmdOutput {
    let shown = format!("{cmd:?}");
    let out = or_panic(testkit::run(cmd, timeout));
    assert!(!out.timed_out, "{shown} did not finish within {timeout:?}");
    out
}

/// Runs every command at the same moment (each from its own thread, released together), each
/// to its end within `timeout`; their outputs in the order given.
pub fn run_together(commands: Vec<Command>, timeout: Duration) -> Vec<CmdOutput> {
    let start = Arc::new(Barrier::new(commands.len()));
    let threads: Vec<_> = commands
        .into_iter()
        .map(|mut cmd| {
            let start = Arc::clone(&start);
            std::thread::spawn(move || {
                start.wait();
                run(&mut cmd, timeout)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| {
            t.join()
                .unwrap_or_else(|_| panic!("a command run together with others panicked"))
        })
        .collect()
}

/// Waits until `daemon` (running) has published its `address` and `api` in `dir`.
pub(super) fn wait_published(
    daemon: &mut Daemon,
    dir: &Path,
    timeout: Duration,
) -> (String, String) {
    or_panic(testkit::wait_published(daemon, dir, timeout))
}

/// Starts a daemon that publishes `address` and `api` in `dir`, and waits for them.
pub(super) fn start_publishing(program: &Program<'_>, dir: &Path) -> (Daemon, String, String) {
    or_panic(testkit::start_publishing(program, dir))
}
