//! The real binaries as processes: a command run to its end within a time limit (a stalled
//! daemon must not hang its caller), and daemons whose output is appended to a log (a restart
//! keeps the history), stalled and resumed with SIGSTOP and SIGCONT, killed with SIGKILL when
//! dropped. Every failure is an error that says what (the chaos run reports it, the end-to-end
//! harness panics with it); only [`Output::expect_code`], a test's assertion, panics.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// How long a daemon may take to publish its `address` and `api` files.
pub const STARTUP: Duration = Duration::from_secs(30);

/// How often a daemon is looked at while waiting for it.
const POLL: Duration = Duration::from_millis(50);

/// The lines of a daemon's log printed when it is dropped during a panic.
const PANIC_TAIL: usize = 40;

/// What a finished command printed, and how it ended.
#[derive(Debug)]
pub struct Output {
    /// The exit code (`None`: killed by a signal, or by the time limit).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether the time limit ended it.
    pub timed_out: bool,
}

impl Output {
    /// Panics, showing the output, unless the command exited with `code` (a test's assertion).
    pub fn expect_code(&self, code: i32, what: &str) -> &Output {
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

/// Runs `cmd` to its end, killing it after `timeout` (its code is then `None`, and
/// [`Output::timed_out`] says so); Err when it cannot be started.
pub fn run(cmd: &mut Command, timeout: Duration) -> anyhow::Result<Output> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {shown}"))?;
    let out = child.stdout.take().map(read_all);
    let err = child.stderr.take().map(read_all);
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let joined = |h: Option<std::thread::JoinHandle<String>>| {
        h.and_then(|h| h.join().ok()).unwrap_or_default()
    };
    Ok(Output {
        code: status.and_then(|s| s.code()),
        stdout: joined(out),
        stderr: joined(err),
        timed_out: status.is_none(),
    })
}

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// A daemon to start: what runs, where, and how much it says.
#[derive(Debug, Clone, Copy)]
pub struct Program<'a> {
    /// Its name in messages (`controller`, `node P1`).
    pub name: &'a str,
    /// The binary.
    pub path: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// The network namespace it runs in (`ip netns exec`, which execs it: the child is the
    /// daemon itself).
    pub netns: Option<&'a str>,
    /// Its `RUST_LOG` when the environment sets none.
    pub log_filter: &'a str,
    /// How many of the last lines of its log an error about it shows.
    pub shown_lines: usize,
}

/// A daemon process, killed (SIGKILL) when dropped. Its stdout and stderr are appended to a
/// log file, whose end is printed when it is dropped during a panic (a failing test).
pub struct Daemon {
    name: String,
    child: Option<Child>,
    log: PathBuf,
    shown_lines: usize,
}

impl Daemon {
    /// Starts `program` with its output appended to `log`.
    pub fn spawn(program: &Program<'_>, log: &Path) -> anyhow::Result<Daemon> {
        let Program {
            name, path, args, ..
        } = *program;
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("cannot open {}", log.display()))?;
        writeln!(
            file,
            "===== start {name}: {} {}",
            path.display(),
            args.join(" ")
        )?;
        let mut cmd = match program.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(path);
                c
            }
            None => Command::new(path),
        };
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .env("NO_COLOR", "1");
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", program.log_filter);
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {name} ({})", path.display()))?;
        Ok(Daemon {
            name: name.to_owned(),
            child: Some(child),
            log: log.to_owned(),
            shown_lines: program.shown_lines,
        })
    }

    /// Sends `signal` (`STOP`, `CONT`, ...) to the process, which must still run.
    pub fn signal(&self, signal: &str) -> anyhow::Result<()> {
        let Some(child) = &self.child else {
            bail!("{} is not running", self.name);
        };
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .context("run kill")?;
        if !status.success() {
            bail!("kill -{signal} {} failed", self.name);
        }
        Ok(())
    }

    /// Kills the process with SIGKILL (no chance to clean up) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits up to `timeout` for the process to exit by itself; its exit code (`None` for a
    /// signal). Err when it is still running then.
    pub fn wait_exit(&mut self, timeout: Duration) -> anyhow::Result<Option<i32>> {
        let Some(child) = self.child.as_mut() else {
            bail!("{} is not running", self.name);
        };
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().ok().flatten() {
                self.child = None;
                return Ok(status.code());
            }
            if Instant::now() >= deadline {
                bail!(
                    "timed out after {timeout:?} waiting for {} to exit",
                    self.name
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Err, with the end of its log, if the process has exited.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(child) = self.child.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            bail!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                self.log_tail(self.shown_lines)
            );
        }
        Ok(())
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
                self.log_tail(PANIC_TAIL)
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

/// Waits up to `timeout` until `daemon` (running) has published its `address` and `api` in
/// `dir`; Err, with the end of its log, when it exits or the time is up first.
pub fn wait_published(
    daemon: &mut Daemon,
    dir: &Path,
    timeout: Duration,
) -> anyhow::Result<(String, String)> {
    let deadline = Instant::now() + timeout;
    loop {
        daemon.check_alive()?;
        if let Some(published) = published(dir) {
            return Ok(published);
        }
        if Instant::now() >= deadline {
            bail!(
                "{} did not write its address and api files within {timeout:?}; its log ends \
                 with:\n{}",
                daemon.name,
                daemon.log_tail(daemon.shown_lines)
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Starts a daemon that publishes `address` and `api` in `dir` once it is ready (its log
/// beside it, `dir.log`), the old files removed first; see [`wait_published`].
pub fn spawn_publishing(program: &Program<'_>, dir: &Path) -> anyhow::Result<Daemon> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for f in ["address", "api"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    Daemon::spawn(program, &dir.with_extension("log"))
}

/// Starts a daemon that publishes `address` and `api` in `dir`, and waits up to [`STARTUP`]
/// for them; the daemon, its address and its API.
pub fn start_publishing(
    program: &Program<'_>,
    dir: &Path,
) -> anyhow::Result<(Daemon, String, String)> {
    let mut daemon = spawn_publishing(program, dir)?;
    let (address, api) = wait_published(&mut daemon, dir, STARTUP)?;
    Ok((daemon, address, api))
}

/// A libp2p address without its `/p2p/<peer id>` suffix: what to `--listen` on again.
pub fn listen_part(address: &str) -> String {
    match address.find("/p2p/") {
        Some(i) => address[..i].to_owned(),
        None => address.to_owned(),
    }
}
