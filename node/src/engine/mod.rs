//! The partition engine: a pure state machine that runs the partitions a node was given.
//!
//! `apply(now, input) -> effects`, with no clock, disk, network or processes inside: the node's
//! daemon (`crate::daemon`) feeds it deployments, notifications and finished commands, writes
//! what changed together with the messages it produced in one synced batch, and only then
//! carries out the effects (sending, starting commands, acknowledging).
//!
//! Execution rules (MISSION P3, P4, F1): an activity starts when every precondition is met, a
//! local one from this partition's own state, a remote one from a notification; a finished
//! activity notifies the partner of each adjacent in another partition directly, and the
//! controller at once when `responseImmediate` is 1; when every activity of the partition is
//! final, the partition result goes to the controller. A failed activity's successors are
//! released (contingency 0) or cancelled, transitively (-1; x > 0 is for now treated as -1,
//! until contingency activities can be placed).

mod run;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_runtime::wire::{ActivityRecord, ActivityState, Message, Outcome};
use mobiwf_xml_schema::ActivityKind;

pub use run::{Run, RunKey};

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
    /// Stop the command of an activity that ran longer than its `timeOut` (it has already
    /// failed; its command's exit is ignored).
    Kill {
        /// The partition run.
        key: RunKey,
        /// The activity.
        activity: u64,
    },
    /// Run an automatic activity's command; report the outcome as [`Input::Finished`] with
    /// [`Finisher::Command`].
    Execute {
        /// The partition run.
        key: RunKey,
        /// The activity.
        activity: u64,
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
    /// Time passed: start the activities whose `timeToWait` ran out (MISSION P7), fail those
    /// that ran longer than their `timeOut` (P5). The daemon sends it at
    /// [`Engine::next_deadline`].
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
    /// Remote outcomes heard per instance; kept at the instance level because a notification
    /// can arrive before the partition that needs it is deployed.
    heard: BTreeMap<u64, BTreeMap<u64, Outcome>>,
    dirty_runs: BTreeSet<RunKey>,
    dirty_heard: BTreeSet<u64>,
    transitions: Vec<Transition>,
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
    pub runs: Vec<Run>,
    /// Instances whose heard outcomes to write.
    pub heard: Vec<(u64, BTreeMap<u64, Outcome>)>,
}

impl Engine {
    /// An engine that knows nothing.
    pub fn new() -> Engine {
        Engine::default()
    }

    /// Rebuilds the engine from what the store holds.
    pub fn restore(runs: Vec<Run>, heard: Vec<(u64, BTreeMap<u64, Outcome>)>) -> Engine {
        Engine {
            runs: runs.into_iter().map(|r| (r.key, r)).collect(),
            heard: heard.into_iter().collect(),
            ..Engine::default()
        }
    }

    /// What to do again after a restart: the commands of activities that were running.
    /// (The daemon makes sure a command that is still running, or already ran, is not run
    /// twice.)
    pub fn resume(&self) -> Vec<Effect> {
        let mut effects = Vec::new();
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let running = run.record(act.id.0).map(|r| r.state) == Some(ActivityState::Running);
                if let (true, ActivityKind::Automatic, Some(command)) =
                    (running, act.kind, &act.command)
                {
                    effects.push(Effect::Execute {
                        key: run.key,
                        activity: act.id.0,
                        command: command.clone(),
                    });
                }
            }
        }
        effects
    }

    /// Applies one input. On `Err`, nothing changed.
    pub fn apply(&mut self, now_ms: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
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
                self.dirty_runs.insert(key);
                self.advance(key, now_ms, &mut effects);
            }
            Input::Notified {
                instance,
                activity,
                outcome,
            } => {
                let heard = self.heard.entry(instance).or_default();
                if heard.contains_key(&activity) {
                    return Ok(effects);
                }
                heard.insert(activity, outcome);
                self.dirty_heard.insert(instance);
                for key in self.keys_of(instance) {
                    self.advance(key, now_ms, &mut effects);
                }
            }
            Input::Tick => self.timers(now_ms, &mut effects),
            Input::Finished {
                instance,
                activity,
                succeeded,
                detail,
                by,
            } => {
                let key = self.finishable(instance, activity, by)?;
                let state = if succeeded {
                    ActivityState::Succeeded
                } else {
                    ActivityState::Failed
                };
                self.finish(key, activity, state, detail, now_ms, &mut effects);
                self.advance(key, now_ms, &mut effects);
            }
        }
        Ok(effects)
    }

    /// The earliest timer of any activity (`timeToWait` while waiting, `timeOut` while
    /// running), in ms since the epoch. Timers count from stored times, so they survive
    /// restarts.
    pub fn next_deadline(&self) -> Option<u64> {
        self.runs
            .values()
            .flat_map(|run| {
                run.doc()
                    .activities
                    .iter()
                    .filter_map(|act| run.timer(act).map(|(at, _)| at))
            })
            .min()
    }

    /// Carries out every timer that has run out: emergency starts (marked, and told to the
    /// controller at once) and activities that ran too long (failed, their command killed).
    fn timers(&mut self, now_ms: u64, effects: &mut Vec<Effect>) {
        let due: Vec<(RunKey, u64, run::Timer, u32, bool)> = self
            .runs
            .values()
            .flat_map(|run| {
                run.doc().activities.iter().filter_map(|act| {
                    let (at, timer) = run.timer(act)?;
                    let has_command = act.kind == ActivityKind::Automatic && act.command.is_some();
                    (at <= now_ms).then_some((
                        run.key,
                        act.id.0,
                        timer,
                        act.time_out_secs,
                        has_command,
                    ))
                })
            })
            .collect();
        for (key, activity, timer, time_out, has_command) in due {
            match timer {
                run::Timer::Emergency => {
                    if let Some(run) = self.runs.get_mut(&key) {
                        run.mark_emergency(activity);
                    }
                    self.start(key, activity, now_ms, effects);
                    if let Some(record) = self.runs.get(&key).and_then(|r| r.record(activity)) {
                        effects.push(report(key, record));
                    }
                }
                run::Timer::RunTooLong => {
                    let why = format!("ran longer than its timeOut of {time_out} s");
                    self.finish(
                        key,
                        activity,
                        ActivityState::Failed,
                        Some(why),
                        now_ms,
                        effects,
                    );
                    if has_command {
                        effects.push(Effect::Kill { key, activity });
                    }
                }
            }
            self.advance(key, now_ms, effects);
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

    /// Starts, cancels and finishes what can be, until nothing changes; then sends the
    /// partition result if the partition is done.
    fn advance(&mut self, key: RunKey, now_ms: u64, effects: &mut Vec<Effect>) {
        loop {
            let Some(run) = self.runs.get(&key) else {
                return;
            };
            let heard = self.heard.get(&key.instance);
            let mut step = None;
            for act in &run.doc().activities {
                if run.record(act.id.0).map(|r| r.state) != Some(ActivityState::Waiting) {
                    continue;
                }
                match run.readiness(act, heard) {
                    run::Readiness::Wait => {}
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
                Some(why) => self.finish(
                    key,
                    activity,
                    ActivityState::Cancelled,
                    Some(why),
                    now_ms,
                    effects,
                ),
                None => self.start(key, activity, now_ms, effects),
            }
        }
        if let Some(run) = self.runs.get_mut(&key)
            && !run.reported
            && run.all_final()
        {
            run.reported = true;
            self.dirty_runs.insert(key);
            effects.push(Effect::Send {
                to: Target::Controller,
                message: Message::PartitionResult {
                    instance: key.instance,
                    partition: key.partition,
                    activities: run.records(),
                },
            });
        }
    }

    fn start(&mut self, key: RunKey, activity: u64, now_ms: u64, effects: &mut Vec<Effect>) {
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        let Some(act) = run.activity(activity).cloned() else {
            return;
        };
        let (kind, command) = (act.kind, act.command.clone());
        run.set(activity, ActivityState::Running, now_ms, None);
        self.dirty_runs.insert(key);
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
                command,
            }),
            (ActivityKind::Automatic, None) => self.finish(
                key,
                activity,
                ActivityState::Succeeded,
                None,
                now_ms,
                effects,
            ),
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
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        run.set(activity, state, now_ms, detail);
        self.dirty_runs.insert(key);
        let Some(act) = run.activity(activity) else {
            return;
        };
        self.transitions.push(Transition {
            key,
            activity,
            name: act.name.clone(),
            state,
        });
        let outcome = run::outcome_of(state, act.contingency);
        // One notification per partner, however many of its activities wait for this one.
        let mut notified = BTreeSet::new();
        for adjacent in &act.adjacents {
            if run.activity(adjacent.id.0).is_none() && notified.insert(&adjacent.location) {
                effects.push(Effect::Send {
                    to: Target::Partner(adjacent.location.clone()),
                    message: Message::Notify {
                        instance: key.instance,
                        activity,
                        outcome,
                    },
                });
            }
        }
        if act.response_immediate
            && let Some(record) = run.record(activity)
        {
            effects.push(report(key, record));
        }
    }

    /// Hands over what changed since the last call, for the daemon to write.
    pub fn take_changes(&mut self) -> Changes {
        let runs = std::mem::take(&mut self.dirty_runs)
            .into_iter()
            .filter_map(|k| self.runs.get(&k).cloned())
            .collect();
        let heard = std::mem::take(&mut self.dirty_heard)
            .into_iter()
            .map(|i| (i, self.heard.get(&i).cloned().unwrap_or_default()))
            .collect();
        Changes { runs, heard }
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

    /// The record of one activity, wherever it is on this node.
    pub fn record(&self, instance: u64, activity: u64) -> Option<&ActivityRecord> {
        self.keys_of(instance)
            .into_iter()
            .find_map(|k| self.runs.get(&k).and_then(|r| r.record(activity)))
    }
}

/// Tells the controller at once how an activity stands.
fn report(key: RunKey, record: &ActivityRecord) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::Report {
            instance: key.instance,
            partition: key.partition,
            record: record.clone(),
        },
    }
}

#[cfg(test)]
mod tests;
