//! The mesh the chaos run strikes: a controller and its nodes, each a real daemon started on a
//! data directory, started again on it after a kill (the same libp2p address, or another port
//! for a node that moved), and the command-line calls the run makes to them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::bail;

use mobiwf_testkit::args;
use mobiwf_testkit::process::{Daemon, Output, Program, listen_part, run, start_publishing};

/// The daemons' `RUST_LOG` when the environment sets none.
const LOG_FILTER: &str = "info";
/// The lines of a daemon's log an error about it shows.
const SHOWN_LINES: usize = 40;

/// Starts the daemon `name` (`program args`, in `netns` when given) with data in `dir`, and
/// waits until it has published its address and API.
fn start_daemon(
    name: &str,
    program: &Path,
    args: &[String],
    dir: &Path,
    netns: Option<&str>,
) -> anyhow::Result<(Daemon, String, String)> {
    let program = Program {
        name,
        path: program,
        args,
        netns,
        log_filter: LOG_FILTER,
        shown_lines: SHOWN_LINES,
    };
    start_publishing(&program, dir)
}

/// Where the binaries are.
#[derive(Debug, Clone)]
pub struct Binaries {
    /// The directory holding `mobiwf-controller` and `mobiwf-node`.
    pub dir: PathBuf,
}

impl Binaries {
    /// The path of binary `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// A `mobiwf-controller serve` process.
pub struct Controller {
    dir: PathBuf,
    /// Its libp2p address (what nodes get as `--controller`).
    pub address: String,
    /// Its HTTP API (HOST:PORT; a new port at each start).
    pub api: String,
    args: Vec<String>,
    bins: Binaries,
    daemon: Option<Daemon>,
}

impl Controller {
    /// Starts a controller with data in `dir`, listening on `listen`, its API on a free
    /// loopback port, with more `serve` options (kept for restarts).
    pub fn start(
        bins: &Binaries,
        dir: &Path,
        listen: &str,
        extra: &[String],
    ) -> anyhow::Result<Controller> {
        let mut c = Controller {
            dir: dir.to_owned(),
            address: String::new(),
            api: String::new(),
            args: extra.to_vec(),
            bins: bins.clone(),
            daemon: None,
        };
        c.spawn(listen)?;
        Ok(c)
    }

    fn spawn(&mut self, listen: &str) -> anyhow::Result<()> {
        let args = args::serve(&self.dir, listen, &self.args);
        let program = self.bins.path("mobiwf-controller");
        let (daemon, address, api) = start_daemon("controller", &program, &args, &self.dir, None)?;
        if !self.address.is_empty() && address != self.address {
            bail!(
                "the controller came back at {address}, not {}",
                self.address
            );
        }
        self.daemon = Some(daemon);
        self.address = address;
        self.api = api;
        Ok(())
    }

    /// The daemon, while it runs.
    pub fn daemon(&mut self) -> Option<&mut Daemon> {
        self.daemon.as_mut()
    }

    /// SIGKILLs it.
    pub fn kill(&mut self) {
        self.daemon = None;
    }

    /// Starts it again on the same data directory and libp2p address.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        let listen = listen_part(&self.address);
        self.spawn(&listen)
    }

    /// The file holding its administrator's API token.
    pub fn token_file(&self) -> PathBuf {
        self.dir.join("operator.token")
    }

    /// The join token nodes present.
    pub fn join_token_file(&self) -> PathBuf {
        self.dir.join("join.token")
    }

    /// `mobiwf-controller ARGS --api API` with the administrator's token, ended after
    /// `timeout`.
    pub fn cli(&self, args: &[&str], timeout: Duration) -> anyhow::Result<Output> {
        cli(&self.bins, &self.api, &self.token_file(), args, timeout)
    }
}

/// `mobiwf-controller ARGS --api API` with the token in `token`, ended after `timeout`.
pub fn cli(
    bins: &Binaries,
    api: &str,
    token: &Path,
    args: &[&str],
    timeout: Duration,
) -> anyhow::Result<Output> {
    let mut cmd = Command::new(bins.path("mobiwf-controller"));
    cmd.args(args)
        .args(["--api", api])
        .env("MOBIWF_TOKEN_FILE", token);
    run(&mut cmd, timeout)
}

/// How to start a node.
#[derive(Debug, Clone)]
pub struct NodeSpec {
    /// Its data directory.
    pub dir: PathBuf,
    /// Its name (a workflow partner's).
    pub name: String,
    /// Its skills, e.g. `1,2,3`.
    pub skills: String,
    /// The controller's address.
    pub controller: String,
    /// The controller's join token.
    pub join_token: PathBuf,
    /// The IP address it listens and serves its API on.
    pub ip: String,
    /// The network namespace it runs in.
    pub netns: Option<String>,
}

/// A `mobiwf-node run` process.
pub struct Node {
    /// How it is started.
    pub spec: NodeSpec,
    /// Where it listens (its address without its peer id).
    listen: String,
    /// Its libp2p address.
    pub address: String,
    /// Its HTTP API (HOST:PORT; a new port at each start).
    pub api: String,
    bins: Binaries,
    daemon: Option<Daemon>,
}

impl Node {
    /// Starts a node on a free port of its address.
    pub fn start(bins: &Binaries, spec: NodeSpec) -> anyhow::Result<Node> {
        let mut node = Node {
            listen: format!("/ip4/{}/tcp/0", spec.ip),
            spec,
            address: String::new(),
            api: String::new(),
            bins: bins.clone(),
            daemon: None,
        };
        node.spawn()?;
        Ok(node)
    }

    fn spawn(&mut self) -> anyhow::Result<()> {
        let s = &self.spec;
        let args = args::NodeRun {
            dir: &s.dir,
            controller: &s.controller,
            name: &s.name,
            skills: &s.skills,
            listen: &self.listen,
            api: &format!("{}:0", s.ip),
            join_token_file: Some(&s.join_token),
            commands: &["any".to_owned()],
            extra: &[],
        }
        .args();
        let program = self.bins.path("mobiwf-node");
        let name = format!("node {}", s.name);
        let (daemon, address, api) =
            start_daemon(&name, &program, &args, &s.dir, s.netns.as_deref())?;
        self.listen = listen_part(&address);
        self.address = address;
        self.api = api;
        self.daemon = Some(daemon);
        Ok(())
    }

    /// The daemon, while it runs.
    pub fn daemon(&mut self) -> Option<&mut Daemon> {
        self.daemon.as_mut()
    }

    /// SIGKILLs it (the commands it started go on: they are in their own process group).
    pub fn kill(&mut self) {
        self.daemon = None;
    }

    /// Starts it again on the same data directory and address.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.kill();
        self.spawn()
    }

    /// Starts it again on the same data directory on another port (a device that came back
    /// from elsewhere); its new address.
    pub fn restart_elsewhere(&mut self) -> anyhow::Result<String> {
        self.kill();
        let old = self.address.clone();
        self.listen = format!("/ip4/{}/tcp/0", self.spec.ip);
        self.spawn()?;
        if self.address == old {
            bail!("node {} came back at its old address {old}", self.spec.name);
        }
        Ok(self.address.clone())
    }
}
