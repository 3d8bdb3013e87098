//! The nemesis's plan, drawn from the seed before anything runs: which fault strikes whom,
//! when, and for how long. Pure, so that a seed names its faults and the plan's rules are
//! tested without processes.
//!
//! Faults come one after another, never two at once (each ends, and the mesh has a short
//! breath, before the next): the plan opens with one fault of every kind the mesh allows, in
//! an order drawn from the seed and with shorter breaths, so that even a one-minute run
//! injects each, then draws kinds at random until the run's time is used, leaving now and then
//! a quiet stretch with no fault, whose instances are the baseline of the faults' cost. Besides what
//! happens to the mesh's own processes, three kinds are hostile peers at a daemon's door
//! (a flood of half-open connections, slow handshakes, a slow-loris on its HTTP API): they
//! strike the controller or a node on the host, never the namespaced one (the flooder's own
//! loopback addresses reach only the host). Every fault ends within the run: afterwards the
//! mesh is whole again and only settles.

use std::fmt;

use mobiwf_sim::rng::Rng;

/// Who a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// The controller.
    Controller,
    /// The node of this index in the mesh.
    Node(usize),
}

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultKind {
    /// SIGKILL, then the process started again on its data and address after the hold.
    KillNode,
    /// SIGKILL of the controller, started again on its data and address after the hold.
    KillController,
    /// SIGSTOP of a node for longer than the controller waits for it, then SIGCONT.
    StopNode,
    /// SIGSTOP of the controller for longer than a request to it waits, then SIGCONT.
    StopController,
    /// The namespaced node's link down for the hold, then up.
    CutLink,
    /// SIGKILL of a node, started again after the hold listening on another port.
    MoveNode,
    /// Hundreds of half-open TCP connections to a daemon's mesh port, from many sources of
    /// their own, silent, held (the ones it closes opened again) for the hold, then closed.
    FloodPort,
    /// Connections to a daemon's mesh port that trickle a byte of a handshake now and then
    /// and never finish it, some never reading what the daemon says.
    SlowPeers,
    /// Slow-loris on a daemon's HTTP API: requests whose headers trickle a byte at a time and
    /// never end, and requests sent again and again on connections that never read.
    SlowLoris,
}

impl FaultKind {
    /// Every kind, in the order the report lists them.
    pub const ALL: [FaultKind; 9] = [
        FaultKind::KillNode,
        FaultKind::KillController,
        FaultKind::StopNode,
        FaultKind::StopController,
        FaultKind::CutLink,
        FaultKind::MoveNode,
        FaultKind::FloodPort,
        FaultKind::SlowPeers,
        FaultKind::SlowLoris,
    ];

    /// A hostile peer at the target's door, rather than a blow to its process or link: the
    /// target is owed its service meanwhile (no suspicion of it is explained by this fault).
    pub fn is_hostile(self) -> bool {
        matches!(
            self,
            FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::KillNode => "kill node (SIGKILL, restart)",
            FaultKind::KillController => "kill controller (SIGKILL, restart)",
            FaultKind::StopNode => "stall node (SIGSTOP past suspect-after)",
            FaultKind::StopController => "stall controller (SIGSTOP past request timeout)",
            FaultKind::CutLink => "cut namespaced node's link",
            FaultKind::MoveNode => "move node to another port",
            FaultKind::FloodPort => "hostile: flood a mesh port (half-open TCP)",
            FaultKind::SlowPeers => "hostile: slow handshakes on a mesh port",
            FaultKind::SlowLoris => "hostile: slow-loris on an HTTP API",
        })
    }
}

/// One fault of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// When it strikes, in ms from the start of the faults.
    pub at_ms: u64,
    /// What it does.
    pub kind: FaultKind,
    /// Whom.
    pub target: Target,
    /// How long the process stays down, stalled or cut off, in ms.
    pub hold_ms: u64,
}

impl Fault {
    /// When it is over, in ms from the start of the faults.
    pub fn end_ms(&self) -> u64 {
        self.at_ms + self.hold_ms
    }
}

/// What the plan is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// How many nodes the mesh has (at least one).
    pub nodes: usize,
    /// The node in a network namespace, whose link can be cut (none: no cuts).
    pub namespaced: Option<usize>,
    /// How long faults go on, in ms.
    pub run_ms: u64,
    /// The controller's `--suspect-after`: a stalled node stays stopped longer.
    pub suspect_after_ms: u64,
    /// How long a request waits for its answer: a stalled controller stays stopped longer.
    pub request_timeout_ms: u64,
}

/// The kinds this mesh allows.
fn kinds(shape: &Shape) -> Vec<FaultKind> {
    FaultKind::ALL
        .into_iter()
        .filter(|k| *k != FaultKind::CutLink || shape.namespaced.is_some())
        .filter(|k| {
            shape.nodes > 0
                || k.is_hostile()
                || matches!(k, FaultKind::KillController | FaultKind::StopController)
        })
        .collect()
}

/// How long a fault of `kind` lasts, drawn: a stall outlasts the timeout it is meant to pass by
/// up to two seconds; a cut is short (TCP carries over it) or outlasts a request's timeout.
fn hold(rng: &mut Rng, kind: FaultKind, shape: &Shape) -> u64 {
    match kind {
        FaultKind::KillNode | FaultKind::KillController => rng.range(200, 3_000),
        FaultKind::MoveNode => rng.range(200, 2_000),
        // Past the mesh's inbound handshake deadline (2 s), so the connections a flood or slow
        // handshakes hold are closed by it and opened again at least once; short enough that
        // the first round of a one-minute run still fits. Shorter than the API's header timeout
        // (10 s): a slow-loris fault measures what it costs the mesh's members, the closing is
        // the API's own tests' (`runtime/src/daemon/accept`).
        FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris => {
            rng.range(2_200, 3_000)
        }
        FaultKind::StopNode => shape.suspect_after_ms + rng.range(500, 2_000),
        FaultKind::StopController => shape.request_timeout_ms + rng.range(500, 2_000),
        FaultKind::CutLink => {
            if rng.below(2) == 0 {
                rng.range(1_000, 4_000)
            } else {
                shape.request_timeout_ms + rng.range(500, 3_000)
            }
        }
    }
}

/// Whom a fault of `kind` strikes, drawn.
fn target(rng: &mut Rng, kind: FaultKind, shape: &Shape) -> Target {
    match kind {
        FaultKind::KillController | FaultKind::StopController => Target::Controller,
        FaultKind::CutLink => Target::Node(shape.namespaced.unwrap_or(0)),
        FaultKind::KillNode | FaultKind::StopNode | FaultKind::MoveNode => {
            let n = u64::try_from(shape.nodes).unwrap_or(1);
            Target::Node(usize::try_from(rng.below(n)).unwrap_or(0))
        }
        FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris => {
            let mut doors = vec![Target::Controller];
            doors.extend(
                (0..shape.nodes)
                    .filter(|i| Some(*i) != shape.namespaced)
                    .map(Target::Node),
            );
            rng.pick(&doors).copied().unwrap_or(Target::Controller)
        }
    }
}

/// The pause after a fault, drawn: the opening round breathes less, so that one minute holds
/// every kind; later, one pause in four is a quiet stretch, long enough for instances to run
/// from submission to end with no fault at all (the report's baseline for the faults' cost).
fn breath(rng: &mut Rng, opening: bool) -> u64 {
    if opening {
        rng.range(500, 1_000)
    } else if rng.below(4) == 0 {
        rng.range(QUIET_MS.0, QUIET_MS.1)
    } else {
        rng.range(500, 2_500)
    }
}

/// How long a quiet stretch lasts, in ms (from, to): several instances' end-to-end times.
pub const QUIET_MS: (u64, u64) = (8_000, 12_000);

/// The plan of `seed` for `shape`: faults one after another, every one ending within the run.
pub fn plan(seed: u64, shape: &Shape) -> Vec<Fault> {
    let mut rng = Rng::new(seed);
    let allowed = kinds(shape);
    let mut first = allowed.clone();
    rng.shuffle(&mut first);
    let mut faults = Vec::new();
    // A first breath: the mesh starts its work before anything strikes.
    let mut now = rng.range(1_000, 3_000);
    let mut skipped = 0;
    while skipped < 20 {
        let opening = !first.is_empty();
        let kind = match first.pop() {
            Some(kind) => kind,
            None => {
                let n = u64::try_from(allowed.len()).unwrap_or(1);
                match allowed.get(usize::try_from(rng.below(n)).unwrap_or(0)) {
                    Some(kind) => *kind,
                    None => break,
                }
            }
        };
        let fault = Fault {
            at_ms: now,
            kind,
            target: target(&mut rng, kind, shape),
            hold_ms: hold(&mut rng, kind, shape),
        };
        if fault.end_ms() > shape.run_ms {
            // Too long for what is left: a shorter kind may still fit.
            skipped += 1;
            continue;
        }
        now = fault.end_ms() + breath(&mut rng, opening);
        faults.push(fault);
    }
    faults
}

#[cfg(test)]
mod tests;
