//! Fencing of the commands that run under a task class's grant: no two conflicting activities
//! at once, even when a holder's node is cut off from its controller or killed (its commands
//! outlive it by design, `executor`).
//!
//! A grant carries a lease (`SyncGranted::lease_ms`). The node records when it last heard from
//! its controller (any message from it, the failure detector's probes included: `heard`), and
//! keeps for each running held command a lease file, `<run dir>/lease`, holding the time (ms
//! since the epoch) until which the command may run: the last time it heard from the
//! controller plus the lease. It only ever moves that time forward, and only when it hears from
//! the controller again (`refresh`, every [`LEASE_REFRESH`]); a node that is dead or cut off
//! moves it no more. The wrapper's watchdog (`executor`) kills the command's process group
//! once that time passed, and the activity fails ("synchronization lost"). The controller
//! counts a silent holder's class free only once its failure detector suspects the node,
//! later than the lease ran out.
//!
//! A person's activity (manual or semi-automatic) holding a grant, offered or taken, cannot be
//! killed: its host fails it instead ("synchronization lost") once it has not heard from the
//! controller for the lease (counted from when it began watching it, at the latest: after a
//! restart, from the start), and the person's device hears the item ended as for any other
//! end (`people_out`).
//!
//! A command without a class has no lease file and no watchdog.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use mobiwf_engine::RunKey;
use mobiwf_proto::ActivityId;
use tokio::sync::mpsc;

/// The name of a held command's lease file in its run directory.
pub const LEASE_FILE: &str = "lease";

/// How often the lease files of running held commands are brought up to the last time the
/// controller was heard.
pub const LEASE_REFRESH: Duration = Duration::from_millis(100);

/// The lease files of the running held commands, and when the controller was last heard.
#[derive(Clone, Default)]
pub struct Leases(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// When the controller was last heard, in ms since the epoch (0: not since the start).
    heard_ms: AtomicU64,
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
    /// When the host began watching it (ms since the epoch).
    since_ms: u64,
}

/// A person's activity whose lease ran out: (its run, the activity).
pub type PersonOut = (RunKey, ActivityId);

/// One running held command's lease.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// The grant's lease.
    lease_ms: u64,
    /// The time its lease file holds.
    until_ms: u64,
}

impl std::fmt::Debug for Leases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leases")
            .field("heard_ms", &self.heard_ms())
            .field("held", &self.lock().len())
            .finish()
    }
}

impl Leases {
    /// No command held, the controller not heard yet.
    pub fn new() -> Leases {
        Leases::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<PathBuf, Held>> {
        // A panic elsewhere while holding it left a map that is still whole.
        self.0.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The controller was heard at `now_ms` (ms since the epoch).
    pub fn heard(&self, now_ms: u64) {
        self.0.heard_ms.fetch_max(now_ms, Ordering::Relaxed);
    }

    /// When the controller was last heard (0: not since the node started).
    pub fn heard_ms(&self) -> u64 {
        self.0.heard_ms.load(Ordering::Relaxed)
    }

    /// A held command runs (or is watched again after a restart) in `dir` under a lease of
    /// `lease_ms`: its lease file holds the last time the controller was heard plus the lease,
    /// unless it already holds a later time (written before a restart), and is kept up from
    /// now on. Before the command starts: a command whose lease file cannot be written must
    /// not start.
    pub fn hold(&self, dir: &Path, lease_ms: u64) -> Result<(), String> {
        let until = self.heard_ms().saturating_add(lease_ms);
        let written = read_until(dir);
        let until_ms = match written {
            Some(w) if w >= until => w,
            _ => {
                write_until(dir, until)?;
                until
            }
        };
        self.lock()
            .insert(dir.to_owned(), Held { lease_ms, until_ms });
        Ok(())
    }

    /// The held command in `dir` ended: its lease file is no longer kept up.
    pub fn release(&self, dir: &Path) {
        self.lock().remove(dir);
    }

    /// Brings every held command's lease file up to the last time the controller was heard
    /// plus its lease (never back). Gives what could not be written.
    pub fn refresh(&self) -> Vec<String> {
        let heard = self.heard_ms();
        let mut problems = Vec::new();
        let mut held = self.lock();
        for (dir, h) in held.iter_mut() {
            let until = heard.saturating_add(h.lease_ms);
            if until <= h.until_ms {
                continue;
            }
            match write_until(dir, until) {
                Ok(()) => h.until_ms = until,
                Err(e) => problems.push(e),
            }
        }
        problems
    }

    /// A person's activity holds a grant of `lease_ms`, offered or taken, from `now_ms` on
    /// (again: its lease is still counted from when it was first watched).
    pub fn watch_person(&self, key: RunKey, activity: ActivityId, lease_ms: u64, now_ms: u64) {
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        people
            .entry((key, activity))
            .or_insert(PersonHold {
                lease_ms,
                since_ms: now_ms,
            })
            .lease_ms = lease_ms;
    }

    /// A person's activity no longer holds a grant (it ended).
    pub fn unwatch_person(&self, key: RunKey, activity: ActivityId) {
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        people.remove(&(key, activity));
    }

    /// The persons' activities whose lease ran out at `now_ms` (not heard from the controller
    /// within it), each told once: they are no longer watched.
    pub fn people_out(&self, now_ms: u64) -> Vec<PersonOut> {
        let heard = self.heard_ms();
        let mut people = self.0.people.lock().unwrap_or_else(|e| e.into_inner());
        let out: Vec<PersonOut> = people
            .iter()
            .filter(|(_, h)| heard.max(h.since_ms).saturating_add(h.lease_ms) < now_ms)
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
                for out in leases.people_out(mobiwf_runtime::process::now_ms()) {
                    // Nobody listens (a test): nothing to tell.
                    let _ = out_tx.send(out);
                }
                // Small writes, a few per tick at most: off the async workers all the same.
                let written = tokio::task::spawn_blocking(move || leases.refresh()).await;
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

/// How often a held command's watchdog looks at its lease file: a tenth of the lease, from
/// 20 ms to half a second; as `sleep` takes it (seconds).
pub fn watchdog_period(lease_ms: u64) -> String {
    let ms = (lease_ms / 10).clamp(20, 500);
    format!("{}.{:03}", ms / 1000, ms % 1000)
}
