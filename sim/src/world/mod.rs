//! The simulated world: a controller and its nodes, each a machine with a disk, an address
//! and (while it runs) a daemon process, the network between them, one clock and one queue of
//! what happens next. A run pops the earliest event (ties in the order they were scheduled),
//! carries it out, writes a line of trace, and checks the invariants; nothing else decides
//! what happens, so a seed replays exactly.
//!
//! Layout: `net` the requests and their answers, the links, addresses and connections;
//! `node` and `controller` the processes' groups, starts and crashes, the commands; `outbox`
//! what the outboxes ask the world to do; `faults` crashes, partitions and moves; the
//! workload (`crate::workload`) and the checks (`crate::checks`) are apart.

mod controller;
mod faults;
mod net;
mod node;
mod outbox;
mod script;
mod settle;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_delivery::LinkError;
use mobiwf_proto::{NodeId, Reply};

use crate::checks::Checks;
use crate::controller::ControllerProc;
use crate::disk::Disk;
use crate::node::executor::{Ended, RunDir, Runs};
use crate::node::{NodeConfig, NodeProc};
use crate::rng::Rng;
use crate::trace::Trace;
use crate::workload::{Script, Workload};

pub use faults::{Fault, Weather, draw as faults_draw};
pub use net::Net;

/// Where simulated time 0 is on the cores' clock: µs since the Unix epoch (2025-06-15).
pub const EPOCH_US: u64 = 1_750_000_000_000_000;

/// A machine: the controller's is 0, node `i`'s is `i + 1`.
pub type Pid = usize;

/// The controller's machine.
pub const CONTROLLER: Pid = 0;

/// What happens next.
#[derive(Debug, Clone)]
pub enum Event {
    /// A process takes the events waiting as one group.
    Wake(Pid, u32),
    /// A process's next deadline came.
    Timer(Pid, u32),
    /// A process's outbox looks again at its deliveries.
    OutboxWake(Pid, u32),
    /// A request reaches its receiver's machine.
    Arrive(u64),
    /// An answer (or a failure) reaches the requester.
    Answer(u64, Result<Reply, LinkError>),
    /// A request's time ran out.
    Expire(u64),
    /// A broken connection's break is noticed.
    Closed((Pid, Pid), u64),
    /// A command's process ends as planned.
    ProcessEnd(Pid, RunDir, u64),
    /// A held command's watchdog looks at its lease.
    Watchdog(Pid, RunDir, u64, u64),
    /// A node keeps its held commands' lease files up.
    LeaseRefresh(Pid, u32),
    /// The failure detector's round.
    DetectorRound(u32),
    /// A fault (or its end).
    Fault(Fault),
    /// A step of the workload.
    Script(Script),
}

/// One machine and what runs on it.
#[derive(Debug)]
pub struct Machine {
    /// Its peer id.
    pub peer: NodeId,
    /// Its disk.
    pub disk: Disk,
    /// Its run directories and command processes (a node's).
    pub runs: Runs,
    /// The machine is on.
    pub up: bool,
    /// How many times its daemon started (events of an earlier run are stale).
    pub run: u32,
    /// Which address it listens on now (it moves).
    pub addr_epoch: u32,
    /// The daemon's address book: where it last heard each peer is.
    pub book: BTreeMap<NodeId, BTreeSet<String>>,
    /// When its next group is taken, when one is scheduled.
    pub wake_at: Option<u64>,
    /// When its deadline timer fires, when one is scheduled.
    pub timer_at: Option<u64>,
    /// How far its clock is off, µs (ahead when positive).
    pub skew_us: i64,
}

impl Machine {
    /// Its address now.
    pub fn addr(&self, pid: Pid) -> String {
        format!(
            "/ip4/10.0.{pid}.{}/tcp/4001/p2p/{}",
            self.addr_epoch, self.peer
        )
    }
}

/// How a run is set up (what the seed drew).
#[derive(Debug, Clone)]
pub struct Setup {
    /// The nodes' configurations.
    pub nodes: Vec<NodeConfig>,
    /// When faults stop, µs.
    pub quiet_at: u64,
    /// How long after that everything must be settled, µs.
    pub settle_within: u64,
}

/// The world.
pub struct World {
    /// Simulated time, µs since the run began.
    pub now: u64,
    /// The run's chance.
    pub rng: Rng,
    queue: BTreeMap<(u64, u64), Event>,
    next_event: u64,
    /// The trace.
    pub trace: Trace,
    /// The machines.
    pub machines: Vec<Machine>,
    /// The controller's process, while it runs.
    pub controller: Option<ControllerProc>,
    /// The nodes' processes, while they run.
    pub nodes: Vec<Option<NodeProc>>,
    /// The network.
    pub net: Net,
    /// The invariants.
    pub checks: Checks,
    /// What runs.
    pub workload: Workload,
    /// How the run is set up.
    pub setup: Setup,
    /// Steps taken.
    pub steps: u64,
    /// How much goes wrong while faults last.
    pub weather: Weather,
    /// The faults stopped.
    pub quiet: bool,
}

impl World {
    /// The world of `setup` and `workload`, nothing started yet.
    pub fn new(rng: Rng, setup: Setup, workload: Workload, keep_trace: bool) -> World {
        let mut machines = vec![machine(controller_peer())];
        machines.extend(setup.nodes.iter().map(|n| machine(n.peer.clone())));
        let nodes = setup.nodes.iter().map(|_| None).collect();
        World {
            now: 0,
            rng,
            queue: BTreeMap::new(),
            next_event: 0,
            trace: Trace::new(keep_trace),
            machines,
            controller: None,
            nodes,
            net: Net::default(),
            checks: Checks::default(),
            workload,
            setup,
            steps: 0,
            weather: Weather {
                breaks: 0,
                reach_anyway: 0,
                slow: 0,
                crash_after_write: 0,
            },
            quiet: false,
        }
    }

    /// Schedules `event` `after` µs from now.
    pub fn after(&mut self, after: u64, event: Event) {
        self.at(self.now.saturating_add(after), event);
    }

    /// Schedules `event` at `at` (now, if that is past).
    pub fn at(&mut self, at: u64, event: Event) {
        let at = at.max(self.now);
        self.next_event += 1;
        self.queue.insert((at, self.next_event), event);
    }

    /// The time on machine `pid`'s clock, µs since the epoch (each machine's clock is off by
    /// its own skew).
    pub fn clock_us(&self, pid: Pid) -> u64 {
        (EPOCH_US + self.now).saturating_add_signed(self.machines[pid].skew_us)
    }

    /// The time on machine `pid`'s clock, ms since the epoch.
    pub fn clock_ms(&self, pid: Pid) -> u64 {
        self.clock_us(pid) / 1000
    }

    /// A line of trace now.
    pub fn log(&mut self, text: &str) {
        self.trace.line(self.now, text);
    }

    /// The machine of peer `peer`.
    pub fn pid_of(&self, peer: &NodeId) -> Option<Pid> {
        self.machines.iter().position(|m| &m.peer == peer)
    }

    /// A short name of machine `pid` for the trace.
    pub fn name(&self, pid: Pid) -> String {
        if pid == CONTROLLER {
            "C".to_owned()
        } else {
            self.setup
                .nodes
                .get(pid - 1)
                .map_or_else(|| format!("#{pid}"), |n| n.name.to_string())
        }
    }

    /// A peer's short name for the trace.
    pub fn peer_name(&self, peer: &NodeId) -> String {
        self.pid_of(peer)
            .map_or_else(|| peer.to_string(), |pid| self.name(pid))
    }

    /// Every peer's short name.
    pub fn peer_names(&self) -> BTreeMap<NodeId, String> {
        (0..self.machines.len())
            .map(|pid| (self.machines[pid].peer.clone(), self.name(pid)))
            .collect()
    }

    /// Whether `pid`'s daemon runs, in its run `run`.
    pub fn alive(&self, pid: Pid, run: u32) -> bool {
        let m = &self.machines[pid];
        let running = if pid == CONTROLLER {
            self.controller.is_some()
        } else {
            self.nodes[pid - 1].is_some()
        };
        running && m.up && m.run == run
    }

    /// Whether `pid`'s daemon runs now.
    pub fn running(&self, pid: Pid) -> bool {
        self.alive(pid, self.machines[pid].run)
    }

    /// Takes the next event and carries it out; false when there is none left before `until`.
    pub fn step(&mut self, until: u64) -> bool {
        let Some((&(at, seq), _)) = self.queue.first_key_value() else {
            return false;
        };
        if at > until {
            return false;
        }
        let Some(event) = self.queue.remove(&(at, seq)) else {
            return false;
        };
        self.now = at;
        self.steps += 1;
        self.dispatch(event);
        true
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::Wake(pid, run) => self.wake(pid, run),
            Event::Timer(pid, run) => self.timer(pid, run),
            Event::OutboxWake(pid, run) => {
                if self.alive(pid, run) {
                    self.pump(pid);
                }
            }
            Event::Arrive(req) => self.arrive(req),
            Event::Answer(req, result) => self.answered(req, result),
            Event::Expire(req) => self.expire(req),
            Event::Closed(between, id) => self.closed(between, id),
            Event::ProcessEnd(pid, dir, process) => self.process_end(pid, dir, process),
            Event::Watchdog(pid, dir, process, period) => {
                self.watchdog(pid, dir, process, period);
            }
            Event::LeaseRefresh(pid, run) => self.lease_refresh(pid, run),
            Event::DetectorRound(run) => self.detector_round(run),
            Event::Fault(fault) => self.fault(fault),
            Event::Script(script) => self.script(script),
        }
    }

    /// A process takes its waiting events as one group.
    fn wake(&mut self, pid: Pid, run: u32) {
        if !self.alive(pid, run) {
            return;
        }
        self.machines[pid].wake_at = None;
        if pid == CONTROLLER {
            self.controller_group();
        } else {
            self.node_group(pid);
        }
    }

    /// Asks for a group of `pid` soon (the actor takes what waits when it is free).
    pub fn wake_soon(&mut self, pid: Pid) {
        if self.machines[pid].wake_at.is_some() {
            return;
        }
        let delay = self.rng.range(50, 1500);
        let at = self.now + delay;
        self.machines[pid].wake_at = Some(at);
        let run = self.machines[pid].run;
        self.at(at, Event::Wake(pid, run));
    }

    /// Schedules `pid`'s deadline timer at `deadline_ms` (on its clock), when it changed.
    pub fn set_timer(&mut self, pid: Pid, deadline_ms: Option<u64>) {
        let Some(ms) = deadline_ms else {
            self.machines[pid].timer_at = None;
            return;
        };
        let at = (ms * 1000)
            .saturating_add_signed(-self.machines[pid].skew_us)
            .saturating_sub(EPOCH_US)
            .max(self.now);
        if self.machines[pid].timer_at == Some(at) {
            return;
        }
        self.machines[pid].timer_at = Some(at);
        let run = self.machines[pid].run;
        self.at(at, Event::Timer(pid, run));
    }

    fn timer(&mut self, pid: Pid, run: u32) {
        if !self.alive(pid, run) || self.machines[pid].timer_at != Some(self.now) {
            return;
        }
        self.machines[pid].timer_at = None;
        if pid == CONTROLLER {
            if let Some(c) = &mut self.controller {
                c.pending.push(crate::controller::CtlEvent::Tick);
            }
        } else if let Some(n) = &mut self.nodes[pid - 1] {
            n.pending.push(crate::node::NodeEvent::Tick);
        }
        self.wake_soon(pid);
    }

    /// A command's end reaches the node process that watches it (if one does).
    pub fn tell_ended(&mut self, pid: Pid, dir: RunDir, ended: Ended) {
        if !self.running(pid) {
            return;
        }
        let Some(n) = &mut self.nodes[pid - 1] else {
            return;
        };
        n.held.remove(&dir);
        if n.watching.remove(&dir) {
            n.pending.push(crate::node::NodeEvent::Ended { dir, ended });
            self.wake_soon(pid);
        }
    }
}

fn machine(peer: NodeId) -> Machine {
    Machine {
        peer,
        disk: Disk::default(),
        runs: Runs::default(),
        up: true,
        run: 0,
        addr_epoch: 0,
        book: BTreeMap::new(),
        wake_at: None,
        timer_at: None,
        skew_us: 0,
    }
}

/// The controller's peer id.
pub fn controller_peer() -> NodeId {
    NodeId::new("12D3KooWSimController")
}

/// Node `name`'s peer id.
pub fn node_peer(name: &str) -> NodeId {
    NodeId::new(format!("12D3KooWSimNode{name}"))
}
