//! A network namespace joined to the host by a veth pair, for tests that cut a node's link
//! (`ip link set ... down`) and restore it. Needs root and `ip netns`; [`Netns::create`] says
//! why not otherwise, and the tests skip with that message.

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

/// A network namespace and a veth pair into it, removed when dropped.
pub struct Netns {
    /// The namespace's name (`NodeSpec::netns`).
    pub name: String,
    host_veth: String,
    /// The host's end of the link.
    pub host_ip: String,
    /// The namespace's end of the link.
    pub ns_ip: String,
}

impl Netns {
    /// Creates the namespace; Err when this machine does not allow it.
    pub fn create() -> Result<Netns, String> {
        let pid = std::process::id();
        let n = pid % 200 + 20;
        let ns = Netns {
            name: format!("mobiwf-e2e-{pid}"),
            host_veth: format!("mwh{pid}"),
            host_ip: format!("10.231.{n}.1"),
            ns_ip: format!("10.231.{n}.2"),
        };
        let ns_veth = format!("mwn{pid}");
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
            &format!("{}/30", ns.host_ip),
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
            &format!("{}/30", ns.ns_ip),
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

    /// The namespace, or `None` (with the reason on stderr: the test is skipped) when this
    /// machine does not allow it.
    pub fn create_or_skip() -> Option<Netns> {
        match Netns::create() {
            Ok(net) => Some(net),
            Err(why) => {
                eprintln!(
                    "skipped: cannot set up a network namespace ({why}); needs root and `ip netns`"
                );
                None
            }
        }
    }

    /// The /30 of the link.
    fn subnet(&self) -> String {
        format!(
            "{}.0/30",
            self.host_ip.rsplit_once('.').map_or("", |(net, _)| net)
        )
    }

    /// Takes the link down (`false`) or up (`true`).
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
