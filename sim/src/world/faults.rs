//! The faults of a run, drawn from the seed for its first part: daemons that crash (alone, or
//! with their machine: the lazy writes lost, the commands killed) and start again, a crash
//! right after a group's write (before anything of it is sent or answered), links cut and
//! healed, a node that comes back at another address, and a network that loses, delays and
//! duplicates. Then the faults stop (`Quiet`): every link heals, every daemon runs, the network
//! loses nothing, and everything under way must settle.

use super::{CONTROLLER, Event, Pid, World};
use crate::rng::Rng;
use crate::workload::Script;

/// A fault, or the end of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// A daemon crashes; with its machine when `machine`.
    Crash {
        /// Which.
        pid: Pid,
        /// The machine goes down too.
        machine: bool,
    },
    /// A daemon starts (its machine on again).
    Start(Pid),
    /// A daemon starts again at another address.
    Move(Pid),
    /// The link between two machines is cut.
    Cut(Pid, Pid),
    /// It heals.
    Heal(Pid, Pid),
    /// The faults stop.
    Quiet,
}

/// How much goes wrong while faults last.
#[derive(Debug, Clone, Copy)]
pub struct Weather {
    /// Per mille of requests whose connection breaks under them.
    pub breaks: u32,
    /// Per mille of the requests caught in a break that still reach their receiver.
    pub reach_anyway: u32,
    /// Per mille of slow trips.
    pub slow: u32,
    /// Per mille of groups followed by a crash right after their write.
    pub crash_after_write: u32,
}

/// Draws the faults of a run over `machines` machines until `quiet_at` µs.
pub fn draw(rng: &mut Rng, machines: usize, quiet_at: u64) -> (Weather, Vec<(u64, Fault)>) {
    let calm = rng.chance(150);
    let weather = if calm {
        Weather {
            breaks: 0,
            reach_anyway: 0,
            slow: 0,
            crash_after_write: 0,
        }
    } else {
        Weather {
            breaks: u32::try_from(rng.below(40)).unwrap_or(0),
            reach_anyway: u32::try_from(rng.below(500)).unwrap_or(0),
            slow: u32::try_from(rng.below(80)).unwrap_or(0),
            crash_after_write: u32::try_from(rng.below(15)).unwrap_or(0),
        }
    };
    let mut faults = Vec::new();
    let count = if calm { 0 } else { rng.range(0, 5) };
    for _ in 0..count {
        let at = rng.range(1_000_000, quiet_at.max(1_000_001));
        let pid = usize::try_from(rng.below(machines as u64)).unwrap_or(0);
        let back = at + rng.range(200_000, 15_000_000);
        match rng.below(4) {
            0 | 1 => {
                let machine = rng.chance(400);
                faults.push((at, Fault::Crash { pid, machine }));
                let start = if pid != CONTROLLER && rng.chance(250) {
                    Fault::Move(pid)
                } else {
                    Fault::Start(pid)
                };
                faults.push((back, start));
            }
            _ => {
                let other = usize::try_from(rng.below(machines as u64)).unwrap_or(0);
                if other != pid {
                    faults.push((at, Fault::Cut(pid, other)));
                    faults.push((back, Fault::Heal(pid, other)));
                }
            }
        }
    }
    faults.push((quiet_at, Fault::Quiet));
    (weather, faults)
}

impl World {
    /// Carries out a fault.
    pub(super) fn fault(&mut self, fault: Fault) {
        let line = format!("fault: {fault:?}");
        self.log(&line);
        match fault {
            Fault::Crash { pid, machine } => self.crash(pid, machine),
            Fault::Start(pid) => self.start(pid),
            Fault::Move(pid) => {
                if !self.running(pid) {
                    self.machines[pid].addr_epoch += 1;
                }
                self.start(pid);
            }
            Fault::Cut(a, b) => {
                self.net.cut.insert((a.min(b), a.max(b)));
                let noticed = self.rng.range(500_000, super::net::BREAK_NOTICED_US);
                self.break_connection(a, b, noticed);
            }
            Fault::Heal(a, b) => {
                self.net.cut.remove(&(a.min(b), a.max(b)));
            }
            Fault::Quiet => self.quiet(),
        }
    }

    /// A daemon crashes (with its machine when `machine`).
    pub fn crash(&mut self, pid: Pid, machine: bool) {
        if pid == CONTROLLER {
            self.controller = None;
        } else {
            self.nodes[pid - 1] = None;
        }
        self.close_connections_of(pid, machine);
        let m = &mut self.machines[pid];
        m.wake_at = None;
        m.timer_at = None;
        if machine && m.up {
            m.up = false;
            m.disk.machine_crash();
            let now = self.clock_us(pid);
            let running: Vec<_> = self.machines[pid].runs.running().collect();
            self.machines[pid].runs.machine_crash(now);
            for dir in running {
                self.checks.stopped(pid, dir, self.now);
            }
        }
    }

    /// Starts `pid`'s daemon (its machine on), unless it runs.
    pub fn start(&mut self, pid: Pid) {
        if self.running(pid) {
            return;
        }
        self.machines[pid].up = true;
        if pid == CONTROLLER {
            self.start_controller();
        } else {
            self.start_node(pid);
        }
    }

    /// Right after a group's write, while faults last: now and then the daemon crashes before
    /// anything of the group is sent or answered. True when it did (it starts again soon).
    pub(super) fn crash_after_write(&mut self, pid: Pid) -> bool {
        if self.quiet || !self.rng.chance(self.weather.crash_after_write) {
            return false;
        }
        let line = format!("{}: crashed right after its write", self.name(pid));
        self.log(&line);
        self.crash(pid, false);
        let back = self.rng.range(100_000, 3_000_000);
        self.after(back, Event::Fault(Fault::Start(pid)));
        true
    }

    /// The faults stop: the network is reliable, every link heals, every daemon runs, and
    /// what the operators left interrupted is resumed.
    fn quiet(&mut self) {
        self.quiet = true;
        self.net.breaks = 0;
        self.net.slow = 0;
        self.net.cut.clear();
        for pid in 0..self.machines.len() {
            self.start(pid);
        }
        self.after(1_000, Event::Script(Script::Sweep));
    }
}
