//! The namespaced node's network: a network namespace joined to the host by a veth link, whose
//! link the nemesis cuts and restores (as `tests/harness/netns.rs` does for the end-to-end
//! tests). Needs root and `ip netns`; [`Netns::create`] says why not.

use std::process::Command;
use std::time::Duration;

use anyhow::bail;

use crate::daemon::run;

/// The metric of the fallback route of the namespace's subnet (above the link's own).
const FALLBACK_METRIC: &str = "4000";

/// Runs `ip ARGS`; Err with its stderr when it fails.
fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = run(Command::new("ip").args(args), Duration::from_secs(30))?;
    if out.code != Some(0) {
        bail!("ip {}: {}", args.join(" "), out.stderr.trim());
    }
    Ok(())
}

/// A network namespace and a veth pair into it, removed when dropped: the host end is `.1` of
/// a /24, the namespace's end `.2`.
pub struct Netns {
    /// The namespace's name (for `ip netns exec`).
    pub name: String,
    host_veth: String,
    /// The host's address on the link.
    pub host_ip: String,
    /// The namespace's address on the link.
    pub ns_ip: String,
}

impl Netns {
    /// Creates the namespace; Err when this machine does not allow it.
    pub fn create() -> anyhow::Result<Netns> {
        let pid = std::process::id();
        let n = pid % 200 + 20;
        let ns_veth = format!("mwcn{pid}");
        let name = format!("mobiwf-chaos-{pid}");
        let out = Command::new("ip").args(["netns", "add", &name]).output();
        match out {
            Ok(out) if out.status.success() => {}
            Ok(out) => bail!(
                "ip netns add: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => bail!("cannot run ip: {e}"),
        }
        // From here on, Drop cleans up.
        let ns = Netns {
            name: name.clone(),
            host_veth: format!("mwch{pid}"),
            host_ip: format!("10.232.{n}.1"),
            ns_ip: format!("10.232.{n}.2"),
        };
        let exec = |args: &[&str]| {
            let mut all = vec!["netns", "exec", name.as_str(), "ip"];
            all.extend_from_slice(args);
            ip(&all)
        };
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
        exec(&["addr", "add", &format!("{}/24", ns.ns_ip), "dev", &ns_veth])?;
        exec(&["link", "set", &ns_veth, "up"])?;
        exec(&["link", "set", "lo", "up"])?;
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

    /// Cuts (`false`) or restores (`true`) the link.
    pub fn link(&self, up: bool) -> anyhow::Result<()> {
        ip(&[
            "link",
            "set",
            &self.host_veth,
            if up { "up" } else { "down" },
        ])
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
