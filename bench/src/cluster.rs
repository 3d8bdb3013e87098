//! A controller and one node per partner, as separate processes of the release binaries, on
//! loopback, with data in a temporary directory: what each workload and mode runs on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::api::{ControllerApi, NodeApi};

/// How long a daemon may take to start and publish its addresses, or nodes to register.
const STARTUP: Duration = Duration::from_secs(30);

/// How many nodes start at once.
const START_BATCH: usize = 16;

/// How notifications travel (`mobiwf-controller serve --routing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Partner to partner: the design.
    P2p,
    /// Through the controller: the centralized alternative.
    Hub,
}

impl Mode {
    /// The word `--routing` takes, and the report uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::P2p => "p2p",
            Mode::Hub => "hub",
        }
    }
}

/// One daemon process.
pub struct Daemon {
    /// Its name in the report (`controller`, or the partner's name).
    pub name: String,
    child: Child,
    /// Its HTTP API, `http://HOST:PORT`.
    pub api: String,
    /// Its libp2p address.
    pub address: String,
    /// Its administrator's API token (the controller's `operator.token`, a node's
    /// `api.token`).
    pub token: String,
    /// How it was started, for [`Daemon::restart`].
    program: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
}

impl Daemon {
    /// Spawns `program args`, logging to `dir.log`, and waits for it to publish its `address`
    /// and `api` files in `dir`.
    async fn spawn(
        name: &str,
        program: &Path,
        args: &[String],
        dir: &Path,
    ) -> anyhow::Result<Daemon> {
        let mut daemon = Daemon::launch(name, program, args, dir)?;
        daemon.wait_published(Instant::now() + STARTUP).await?;
        Ok(daemon)
    }

    /// Spawns `program args`, logging to `dir.log`, without waiting for it (so that many can
    /// start at once).
    fn launch(name: &str, program: &Path, args: &[String], dir: &Path) -> anyhow::Result<Daemon> {
        std::fs::create_dir_all(dir)?;
        for published in ["address", "api"] {
            let _ = std::fs::remove_file(dir.join(published));
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.with_extension("log"))?;
        let child = Command::new(program)
            .args(args)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", program.display()))?;
        Ok(Daemon {
            name: name.to_owned(),
            child,
            api: String::new(),
            address: String::new(),
            token: String::new(),
            program: program.to_owned(),
            args: args.to_vec(),
            dir: dir.to_owned(),
        })
    }

    /// Waits until the process published its `address` and `api` files, at most until
    /// `deadline`.
    async fn wait_published(&mut self, deadline: Instant) -> anyhow::Result<()> {
        let (name, dir) = (self.name.clone(), self.dir.clone());
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!(
                    "{name} exited at start ({status}); its log: {}",
                    dir.with_extension("log").display()
                );
            }
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
            let (address, api) = (read("address"), read("api"));
            let address = address.lines().next().unwrap_or("").trim().to_owned();
            if !address.is_empty() && !api.trim().is_empty() {
                self.address = address;
                self.api = mobiwf_runtime::api_auth::base_url(&api);
                // Written before the `api` file: one of the two is there.
                let token = ["operator.token", "api.token"]
                    .map(|f| dir.join(f))
                    .into_iter()
                    .find(|f| f.exists())
                    .ok_or_else(|| anyhow::anyhow!("{name} wrote no API token file"))?;
                self.token = mobiwf_runtime::secret::read_token_file(&token)?;
                return Ok(());
            }
            if Instant::now() > deadline {
                anyhow::bail!(
                    "{name} did not publish its addresses in time; its log: {}",
                    dir.with_extension("log").display()
                );
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Kills the process (SIGKILL) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on its data directory, listening on `listen` (its old address: the
    /// link came back; a new port: it moved); returns once it published its addresses.
    pub async fn restart(&mut self, listen: &str) -> anyhow::Result<()> {
        self.kill();
        let mut args = self.args.clone();
        if let Some(at) = args.iter().position(|a| a == "--listen")
            && let Some(value) = args.get_mut(at + 1)
        {
            listen.clone_into(value);
        }
        let again = Daemon::spawn(&self.name, &self.program, &args, &self.dir).await?;
        *self = again;
        Ok(())
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident memory so far, MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        crate::procfs::peak_rss_mib(self.pid()).unwrap_or(f64::NAN)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The controller and its nodes.
pub struct Cluster {
    /// The controller process.
    pub controller: Daemon,
    /// One node per partner.
    pub nodes: Vec<Daemon>,
    /// Asks the controller.
    pub api: ControllerApi,
    /// Asks each node, by partner name.
    pub node_apis: BTreeMap<String, NodeApi>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts a controller routing as `mode` and a node per partner, and waits until every
    /// node is registered.
    pub async fn start(
        bin_dir: &Path,
        mode: Mode,
        partners: &[(String, Vec<u64>)],
    ) -> anyhow::Result<Cluster> {
        let dir = tempfile::Builder::new().prefix("mobiwf-bench-").tempdir()?;
        let ctl_dir = dir.path().join("controller");
        let controller = Daemon::spawn(
            "controller",
            &bin_dir.join("mobiwf-controller"),
            &controller_args(&ctl_dir, mode),
            &ctl_dir,
        )
        .await?;
        let token = ctl_dir.join("join.token");
        let mut nodes = Vec::with_capacity(partners.len());
        // Nodes start a batch at a time: all at once, a hundred RocksDB opens on a small
        // machine could outlast any fixed timeout; one at a time, a hundred take minutes.
        for batch in partners.chunks(START_BATCH) {
            let mut launched = Vec::with_capacity(batch.len());
            for (name, skills) in batch {
                let node_dir = dir.path().join(name);
                let args = node_args(&node_dir, name, skills, &controller.address, &token);
                let program = bin_dir.join("mobiwf-node");
                launched.push(Daemon::launch(name, &program, &args, &node_dir)?);
            }
            let deadline = Instant::now() + STARTUP;
            for node in &mut launched {
                node.wait_published(deadline).await?;
            }
            nodes.extend(launched);
        }
        let api = ControllerApi::new(&controller.api, &controller.token)?;
        wait_registered(&api, partners).await?;
        let node_apis = nodes
            .iter()
            .map(|n| Ok((n.name.clone(), NodeApi::new(&n.api, &n.token)?)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Cluster {
            controller,
            nodes,
            api,
            node_apis,
            _dir: dir,
        })
    }
}

/// The benchmark's controller: in `dir`, on loopback ports of its choosing, routing as `mode`.
fn controller_args(dir: &Path, mode: Mode) -> Vec<String> {
    vec![
        "serve".into(),
        "--data-dir".into(),
        dir.display().to_string(),
        "--listen".into(),
        "/ip4/127.0.0.1/tcp/0".into(),
        "--api".into(),
        "127.0.0.1:0".into(),
        "--routing".into(),
        mode.as_str().into(),
    ]
}

/// Partner `name`'s node with `skills`: in `dir`, on a loopback port of its choosing, joining
/// the controller at `controller` with the join token in the file `join_token`.
fn node_args(
    dir: &Path,
    name: &str,
    skills: &[u64],
    controller: &str,
    join_token: &Path,
) -> Vec<String> {
    let skills: Vec<String> = skills.iter().map(u64::to_string).collect();
    vec![
        "run".into(),
        "--data-dir".into(),
        dir.display().to_string(),
        "--name".into(),
        name.to_owned(),
        "--skills".into(),
        skills.join(","),
        "--controller".into(),
        controller.to_owned(),
        "--listen".into(),
        "/ip4/127.0.0.1/tcp/0".into(),
        "--join-token-file".into(),
        join_token.display().to_string(),
    ]
}

/// Waits until every partner's node is registered with the controller: [`STARTUP`], and a
/// tenth of a second more per node (each registration is a synced write at the controller).
async fn wait_registered(
    api: &ControllerApi,
    partners: &[(String, Vec<u64>)],
) -> anyhow::Result<()> {
    let limit = STARTUP + Duration::from_millis(100) * u32::try_from(partners.len()).unwrap_or(0);
    let started = Instant::now();
    loop {
        let registered = api.node_names().await?;
        let missing: Vec<&str> = partners
            .iter()
            .map(|(n, _)| n.as_str())
            .filter(|n| !registered.iter().any(|r| r == n))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if started.elapsed() > limit {
            anyhow::bail!(
                "{} of {} nodes not registered with the controller after {limit:?}: {}",
                missing.len(),
                partners.len(),
                brief_list(&missing)
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The first few names of `names`, and how many more.
fn brief_list(names: &[&str]) -> String {
    const SHOWN: usize = 8;
    let mut text = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        text += &format!(" and {} more", names.len() - SHOWN);
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_long_list_of_missing_nodes_is_cut_short() {
        assert_eq!(brief_list(&["B1", "B2"]), "B1, B2");
        let many: Vec<String> = (1..=100).map(|i| format!("B{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            brief_list(&many),
            "B1, B2, B3, B4, B5, B6, B7, B8 and 92 more"
        );
    }
}
