//! The nemesis: carries out the plan on the real processes, in real time. Each fault strikes
//! at its time and is undone at its end (the killed process started again, the stalled one
//! continued, the link restored, the moved node started on another port, the hostile peers
//! gone with their connections); between faults it checks that every daemon that should run
//! still runs.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::hostile::{self, Attack};
use crate::mesh::{Controller, Node};
use mobiwf_chaos::cost::{Connections, EpochMs, Phase, Span};
use mobiwf_chaos::schedule::{Fault, FaultKind, Target};
use mobiwf_chaos::suspicion::Window;
use mobiwf_testkit::netns::Netns;

/// The mesh as the nemesis and the workers share it.
pub struct World {
    /// The controller.
    pub controller: Controller,
    /// The nodes, in the plan's order.
    pub nodes: Vec<Node>,
    /// The namespaced node's network, when there is one.
    pub netns: Option<Netns>,
    /// The controller's API as it is now (it changes at each restart), for the workers.
    pub api: Arc<Mutex<String>>,
    /// The hostile peers at a door, while a hostile fault lasts.
    pub attack: Option<Attack>,
}

impl World {
    fn node(&mut self, target: Target) -> anyhow::Result<&mut Node> {
        match target {
            Target::Node(i) => self.nodes.get_mut(i).context("no such node"),
            Target::Controller => anyhow::bail!("the controller is not a node"),
        }
    }

    fn name(&self, target: Target) -> String {
        match target {
            Target::Controller => "controller".to_owned(),
            Target::Node(i) => self
                .nodes
                .get(i)
                .map_or_else(|| format!("node {i}"), |n| n.spec.name.clone()),
        }
    }

    /// Err when a daemon that should run has exited.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        if let Some(d) = self.controller.daemon() {
            d.check_alive()?;
        }
        for node in &mut self.nodes {
            if let Some(d) = node.daemon() {
                d.check_alive()?;
            }
        }
        Ok(())
    }

    fn publish_api(&self) {
        if let Ok(mut api) = self.api.lock() {
            api.clone_from(&self.controller.api);
        }
    }

    /// The door a hostile fault of `kind` knocks at on `target`: its mesh port or its API.
    fn door(&self, kind: FaultKind, target: Target) -> anyhow::Result<std::net::SocketAddr> {
        let (address, api) = match target {
            Target::Controller => (&self.controller.address, &self.controller.api),
            Target::Node(i) => {
                let node = self.nodes.get(i).context("no such node")?;
                (&node.address, &node.api)
            }
        };
        if hostile::aims_at_api(kind) {
            use std::net::ToSocketAddrs;
            api.to_socket_addrs()?
                .next()
                .with_context(|| format!("the API {api} has no address"))
        } else {
            hostile::mesh_port(address)
        }
    }

    /// The fault begins.
    fn strike(&mut self, f: &Fault) -> anyhow::Result<()> {
        match f.kind {
            FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris => {
                let door = self.door(f.kind, f.target)?;
                self.attack = Some(Attack::start(f.kind, door));
            }
            FaultKind::KillController => self.controller.kill(),
            FaultKind::StopController => {
                if let Some(d) = self.controller.daemon() {
                    d.signal("STOP")?;
                }
            }
            FaultKind::KillNode | FaultKind::MoveNode => self.node(f.target)?.kill(),
            FaultKind::StopNode => {
                if let Some(d) = self.node(f.target)?.daemon() {
                    d.signal("STOP")?;
                }
            }
            FaultKind::CutLink => self.netns.as_ref().context("no namespace")?.link(false)?,
        }
        Ok(())
    }

    /// The fault ends; the hostile peers' connections, when it was theirs.
    fn heal(&mut self, f: &Fault) -> anyhow::Result<Connections> {
        match f.kind {
            FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris => {
                let attack = self.attack.take().context("no hostile peer under way")?;
                return attack.stop();
            }
            FaultKind::KillController => {
                self.controller.restart()?;
                self.publish_api();
            }
            FaultKind::StopController => {
                if let Some(d) = self.controller.daemon() {
                    d.signal("CONT")?;
                }
            }
            FaultKind::KillNode => self.node(f.target)?.restart()?,
            FaultKind::MoveNode => {
                let to = self.node(f.target)?.restart_elsewhere()?;
                eprintln!("chaos:          {} now at {to}", self.name(f.target));
            }
            FaultKind::StopNode => {
                if let Some(d) = self.node(f.target)?.daemon() {
                    d.signal("CONT")?;
                }
            }
            FaultKind::CutLink => self.netns.as_ref().context("no namespace")?.link(true)?,
        }
        Ok(Connections::default())
    }
}

/// Waits until `at` after `start`, checking the daemons every 100 ms.
fn wait_until(world: &mut World, start: Instant, at_ms: u64) -> anyhow::Result<()> {
    let at = start + Duration::from_millis(at_ms);
    loop {
        world.check_alive()?;
        let now = Instant::now();
        if now >= at {
            return Ok(());
        }
        std::thread::sleep((at - now).min(Duration::from_millis(100)));
    }
}

/// What the nemesis did: the faults injected, by kind, when each node was struck, when each
/// fault lasted, and the hostile peers' connections.
#[derive(Debug, Default)]
pub struct Done {
    /// The faults injected, by kind.
    pub faults: BTreeMap<FaultKind, usize>,
    /// When each node was struck (a stall of the controller strikes no node; a hostile peer
    /// at its door does not excuse its being given up).
    pub windows: Vec<Window>,
    /// Every fault, from its strike to its end.
    pub spans: Vec<Span>,
    /// The hostile peers' connections, over all their faults.
    pub hostile: Connections,
}

/// Now, in ms since the epoch (the controller's history's clock).
fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Carries out `plan` from `start`, then waits until `run_ms`.
pub fn run(world: &mut World, plan: &[Fault], start: Instant, run_ms: u64) -> anyhow::Result<Done> {
    let mut done = Done::default();
    for f in plan {
        wait_until(world, start, f.at_ms)?;
        let whom = world.name(f.target);
        eprintln!(
            "chaos: {:>7.1} s  {} on {whom} for {:.1} s",
            start.elapsed().as_secs_f64(),
            f.kind,
            Duration::from_millis(f.hold_ms).as_secs_f64()
        );
        let from_ms = epoch_ms();
        world
            .strike(f)
            .with_context(|| format!("{} on {whom}", f.kind))?;
        *done.faults.entry(f.kind).or_insert(0) += 1;
        std::thread::sleep(Duration::from_millis(f.hold_ms));
        let conns = world
            .heal(f)
            .with_context(|| format!("undoing {} on {whom}", f.kind))?;
        let to_ms = epoch_ms();
        if f.kind.is_hostile() {
            eprintln!(
                "chaos:          {} connections opened, {} closed by {whom}",
                conns.opened, conns.closed
            );
            done.hostile += conns;
        }
        done.spans.push(Span {
            phase: if f.kind.is_hostile() {
                Phase::Hostile
            } else {
                Phase::Other
            },
            from: EpochMs(from_ms),
            to: EpochMs(to_ms),
        });
        if matches!(f.target, Target::Node(_)) && !f.kind.is_hostile() {
            done.windows.push(Window {
                partner: whom,
                from_ms,
                to_ms,
            });
        }
    }
    wait_until(world, start, run_ms)?;
    Ok(done)
}
