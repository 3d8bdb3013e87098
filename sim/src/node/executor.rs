//! The commands of a node's machine, as the node's executor (`mobiwf-node`, `src/executor.rs`)
//! runs them: each execution has a run directory, claimed once by its wrapper (the atomic
//! `mkdir`), so that a try runs at most once across crashes; the command runs in a process of
//! its own that outlives a crashed node (not a crashed machine) and leaves its exit status;
//! a kill marks the directory and kills the process (a wrapper that finds the mark runs
//! nothing); a command under a task class's grant runs only while its lease file's time has
//! not passed, its watchdog killing it once it has ("synchronization lost"). A restarted node
//! asked to run an execution again finds its exit, or its live process to watch, or a claim
//! whose process is gone ("interrupted": not run again).
//!
//! What a command does is drawn from the seed at its start ([`Plan`]): how long it takes,
//! whether it succeeds, the completion flag it writes. The directories and the processes are
//! the machine's; the watching is the node process's (the world keeps who watches what).

use std::collections::BTreeMap;

use mobiwf_engine::Finish;
use mobiwf_proto::{ActivityId, DataValue, InstanceId, PartitionId};

/// Which execution a run directory is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunKind {
    /// A try of the activity's command (0 the first).
    Try(u32),
    /// The activity's compensation.
    Compensation,
}

/// A run directory: `runs/<instance>-<partition>-<activity>[.<try>|.compensation]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunDir {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Which execution.
    pub kind: RunKind,
}

impl std::fmt::Display for RunDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}-{}", self.instance, self.partition, self.activity)?;
        match self.kind {
            RunKind::Try(0) => Ok(()),
            RunKind::Try(n) => write!(f, ".{n}"),
            RunKind::Compensation => write!(f, ".compensation"),
        }
    }
}

/// How an execution ended, as the executor tells the node (`executor::Ended`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Succeeded or failed, with its words and flag.
    pub finish: Finish,
    /// What it wrote.
    pub written: Vec<(String, DataValue)>,
    /// Its lease ran out ("synchronization lost").
    pub lost: bool,
}

fn failed(detail: &str) -> Ended {
    Ended {
        finish: Finish::Failed {
            detail: Some(detail.to_owned()),
        },
        written: Vec::new(),
        lost: false,
    }
}

fn lost() -> Ended {
    Ended {
        finish: Finish::Failed {
            detail: Some("synchronization lost".to_owned()),
        },
        written: Vec::new(),
        lost: true,
    }
}

/// What a command will do, drawn when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// How long it runs, µs.
    pub duration_us: u64,
    /// How it ends.
    pub end: Ended,
}

/// What the exit file says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Exit {
    /// The command's end.
    Status(Ended),
    /// A kill came before it started: it ran nothing.
    Killed,
    /// Its lease had run out before it started: it ran nothing.
    Lost,
}

/// One run directory.
#[derive(Debug, Clone, Default)]
struct Dir {
    claimed: bool,
    kill_mark: bool,
    lost_mark: bool,
    exit: Option<Exit>,
    /// The live wrapper's process, with what its command will do.
    process: Option<(u64, Plan)>,
    /// The lease file: ms since the epoch until which it may run.
    lease_until: Option<u64>,
}

/// A command's start, for the checks: the same try must never start twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// Its directory.
    pub dir: RunDir,
    /// When, µs.
    pub at: u64,
    /// Until when, µs (its planned end; a kill ends it earlier).
    pub until: u64,
}

/// What asking for an execution came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// Its end is known now (its exit read, or its process found gone).
    Ended(Ended),
    /// Its process runs: its end comes later ([`Runs::process_ended`]).
    Running,
    /// Started now as process `pid`, ending at the time its plan says.
    Started {
        /// The process.
        pid: u64,
        /// When it ends, µs.
        ends_at: u64,
    },
}

/// A machine's run directories and command processes.
#[derive(Debug, Default)]
pub struct Runs {
    dirs: BTreeMap<RunDir, Dir>,
    next_pid: u64,
    /// Every command started on this machine, in order.
    pub starts: Vec<Start>,
}

impl Runs {
    /// Runs `dir` (`executor::execute`), or finds how its earlier run ended. `lease` is the
    /// time (ms) a held command's lease file gets now (`Leases::hold`; `None`: not held);
    /// `plan` is what the command does if it starts now.
    pub fn execute(
        &mut self,
        dir: RunDir,
        lease: Option<u64>,
        now_us: u64,
        plan: impl FnOnce() -> Plan,
    ) -> Asked {
        let entry = self.dirs.entry(dir).or_default();
        if let Some(exit) = &entry.exit {
            return Asked::Ended(exit_ended(exit));
        }
        if let Some(due) = lease {
            // `Leases::hold`: never moved back, nor made to run again once it passed.
            let held = mobiwf_node_core::lease::at_hold(entry.lease_until, due, now_us / 1000);
            entry.lease_until = Some(held.until_ms());
        }
        if entry.claimed {
            return match entry.process {
                Some(_) => Asked::Running,
                None => Asked::Ended(gone(entry)),
            };
        }
        entry.claimed = true;
        let now_ms = now_us / 1000;
        if entry.kill_mark {
            entry.exit = Some(Exit::Killed);
            return Asked::Ended(exit_ended(&Exit::Killed));
        }
        if lease.is_some() && entry.lease_until.is_none_or(|until| now_ms > until) {
            entry.exit = Some(Exit::Lost);
            return Asked::Ended(lost());
        }
        let plan = plan();
        self.next_pid += 1;
        let pid = self.next_pid;
        let ends_at = now_us + plan.duration_us;
        entry.process = Some((pid, plan));
        self.starts.push(Start {
            dir,
            at: now_us,
            until: ends_at,
        });
        Asked::Started { pid, ends_at }
    }

    /// Process `pid` of `dir` ended as planned: its exit written. Its end, for whoever watches;
    /// `None` when that process is no longer the directory's (killed before).
    pub fn process_ended(&mut self, dir: RunDir, pid: u64) -> Option<Ended> {
        let entry = self.dirs.get_mut(&dir)?;
        match &entry.process {
            Some((p, _)) if *p == pid => {}
            _ => return None,
        }
        let (_, plan) = entry.process.take()?;
        entry.exit = Some(Exit::Status(plan.end.clone()));
        Some(plan.end)
    }

    /// Kills the command of `dir` (`executor::kill`): the mark first, then the process. Its
    /// end for whoever watches, when a process was killed.
    pub fn kill(&mut self, dir: RunDir, now_us: u64) -> Option<Ended> {
        let entry = self.dirs.entry(dir).or_default();
        if entry.exit.is_some() {
            return None;
        }
        entry.kill_mark = true;
        let (_, _) = entry.process.take()?;
        self.cut_short(dir, now_us);
        Some(failed(
            "interrupted: the command's process ended without recording an exit status \
             (killed with its node?); not run again",
        ))
    }

    /// A held command's watchdog looks at its lease file at `now_us`: once its time passed,
    /// the mark `lost` and the process killed. Its end for whoever watches, when it killed it.
    pub fn watchdog(&mut self, dir: RunDir, pid: u64, now_us: u64) -> Option<Ended> {
        let entry = self.dirs.get_mut(&dir)?;
        match &entry.process {
            Some((p, _)) if *p == pid => {}
            _ => return None,
        }
        if entry
            .lease_until
            .is_some_and(|until| now_us / 1000 <= until)
        {
            return None;
        }
        entry.lost_mark = true;
        entry.process = None;
        self.cut_short(dir, now_us);
        Some(lost())
    }

    /// Whether process `pid` of `dir` still runs.
    pub fn alive(&self, dir: RunDir, pid: u64) -> bool {
        self.dirs
            .get(&dir)
            .and_then(|d| d.process.as_ref())
            .is_some_and(|(p, _)| *p == pid)
    }

    /// The lease file of `dir` is brought up to `due` ms at `now_ms` (`Leases::refresh`: never
    /// back, and never once it passed).
    pub fn refresh_lease(&mut self, dir: RunDir, due: u64, now_ms: u64) {
        if let Some(entry) = self.dirs.get_mut(&dir)
            && let Some(until) = entry.lease_until
            && let Some(renewed) = mobiwf_node_core::lease::renewed(until, due, now_ms)
        {
            entry.lease_until = Some(renewed);
        }
    }

    /// The machine went down: every command process dies without an exit.
    pub fn machine_crash(&mut self, now_us: u64) {
        let running: Vec<RunDir> = self
            .dirs
            .iter()
            .filter(|(_, d)| d.process.is_some())
            .map(|(k, _)| *k)
            .collect();
        for dir in running {
            if let Some(d) = self.dirs.get_mut(&dir) {
                d.process = None;
            }
            self.cut_short(dir, now_us);
        }
    }

    /// The running commands, for the checks: their directories and since when.
    pub fn running(&self) -> impl Iterator<Item = RunDir> + '_ {
        self.dirs
            .iter()
            .filter(|(_, d)| d.process.is_some())
            .map(|(k, _)| *k)
    }

    /// The last start of `dir` ended now, earlier than planned.
    fn cut_short(&mut self, dir: RunDir, now_us: u64) {
        if let Some(start) = self.starts.iter_mut().rev().find(|s| s.dir == dir) {
            start.until = start.until.min(now_us);
        }
    }
}

/// What an exit file tells (`executor::read_exit`).
fn exit_ended(exit: &Exit) -> Ended {
    match exit {
        Exit::Status(ended) => ended.clone(),
        Exit::Killed => failed("killed before its command started"),
        Exit::Lost => lost(),
    }
}

/// A claimed directory whose process is gone without an exit (`executor::watch`).
fn gone(dir: &Dir) -> Ended {
    if dir.lost_mark {
        lost()
    } else {
        failed(
            "interrupted: the command's process ended without recording an exit status \
             (killed with its node?); not run again",
        )
    }
}
