//! A network namespace joined to the host by a veth link, for tests where a link is cut and
//! restored, or a node moves to another address. Needs root and `ip netns`: [`Netns::create`]
//! says why not. A test then skips, unless [`REQUIRE_NETNS`] is `1` (CI sets it), where it
//! fails: a skip passes in cargo's summary, and CI must not pass having run none of them.
//! Each skip is also listed in the file [`SKIP_LOG`] names, for `scripts/test`'s summary.

use std::io::Write;
use std::process::Command;

use super::{CLI_TIMEOUT, run};

/// The metric of the fallback route of the namespace's subnet (above the link's own).
const FALLBACK_METRIC: &str = "4000";

/// Runs `ip ARGS`; Err with its stderr when it fails.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = run(Command::new("ip").args(args), CLI_TIMEOUT);
    if out.code == Some(0) {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), out.stderr.trim()))
    }
}

/// A network namespace and a veth pair into it, removed when dropped. The link's subnet is
/// a /24: the host end is `.1`, the namespace's first address `.2`; [`Netns::move_to`] gives
/// the namespace another one (a device that moved).
pub struct Netns {
    /// The namespace's name (for `ip netns exec`, a node's `--netns`).
    pub name: String,
    host_veth: String,
    ns_veth: String,
    /// The host's address on the link.
    pub host_ip: String,
    /// The namespace's address on the link.
    pub ns_ip: String,
}

/// The environment variable that turns a namespace test's skip into a failure when `1`.
pub const REQUIRE_NETNS: &str = "MOBIWF_REQUIRE_NETNS";

/// The environment variable naming a file each skipped test appends a line to.
pub const SKIP_LOG: &str = "MOBIWF_SKIP_LOG";

impl Netns {
    /// The namespace, or `None` when this machine does not allow it: the test is skipped
    /// (the reason on stderr and in [`SKIP_LOG`]'s file), or fails when [`REQUIRE_NETNS`] is
    /// `1`.
    pub fn create_or_skip(tag: &str) -> Option<Netns> {
        let why = match Netns::create(tag) {
            Ok(net) => return Some(net),
            Err(why) => why,
        };
        let what = format!("cannot set up a network namespace ({why}); needs root and `ip netns`");
        assert!(
            std::env::var_os(REQUIRE_NETNS).is_none_or(|v| v != "1"),
            "{what}; {REQUIRE_NETNS}=1 says this test must run, not skip"
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
        None
    }

    /// Creates the namespace; Err when this machine does not allow it. `tag` (a letter or
    /// two) tells apart the namespaces of one test process.
    pub fn create(tag: &str) -> Result<Netns, String> {
        let pid = std::process::id();
        let n = (pid + tag.bytes().map(u32::from).sum::<u32>()) % 200 + 20;
        let ns_veth = format!("mwn{tag}{pid}");
        let ns = Netns {
            name: format!("mobiwf-e2e-{tag}{pid}"),
            host_veth: format!("mwh{tag}{pid}"),
            ns_veth: ns_veth.clone(),
            host_ip: format!("10.231.{n}.1"),
            ns_ip: format!("10.231.{n}.2"),
        };
        match Command::new("ip").args(["netns", "add", &ns.name]).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                return Err(format!(
                    "ip netns add: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Err(e) => return Err(format!("cannot run ip: {e}")),
        }
        // From here on, Drop cleans up.
        let name = ns.name.clone();
        ip(&[
            "link",
            "add",
            &ns.host_veth,
            "type",
            "veth",
            "peer",
            "name",
            &ns_veth,
        ])?;
        ip(&["link", "set", &ns_veth, "netns", &name])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/24", ns.host_ip),
            "dev",
            &ns.host_veth,
        ])?;
        ip(&["link", "set", &ns.host_veth, "up"])?;
        ip(&[
            "netns",
            "exec",
            &name,
            "ip",
            "addr",
            "add",
            &format!("{}/24", ns.ns_ip),
            "dev",
            &ns_veth,
        ])?;
        ip(&["netns", "exec", &name, "ip", "link", "set", &ns_veth, "up"])?;
        ip(&["netns", "exec", &name, "ip", "link", "set", "lo", "up"])?;
        // While the link is down its route is gone: make the namespace's subnet unreachable
        // rather than sent to the default gateway.
        ip(&[
            "route",
            "add",
            "unreachable",
            &ns.subnet(),
            "metric",
            FALLBACK_METRIC,
        ])?;
        Ok(ns)
    }

    /// The /24 of the link.
    fn subnet(&self) -> String {
        format!(
            "{}.0/24",
            self.host_ip.rsplit_once('.').map_or("", |(net, _)| net)
        )
    }

    /// Moves the namespace to another address of the link (`.<host>`): the old one is gone.
    pub fn move_to(&mut self, host: u8) {
        let net = self.subnet();
        let net = net.trim_end_matches(".0/24");
        let new = format!("{net}.{host}");
        let exec = |args: &[&str]| {
            let mut all = vec!["netns", "exec", self.name.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all).unwrap();
        };
        // The old one first: deleting a subnet's primary address deletes its secondaries.
        exec(&[
            "addr",
            "del",
            &format!("{}/24", self.ns_ip),
            "dev",
            &self.ns_veth,
        ]);
        exec(&["addr", "add", &format!("{new}/24"), "dev", &self.ns_veth]);
        self.ns_ip = new;
    }

    /// Cuts (`false`) or restores (`true`) the link.
    pub fn link(&self, up: bool) {
        ip(&[
            "link",
            "set",
            &self.host_veth,
            if up { "up" } else { "down" },
        ])
        .unwrap();
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting one end of a veth pair deletes both.
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_veth])
            .output();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
        let _ = Command::new("ip")
            .args([
                "route",
                "del",
                "unreachable",
                &self.subnet(),
                "metric",
                FALLBACK_METRIC,
            ])
            .output();
    }
}
