//! The chaos run's processes: daemons started with their output appended to a log (so a
//! restart keeps the history), killed with SIGKILL, stalled and resumed with SIGSTOP and
//! SIGCONT; and command-line calls that must end within a time limit (a stalled controller
//! must not hang the submitter). Nothing here panics: every failure is an error that says what.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// How long a daemon may take to publish its `address` and `api` files.
pub const STARTUP: Duration = Duration::from_secs(30);

/// What a finished command printed, and how it exited.
#[derive(Debug)]
pub struct Output {
    /// The exit code (`None`: killed by a signal, or by the time limit).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `cmd` to its end, killing it after `timeout` (its code is then `None`).
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
    })
}

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = pipe.read_to_string(&mut s);
        s
    })
}

/// A daemon process, killed (SIGKILL) when dropped.
pub struct Daemon {
    name: String,
    child: Option<Child>,
    log: PathBuf,
}

impl Daemon {
    /// Starts `program args` with its output appended to `log`; in network namespace `netns`
    /// when given (`ip netns exec`, which execs it: the child is the daemon itself).
    pub fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        log: &Path,
        netns: Option<&str>,
    ) -> anyhow::Result<Daemon> {
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .with_context(|| format!("cannot open {}", log.display()))?;
        writeln!(
            file,
            "===== start {name}: {} {}",
            program.display(),
            args.join(" ")
        )?;
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
            .stdout(file.try_clone()?)
            .stderr(file)
            .env("NO_COLOR", "1");
        if std::env::var_os("RUST_LOG").is_none() {
            cmd.env("RUST_LOG", "info");
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("cannot start {name} ({})", program.display()))?;
        Ok(Daemon {
            name: name.to_owned(),
            child: Some(child),
            log: log.to_owned(),
        })
    }

    /// Sends `signal` (`STOP`, `CONT`) to the process.
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

    /// Err, with the end of its log, if the process has exited.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(child) = self.child.as_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            bail!(
                "{} exited ({status}); its log ends with:\n{}",
                self.name,
                self.log_tail(40)
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

/// Starts a daemon that publishes `address` and `api` in `dir`, and waits for them.
pub fn start_publishing(
    name: &str,
    program: &Path,
    args: &[String],
    dir: &Path,
    netns: Option<&str>,
) -> anyhow::Result<(Daemon, String, String)> {
    std::fs::create_dir_all(dir)?;
    for f in ["address", "api"] {
        let _ = std::fs::remove_file(dir.join(f));
    }
    let log = dir.with_extension("log");
    let mut daemon = Daemon::spawn(name, program, args, &log, netns)?;
    let deadline = Instant::now() + STARTUP;
    loop {
        daemon.check_alive()?;
        if let Some((address, api)) = published(dir) {
            return Ok((daemon, address, api));
        }
        if Instant::now() >= deadline {
            bail!(
                "{name} did not write its address and api files within {STARTUP:?}; its log ends with:\n{}",
                daemon.log_tail(40)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A libp2p address without its `/p2p/<peer id>` suffix: what to `--listen` on again.
pub fn listen_part(address: &str) -> String {
    match address.find("/p2p/") {
        Some(i) => address[..i].to_owned(),
        None => address.to_owned(),
    }
}
