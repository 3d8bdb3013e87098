//! The partition engine: a pure state machine that runs the partitions a node was given.
//!
//! `apply(now, input) -> effects`, with no clock, disk, network or processes inside: the node's
//! daemon (the daemon (`mobiwf-node`)) feeds it deployments, notifications and finished commands, writes
//! what changed together with the messages it produced in one synced batch, and only then
//! carries out the effects (sending, starting commands, acknowledging).
//!
//! Execution rules (MISSION P3, P4, F1): an activity starts when every precondition is met, a
//! local one from this partition's own state, a remote one from a notification; a finished
//! activity notifies the partner of each adjacent in another partition directly, and the
//! controller at once when `responseImmediate` is 1; when every activity of the partition is
//! final, the partition result goes to the controller.
//!
//! Failure rules (MISSION P5-P7, F1, F2): a failed command is tried again as its `<retries>`
//! say; then its successors are released (contingency 0), cancelled transitively (-1), or wait
//! for contingency activity x (x > 0), which the controller places elsewhere and announces with
//! a substitution (the failure is reported to the controller at once). Activities the
//! controller withdraws (their partner was too slow to answer) fail without notifying anyone:
//! the controller applies their contingency. A remote precondition that does not come within
//! its `timeOut` is reported to the controller, which decides.

mod known;
mod run;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityRecord, ActivityState, Control, Message, Outcome};
use mobiwf_xml_schema::{ActivityKind, Contingency};

pub use known::{Known, MAX_SUBSTITUTIONS};
pub use run::{Run, RunKey, StoredRun};

/// Where a message from the engine goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The controller this node is registered with.
    Controller,
    /// The partner at this location (a libp2p multiaddr ending in `/p2p/<peer id>`).
    Partner(String),
}

/// Something the daemon must do after the engine's changes are on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
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
        activity: u64,
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
        activity: u64,
        /// Which try (0 the first; each try has its own run directory).
        attempt: u32,
        /// The command line (`sh -c`).
        command: String,
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

/// What happens to the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The controller sends a partition of an instance.
    Deploy {
        /// The instance.
        instance: u64,
        /// The partition.
        partition: u64,
        /// The partition document, as XML.
        document: String,
    },
    /// Another partner says an activity finished.
    Notified {
        /// The instance.
        instance: u64,
        /// The finished activity.
        activity: u64,
        /// What it means for its successors.
        outcome: Outcome,
    },
    /// The controller says these activities failed (their partner did not answer in time).
    Withdraw {
        /// The instance.
        instance: u64,
        /// The activities.
        activities: Vec<u64>,
        /// Why.
        reason: String,
    },
    /// The controller says contingency activity `by` runs in place of failed `replaced`.
    Substitute {
        /// The instance.
        instance: u64,
        /// The failed activity.
        replaced: u64,
        /// The contingency activity.
        by: u64,
    },
    /// An operator interrupted, resumed or cancelled the instance.
    Control {
        /// The instance.
        instance: u64,
        /// What to do.
        action: Control,
    },
    /// Time passed: start the activities whose `timeToWait` ran out (MISSION P7), fail those
    /// that ran longer than their `timeOut` (P5), try failed commands again, report overdue
    /// preconditions. The daemon sends it at [`Engine::next_deadline`].
    Tick,
    /// An activity finished.
    Finished {
        /// The instance.
        instance: u64,
        /// The activity.
        activity: u64,
        /// True when it succeeded.
        succeeded: bool,
        /// Why it failed (exit status, the person's words).
        detail: Option<String>,
        /// Who says so.
        by: Finisher,
        /// Which try of the command ended (ignored for people): the end of an earlier try
        /// that was given up on is ignored.
        attempt: u32,
    },
}

/// Why the engine refused an input. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The partition document does not load.
    #[error(
        "partition document of instance {instance}, partition {partition} is invalid:\n{diagnostics}"
    )]
    BadDocument {
        /// The instance.
        instance: u64,
        /// The partition.
        partition: u64,
        /// The problems, rendered.
        diagnostics: String,
    },
    /// The document is for another instance.
    #[error("the document says workflow id {found}, but it was sent for instance {instance}")]
    WrongInstance {
        /// The instance it was sent for.
        instance: u64,
        /// The id in the document.
        found: u64,
    },
    /// Another document was deployed before under the same instance and partition.
    #[error(
        "instance {instance}, partition {partition} was deployed here before with another \
         document; was the controller's data directory reset? Give this node a fresh data \
         directory, or restore the controller's"
    )]
    Conflict {
        /// The instance.
        instance: u64,
        /// The partition.
        partition: u64,
    },
    /// No such activity on this node.
    #[error("no activity {activity} of instance {instance} on this node")]
    UnknownActivity {
        /// The instance.
        instance: u64,
        /// The activity.
        activity: u64,
    },
    /// The activity cannot be finished now or by this finisher.
    #[error("activity {activity} of instance {instance} cannot be completed: {reason}")]
    NotCompletable {
        /// The instance.
        instance: u64,
        /// The activity.
        activity: u64,
        /// Why.
        reason: String,
    },
}

/// A manual activity waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkItem {
    /// The instance.
    pub instance: u64,
    /// The partition.
    pub partition: u64,
    /// The activity.
    pub activity: u64,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// `manual` or `semiAutomatic`.
    pub kind: String,
    /// When it was offered, in ms since the epoch.
    pub offered_ms: Option<u64>,
}

/// The state of every partition run on one node.
#[derive(Debug, Default)]
pub struct Engine {
    runs: BTreeMap<RunKey, Run>,
    /// What each instance's partners and controller told this node; kept at the instance
    /// level because a notification can arrive before the partition that needs it.
    known: BTreeMap<u64, Known>,
    dirty_runs: BTreeSet<RunKey>,
    /// Runs deployed since the last [`Engine::take_changes`]: their documents are written.
    new_runs: BTreeSet<RunKey>,
    dirty_known: BTreeSet<u64>,
    transitions: Vec<Transition>,
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
    timers_stale_instances: BTreeSet<u64>,
}

/// An activity that changed state (for logs and metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The partition run.
    pub key: RunKey,
    /// The activity.
    pub activity: u64,
    /// Its name.
    pub name: String,
    /// Its new state.
    pub state: ActivityState,
}

/// What changed since the last [`Engine::take_changes`], to be written to the store.
#[derive(Debug, Default)]
pub struct Changes {
    /// Runs to write.
    pub runs: Vec<StoredRun>,
    /// Instances whose knowledge to write.
    pub known: Vec<(u64, Known)>,
}

impl Engine {
    /// An engine that knows nothing.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Rebuilds the engine from what the store holds.
    pub fn restore(runs: Vec<Run>, known: Vec<(u64, Known)>) -> Engine {
        let mut engine = Engine {
            runs: runs.into_iter().map(|r| (r.key, r)).collect(),
            known: known.into_iter().collect(),
            ..Engine::default()
        };
        engine.timers_stale = engine.runs.keys().copied().collect();
        engine.refresh_deadlines();
        engine
    }

    /// What to do again after a restart: the commands of activities that were running.
    /// (The daemon makes sure a command that is still running, or already ran, is not run
    /// twice.)
    pub fn resume(&self) -> Vec<Effect> {
        let mut effects = Vec::new();
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let Some(rec) = run.record(act.id.0) else {
                    continue;
                };
                let running =
                    rec.state == ActivityState::Running && !run.retry_at.contains_key(&act.id.0);
                if let (true, ActivityKind::Automatic, Some(command)) =
                    (running, act.kind, &act.command)
                {
                    effects.push(Effect::Execute {
                        key: run.key,
                        activity: act.id.0,
                        attempt: rec.retried,
                        command: command.clone(),
                    });
                }
            }
        }
        effects
    }

    /// Applies one input at `now_ms`. On `Err`, nothing changed.
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        self.apply_us(now_ms.saturating_mul(1000), input)
    }

    /// [`Engine::apply`] with the time to the microsecond, which the activity records keep
    /// (`started_us`, `finished_us`); every decision is still taken in milliseconds.
    pub fn apply_us(&mut self, now_us: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        self.now_us = now_us;
        let result = self.apply_input(now_us / 1000, input);
        self.refresh_deadlines();
        result
    }

    fn apply_input(&mut self, now_ms: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        let mut effects = Vec::new();
        match input {
            Input::Deploy {
                instance,
                partition,
                document,
            } => {
                let key = RunKey {
                    instance,
                    partition,
                };
                if let Some(run) = self.runs.get(&key) {
                    if run.document == document {
                        return Ok(effects);
                    }
                    return Err(Refusal::Conflict {
                        instance,
                        partition,
                    });
                }
                let run = Run::new(key, document, now_ms)?;
                self.runs.insert(key, run);
                self.new_runs.insert(key);
                self.dirty_runs.insert(key);
                self.timers_stale.insert(key);
                self.advance(key, &mut effects);
            }
            Input::Notified {
                instance,
                activity,
                outcome,
            } => {
                let known = self.known.entry(instance).or_default();
                if known.replaced.contains_key(&activity) {
                    // Its contingency activity took over: the word is recorded, never used.
                    if let std::collections::btree_map::Entry::Vacant(e) =
                        known.late.entry(activity)
                    {
                        e.insert(outcome);
                        self.dirty_known.insert(instance);
                        self.timers_stale_instances.insert(instance);
                    }
                    return Ok(effects);
                }
                if known.heard.contains_key(&activity) {
                    return Ok(effects);
                }
                known.heard.insert(activity, outcome);
                self.dirty_known.insert(instance);
                self.timers_stale_instances.insert(instance);
                self.advance_instance(instance, &mut effects);
            }
            Input::Withdraw {
                instance,
                activities,
                reason,
            } => {
                let known = self.known.entry(instance).or_default();
                for activity in activities {
                    known
                        .withdrawn
                        .entry(activity)
                        .or_insert_with(|| reason.clone());
                }
                self.dirty_known.insert(instance);
                self.timers_stale_instances.insert(instance);
                self.advance_instance(instance, &mut effects);
            }
            Input::Substitute {
                instance,
                replaced,
                by,
            } => {
                let known = self.known.entry(instance).or_default();
                if known.replaced.contains_key(&replaced) {
                    return Ok(effects);
                }
                known.replaced.insert(replaced, by);
                self.dirty_known.insert(instance);
                self.timers_stale_instances.insert(instance);
                self.advance_instance(instance, &mut effects);
            }
            Input::Control { instance, action } => {
                let known = self.known.entry(instance).or_default();
                match action {
                    Control::Interrupt => known.interrupted = true,
                    Control::Resume => known.interrupted = false,
                    Control::Cancel => known.cancelled = true,
                }
                self.dirty_known.insert(instance);
                self.timers_stale_instances.insert(instance);
                self.advance_instance(instance, &mut effects);
            }
            Input::Tick => self.timers(now_ms, &mut effects),
            Input::Finished {
                instance,
                activity,
                succeeded,
                detail,
                by,
                attempt,
            } => {
                let key = self.finishable(instance, activity, by)?;
                let Some(run) = self.runs.get(&key) else {
                    return Ok(effects);
                };
                let current = run.record(activity).map_or(0, |r| r.retried);
                let waiting_to_retry = run.retry_at.contains_key(&activity);
                if by == Finisher::Command && (attempt != current || waiting_to_retry) {
                    // The end of a try that was already given up on (killed on timeOut).
                    return Ok(effects);
                }
                if succeeded {
                    self.finish(
                        key,
                        activity,
                        ActivityState::Succeeded,
                        detail,
                        &mut effects,
                    );
                } else {
                    let why = detail.unwrap_or_else(|| "failed".to_owned());
                    self.fail(key, activity, why, now_ms, &mut effects);
                }
                self.advance(key, &mut effects);
            }
        }
        Ok(effects)
    }

    /// The earliest timer of any activity (see `Run::timer`), in ms since the epoch. Timers
    /// count from stored times, so they survive restarts.
    pub fn next_deadline(&self) -> Option<u64> {
        self.deadlines.first().map(|(at, _)| *at)
    }

    /// Brings `deadlines` up to date with the runs whose timers may have changed.
    fn refresh_deadlines(&mut self) {
        for instance in std::mem::take(&mut self.timers_stale_instances) {
            let keys = self
                .runs
                .range(RunKey::first_of(instance)..=RunKey::last_of(instance))
                .map(|(k, _)| *k);
            self.timers_stale.extend(keys);
        }
        for key in std::mem::take(&mut self.timers_stale) {
            if let Some(at) = self.deadline_of.remove(&key) {
                self.deadlines.remove(&(at, key));
            }
            let Some(run) = self.runs.get(&key) else {
                continue;
            };
            if let Some((at, _, _)) = run.earliest_timer(self.known.get(&key.instance)) {
                self.deadlines.insert((at, key));
                self.deadline_of.insert(key, at);
            }
        }
    }

    /// Carries out every timer that has run out, earliest first, one at a time: each is taken
    /// from the state the previous one left, because a timer that fires can start or end
    /// activities whose own timers were due too (an activity started by its predecessor's
    /// emergency start must not be started again by its own), and an activity can have
    /// several timers due at once (a precondition `timeOut` and its `timeToWait`). This ends:
    /// each timer that fires is gone afterwards (the activity started or ended, the overdue
    /// precondition is marked, the retry is consumed) or replaced by one later than now.
    fn timers(&mut self, now_ms: u64, effects: &mut Vec<Effect>) {
        loop {
            self.refresh_deadlines();
            let Some((key, activity, timer)) = self.first_due(now_ms) else {
                break;
            };
            self.fire(key, activity, timer, now_ms, effects);
        }
    }

    /// The earliest timer that has run out (`deadlines` being up to date): the earliest
    /// timer of the run with the earliest deadline.
    fn first_due(&self, now_ms: u64) -> Option<(RunKey, u64, run::Timer)> {
        let &(_, key) = self.deadlines.first().filter(|(at, _)| *at <= now_ms)?;
        let (_, activity, timer) = self
            .runs
            .get(&key)?
            .earliest_timer(self.known.get(&key.instance))?;
        Some((key, activity, timer))
    }

    /// Carries out one timer of one activity.
    fn fire(
        &mut self,
        key: RunKey,
        activity: u64,
        timer: run::Timer,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        match timer {
            run::Timer::Emergency => {
                if let Some(run) = self.runs.get_mut(&key) {
                    run.mark_emergency(activity);
                }
                let before = effects.len();
                self.start(key, activity, effects);
                // Told at once, unless it already finished and `finish` told (responseImmediate).
                let told = effects[before..].iter().any(|e| {
                    matches!(e, Effect::Send { message: Message::Report { record, .. }, .. }
                        if record.activity.0 == activity)
                });
                if !told && let Some(record) = self.runs.get(&key).and_then(|r| r.record(activity))
                {
                    effects.push(report(key, record));
                }
            }
            run::Timer::RunTooLong => {
                let Some(run) = self.runs.get(&key) else {
                    return;
                };
                let Some(act) = run.activity(activity) else {
                    return;
                };
                let time_out = act.time_out_secs;
                let has_command = runs_command(act);
                let attempt = run.record(activity).map_or(0, |r| r.retried);
                let why = format!("ran longer than its timeOut of {time_out} s");
                if has_command {
                    effects.push(Effect::Kill {
                        key,
                        activity,
                        attempt,
                        why: why.clone(),
                    });
                }
                self.fail(key, activity, why, now_ms, effects);
            }
            run::Timer::Retry => self.retry(key, activity, now_ms, effects),
            run::Timer::Overdue {
                precondition,
                time_out_secs,
            } => {
                if let Some(run) = self.runs.get_mut(&key) {
                    run.overdue.insert((activity, precondition));
                    self.dirty_runs.insert(key);
                    self.timers_stale.insert(key);
                }
                effects.push(Effect::Send {
                    to: Target::Controller,
                    message: Message::Overdue {
                        instance: mobiwf_proto::InstanceId(key.instance),
                        waiting: mobiwf_proto::ActivityId(activity),
                        precondition: mobiwf_proto::ActivityId(precondition),
                        time_out_secs,
                    },
                });
            }
        }
        self.advance(key, effects);
    }

    /// A try of an activity failed: try again if its `<retries>` allow (after their wait),
    /// else it fails.
    fn fail(
        &mut self,
        key: RunKey,
        activity: u64,
        why: String,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.get(&key.instance);
        let cancelled = known.is_some_and(|k| k.cancelled);
        let interrupted = known.is_some_and(|k| k.interrupted);
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let Some(act) = run.activity(activity) else {
            return;
        };
        let (count, wait) = (act.retries.count, act.retries.wait_secs);
        let automatic = act.kind == ActivityKind::Automatic;
        let Some(rec) = run.activities.get_mut(&activity) else {
            return;
        };
        if !automatic || cancelled || rec.retried >= count {
            self.finish(key, activity, ActivityState::Failed, Some(why), effects);
            return;
        }
        rec.retried += 1;
        rec.detail = Some(format!(
            "try {} of {} failed: {why}",
            rec.retried,
            count + 1
        ));
        run.retry_at
            .insert(activity, now_ms + u64::from(wait) * 1000);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        // An interrupted instance starts nothing, not even a next try: it waits for the
        // resumption (its timer is held until then, see `Run::timer`).
        if wait == 0 && !interrupted {
            self.retry(key, activity, now_ms, effects);
        }
    }

    /// Runs the next try of an activity's command.
    fn retry(&mut self, key: RunKey, activity: u64, now_ms: u64, effects: &mut Vec<Effect>) {
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        if run.retry_at.remove(&activity).is_none() {
            return;
        }
        let command = run.activity(activity).and_then(|a| a.command.clone());
        let Some(rec) = run.activities.get_mut(&activity) else {
            return;
        };
        rec.started_ms = Some(now_ms);
        rec.started_us = Some(self.now_us);
        let attempt = rec.retried;
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        if let Some(command) = command {
            effects.push(Effect::Execute {
                key,
                activity,
                attempt,
                command,
            });
        }
    }

    fn keys_of(&self, instance: u64) -> Vec<RunKey> {
        self.runs
            .range(RunKey::first_of(instance)..=RunKey::last_of(instance))
            .map(|(k, _)| *k)
            .collect()
    }

    fn finishable(&self, instance: u64, activity: u64, by: Finisher) -> Result<RunKey, Refusal> {
        let not = |reason: String| Refusal::NotCompletable {
            instance,
            activity,
            reason,
        };
        for key in self.keys_of(instance) {
            let Some(run) = self.runs.get(&key) else {
                continue;
            };
            let Some(act) = run.activity(activity) else {
                continue;
            };
            let state = run.record(activity).map(|r| r.state);
            if state != Some(ActivityState::Running) {
                let s = state.map_or("unknown", ActivityState::as_str);
                return Err(not(format!("it is {s}, not running")));
            }
            return match (act.kind, by) {
                (ActivityKind::Automatic, Finisher::Person) => Err(not(
                    "it is automatic: its command's exit status decides".to_owned(),
                )),
                (ActivityKind::Manual | ActivityKind::SemiAutomatic, Finisher::Command) => {
                    Err(not("it is done by a person, not by a command".to_owned()))
                }
                _ => Ok(key),
            };
        }
        Err(Refusal::UnknownActivity { instance, activity })
    }

    fn advance_instance(&mut self, instance: u64, effects: &mut Vec<Effect>) {
        for key in self.keys_of(instance) {
            self.advance(key, effects);
        }
    }

    /// Ends what the controller or an operator ended, starts and cancels what can be, until
    /// nothing changes; then sends the partition result if the partition is done.
    fn advance(&mut self, key: RunKey, effects: &mut Vec<Effect>) {
        self.end_by_order(key, effects);
        loop {
            let Some(run) = self.runs.get(&key) else {
                return;
            };
            let known = self.known.get(&key.instance);
            let held = known.is_some_and(|k| k.interrupted);
            let mut step = None;
            for act in &run.doc().activities {
                if run.record(act.id.0).map(|r| r.state) != Some(ActivityState::Waiting) {
                    continue;
                }
                match run.readiness(act, known) {
                    run::Readiness::Wait => {}
                    run::Readiness::Ready if held => {}
                    run::Readiness::Ready => {
                        step = Some((act.id.0, None));
                        break;
                    }
                    run::Readiness::Blocked(why) => {
                        step = Some((act.id.0, Some(why)));
                        break;
                    }
                }
            }
            let Some((activity, blocked)) = step else {
                break;
            };
            match blocked {
                Some(why) => {
                    self.finish(key, activity, ActivityState::Cancelled, Some(why), effects)
                }
                None => self.start(key, activity, effects),
            }
        }
        if let Some(run) = self.runs.get_mut(&key)
            && !run.reported
            && run.all_final()
        {
            run.reported = true;
            self.dirty_runs.insert(key);
            self.timers_stale.insert(key);
            effects.push(Effect::Send {
                to: Target::Controller,
                message: Message::PartitionResult {
                    instance: mobiwf_proto::InstanceId(key.instance),
                    partition: mobiwf_proto::PartitionId(key.partition),
                    activities: run.records(),
                },
            });
        }
    }

    /// Ends the activities an operator cancelled or the controller withdrew. Nobody is
    /// notified: the controller knows, and decides for their successors elsewhere.
    fn end_by_order(&mut self, key: RunKey, effects: &mut Vec<Effect>) {
        let now_us = self.now_us;
        let Some(known) = self.known.get(&key.instance) else {
            return;
        };
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let mut ended = Vec::new();
        for act in &run.doc().activities {
            let id = act.id.0;
            let Some(rec) = run.record(id).filter(|r| !r.state.is_final()) else {
                continue;
            };
            let (state, why) = if known.cancelled {
                (
                    ActivityState::Cancelled,
                    "the instance was cancelled by an operator".to_owned(),
                )
            } else if let Some(reason) = known.withdrawn.get(&id) {
                (
                    ActivityState::Failed,
                    format!("withdrawn by the controller: {reason}"),
                )
            } else {
                continue;
            };
            let has_command = runs_command(act);
            if rec.state == ActivityState::Running && has_command && !run.retry_at.contains_key(&id)
            {
                effects.push(Effect::Kill {
                    key,
                    activity: id,
                    attempt: rec.retried,
                    why: why.clone(),
                });
            }
            ended.push((id, act.name.clone(), state, why));
        }
        for (id, name, state, why) in ended {
            run.set(id, state, now_us, Some(why));
            self.dirty_runs.insert(key);
            self.timers_stale.insert(key);
            self.transitions.push(Transition {
                key,
                activity: id,
                name,
                state,
            });
        }
    }

    fn start(&mut self, key: RunKey, activity: u64, effects: &mut Vec<Effect>) {
        let now_us = self.now_us;
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let Some(act) = run.activity(activity).cloned() else {
            return;
        };
        let (kind, command) = (act.kind, act.command.clone());
        run.set(activity, ActivityState::Running, now_us, None);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        self.transitions.push(Transition {
            key,
            activity,
            name: act.name.clone(),
            state: ActivityState::Running,
        });
        match (kind, command) {
            (ActivityKind::Automatic, Some(command)) => effects.push(Effect::Execute {
                key,
                activity,
                attempt: 0,
                command,
            }),
            (ActivityKind::Automatic, None) => {
                self.finish(key, activity, ActivityState::Succeeded, None, effects)
            }
            // On the worklist until a person completes it.
            (ActivityKind::Manual | ActivityKind::SemiAutomatic, _) => {}
        }
    }

    fn finish(
        &mut self,
        key: RunKey,
        activity: u64,
        state: ActivityState,
        detail: Option<String>,
        effects: &mut Vec<Effect>,
    ) {
        let now_us = self.now_us;
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        run.set(activity, state, now_us, detail);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        let Some(act) = run.activity(activity) else {
            return;
        };
        self.transitions.push(Transition {
            key,
            activity,
            name: act.name.clone(),
            state,
        });
        // A failed activity with a contingency activity: its successors wait for that one,
        // which the controller places when it hears of the failure, at once.
        let awaits_contingency =
            state == ActivityState::Failed && matches!(act.contingency, Contingency::Run(_));
        // One notification per partner, however many of its activities wait for this one.
        let mut notified = BTreeSet::new();
        if let Some(outcome) = run::outcome_of(state, act.contingency) {
            for adjacent in &act.adjacents {
                if run.activity(adjacent.id.0).is_none() && notified.insert(&adjacent.location) {
                    effects.push(Effect::Send {
                        to: Target::Partner(adjacent.location.clone()),
                        message: Message::Notify {
                            instance: mobiwf_proto::InstanceId(key.instance),
                            activity: mobiwf_proto::ActivityId(activity),
                            outcome,
                        },
                    });
                }
            }
        }
        if (act.response_immediate || awaits_contingency)
            && let Some(record) = run.record(activity)
        {
            effects.push(report(key, record));
        }
    }

    /// Hands over what changed since the last call, for the daemon to write.
    pub fn take_changes(&mut self) -> Changes {
        let new_runs = std::mem::take(&mut self.new_runs);
        let runs = std::mem::take(&mut self.dirty_runs)
            .into_iter()
            .filter_map(|k| Some(StoredRun::of(self.runs.get(&k)?, new_runs.contains(&k))))
            .collect();
        let known = std::mem::take(&mut self.dirty_known)
            .into_iter()
            .map(|i| (i, self.known.get(&i).cloned().unwrap_or_default()))
            .collect();
        Changes { runs, known }
    }

    /// Hands over the state changes of activities since the last call.
    pub fn take_transitions(&mut self) -> Vec<Transition> {
        std::mem::take(&mut self.transitions)
    }

    /// Every partition run, in key order.
    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.runs.values()
    }

    /// The manual and semi-automatic activities waiting for a person.
    pub fn worklist(&self) -> Vec<WorkItem> {
        let mut items = Vec::new();
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let Some(rec) = run.record(act.id.0) else {
                    continue;
                };
                if rec.state == ActivityState::Running && act.kind != ActivityKind::Automatic {
                    items.push(WorkItem {
                        instance: run.key.instance,
                        partition: run.key.partition,
                        activity: act.id.0,
                        name: act.name.clone(),
                        description: act.description.clone(),
                        kind: act.kind.as_str().to_owned(),
                        offered_ms: rec.started_ms,
                    });
                }
            }
        }
        items
    }

    /// What this node knows about an instance beyond its partitions.
    pub fn known(&self, instance: u64) -> Option<&Known> {
        self.known.get(&instance)
    }

    /// The record of one activity, wherever it is on this node.
    pub fn record(&self, instance: u64, activity: u64) -> Option<&ActivityRecord> {
        self.keys_of(instance)
            .into_iter()
            .find_map(|k| self.runs.get(&k).and_then(|r| r.record(activity)))
    }
}

/// True when starting the activity runs a command (which a timeout or a cancel must kill).
fn runs_command(act: &mobiwf_xml_schema::PartitionActivity) -> bool {
    act.kind == ActivityKind::Automatic && act.command.is_some()
}

/// Tells the controller at once how an activity stands.
fn report(key: RunKey, record: &ActivityRecord) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::Report {
            instance: mobiwf_proto::InstanceId(key.instance),
            partition: mobiwf_proto::PartitionId(key.partition),
            record: record.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
