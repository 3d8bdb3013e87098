//! Running commands with a time limit, and daemons killed when the test ends.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::{STARTUP, wait_for};

/// What a finished command printed, and how it exited.
#[derive(Debug)]
pub struct CmdOutput {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CmdOutput {
    /// Panics, showing the output, unless the command exited with `code`.
    pub fn expect_code(&self, code: i32, what: &str) -> &CmdOutput {
        assert_eq!(
            self.code,
            Some(code),
            "{what}: expected exit {code}\n--- stdout\n{}--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Runs `cmd` to its end, killing it and panicking after `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> CmdOutput {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {shown}: {e}"));
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{shown} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    CmdOutput {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
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

/// A daemon process, killed (SIGKILL) when dropped. Its stdout and stderr are appended to a
/// log file, whose end is printed when the guard is dropped during a panic.
pub struct Daemon {
    name: String,
    child: Option<Child>,
    log: PathBuf,
}

impl Daemon {
    /// Starts `program args`, logging to `log` (appended to, so restarts keep the history).
    /// With `netns`, the program runs in that network namespace (`ip netns exec`, which execs
    /// it: the child is the daemon itself).
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        log: &Path,
        netns: Option<&str>,
    ) -> Daemon {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", log.display()));
        let _ = writeln!(
            file,
            "===== start {name}: {} {}",
            program.display(),
            args.join(" ")
        );
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(program);
                c
            }
            None => Command::new(program),
        };
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("clone log file"))
            .stderr(file);
        cmd.env("NO_COLOR", "1");
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", "info,mobiwf_runtime=debug");
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({}): {e}", program.display()));
        Daemon {
            name: name.to_owned(),
            child: Some(child),
            log: log.to_owned(),
        }
    }

    /// Sends a signal (`STOP`, `CONT`, ...) to the process, which must still run.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("the process was killed before");
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{signal} {} failed", self.name);
    }

    /// Kills the process with SIGKILL (no chance to clean up) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits up to `timeout` for the process to exit by itself; its exit code (`None` for a
    /// signal). Panics, showing the log, when it is still running then.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let child = self.child.as_mut().expect("the process was killed before");
        let status = super::wait_for(format!("{} to exit", self.name), timeout, || {
            child.try_wait().ok().flatten()
        });
        self.child = None;
        status.code()
    }

    /// Panics, showing the log, if the process has exited.
    pub fn check_alive(&mut self) {
        if let Some(child) = self.child.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            panic!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                self.log_tail(60)
            );
        }
    }

    /// The last `n` lines of the log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "----- end of the log of {} ({}):\n{}\n-----",
                self.name,
                self.log.display(),
                self.log_tail(40)
            );
        }
    }
}

/// Reads a daemon's published `address` and `api` files once both are there.
fn published(dir: &Path) -> Option<(String, String)> {
    let address = std::fs::read_to_string(dir.join("address")).ok()?;
    let api = std::fs::read_to_string(dir.join("api")).ok()?;
    let address = address.lines().next()?.trim().to_owned();
    let api = api.trim().to_owned();
    (!address.is_empty() && !api.is_empty()).then_some((address, api))
}

/// Waits until `daemon` (running) has published its `address` and `api` in `dir`.
pub(super) fn wait_published(
    name: &str,
    daemon: &mut Daemon,
    dir: &Path,
    timeout: Duration,
) -> (String, String) {
    wait_for(
        format!("{name} to write its address and api files"),
        timeout,
        || {
            daemon.check_alive();
            published(dir)
        },
    )
}

/// Starts a daemon that publishes `address` and `api` in `dir`, and waits for them.
pub(super) fn start_publishing(
    name: &str,
    program: &Path,
    args: &[String],
    dir: &Path,
    netns: Option<&str>,
) -> (Daemon, String, String) {
    std::fs::create_dir_all(dir).unwrap();
    for f in ["address", "api"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let log = dir.with_extension("log");
    let mut daemon = Daemon::spawn(name, program, args, &log, netns);
    let (address, api) = wait_for(
        format!("{name} to write its address and api files"),
        STARTUP,
        || {
            daemon.check_alive();
            published(dir)
        },
    );
    (daemon, address, api)
}

/// A libp2p address without its `/p2p/<peer id>` suffix: what to `--listen` on again.
pub fn listen_part(address: &str) -> String {
    match address.find("/p2p/") {
        Some(i) => address[..i].to_owned(),
        None => address.to_owned(),
    }
}
