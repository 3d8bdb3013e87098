//! How a run moves on after any input: ordered ends (cancel, withdrawal), starts of what is
//! ready, cancellations of what is blocked, the end of an activity with the words it sends
//! (notifications, immediate reports), and the partition result once all is final. Every
//! change of an activity's state goes through [`Engine::step`].

use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, InstanceId, Message, PartitionResult, Report,
};
use mobiwf_xml_schema::{ActivityKind, Contingency, PartitionActivity};

use crate::lifecycle::{Event, Life};
use crate::readiness::Readiness;
use crate::run::{Progress, RunKey};
use crate::{Effect, Engine, Target, Transition};

impl Engine {
    /// The number of the try of `activity` that runs now, over all its runs (see
    /// `Progress::try_number`).
    pub(crate) fn try_number(&self, key: RunKey, activity: ActivityId) -> u32 {
        self.runs
            .get(&key)
            .and_then(|r| r.progress(activity))
            .map_or(0, Progress::try_number)
    }

    /// The runs of `instance` on this node.
    pub(crate) fn keys_of(&self, instance: InstanceId) -> Vec<RunKey> {
        self.runs
            .range(RunKey::first_of(instance)..=RunKey::last_of(instance))
            .map(|(k, _)| *k)
            .collect()
    }

    /// The run changed: it is written, and its timers are looked at again.
    pub(crate) fn touch_run(&mut self, key: RunKey) {
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
    }

    /// What is known of the instance changed: it is written, and the timers of its runs are
    /// looked at again.
    pub(crate) fn touch_known(&mut self, instance: InstanceId) {
        self.dirty_known.insert(instance);
        self.timers_stale_instances.insert(instance);
    }

    /// Moves an activity by `event` (see `Run::step`), marks the run changed and records the
    /// transition for the logs. False when nothing changed.
    pub(crate) fn step(&mut self, key: RunKey, activity: ActivityId, event: Event) -> bool {
        let Some(run) = self.runs.get_mut(&key) else {
            return false;
        };
        let (before, after) = match run.step(activity, event, self.now_us) {
            Ok(Some(states)) => states,
            Ok(None) => return false,
            Err(not_allowed) => {
                // The engine asks only for what its guards allowed: this is a bug, loud in
                // tests; otherwise it changes nothing and is recorded for the daemon's log
                // and metrics (`refused`).
                self.record_refused(key, activity, not_allowed.into());
                if cfg!(test) {
                    panic!("{not_allowed}");
                }
                return false;
            }
        };
        let name = run.activity(activity).map(|a| a.name.clone());
        let told = crate::notifications::state_changed(run, key, activity, after);
        self.told.extend(told);
        self.touch_run(key);
        if after.is_final() {
            self.note_end(key, activity);
            self.release_sync(key, activity);
        }
        if let (true, Some(name)) = (before != after, name) {
            self.transitions.push(Transition {
                key,
                activity,
                name,
                state: after,
            });
        }
        true
    }

    pub(crate) fn advance_instance(&mut self, instance: InstanceId, effects: &mut Vec<Effect>) {
        for key in self.keys_of(instance) {
            self.advance(key, effects);
        }
    }

    /// Ends what the controller or an operator ended, starts and cancels what can be, until
    /// nothing changes; then sends the partition result if the partition is done.
    pub(crate) fn advance(&mut self, key: RunKey, effects: &mut Vec<Effect>) {
        self.end_by_order(key, effects);
        // A pass that ended here after a later one began (`catch_up_passes`) may be withdrawn
        // too.
        if self.catch_up_passes(key) {
            self.end_by_order(key, effects);
        }
        // Only a missing file or a grant not taken yet (its instance was interrupted) keeps
        // an activity synchronizing that may go on (`fetched` admits it when the last file
        // arrives): without either, this costs a lookup and a look at the run's classes.
        if self
            .known
            .get(&key.instance)
            .is_some_and(|k| !k.missing.is_empty())
            || self.granted_waiting(key)
        {
            self.admit_synchronized(key, effects);
        }
        while let Some((activity, next)) = self.next_move(key) {
            match next {
                Readiness::Blocked(detail) => {
                    self.conclude(key, activity, Event::Block { detail }, effects)
                }
                Readiness::Skipped(detail) => {
                    self.conclude(key, activity, Event::Skip { detail }, effects)
                }
                Readiness::Ready | Readiness::Wait => self.start(key, activity, effects),
            }
        }
        if let Some(run) = self.runs.get_mut(&key)
            && !run.reported
            && run.all_final()
        {
            run.reported = true;
            let activities = run.records();
            self.touch_run(key);
            effects.push(Effect::Send {
                to: Target::Controller,
                message: Message::PartitionResult(PartitionResult {
                    instance: key.instance,
                    partition: key.partition,
                    activities,
                }),
            });
        }
    }

    /// The first waiting activity, in document order, that can start (`Ready` beside it),
    /// never will, or is on a path not taken (with the reason); an interrupted instance starts
    /// nothing.
    fn next_move(&self, key: RunKey) -> Option<(ActivityId, Readiness)> {
        let run = self.runs.get(&key)?;
        let known = self.known.get(&key.instance);
        let held = known.is_some_and(|k| k.interrupted);
        for act in &run.doc().activities {
            if run.life(act.id) != Some(&Life::NotReady) {
                continue;
            }
            match run.readiness(act, known) {
                Readiness::Wait => {}
                Readiness::Ready if held => {}
                decided => return Some((act.id, decided)),
            }
        }
        None
    }

    /// Its preconditions and rule hold (or its `timeToWait` ran out): it synchronizes. An
    /// activity of a task class, or ordered, asks the manager and waits for the grant
    /// (`crate::sync`);
    /// any other is ready at once, unless a file it reads has not arrived (it is admitted
    /// when the file is fetched, `admit_synchronized`).
    pub(crate) fn start(&mut self, key: RunKey, activity: ActivityId, effects: &mut Vec<Effect>) {
        if !self.step(key, activity, Event::Synchronize) || self.begin_sync(key, activity, effects)
        {
            return;
        }
        let here = self
            .runs
            .get(&key)
            .and_then(|r| r.activity(activity))
            .is_some_and(|a| self.data_here(key.instance, a));
        if here && self.step(key, activity, Event::Admit) {
            self.run_admitted(key, activity, effects);
        }
    }

    /// A ready activity goes on: an automatic one starts (its command runs; without one it
    /// succeeds at once); a manual one stays ready, offered to its users or on the node's
    /// worklist.
    pub(crate) fn run_admitted(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        effects: &mut Vec<Effect>,
    ) {
        let Some(act) = self.runs.get(&key).and_then(|r| r.activity(activity)) else {
            return;
        };
        let (kind, has_command) = (act.kind, act.command.is_some());
        let automatic = matches!(kind, ActivityKind::Automatic | ActivityKind::Dummy);
        if automatic && !self.step(key, activity, Event::Start) {
            return;
        }
        match (kind, has_command) {
            (ActivityKind::Automatic, true) => effects.extend(self.execute(key, activity)),
            (ActivityKind::Automatic | ActivityKind::Dummy, _) => {
                self.conclude(key, activity, Event::Succeed { detail: None }, effects)
            }
            // Offered to its users (their devices and the controller hear of it as item
            // events), or on the node's worklist: the controller is told it is ready.
            (ActivityKind::Manual | ActivityKind::SemiAutomatic, _) => {
                if !self.offer_item(key, activity, effects)
                    && let Some(record) = self.runs.get(&key).and_then(|r| r.record(activity))
                {
                    effects.push(report(key, record));
                }
            }
        }
    }

    /// The effect that runs the current try of an activity's command (a rerun counts on from
    /// the earlier runs' tries), with the instance data it reads as known now and the names
    /// it may write.
    pub(crate) fn execute(&self, key: RunKey, activity: ActivityId) -> Option<Effect> {
        let run = self.runs.get(&key)?;
        let act = run.activity(activity)?;
        let command = act.command.clone()?;
        let writes = act
            .data
            .writes
            .iter()
            .filter_map(|name| Some((name.clone(), run.doc().data_kind(name)?)))
            .collect();
        Some(Effect::Execute {
            key,
            activity,
            attempt: self.try_number(key, activity),
            lease_ms: run
                .progress(activity)
                .and_then(|p| crate::sync::fenced_lease(act, p)),
            asked_ms: run.progress(activity).map_or(0, |p| p.gate.asked_ms()),
            command,
            reads: self.reads_of(key.instance, act),
            writes,
        })
    }

    /// Ends an activity by `event` (success, failure, block) and sends what its end calls
    /// for: a notification to each partner of an adjacent (one per partner), and a report
    /// to the controller when it is `responseImmediate` or waits for a contingency activity.
    pub(crate) fn conclude(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        event: Event,
        effects: &mut Vec<Effect>,
    ) {
        if !self.step(key, activity, event) {
            return;
        }
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        let (Some(act), Some(record)) = (run.activity(activity), run.record(activity)) else {
            return;
        };
        let state = record.state;
        // A failed activity with a contingency activity: its successors wait for that one,
        // which the controller places when it hears of the failure, at once.
        let awaits_contingency =
            state == ActivityState::Failed && matches!(act.contingency, Contingency::Run(_));
        effects.extend(self.notifications(key, act, state));
        let completes = act.completion && state == ActivityState::Succeeded;
        if act.response_immediate || awaits_contingency || completes {
            effects.push(report(key, record));
        }
        if completes {
            self.complete_instance(key.instance, activity, effects);
        }
    }
}

/// True when starting the activity runs a command (which a timeout or a cancel must kill).
pub(crate) fn runs_command(act: &PartitionActivity) -> bool {
    act.kind == ActivityKind::Automatic && act.command.is_some()
}

/// Tells the controller at once how an activity stands.
pub(crate) fn report(key: RunKey, record: ActivityRecord) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::Report(Report {
            instance: key.instance,
            partition: key.partition,
            record,
        }),
    }
}
