//! A deterministic simulator of a whole mobiwf mesh, in the spirit of FoundationDB's
//! simulation and TigerBeetle's VOPR: the real pure cores (the controller's book, each node's
//! engine and desk in its node core) and the daemons' delivery decisions (the apply-once rule,
//! the outbox's lanes and tries, `mobiwf-delivery`) driven on one thread by one seed, with a
//! simulated network (delays, losses, duplicates, cut links that heal, a node that comes back
//! at another address), a simulated disk per machine (a crash loses what was not synced) and a
//! simulated clock (every timer, lease, backoff and timeout fires in simulated time). What the
//! daemons do between the cores and the network or the disk is reproduced here, from their
//! code: which effects become which messages, what is written before what is sent, how
//! answers and retries go, how a restart loads its state.
//!
//! [`run`] plays one seed: it draws the mesh, the workload and the faults, runs until the
//! faults stop and everything settles (or a bound passes), and checks the invariants after
//! every step (`checks`). The same seed gives the same trace, byte for byte.
//!
//! Layout: `rng` the seeded chance; `trace` the lines; `disk` a machine's disk; `group` a
//! group on its way to disk and the apply-once prelude; `outbox` a process's deliveries; `node`
//! and `controller` the daemons' shells around the cores; `world` the machines, the network,
//! the clock and the faults; `workload` what is run; `checks` the invariants.

pub mod checks;
pub mod controller;
pub mod disk;
pub mod group;
pub mod node;
pub mod outbox;
pub mod rng;
pub mod trace;
pub mod workload;
pub mod world;

use mobiwf_proto::{ActivityTypeId, NodeName};

use node::NodeConfig;
use rng::Rng;
use world::{CONTROLLER, Event, Setup, World};

/// How long everything has to settle once the faults stop, µs of simulated time.
pub const SETTLE_WITHIN_US: u64 = 600_000_000;

/// How often (in steps) a run looks whether everything settled, once faults stopped.
const SETTLED_EVERY: u64 = 32;

/// Most steps a run takes: a run of a few minutes of simulated time takes a few thousand, so
/// one past this spins (a timer that fires again and again at the same deadline, messages
/// that bounce forever) and is reported as such.
pub const MAX_STEPS: u64 = 2_000_000;

/// What one seed came to.
#[derive(Debug)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// Steps taken.
    pub steps: u64,
    /// Simulated time at the end, µs.
    pub simulated_us: u64,
    /// What broke (empty: nothing did).
    pub violations: Vec<String>,
    /// The trace (every line when kept, else the last ones).
    pub trace: Vec<String>,
    /// A digest of every line of the trace.
    pub digest: u64,
    /// How many lines the trace has.
    pub lines: u64,
}

impl Outcome {
    /// True when no invariant broke.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Plays `seed`; keeps every line of its trace when `keep_trace`.
pub fn run(seed: u64, keep_trace: bool) -> Outcome {
    let mut world = build(seed, keep_trace);
    let quiet_at = world.setup.quiet_at;
    let deadline = quiet_at + world.setup.settle_within;
    let mut settled = false;
    while world.checks.violations.is_empty() && world.step(deadline) {
        if world.quiet && world.steps.is_multiple_of(SETTLED_EVERY) && world.unsettled().is_none() {
            settled = true;
            break;
        }
        if world.steps >= MAX_STEPS {
            let line = format!("{MAX_STEPS} steps without settling: something spins");
            world.checks.fail(line);
        }
    }
    if world.checks.violations.is_empty() && !settled && world.unsettled().is_some() {
        let why = world.unsettled().unwrap_or_default();
        let line = format!(
            "not settled {} s after the faults stopped: {why}",
            world.setup.settle_within / 1_000_000
        );
        world.log(&line);
        world.checks.fail(line);
    }
    if let Some(first) = world.checks.violations.first().cloned() {
        world.log(&format!("VIOLATION: {first}"));
    } else {
        world.log("settled: every invariant held");
    }
    Outcome {
        seed,
        steps: world.steps,
        simulated_us: world.now,
        violations: world.checks.violations.clone(),
        trace: world.trace.lines(),
        digest: world.trace.digest(),
        lines: world.trace.len(),
    }
}

/// The world of `seed`: its mesh, workload and faults drawn, its daemons started, its steps
/// and faults scheduled.
fn build(seed: u64, keep_trace: bool) -> World {
    let mut rng = Rng::new(seed);
    let mut drawing = rng.fork();
    let nodes = usize::try_from(drawing.range(2, 4)).unwrap_or(2);
    let quiet_at = drawing.range(20_000_000, 60_000_000);
    let workload = workload::draw(&mut drawing, nodes, quiet_at * 2 / 3);
    let (weather, faults) = world::faults_draw(&mut rng.fork(), nodes + 1, quiet_at);
    let controller = world::controller_peer();
    let controller_addr = format!("/ip4/10.0.0.0/tcp/4001/p2p/{controller}");
    let configs = (1..=nodes)
        .map(|n| {
            let name = format!("P{n}");
            NodeConfig {
                peer: world::node_peer(&name),
                name: NodeName::new(name),
                skills: vec![ActivityTypeId(1)],
                controller: controller.clone(),
                controller_addr: controller_addr.clone(),
                hour_ms: workload::defs::SIM_HOUR_MS,
            }
        })
        .collect();
    let setup = Setup {
        nodes: configs,
        quiet_at,
        settle_within: SETTLE_WITHIN_US,
    };
    let script = workload.script.clone();
    let classes = workload
        .classes
        .as_ref()
        .and_then(|doc| mobiwf_xml_schema::load_classes(doc.as_bytes()).ok())
        .map(|l| l.value)
        .unwrap_or_default();
    let mut world = World::new(rng, setup, workload, keep_trace);
    // Each node's clock is off by up to a second and a half (the controller's is the mesh's).
    for pid in 1..=nodes {
        let skew = world.rng.range(0, 3_000_000);
        world.machines[pid].skew_us = i64::try_from(skew).unwrap_or(0) - 1_500_000;
    }
    world.checks.classes = classes;
    world.checks.deadlines.responsible = world.workload.responsible.clone();
    world.weather = weather;
    world.net.breaks = weather.breaks;
    world.net.reach_anyway = weather.reach_anyway;
    world.net.slow = weather.slow;
    let line = format!(
        "seed {seed}: {nodes} nodes, faults until {} s, {weather:?}, definitions {:?}",
        quiet_at / 1_000_000,
        world
            .workload
            .defs
            .iter()
            .map(|d| d.shape)
            .collect::<Vec<_>>()
    );
    world.log(&line);
    world.start(CONTROLLER);
    for pid in 1..=nodes {
        world.start(pid);
    }
    for (at, step) in script {
        world.at(at, Event::Script(step));
    }
    for (at, fault) in faults {
        world.at(at, Event::Fault(fault));
    }
    world
}
