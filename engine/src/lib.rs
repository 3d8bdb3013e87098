//! The partition engine: a pure state machine that runs the partitions a node was given.
//!
//! `apply(now, input) -> effects`, with no clock, disk, network or processes inside: the node's
//! daemon (the daemon (`mobiwf-node`)) feeds it deployments, notifications and finished commands, writes
//! what changed together with the messages it produced in one synced batch, and only then
//! carries out the effects (sending, starting commands, acknowledging).
//!
//! Execution rules: an activity starts when every precondition is met, a local one from this
//! partition's own state, a remote one from a notification; a finished activity notifies the
//! partner of each adjacent in another partition directly, and the controller at once when
//! `responseImmediate` is 1; when every activity of the partition is final, the partition result
//! goes to the controller.
//!
//! Failure rules: a failed command is tried again as its `<retries>` say; then its successors are
//! released (contingency 0), cancelled transitively (-1), or wait for contingency activity x
//! (x > 0), which the controller places elsewhere and announces with a substitution (the failure
//! is reported to the controller at once). Activities the controller withdraws (their partner was
//! too slow to answer) fail without notifying anyone: the controller applies their contingency. A
//! remote precondition that does not come within its `timeOut` is reported to the controller,
//! which decides.

//!
//! Layout: this file holds the types and [`Engine::apply`], a dispatch of one call per input;
//! each input's handling has a file of its own (`deploy`, `notify`, `finish`, `control`,
//! `pause`, `timers`, `passes`; `sync` the synchronization gate of activities of a task class),
//! `progress` moves runs on after any input, and every change of an activity's
//! state goes through the one transition function of `lifecycle`. `run` is one partition
//! run, `known` what the node knows of an instance, `items` the work items this node hosts
//! (assignment from the directory replica, users' claims), `store` what the daemon writes and
//! reads back, `view` what it shows.

mod compensate;
mod control;
#[cfg(test)]
mod coverage;
mod data;
mod deploy;
mod finish;
mod input;
mod items;
mod known;
pub mod lifecycle;
mod notifications;
mod notify;
mod passes;
mod pause;
mod progress;
mod readiness;
mod refusal;
mod refused;
mod rerun;
mod retire;
pub mod rules;
mod run;
mod speakers;
mod store;
mod sync;
mod timers;
mod view;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, ActivityState, InstanceId, Location, Message, Millis, NodeId, PartitionId,
};

pub use compensate::Undo;
pub use data::{Carried, Missing};
pub use input::{Changed, Claimed, Ended, Finish, Input, Notified, Passed};
pub use items::lifecycle as item_lifecycle;
pub use items::{
    Completion, CopyLife, Item, ItemCopy, ItemKey, RestoredPeople, StoredDirectory, StoredItem,
    StoredToken,
};
pub use known::{Known, MAX_SUBSTITUTIONS};
pub use lifecycle::{Event, Life, PausedFrom};
pub use pause::HeldEnd;
pub use refusal::Refusal;
pub use refused::{MAX_REFUSALS_KEPT, Refusals, Refused, RefusedTransition};
pub use retire::StoredInstance;
pub use run::{Progress, Run, RunKey, StoredRun};
pub use speakers::{EarlyWord, MAX_EARLY_INSTANCES, MAX_EARLY_WORDS, Said};
pub use store::{Changes, EncodeError, StoredKnown};
pub use sync::{Gate, Lost, Open, SYNC_LOST};

/// Where a message from the engine goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The controller this node is registered with.
    Controller,
    /// The partner at this location (a libp2p multiaddr ending in `/p2p/<peer id>`).
    Partner(Location),
}

/// Something the daemon must do after the engine's changes are on disk.
// Sends are most effects and carry their message by value, as the daemon stages it: a box
// per message would cost more than the size of the rarer variants saves.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A partner's word kept while its instance was not deployed here turned out to come
    /// from a peer that does not run its activity: dropped; the daemon logs and counts it.
    Refused {
        /// Who sent it.
        from: NodeId,
        /// The instance.
        instance: InstanceId,
        /// The activity it spoke of.
        activity: ActivityId,
        /// Why.
        reason: String,
    },
    /// Send a message (through the durable outbox).
    Send {
        /// Where to.
        to: Target,
        /// What.
        message: Message,
    },
    /// Stop the command of an activity (it ran longer than its `timeOut`, was withdrawn, or
    /// its instance was cancelled); its exit is ignored.
    Kill {
        /// The partition run.
        key: RunKey,
        /// The activity.
        activity: ActivityId,
        /// Which try (0 the first).
        attempt: u32,
        /// Why, for the log.
        why: String,
    },
    /// Run an automatic activity's command; report the outcome as [`Input::Finished`] with
    /// [`Finisher::Command`] and the same `attempt`.
    Execute {
        /// The partition run.
        key: RunKey,
        /// The activity.
        activity: ActivityId,
        /// Which try (0 the first; each try has its own run directory).
        attempt: u32,
        /// The command line (`sh -c`).
        command: String,
        /// The instance data it reads, as known when it starts: each a file of its name in
        /// `MOBIWF_DATA_DIR`.
        reads: Vec<mobiwf_proto::Datum>,
        /// The names it may write, with what each holds: read back from `MOBIWF_DATA_DIR`
        /// when it succeeds.
        writes: Vec<(String, mobiwf_xml_schema::DataKind)>,
        /// For an activity of a task class, the lease of its grant (ms): the command runs
        /// only while its node had a round trip with the controller within it
        /// (`crate::sync`); `None` for any other, which runs as before task classes.
        lease_ms: Option<u64>,
        /// When the request whose grant gives that lease was asked (ms since the epoch, this
        /// node's clock; 0 when not known): the lease counts from there at the latest.
        asked_ms: u64,
    },
    /// Get the content of a file the instance data references from the partner that holds it
    /// (in chunks, resuming where an earlier fetch stopped); then apply [`Input::Fetched`].
    Fetch {
        /// The instance that needs it.
        instance: InstanceId,
        /// The content's reference.
        file: mobiwf_proto::FileRef,
        /// The holder's location.
        from: Location,
    },
    /// Run the `<compensation>` of an activity that succeeded (in a run directory of its
    /// own, once); report the outcome as [`Input::CompensationEnded`].
    Compensate {
        /// The partition run.
        key: RunKey,
        /// The activity.
        activity: ActivityId,
        /// The compensation's command line (`sh -c`).
        command: String,
        /// The instance data the activity read and wrote, as known now: files of their names
        /// in the compensation's `MOBIWF_DATA_DIR` (what it undoes, e.g. a booking number).
        reads: Vec<mobiwf_proto::Datum>,
    },
}

/// Who finished an activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finisher {
    /// Its command exited (automatic activities).
    Command,
    /// A person, through the worklist (manual and semi-automatic activities).
    Person,
}

/// A manual activity waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkItem {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// `manual` or `semiAutomatic`.
    pub kind: String,
    /// When it was offered, in ms since the epoch.
    pub offered_ms: Option<u64>,
    /// Its pass in a loop's body (left out for the first: the worklist shows `3#2`).
    #[serde(default, skip_serializing_if = "mobiwf_proto::Pass::is_first")]
    pub pass: mobiwf_proto::Pass,
}

/// The state of every partition run on one node.
#[derive(Debug, Default)]
pub struct Engine {
    runs: BTreeMap<RunKey, Run>,
    /// What each instance's partners and controller told this node; kept at the instance
    /// level because a notification can arrive before the partition that needs it.
    known: BTreeMap<InstanceId, Known>,
    dirty_runs: BTreeSet<RunKey>,
    dirty_known: BTreeSet<InstanceId>,
    transitions: Vec<Transition>,
    /// The transitions the lifecycle table refused since the daemon last took them.
    refusals: Refusals,
    /// Messages decided while an activity changed state (`Engine::step`, which has no list
    /// of effects): added to the effects of the input being applied.
    told: Vec<Effect>,
    /// The time of the input being applied, in microseconds since the epoch
    /// ([`Engine::apply_us`]); records keep it next to the milliseconds the engine decides on.
    now_us: u64,
    /// Each run's earliest timer, ordered: the next deadline and the due timers are found
    /// here instead of by looking at every run the node ever held.
    deadlines: BTreeSet<(u64, RunKey)>,
    /// The entry of each run in `deadlines`.
    deadline_of: BTreeMap<RunKey, u64>,
    /// Runs, and instances (all their runs), whose timers changed since the last
    /// [`Engine::refresh_deadlines`].
    timers_stale: BTreeSet<RunKey>,
    timers_stale_instances: BTreeSet<InstanceId>,
    /// The work items this node hosts, the round-robin tokens and the directory replica.
    host: items::Host,
    /// The items' next `<deadline>` thresholds, ordered (see `items::deadline`).
    item_deadlines: BTreeSet<(u64, items::ItemKey)>,
    /// The entry of each item in `item_deadlines`.
    item_deadline_of: BTreeMap<items::ItemKey, u64>,
    /// The length of an hour for deployments that do not say (`--hour-ms`); 0: an hour.
    hour_ms: u64,
    /// Instances readmitted since the last [`Engine::take_readmitted`] (`retire.rs`).
    readmitted: BTreeSet<InstanceId>,
    /// How the daemon reads a document's locations; a deployment whose remote adjacent it
    /// cannot read is refused (`deploy.rs`). None: every location is taken.
    read_location: Option<ReadLocation>,
}

/// How a location a document gives is read (the daemon gives libp2p's checks; the pure cores
/// link no libp2p).
pub type ReadLocation = fn(&str) -> Result<mobiwf_proto::Location, String>;

/// An activity that changed state (for logs and metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The partition run.
    pub key: RunKey,
    /// The activity.
    pub activity: ActivityId,
    /// Its name.
    pub name: String,
    /// Its new state.
    pub state: ActivityState,
}

impl Engine {
    /// An engine that knows nothing.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Applies one input at `now_ms`. On `Err`, nothing changed.
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        self.apply_us(Millis(now_ms).as_micros(), input)
    }

    /// [`Engine::apply`] with the time to the microsecond, which the activity records keep
    /// (`started_us`, `finished_us`); every decision is still taken in milliseconds.
    pub fn apply_us(&mut self, now_us: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        self.now_us = now_us;
        let mut effects = Vec::new();
        let now_ms = Millis::from_micros(now_us).as_u64();
        let result = self.dispatch(now_ms, input, &mut effects);
        if result.is_ok() {
            self.close_ended_items(&mut effects);
            effects.append(&mut self.told);
        } else {
            // A refused input changed nothing, so it told nothing either.
            self.told.clear();
        }
        self.refresh_deadlines();
        result.map(|()| effects)
    }

    /// One call per input; each input's handling lives in its own module.
    fn dispatch(&mut self, now_ms: u64, input: Input, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        match input {
            Input::Deploy(deploy) => self.deploy(deploy, now_ms, fx)?,
            Input::Notified(notified) => self.notified_by(notified, fx)?,
            Input::StateChanged(changed) => self.changed_by(changed, fx)?,
            Input::Fetched { instance, file } => self.fetched(instance, &file, fx),
            Input::Withdraw(w) => self.withdraw(w, fx),
            Input::Substitute {
                instance,
                replaced,
                by,
                peer,
            } => self.substitute_at(instance, replaced, by, peer, fx),
            Input::Control(c) => self.control(c.instance, c.action, c.order, fx),
            Input::Completed(c) => self.complete_instance(c.instance, c.by, fx),
            Input::Tick => self.tick(now_ms, fx),
            Input::Finished(ended) => self.finished(now_ms, ended, fx)?,
            Input::Directory(directory) => self.take_directory(directory, fx),
            Input::Link { peer, reachable } => self.link(&peer, reachable, fx),
            Input::Claim(claimed) => self.claim(claimed, fx)?,
            Input::Compensate(c) => self.compensate(c.instance, c.partition, c.activity, fx),
            Input::CompensationEnded(ended) => self.compensation_ended(ended, fx),
            Input::Rerun(r) => {
                self.rerun(
                    now_ms,
                    r.instance,
                    r.partition,
                    r.activities,
                    (r.controls, r.rerun),
                    fx,
                );
            }
            Input::SyncGranted(granted) => self.sync_granted(granted, fx),
            Input::SyncLapsed(granted) => self.sync_lapsed(granted, fx),
            Input::SyncRefused(refused) => self.sync_refused(refused, fx),
            Input::SyncLost(lost) => self.sync_lost(lost, fx),
            Input::Pause(order) => self.pause_order(order, fx),
            Input::NewPass(passed) => self.new_pass_by(passed, fx)?,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
