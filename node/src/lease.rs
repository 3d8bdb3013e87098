//! Fencing of the commands that run under a task class's grant: no two conflicting activities
//! at once, even when a holder's node is cut off from its controller or killed (its commands
//! outlive it by design, `executor`).
//!
//! A grant carries a lease (`SyncGranted::lease_ms`). The node renews it on round trips only:
//! up to the latest time it sent something the controller is known to have received, plus the
//! lease, on the node's own clock (no clock skew between them enters). Two things tell it so:
//! the grant itself (its request, asked at `asked_ms`, reached the controller), and the
//! controller's probes: the node notes when it answered each probe (`Probe::seq`), and a later
//! probe's `echo` names the latest answer the controller received (`probed`). Hearing the
//! controller alone renews nothing: a node that hears it while its own answers are lost does
//! not keep running after the controller suspected it. The controller counts a silent holder's
//! class free only once its failure detector suspects the node, at least `--suspect-after`
//! (twice the lease) after the last answer it received, which is later than any time the node
//! counts from plus the lease (see docs/coordination.md).
//!
//! For each running held command the node keeps a lease file, `<run dir>/lease`, holding the
//! time (ms since the epoch) until which the command may run. It only ever moves that time
//! forward, never once it passed (the watchdog is ending the command then), and only on a new
//! round trip (`refresh`, every [`LEASE_REFRESH`]); a node that is dead or cut off moves it no
//! more, nor does it for a try the engine killed (`release`). The wrapper's watchdog
//! (`executor`) kills the command's process group once that time passed, and the activity
//! fails ("synchronization lost").
//!
//! A person's activity (manual or semi-automatic) holding a grant, offered or taken, cannot be
//! killed: its host fails it instead ("synchronization lost") once its lease, counted the same
//! way, ran out, and the person's device hears the item ended as for any other end
//! (`people_out`).
//!
//! A command without a class has no lease file and no watchdog.
//!
//! How the round trips are counted, and when a lease file moves, are pure decisions
//! (`mobiwf_node_core::lease`), shared with the simulator; this module keeps the files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use mobiwf_engine::RunKey;
use mobiwf_node_core::lease::{self, AtHold, RoundTrips};
use mobiwf_proto::{ActivityId, Probe};
use tokio::sync::mpsc;

/// The name of a held command's lease file in its run directory.
pub const LEASE_FILE: &str = "lease";

/// How often the lease files of running held commands are brought up to the latest round
/// trip with the controller.
pub const LEASE_REFRESH: Duration = Duration::from_millis(100);

/// The lease files of the running held commands, and the node's round trips with its
/// controller.
#[derive(Clone, Default)]
pub struct Leases(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// The node's round trips with its controller (the pure count, `mobiwf_node_core::lease`).
    trips: Mutex<RoundTrips>,
    /// The run directories of the running held commands.
    held: Mutex<BTreeMap<PathBuf, Held>>,
    /// The persons' activities holding a grant, offered or taken.
    people: Mutex<BTreeMap<(RunKey, ActivityId), PersonHold>>,
}

/// A person's activity holding a grant.
#[derive(Debug, Clone, Copy)]
struct PersonHold {
    /// The grant's lease.
    lease_ms: u64,
    /// When its request was asked (ms since the epoch; 0: not known).
    asked_ms: u64,
}

/// A person's activity whose lease ran out: (its run, the activity).
pub type PersonOut = (RunKey, ActivityId);

/// One running held command's lease.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// The grant's lease.
    lease_ms: u64,
    /// When its request was asked (ms since the epoch; 0: not known).
    asked_ms: u64,
    /// The time its lease file holds.
    until_ms: u64,
}

impl Held {
    /// Until when it may run with the round trips confirmed up to `confirmed_ms`.
    fn due(&self, confirmed_ms: u64) -> u64 {
        lease::lease_until(confirmed_ms, self.asked_ms, self.lease_ms)
    }
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("confirmed_ms", &self.confirmed_ms())
            .field("held", &self.lock().len())
            .finish()
    }
}

impl Leases {
    /// No command held, no round trip with the controller yet.
    pub fn new() -> Leases {
        Leases::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Held>> {
        // A panic elsewhere while holding it left a map that is still whole.
        self.0.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn trips(&self) -> MutexGuard<'_, RoundTrips> {
        // As `lock`: every change of the count is whole.
        self.0.trips.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The controller is known to have received what the node sent at `sent_ms` (ms since
    /// the epoch, this node's clock), as the node learned at `now_ms`.
    pub fn confirm(&self, sent_ms: u64, now_ms: u64) {
        self.trips().confirm(sent_ms, now_ms);
    }

    /// What `f` makes of the node's round trips with its controller so far.
    pub fn with_trips<R>(&self, f: impl FnOnce(&RoundTrips) -> R) -> R {
        f(&self.trips())
    }

    /// The latest time the node sent something the controller is known to have received (0:
    /// nothing since the node started).
    pub fn confirmed_ms(&self) -> u64 {
        self.trips().confirmed_ms()
    }

    /// The controller's probe came at `now_ms` and is answered: its number is noted with that
    /// time, and the answer its echo names, if noted, is confirmed (sent at its noted time).
    pub fn probed(&self, probe: Probe, now_ms: u64) {
        self.trips().probed(probe, now_ms);
    }

    /// A held command runs (or is watched again after a restart) in `dir` under a lease of
    /// `lease_ms` whose request was asked at `asked_ms`: its lease file holds the latest of
    /// that and the confirmed round trips, plus the lease (or, when that lease ran out at some
    /// instant since the request, that instant: it does not start), unless it already holds a later
    /// time or one that passed at `now_ms` (written before a restart: never moved back, nor
    /// made to run again), and is kept up from now on. Before the command starts: a command
    /// whose lease file cannot be written must not start.
    pub fn hold(
        &self,
        dir: &Path,
        lease_ms: u64,
        asked_ms: u64,
        now_ms: u64,
    ) -> Result<(), String> {
        let mut held = Held {
            lease_ms,
            asked_ms,
            until_ms: 0,
        };
        let due = self.trips().due_at_hold(asked_ms, lease_ms, now_ms);
        held.until_ms = match lease::at_hold(read_until(dir), due, now_ms) {
            AtHold::Keep(w) => w,
            AtHold::Write(until) => {
                write_until(dir, until)?;
                until
            }
        };
        self.lock().insert(dir.to_owned(), held);
        Ok(())
    }

    /// The held command in `dir` ended, or was killed: its lease file is no longer kept up.
    pub fn release(&self, dir: &Path) {
        self.lock().remove(dir);
    }

    /// Brings every held command's lease file up to the latest round trip plus its lease
    /// (never back, and never once it passed at `now_ms`). Gives what could not be written.
    pub fn refresh(&self, now_ms: u64) -> Vec<String> {
        let confirmed = self.confirmed_ms();
        let mut problems = Vec::new();
        let mut held = self.lock();
        for (dir, h) in held.iter_mut() {
            let Some(until) = lease::renewed(h.until_ms, h.due(confirmed), now_ms) else {
                continue;
            };
            match write_until(dir, until) {
                Ok(()) => h.until_ms = until,
                Err(e) => problems.push(e),
            }
        }
        problems
    }

    /// A person's activity holds a grant of `lease_ms` whose request was asked at `asked_ms`,
    /// offered or taken.
    pub fn watch_person(&self, key: RunKey, activity: ActivityId, lease_ms: u64, asked_ms: u64) {
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        people.insert((key, activity), PersonHold { lease_ms, asked_ms });
    }

    /// A person's activity no longer holds a grant (it ended).
    pub fn unwatch_person(&self, key: RunKey, activity: ActivityId) {
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        people.remove(&(key, activity));
    }

    /// The persons' activities whose lease ran out at `now_ms` (no round trip with the
    /// controller within it), each told once: they are no longer watched.
    pub fn people_out(&self, now_ms: u64) -> Vec<PersonOut> {
        let trips = self.trips().clone();
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        let out: Vec<PersonOut> = people
            .iter()
            .filter(|(_, h)| trips.person_out(h.asked_ms, h.lease_ms, now_ms))
            .map(|(k, _)| *k)
            .collect();
        for k in &out {
            people.remove(k);
        }
        out
    }

    /// Keeps the lease files up every [`LEASE_REFRESH`], until every handle is dropped; the
    /// persons' activities whose lease ran out come out of the receiver.
    pub fn spawn_refresher(&self) -> mpsc::UnboundedReceiver<PersonOut> {
        let weak: Weak<Inner> = Arc::downgrade(&self.0);
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(LEASE_REFRESH);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                every.tick().await;
                let Some(inner) = weak.upgrade() else {
                    return;
                };
                let leases = Leases(inner);
                let now = mobiwf_runtime::process::now_ms();
                for out in leases.people_out(now) {
                    // Nobody listens (a test): nothing to tell.
                    let _ = out_tx.send(out);
                }
                // Small writes, a few per tick at most: off the async workers all the same.
                let written = tokio::task::spawn_blocking(move || leases.refresh(now)).await;
                for problem in written.unwrap_or_default() {
                    tracing::warn!("a lease not kept up: {problem}");
                }
            }
        });
        out_rx
    }
}

/// The time a lease file holds, if it holds one.
pub fn read_until(dir: &Path) -> Option<u64> {
    std::fs::read_to_string(dir.join(LEASE_FILE))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Writes a lease file at once whole (tmp + rename): the watchdog never reads half of one.
fn write_until(dir: &Path, until_ms: u64) -> Result<(), String> {
    let tmp = dir.join(format!("{LEASE_FILE}.tmp"));
    std::fs::write(&tmp, until_ms.to_string())
        .and_then(|()| std::fs::rename(&tmp, dir.join(LEASE_FILE)))
        .map_err(|e| format!("cannot write the lease file in {}: {e}", dir.display()))
}

/// How often a held command's watchdog looks at its lease file
/// ([`mobiwf_proto::watchdog_period_ms`]), as `sleep` takes it (seconds).
pub fn watchdog_period(lease_ms: u64) -> String {
    let ms = mobiwf_proto::watchdog_period_ms(lease_ms);
    format!("{}.{:03}", ms / 1000, ms % 1000)
}
