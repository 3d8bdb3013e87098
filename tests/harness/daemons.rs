//! The controller and node daemons of a test, and the paper's mesh of them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mobiwf_testkit::args;
use mobiwf_testkit::process::spawn_publishing;
use serde_json::Value;

use super::process::{
    CmdOutput, Daemon, listen_part, or_panic, program, run, start_publishing, wait_published,
};
use super::{CLI_TIMEOUT, STARTUP, http_get, remember_api_token, wait_for};
use crate::binary;

/// A `mobiwf-controller serve` process.
pub struct Controller {
    /// Its data directory.
    pub dir: PathBuf,
    /// Its libp2p address (ending in `/p2p/<peer id>`), what nodes get as `--controller`.
    pub address: String,
    /// Its HTTP API (HOST:PORT, or https://HOST:PORT when it serves with `--tls-cert`).
    pub api: String,
    /// The CA its CLI calls trust (`MOBIWF_API_CA`), for a controller serving over TLS.
    pub api_ca: Option<PathBuf>,
    daemon: Daemon,
    extra: Vec<String>,
}

impl Controller {
    /// Starts a controller with data in `dir`, listening on `listen` (e.g.
    /// `/ip4/127.0.0.1/tcp/0`), its API on a free loopback port.
    pub fn start(dir: &Path, listen: &str) -> Controller {
        Controller::start_with(dir, listen, &[])
    }

    /// Like [`Controller::start`], with more `serve` options (e.g. `--suspect-after 2`), kept
    /// for restarts.
    pub fn start_with(dir: &Path, listen: &str, extra: &[&str]) -> Controller {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let (daemon, address, api) = Self::spawn(dir, listen, &extra);
        Controller {
            dir: dir.to_owned(),
            address,
            api,
            api_ca: None,
            daemon,
            extra,
        }
    }

    fn spawn(dir: &Path, listen: &str, extra: &[String]) -> (Daemon, String, String) {
        let args = args::serve(dir, listen, extra);
        let path = binary("mobiwf-controller").unwrap();
        let (daemon, address, api) =
            start_publishing(&program("controller", &path, &args, None), dir);
        remember_join_token(&address, dir);
        remember_api_token(&api, &dir.join("operator.token"));
        (daemon, address, api)
    }

    /// Starts a controller that publishes its `address` and `api` only later: one of a
    /// cluster (`serve --etcd`) waiting to own the book. Its API is on a free loopback port.
    pub fn start_standby(dir: &Path, listen: &str, extra: &[&str]) -> Standby {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let args = args::serve(dir, listen, &extra);
        let path = binary("mobiwf-controller").unwrap();
        let program = program("controller", &path, &args, None);
        Standby {
            dir: dir.to_owned(),
            daemon: or_panic(spawn_publishing(&program, dir)),
            extra,
        }
    }

    /// Sends a signal (`STOP`, `CONT`, ...) to the controller.
    pub fn signal(&self, signal: &str) {
        or_panic(self.daemon.signal(signal));
    }

    /// Waits up to `timeout` for the controller to exit by itself; its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        or_panic(self.daemon.wait_exit(timeout))
    }

    /// The end of its log.
    pub fn log_tail(&self, n: usize) -> String {
        self.daemon.log_tail(n)
    }

    /// SIGKILLs the controller.
    pub fn kill(&mut self) {
        self.daemon.kill();
    }

    /// Starts it again on the same data directory and libp2p address (a new API port).
    pub fn restart(&mut self) {
        self.daemon.kill();
        let listen = listen_part(&self.address);
        let (daemon, address, api) = Self::spawn(&self.dir, &listen, &self.extra);
        assert_eq!(
            address, self.address,
            "the restarted controller has another address"
        );
        self.daemon = daemon;
        self.api = api;
    }

    /// Runs `mobiwf-controller ARGS --api API`, with the administrator's token
    /// (`MOBIWF_TOKEN_FILE=DIR/operator.token`) and, when it has one, the CA to trust
    /// (`MOBIWF_API_CA`).
    pub fn cli(&self, args: &[&str], timeout: Duration) -> CmdOutput {
        let mut cmd = Command::new(binary("mobiwf-controller").unwrap());
        cmd.args(args)
            .args(["--api", &self.api])
            .env("MOBIWF_TOKEN_FILE", self.token_file());
        if let Some(ca) = &self.api_ca {
            cmd.env("MOBIWF_API_CA", ca);
        }
        run(&mut cmd, timeout)
    }

    /// The file holding its administrator's API token.
    pub fn token_file(&self) -> PathBuf {
        self.dir.join("operator.token")
    }

    /// Waits until nodes with every one of `names` are registered.
    pub fn wait_registered(&self, names: &[&str]) {
        wait_for(
            format!("nodes {names:?} to register with the controller"),
            STARTUP,
            || {
                let out = self.cli(&["nodes", "--json"], CLI_TIMEOUT);
                let nodes: Value = serde_json::from_str(&out.stdout).ok()?;
                let have: Vec<&str> = nodes
                    .as_array()?
                    .iter()
                    .filter_map(|n| n["name"].as_str())
                    .collect();
                names.iter().all(|n| have.contains(n)).then_some(())
            },
        );
    }

    /// Submits `file` with the CLI; the new instance's id.
    pub fn submit(&self, file: &Path) -> u64 {
        self.submit_with(file, &[])
    }

    /// Submits `file` with more `submit` options (e.g. `--responsible dave`); the new
    /// instance's id.
    pub fn submit_with(&self, file: &Path, options: &[&str]) -> u64 {
        let path = file.display().to_string();
        let mut args = vec!["submit", path.as_str()];
        args.extend_from_slice(options);
        let out = self.cli(&args, CLI_TIMEOUT);
        out.expect_code(0, &format!("submit {path} {}", options.join(" ")));
        out.stdout
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("submit printed {:?}, not an id: {e}", out.stdout))
    }

    /// `status ID --json`, parsed.
    pub fn status(&self, id: u64) -> Value {
        let out = self.cli(&["status", &id.to_string(), "--json"], CLI_TIMEOUT);
        out.expect_code(0, "status --json");
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("status --json printed invalid JSON ({e}):\n{}", out.stdout))
    }

    /// `history ID --json`, parsed: the instance's events in the order the controller learnt
    /// them.
    pub fn history(&self, id: u64) -> Vec<Value> {
        let out = self.cli(&["history", &id.to_string(), "--json"], CLI_TIMEOUT);
        out.expect_code(0, "history --json");
        serde_json::from_str::<Value>(&out.stdout)
            .unwrap_or_else(|e| {
                panic!("history --json printed invalid JSON ({e}):\n{}", out.stdout)
            })
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("history --json printed no array:\n{}", out.stdout))
    }

    /// `wait ID --timeout SECS`: its exit code and output.
    pub fn wait(&self, id: u64, secs: u64) -> CmdOutput {
        self.cli(
            &["wait", &id.to_string(), "--timeout", &secs.to_string()],
            Duration::from_secs(secs + 30),
        )
    }

    /// Panics, showing the log, if the process has exited.
    pub fn check_alive(&mut self) {
        or_panic(self.daemon.check_alive());
    }
}

/// A controller started before it publishes where it is ([`Controller::start_standby`]).
pub struct Standby {
    dir: PathBuf,
    daemon: Daemon,
    extra: Vec<String>,
}

impl Standby {
    /// Waits up to `timeout` until it publishes its `address` and `api` (it owns the book),
    /// then it is a controller like any other.
    pub fn ready(mut self, timeout: Duration) -> Controller {
        let (address, api) = wait_published(&mut self.daemon, &self.dir, timeout);
        remember_join_token(&address, &self.dir);
        remember_api_token(&api, &self.dir.join("operator.token"));
        Controller {
            dir: self.dir,
            address,
            api,
            api_ca: None,
            daemon: self.daemon,
            extra: self.extra,
        }
    }

    /// Panics, showing its log, if it has exited.
    pub fn check_alive(&mut self) {
        or_panic(self.daemon.check_alive());
    }

    /// Whether it has published its `address` and `api` (it owns the book), without waiting.
    pub fn published(&self) -> bool {
        self.dir.join("address").exists() && self.dir.join("api").exists()
    }

    /// The end of its log.
    pub fn log_tail(&self, n: usize) -> String {
        self.daemon.log_tail(n)
    }
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
    /// The controller's full address.
    pub controller: String,
    /// Where to listen for peers.
    pub listen: String,
    /// Where to serve its API.
    pub api: String,
    /// The network namespace to run it in.
    pub netns: Option<String>,
    /// More options of `mobiwf-node run` (e.g. `--hour-ms 100`, `--no-prefetch`).
    pub extra: Vec<String>,
    /// Its `--commands` (the tests' workflows run commands: `any` unless a test says).
    pub commands: Vec<String>,
    /// The join token file it presents (`--join-token-file`): the controller's own
    /// `join.token` when the harness started that controller; `None` for a node that joins
    /// without one.
    pub join_token_file: Option<PathBuf>,
}

impl NodeSpec {
    /// A node on loopback with free ports.
    pub fn loopback(dir: &Path, name: &str, skills: &str, controller: &str) -> NodeSpec {
        NodeSpec {
            dir: dir.to_owned(),
            name: name.to_owned(),
            skills: skills.to_owned(),
            controller: controller.to_owned(),
            listen: "/ip4/127.0.0.1/tcp/0".to_owned(),
            api: "127.0.0.1:0".to_owned(),
            netns: None,
            extra: Vec::new(),
            commands: vec!["any".to_owned()],
            join_token_file: join_token_of(controller),
        }
    }
}

/// The join token files of the controllers this test started, by their address.
static JOIN_TOKENS: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());

fn remember_join_token(address: &str, dir: &Path) {
    let mut known = JOIN_TOKENS.lock().unwrap();
    known.retain(|(a, _)| a != address);
    known.push((address.to_owned(), dir.join("join.token")));
}

/// The join token file of the controller at `address`, if this test started it.
pub fn join_token_of(address: &str) -> Option<PathBuf> {
    let known = JOIN_TOKENS.lock().unwrap();
    known
        .iter()
        .find(|(a, _)| a == address)
        .map(|(_, f)| f.clone())
}

/// A `mobiwf-node run` process.
pub struct Node {
    /// How it was started (`listen` is its actual address once started).
    pub spec: NodeSpec,
    /// Its libp2p address (ending in `/p2p/<peer id>`).
    pub address: String,
    /// Its HTTP API (HOST:PORT).
    pub api: String,
    daemon: Daemon,
}

impl Node {
    /// Starts a node and waits until it published its addresses.
    pub fn start(spec: NodeSpec) -> Node {
        let (daemon, address, api) = Self::spawn(&spec);
        let mut spec = spec;
        // A node behind a relay publishes its circuit: where it listens stays as given.
        if !address.contains("/p2p-circuit") {
            spec.listen = listen_part(&address);
        }
        Node {
            spec,
            address,
            api,
            daemon,
        }
    }

    fn spawn(spec: &NodeSpec) -> (Daemon, String, String) {
        let args = args::NodeRun {
            dir: &spec.dir,
            controller: &spec.controller,
            name: &spec.name,
            skills: &spec.skills,
            listen: &spec.listen,
            api: &spec.api,
            join_token_file: spec.join_token_file.as_deref(),
            commands: &spec.commands,
            extra: &spec.extra,
        }
        .args();
        let name = format!("node {}", spec.name);
        let path = binary("mobiwf-node").unwrap();
        let program = program(&name, &path, &args, spec.netns.as_deref());
        let (daemon, address, api) = start_publishing(&program, &spec.dir);
        remember_api_token(&api, &spec.dir.join("api.token"));
        (daemon, address, api)
    }

    /// The last `n` lines of the node's log.
    pub fn log_tail(&self, n: usize) -> String {
        self.daemon.log_tail(n)
    }

    /// SIGKILLs the node (the commands it started go on: they are in their own process group).
    pub fn kill(&mut self) {
        self.daemon.kill();
    }

    /// Sends a signal to the node process: `STOP` stalls it (its connections stay open but
    /// nothing answers), `CONT` lets it go on.
    pub fn signal(&self, signal: &str) {
        or_panic(self.daemon.signal(signal));
    }

    /// Starts it again on the same data directory and libp2p address.
    pub fn restart(&mut self) {
        self.daemon.kill();
        let (daemon, address, api) = Self::spawn(&self.spec);
        assert_eq!(
            address, self.address,
            "the restarted node {} has another address",
            self.spec.name
        );
        self.daemon = daemon;
        self.api = api;
    }

    /// Starts it again on the same data directory (same peer id) listening on `listen` (and
    /// serving its API on `api`): a device that came back from elsewhere. Returns its new
    /// address, which differs from the old one.
    pub fn restart_on(&mut self, listen: &str, api: &str) -> String {
        self.daemon.kill();
        self.spec.listen = listen.to_owned();
        self.spec.api = api.to_owned();
        let (daemon, address, api) = Self::spawn(&self.spec);
        assert_ne!(
            address, self.address,
            "the node {} came back at its old address",
            self.spec.name
        );
        self.spec.listen = listen_part(&address);
        self.daemon = daemon;
        self.address = address.clone();
        self.api = api;
        address
    }

    /// Runs `mobiwf-node ARGS --data-dir DIR`.
    pub fn cli(&self, args: &[&str]) -> CmdOutput {
        run(&mut self.command(args), CLI_TIMEOUT)
    }

    /// The command `mobiwf-node ARGS --data-dir DIR`, not started (see [`run_together`]); in
    /// the node's network namespace when it runs in one (its user's command runs on the
    /// device, and reaches its API while the device's link is cut).
    pub fn command(&self, args: &[&str]) -> Command {
        let binary = binary("mobiwf-node").unwrap();
        let mut cmd = match &self.spec.netns {
            Some(ns) => {
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", ns]).arg(binary);
                cmd
            }
            None => Command::new(binary),
        };
        cmd.args(args).arg("--data-dir").arg(&self.spec.dir);
        cmd
    }

    /// The version of the organisation directory the node holds (`GET /directory`), or
    /// `None` when it cannot be read.
    pub fn directory_version(&self) -> Option<u64> {
        let body = http_get(&self.api, "/directory").ok()?;
        serde_json::from_str::<Value>(&body).ok()?["version"].as_u64()
    }

    /// Its record of one activity (from its `/runs`), if it has one yet.
    pub fn run_record(&self, instance: u64, activity: u64) -> Option<Value> {
        let path = format!("/runs?instance={instance}");
        let page: Value = serde_json::from_str(&http_get(&self.api, &path).ok()?).ok()?;
        page["runs"]
            .as_array()?
            .iter()
            .filter(|r| r["instance"].as_u64() == Some(instance))
            .flat_map(|r| r["activities"].as_array().cloned().unwrap_or_default())
            .find(|a| a["activity"].as_u64() == Some(activity))
    }

    /// Its state of one activity (from its `/runs`), if it has one yet.
    pub fn state_of(&self, instance: u64, activity: u64) -> Option<String> {
        self.run_record(instance, activity)
            .and_then(|a| a["state"].as_str().map(str::to_owned))
    }

    /// The worklist, as JSON.
    pub fn worklist(&self) -> Value {
        let out = self.cli(&["worklist", "--json"]);
        out.expect_code(0, "worklist --json");
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("worklist --json: {e}:\n{}", out.stdout))
    }

    /// Its `/metrics` page, or why it could not be read.
    pub fn metrics(&self) -> Result<String, String> {
        http_get(&self.api, "/metrics")
    }

    /// Panics, showing the log, if the process has exited.
    pub fn check_alive(&mut self) {
        or_panic(self.daemon.check_alive());
    }
}

/// The paper's placement: 16, 17 and 18 on P1; 19 and 20 on P2.
pub const PAPER_PLACEMENT: [(u64, &str); 5] =
    [(16, "P1"), (17, "P1"), (18, "P1"), (19, "P2"), (20, "P2")];

/// Starts a node per (name, skills) on loopback, with data in `dir/<name in lower case>`, and
/// waits until all are registered with `controller`.
pub fn start_nodes(dir: &Path, controller: &Controller, nodes: &[(&str, &str)]) -> Vec<Node> {
    start_nodes_with(dir, controller, nodes, &[])
}

/// [`start_nodes`], each node with these more options of `mobiwf-node run`.
pub fn start_nodes_with(
    dir: &Path,
    controller: &Controller,
    nodes: &[(&str, &str)],
    extra: &[&str],
) -> Vec<Node> {
    let started: Vec<Node> = nodes
        .iter()
        .map(|(name, skills)| {
            let mut spec = NodeSpec::loopback(
                &dir.join(name.to_lowercase()),
                name,
                skills,
                &controller.address,
            );
            spec.extra = extra.iter().map(|s| (*s).to_owned()).collect();
            Node::start(spec)
        })
        .collect();
    let names: Vec<&str> = nodes.iter().map(|(name, _)| *name).collect();
    controller.wait_registered(&names);
    started
}

/// A controller and the paper's partners P1 (skills 1, 2, 3) and P2 (skills 1, 3), on loopback
/// with data under `dir`, registered.
pub fn paper_mesh(dir: &Path) -> (Controller, Node, Node) {
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let (p1, p2) = paper_partners(dir, &controller);
    (controller, p1, p2)
}

/// The paper's partners P1 (skills 1, 2, 3) and P2 (1, 3) on loopback, with data in `dir/p1`
/// and `dir/p2`, registered with `controller`.
pub fn paper_partners(dir: &Path, controller: &Controller) -> (Node, Node) {
    let mut nodes = start_nodes(dir, controller, &[("P1", "1,2,3"), ("P2", "1,3")]).into_iter();
    let (Some(p1), Some(p2)) = (nodes.next(), nodes.next()) else {
        unreachable!("two nodes were started")
    };
    (p1, p2)
}
