//! Running the real daemons and commands of the workspace as separate processes: a controller
//! and nodes that are killed when the test ends (even by a panic), command-line calls with a
//! time limit, polling with deadlines, the node's Prometheus metrics, and workflow files.
//!
//! Every helper that waits has a deadline and panics with a message saying what it was
//! waiting for; a panicking test prints the end of each daemon's log as its guard is dropped.
//! (These helpers panic on purpose: they are the assertions of the tests that use them.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt::Display;
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{binary, repo_root};

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

/// Starts a daemon that publishes `address` and `api` in `dir`, and waits for them.
fn start_publishing(
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

/// A `mobiwf-controller serve` process.
pub struct Controller {
    /// Its data directory.
    pub dir: PathBuf,
    /// Its libp2p address (ending in `/p2p/<peer id>`), what nodes get as `--controller`.
    pub address: String,
    /// Its HTTP API (HOST:PORT).
    pub api: String,
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
            daemon,
            extra,
        }
    }

    fn spawn(dir: &Path, listen: &str, extra: &[String]) -> (Daemon, String, String) {
        let mut args: Vec<String> = vec![
            "serve".into(),
            "--data-dir".into(),
            dir.display().to_string(),
            "--listen".into(),
            listen.into(),
            "--api".into(),
            "127.0.0.1:0".into(),
        ];
        args.extend(extra.iter().cloned());
        start_publishing(
            "controller",
            &binary("mobiwf-controller").unwrap(),
            &args,
            dir,
            None,
        )
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

    /// Runs `mobiwf-controller ARGS --api API`.
    pub fn cli(&self, args: &[&str], timeout: Duration) -> CmdOutput {
        run(
            Command::new(binary("mobiwf-controller").unwrap())
                .args(args)
                .args(["--api", &self.api]),
            timeout,
        )
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
        self.daemon.check_alive();
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
        }
    }
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
        spec.listen = listen_part(&address);
        Node {
            spec,
            address,
            api,
            daemon,
        }
    }

    fn spawn(spec: &NodeSpec) -> (Daemon, String, String) {
        let args: Vec<String> = vec![
            "run".into(),
            "--data-dir".into(),
            spec.dir.display().to_string(),
            "--controller".into(),
            spec.controller.clone(),
            "--name".into(),
            spec.name.clone(),
            "--skills".into(),
            spec.skills.clone(),
            "--listen".into(),
            spec.listen.clone(),
            "--api".into(),
            spec.api.clone(),
        ];
        start_publishing(
            &format!("node {}", spec.name),
            &binary("mobiwf-node").unwrap(),
            &args,
            &spec.dir,
            spec.netns.as_deref(),
        )
    }

    /// SIGKILLs the node (the commands it started go on: they are in their own process group).
    pub fn kill(&mut self) {
        self.daemon.kill();
    }

    /// Sends a signal to the node process: `STOP` stalls it (its connections stay open but
    /// nothing answers), `CONT` lets it go on.
    pub fn signal(&self, signal: &str) {
        self.daemon.signal(signal);
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

    /// Runs `mobiwf-node ARGS --data-dir DIR`.
    pub fn cli(&self, args: &[&str]) -> CmdOutput {
        run(&mut self.command(args), CLI_TIMEOUT)
    }

    /// The command `mobiwf-node ARGS --data-dir DIR`, not started (see [`run_together`]).
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary("mobiwf-node").unwrap());
        cmd.args(args).arg("--data-dir").arg(&self.spec.dir);
        cmd
    }

    /// The version of the organisation directory the node holds (`GET /directory`), or
    /// `None` when it cannot be read.
    pub fn directory_version(&self) -> Option<u64> {
        let body = http_get(&self.api, "/directory").ok()?;
        serde_json::from_str::<Value>(&body).ok()?["version"].as_u64()
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
        self.daemon.check_alive();
    }
}

/// A plain HTTP/1.1 GET of `path` on `addr` (HOST:PORT); the body on a 2xx answer.
pub fn http_get(addr: &str, path: &str) -> Result<String, String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let sock = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("{addr}: no address"))?;
    let mut stream = TcpStream::connect_timeout(&sock, Duration::from_secs(5))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("write to {addr}: {e}"))?;
    let mut raw = String::new();
    stream
        .read_to_string(&mut raw)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no HTTP answer: {raw:?}"))?;
    let status = head.split_whitespace().nth(1).unwrap_or("");
    if !status.starts_with('2') {
        return Err(format!("GET {path} on {addr}: {head}"));
    }
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Ok(dechunk(body));
    }
    Ok(body.to_owned())
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// The sum of the samples of metric `name` (e.g. `mobiwf_send_failures_total`) whose labels
/// include every one of `labels`, in a Prometheus text page. 0 when there are none.
pub fn metric(page: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut total = 0.0;
    for line in page.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some((series, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let (metric_name, label_text) = match series.split_once('{') {
            Some((n, rest)) => (n, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        if metric_name != name {
            continue;
        }
        let matches = labels.iter().all(|(k, v)| {
            label_text
                .split(',')
                .any(|pair| pair == format!("{k}=\"{v}\""))
        });
        if matches {
            total += value.parse::<f64>().unwrap_or(0.0);
        }
    }
    total
}

/// The paper's example workflow (`examples/paper/workflow.xml`) with `extra(activity id)`
/// inserted in each `<activity>` (e.g. `<command>...</command>` or `<kind>manual</kind>`).
pub fn paper_workflow_with(extra: impl Fn(u64) -> String) -> String {
    let text = std::fs::read_to_string(repo_root().join("examples/paper/workflow.xml")).unwrap();
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("<activity id=\"") {
        let after = &rest[start + "<activity id=\"".len()..];
        let id: u64 = after[..after.find('"').unwrap()].parse().unwrap();
        let end = start + rest[start..].find("</activity>").unwrap();
        out.push_str(&rest[..end]);
        out.push_str("  ");
        out.push_str(&extra(id));
        out.push_str("\n    ");
        rest = &rest[end..];
        // Move past this closing tag.
        out.push_str("</activity>");
        rest = &rest["</activity>".len()..];
    }
    out.push_str(rest);
    out
}

/// Escapes text for XML element content.
pub fn xml_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Checks an instance's `status --json`: every activity in state `succeeded`, and each on the
/// node `expected` names for it (activity id, node name).
pub fn assert_all_succeeded(status: &Value, expected: &[(u64, &str)]) {
    assert_eq!(
        status["state"], "succeeded",
        "instance not succeeded:\n{status:#}"
    );
    let acts = status["activities"].as_array().expect("activities array");
    assert_eq!(acts.len(), expected.len(), "activities:\n{status:#}");
    for (id, node) in expected {
        let a = acts
            .iter()
            .find(|a| a["id"].as_u64() == Some(*id))
            .unwrap_or_else(|| panic!("no activity {id} in:\n{status:#}"));
        assert_eq!(a["state"], "succeeded", "activity {id}:\n{status:#}");
        assert_eq!(a["node"], *node, "activity {id} ran elsewhere:\n{status:#}");
    }
}

/// The paper's placement: 16, 17 and 18 on P1; 19 and 20 on P2.
pub const PAPER_PLACEMENT: [(u64, &str); 5] =
    [(16, "P1"), (17, "P1"), (18, "P1"), (19, "P2"), (20, "P2")];

/// Starts a node per (name, skills) on loopback, with data in `dir/<name in lower case>`, and
/// waits until all are registered with `controller`.
pub fn start_nodes(dir: &Path, controller: &Controller, nodes: &[(&str, &str)]) -> Vec<Node> {
    let started: Vec<Node> = nodes
        .iter()
        .map(|(name, skills)| {
            Node::start(NodeSpec::loopback(
                &dir.join(name.to_lowercase()),
                name,
                skills,
                &controller.address,
            ))
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
    let mut nodes = start_nodes(dir, &controller, &[("P1", "1,2,3"), ("P2", "1,3")]).into_iter();
    let (Some(p1), Some(p2)) = (nodes.next(), nodes.next()) else {
        unreachable!("two nodes were started")
    };
    (controller, p1, p2)
}
