//! A real etcd for the cluster tests: the `etcd` binary (Debian's `etcd-server`, installed by
//! `scripts/setup`) on free loopback ports with a data directory of the test's. Without the
//! binary a test skips, unless [`REQUIRE_ETCD`] is `1` (CI sets it), where it fails: a skip
//! passes in cargo's summary, and CI must not pass having run none of them. Each skip is
//! also listed in the file [`super::SKIP_LOG`] names, for `scripts/test`'s summary.

use std::collections::BTreeSet;
use std::hash::{BuildHasher as _, RandomState};
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use super::process::{or_panic, program};
use super::{Daemon, STARTUP, skip, wait_for};

/// The environment variable that turns an etcd test's skip into a failure when `1`.
pub const REQUIRE_ETCD: &str = "MOBIWF_REQUIRE_ETCD";

/// An etcd on fixed loopback ports with its data directory: running, or stopped (planned
/// before it starts, or killed to be started again); killed when dropped.
pub struct Etcd {
    /// Its client URL (`http://127.0.0.1:PORT`).
    pub url: String,
    client: u16,
    peer: u16,
    dir: std::path::PathBuf,
    daemon: Option<Daemon>,
}

/// A free loopback port for etcd to bind later: bound here, then let go, and never handed out
/// twice by this process. It comes from below the kernel's ephemeral range: a port from that
/// range (what binding port 0 gives) can be taken, before etcd binds it, as the local end of
/// any outgoing connection on the machine, and the cluster tests make many.
pub(super) fn free_port() -> u16 {
    static HANDED_OUT: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());
    let (from, count) = outside_ephemeral_range();
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    // From a random place in the range (test processes after one another start apart), the
    // first port that binds.
    let start = RandomState::new().hash_one(std::process::id()) % u64::from(count);
    let port = (0..u64::from(count))
        .map(|i| from + ((start + i) % u64::from(count)) as u16)
        .find(|port| !handed_out.contains(port) && TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .expect("a free loopback port outside the ephemeral range");
    handed_out.insert(port);
    port
}

/// The ports to choose from, (first, how many): below the kernel's ephemeral range, or above
/// it when it starts low; nearly all ports when it covers nearly all (then a clash is a chance
/// taken).
fn outside_ephemeral_range() -> (u16, u16) {
    let range: Vec<u16> = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    let (low, high) = match range[..] {
        [low, high] => (low, high),
        _ => (32_768, 60_999),
    };
    if low > 12_000 {
        (10_000, low - 10_000)
    } else if high < 63_000 {
        (high + 1, u16::MAX - high)
    } else {
        (10_000, 22_768)
    }
}

/// True when etcd at `port` says it is healthy.
pub(super) fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}

/// How to start one etcd member (of a cluster of one, or of several).
pub(super) struct EtcdMember<'a> {
    pub name: &'a str,
    pub data: &'a Path,
    pub log: &'a Path,
    pub client: u16,
    pub peer: u16,
    /// `--initial-cluster`: `name=peer URL` of every member, this one too.
    pub initial_cluster: &'a str,
    /// Joining a cluster that runs (`--initial-cluster-state existing`), not starting one.
    pub existing: bool,
}

/// Spawns etcd as `member` says, on loopback (not waiting for it to be healthy).
pub(super) fn spawn_member(member: &EtcdMember<'_>) -> Daemon {
    let client_url = format!("http://127.0.0.1:{}", member.client);
    let peer_url = format!("http://127.0.0.1:{}", member.peer);
    let args: Vec<String> = [
        "--name",
        member.name,
        "--data-dir",
        &member.data.display().to_string(),
        "--listen-client-urls",
        &client_url,
        "--advertise-client-urls",
        &client_url,
        "--listen-peer-urls",
        &peer_url,
        "--initial-advertise-peer-urls",
        &peer_url,
        "--initial-cluster",
        member.initial_cluster,
        "--initial-cluster-state",
        if member.existing { "existing" } else { "new" },
        // etcd's own limits on a transaction (128 operations, 1.5 MiB), as an operator's
        // etcd has them: the controller cuts a larger group commit to fit.
        "--auto-compaction-mode",
        "periodic",
        "--auto-compaction-retention",
        "1h",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let path = std::path::PathBuf::from("etcd");
    let program = program("etcd", &path, &args, None);
    or_panic(Daemon::spawn(&program, member.log))
}

impl Etcd {
    /// Starts etcd with its data in `dir`, or `None` when there is no `etcd` binary: the
    /// test is skipped (the reason on stderr and in [`super::SKIP_LOG`]'s file), or fails when
    /// [`REQUIRE_ETCD`] is `1`.
    pub fn start_or_skip(dir: &Path) -> Option<Etcd> {
        let mut etcd = Etcd::planned_or_skip(dir)?;
        etcd.start();
        Some(etcd)
    }

    /// An etcd not started yet, its ports chosen (a controller may be told its URL first),
    /// or `None` as [`Etcd::start_or_skip`].
    pub fn planned_or_skip(dir: &Path) -> Option<Etcd> {
        if !etcd_or_skip() {
            return None;
        }
        std::fs::create_dir_all(dir).unwrap();
        let (client, peer) = (free_port(), free_port());
        Some(Etcd {
            url: format!("http://127.0.0.1:{client}"),
            client,
            peer,
            dir: dir.to_owned(),
            daemon: None,
        })
    }

    /// Starts it (again, on the same ports and data) and waits until it is healthy.
    pub fn start(&mut self) {
        assert!(self.daemon.is_none(), "etcd is running already");
        let peer_url = format!("http://127.0.0.1:{}", self.peer);
        let mut daemon = spawn_member(&EtcdMember {
            name: "test",
            data: &self.dir.join("data"),
            log: &self.dir.join("etcd.log"),
            client: self.client,
            peer: self.peer,
            initial_cluster: &format!("test={peer_url}"),
            existing: false,
        });
        let client = self.client;
        wait_for("etcd to be healthy", STARTUP, || {
            or_panic(daemon.check_alive());
            healthy(client).then_some(())
        });
        self.daemon = Some(daemon);
    }

    /// Kills it (SIGKILL); [`Etcd::start`] starts it again with its data.
    pub fn stop(&mut self) {
        if let Some(mut daemon) = self.daemon.take() {
            daemon.kill();
        }
    }

    /// Panics, showing its log, if etcd has exited.
    pub fn check_alive(&mut self) {
        or_panic(
            self.daemon
                .as_mut()
                .expect("etcd was not started")
                .check_alive(),
        );
    }
}

/// Whether there is an `etcd` binary; without one the test is skipped (or fails when
/// [`REQUIRE_ETCD`] is `1`), as [`Etcd::start_or_skip`] says.
pub fn etcd_or_skip() -> bool {
    let found = Command::new("etcd")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip(
            REQUIRE_ETCD,
            "there is no etcd binary (Debian's etcd-server; scripts/setup installs it)",
        );
    }
    found
}
