//! A network namespace joined to the host by a veth link, for runs where a link is cut and
//! restored, or a device moves to another address. Needs root and `ip netns`:
//! [`Netns::create`] says why not. The end-to-end tests and the chaos run may make theirs at
//! the same time (the test suite runs a chaos run): each [`Scope`] has names and a subnet of
//! its own.

use std::process::Command;
use std::time::Duration;

use anyhow::bail;

use crate::process::run;

/// The metric of the fallback route of the namespace's subnet (above the link's own).
const FALLBACK_METRIC: &str = "4000";

/// How long one `ip` call may take.
const IP_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs `ip ARGS`; Err with its stderr when it fails.
pub fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = run(Command::new("ip").args(args), IP_TIMEOUT)?;
    if out.code != Some(0) {
        bail!("ip {}: {}", args.join(" "), out.stderr.trim());
    }
    Ok(())
}

/// Whose namespaces: what tells them apart from another's made at the same time.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// The namespaces' names start `mobiwf-<this>-`.
    pub name: &'static str,
    /// The veth devices' names start `mw<this>h` (host end) and `mw<this>n` (namespace end).
    pub veth: &'static str,
    /// The second byte of the links' subnets, `10.<this>.x.0/24`.
    pub net: u8,
}

/// The end-to-end tests' namespaces.
pub const E2E: Scope = Scope {
    name: "e2e",
    veth: "",
    net: 231,
};

/// The chaos run's namespace.
pub const CHAOS: Scope = Scope {
    name: "chaos",
    veth: "c",
    net: 232,
};

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

impl Netns {
    /// Creates a namespace of `scope`; Err when this machine does not allow it. `tag` (a
    /// letter or two, or nothing) tells apart the namespaces of one process.
    pub fn create(scope: Scope, tag: &str) -> anyhow::Result<Netns> {
        let pid = std::process::id();
        let n = (pid + tag.bytes().map(u32::from).sum::<u32>()) % 200 + 20;
        let Scope { name, veth, net } = scope;
        let ns_veth = format!("mw{veth}n{tag}{pid}");
        let ns = Netns {
            name: format!("mobiwf-{name}-{tag}{pid}"),
            host_veth: format!("mw{veth}h{tag}{pid}"),
            ns_veth: ns_veth.clone(),
            host_ip: format!("10.{net}.{n}.1"),
            ns_ip: format!("10.{net}.{n}.2"),
        };
        match Command::new("ip").args(["netns", "add", &ns.name]).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => bail!(
                "ip netns add: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            Err(e) => bail!("cannot run ip: {e}"),
        }
        // From here on, Drop cleans up.
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
        ip(&["link", "set", &ns_veth, "netns", &ns.name])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/24", ns.host_ip),
            "dev",
            &ns.host_veth,
        ])?;
        ip(&["link", "set", &ns.host_veth, "up"])?;
        ns.exec(&["addr", "add", &format!("{}/24", ns.ns_ip), "dev", &ns_veth])?;
        ns.exec(&["link", "set", &ns_veth, "up"])?;
        ns.exec(&["link", "set", "lo", "up"])?;
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

    /// Runs `ip ARGS` in the namespace.
    fn exec(&self, args: &[&str]) -> anyhow::Result<()> {
        let mut all = vec!["netns", "exec", self.name.as_str(), "ip"];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// The /24 of the link.
    fn subnet(&self) -> String {
        format!(
            "{}.0/24",
            self.host_ip.rsplit_once('.').map_or("", |(net, _)| net)
        )
    }

    /// Moves the namespace to another address of the link (`.<host>`): the old one is gone.
    pub fn move_to(&mut self, host: u8) -> anyhow::Result<()> {
        let net = self.subnet();
        let net = net.trim_end_matches(".0/24");
        let new = format!("{net}.{host}");
        // The old one first: deleting a subnet's primary address deletes its secondaries.
        self.exec(&[
            "addr",
            "del",
            &format!("{}/24", self.ns_ip),
            "dev",
            &self.ns_veth,
        ])?;
        self.exec(&["addr", "add", &format!("{new}/24"), "dev", &self.ns_veth])?;
        self.ns_ip = new;
        Ok(())
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
