//! Pausing one activity (the PAUSING state of *A lightweight workflow engine based on a
//! relational structure* (He, Li, Jiao, Liu); *Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §5.3, case 2): an operator's order from the controller
//! (`Input::Pause`), or the holder of its work item (a claim, `items::claim`).
//!
//! Only a `Ready` or `Running` activity is paused (anything else is refused with what to do);
//! its holder keeps its item. While it is paused nothing starts it, its `timeOut` does not
//! fire, and its holder's other claims are refused; a running command runs on unless the
//! pause kills it (`--kill`): then the next try runs when it is resumed (a try of its own, its
//! `<retries>` untouched). A command that ends while it is paused has its end held
//! ([`HeldEnd`], stored with the run) and taken when it is resumed. Its `timeOut` moves by the
//! time it was paused; its `<deadline>` stops only when the activity says
//! `<pauseStopsDeadline>true</pauseStopsDeadline>`: then the item's thresholds are not
//! counted while it is paused, and the deadline moves by the paused time when it resumes.
//!
//! Every pause and resumption, and every operator's order refused, is told to the controller
//! (`Message::PauseReport`), which shows it in the status and history.

use mobiwf_proto::{
    ActivityId, DataValue, InstanceId, Message, PauseAction, PauseOrder, PauseOutcome, PauseReport,
};
use serde::{Deserialize, Serialize};

use crate::lifecycle::{Event, Life, PausedFrom};
use crate::progress::runs_command;
use crate::run::RunKey;
use crate::{Effect, Ended, Engine, Finish, Finisher, Target};

/// Why a paused activity's holder cannot do anything else with it.
pub(crate) const PAUSED: &str =
    "it is paused: resume it first (mobiwf-node resume INSTANCE ACTIVITY)";

/// The end of a command that came while its activity was paused: taken when it is resumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldEnd {
    /// Which try ended.
    pub attempt: u32,
    /// True when it succeeded.
    pub succeeded: bool,
    /// What was said of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its completion flag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// The instance data it wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub written: Vec<(String, DataValue)>,
}

impl Engine {
    /// An operator's order: carried out, or refused; either way the controller is told.
    pub(crate) fn pause_order(&mut self, order: PauseOrder, fx: &mut Vec<Effect>) {
        let PauseOrder {
            instance,
            activity,
            action,
            by,
        } = order;
        let outcome = match self.run_of(instance, activity) {
            Ok(key) => self.pause_or_resume(key, activity, action, fx),
            Err(refusal) => Err(refusal.to_string()),
        };
        let outcome = outcome.unwrap_or_else(|reason| PauseOutcome::Refused { reason });
        self.tell_pause(instance, activity, by, outcome, fx);
    }

    /// Pauses or resumes `activity`; `Err` (nothing changed) says why not and what to do.
    pub(crate) fn pause_or_resume(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        action: PauseAction,
        fx: &mut Vec<Effect>,
    ) -> Result<PauseOutcome, String> {
        match action {
            PauseAction::Pause { kill } => self.pause(key, activity, kill, fx),
            PauseAction::Resume => self.go_on(key, activity, fx),
        }
    }

    /// Tells the controller that `by` paused or resumed an activity, or what was refused.
    pub(crate) fn tell_pause(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        by: String,
        outcome: PauseOutcome,
        fx: &mut Vec<Effect>,
    ) {
        // Its pass, as every word about an activity names it: the controller may hear of a
        // loop's next pass first from this.
        let pass = self
            .run_of(instance, activity)
            .ok()
            .and_then(|key| self.runs.get(&key)?.progress(activity).map(|p| p.pass))
            .unwrap_or_default();
        fx.push(Effect::Send {
            to: Target::Controller,
            message: Message::PauseReport(PauseReport {
                instance,
                activity,
                by,
                at_ms: self.now_ms(),
                outcome,
                pass,
            }),
        });
    }

    /// Activity `activity` of run `key` and its progress, or why an order about it cannot
    /// be carried out here.
    fn here(
        &self,
        key: RunKey,
        activity: ActivityId,
    ) -> Result<(&mobiwf_xml_schema::PartitionActivity, &crate::Progress), String> {
        let run = self.runs.get(&key);
        run.and_then(|r| r.activity(activity).zip(r.progress(activity)))
            .ok_or_else(|| "it is not here".to_owned())
    }

    /// Pauses a ready or running activity; `kill` kills its running command.
    fn pause(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        kill: bool,
        fx: &mut Vec<Effect>,
    ) -> Result<PauseOutcome, String> {
        let (act, p) = self.here(key, activity)?;
        match p.life() {
            Life::Ready | Life::Running { .. } => {}
            Life::Paused { .. } => {
                return Err("it is paused already: resume it to go on".to_owned());
            }
            Life::RetryWait { .. } => {
                return Err(
                    "it waits for the next try of its command: pause it once that try runs"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "it is {}, not ready or running: only a ready or running activity (or a \
                     selected work item) can be paused",
                    other.wire().as_str()
                ));
            }
        }
        let killed = kill && matches!(p.life(), Life::Running { .. }) && runs_command(act);
        let state = p.life().wire();
        let clock_stopped = act.people.pause_stops_deadline && act.people.deadline.is_some();
        let attempt = p.try_number();
        if killed {
            let why = "its activity was paused with --kill: the next try runs when it is resumed";
            self.kill_try(key, activity, attempt, why.to_owned(), fx);
        }
        let at_ms = self.now_ms();
        self.step(
            key,
            activity,
            Event::Pause {
                at_ms,
                kill: killed,
            },
        );
        self.item_changed(key.instance, activity, 0, fx);
        Ok(PauseOutcome::Paused {
            state,
            killed,
            clock_stopped,
        })
    }

    /// Resumes a paused activity: it goes on from where it was; a killed command runs again
    /// (not while its instance is interrupted), a command's end held meanwhile is taken.
    fn go_on(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        fx: &mut Vec<Effect>,
    ) -> Result<PauseOutcome, String> {
        let (act, p) = self.here(key, activity)?;
        let Life::Paused { resume, since_ms } = *p.life() else {
            return Err(format!(
                "it is {}, not paused: there is nothing to resume",
                p.life().wire().as_str()
            ));
        };
        let interrupted = self.known.get(&key.instance).is_some_and(|k| k.interrupted);
        if interrupted && matches!(resume, PausedFrom::Killed { .. }) {
            return Err(
                "its instance is interrupted: its command would run again; resume the instance \
                 first"
                    .to_owned(),
            );
        }
        let clock_stopped = act.people.pause_stops_deadline && act.people.deadline.is_some();
        let held = p.held_end.clone();
        let now_ms = self.now_ms();
        if !self.step(key, activity, Event::Resume) {
            return Err("the host cannot resume it (see its log)".to_owned());
        }
        let state = self
            .runs
            .get(&key)
            .and_then(|r| r.life(activity))
            .map_or(mobiwf_proto::ActivityState::Running, Life::wire);
        let moved_ms = if clock_stopped {
            now_ms.saturating_sub(since_ms)
        } else {
            0
        };
        self.item_changed(key.instance, activity, moved_ms, fx);
        if let PausedFrom::Killed { .. } = resume {
            fx.extend(self.execute(key, activity));
        }
        if let Some(held) = held {
            self.take_held(key, activity, held, fx);
        }
        self.advance(key, fx);
        Ok(PauseOutcome::Resumed { state, moved_ms })
    }

    /// The end of a command that came while its activity is paused (and was not killed):
    /// held; `false` when the activity is not paused so.
    pub(crate) fn hold_end(&mut self, key: RunKey, ended: &Ended) -> bool {
        let held = self
            .runs
            .get_mut(&key)
            .is_some_and(|run| run.hold_end(ended));
        if held {
            self.touch_run(key);
        }
        held
    }

    /// Takes the end held while the activity was paused, as if it came now.
    fn take_held(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        held: HeldEnd,
        fx: &mut Vec<Effect>,
    ) {
        let ended = Ended {
            instance: key.instance,
            activity,
            finish: Finish::of(held.succeeded, held.detail, held.flag),
            by: Finisher::Command,
            attempt: held.attempt,
            written: held.written,
        };
        // The activity runs the try that ended: it is finishable.
        let _ = self.finished(self.now_ms(), ended, fx);
    }

    /// The work item of a paused or resumed activity: its devices see it paused or going on;
    /// its `<deadline>` moves `moved_ms` later.
    fn item_changed(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        moved_ms: u64,
        fx: &mut Vec<Effect>,
    ) {
        let id = (instance, activity);
        let Some(item) = self.host.items.get_mut(&id).filter(|i| i.is_open()) else {
            return;
        };
        let before = item.involved();
        if let Some(due) = item.due.as_mut() {
            due.at_ms = due.at_ms.saturating_add(moved_ms);
        }
        item.version += 1;
        self.host.dirty_items.insert(id);
        self.publish(id, &before, None, Vec::new(), fx);
    }

    /// True when `activity` of `instance` is paused here.
    pub(crate) fn is_paused(&self, instance: InstanceId, activity: ActivityId) -> bool {
        self.run_of(instance, activity)
            .ok()
            .and_then(|key| self.runs.get(&key))
            .and_then(|r| r.life(activity))
            .is_some_and(|l| l.paused_since().is_some())
    }

    /// Since when `activity` is paused and whether its `<deadline>` stops meanwhile.
    pub(crate) fn pause_of(
        &self,
        instance: InstanceId,
        activity: ActivityId,
    ) -> Option<(u64, bool)> {
        let key = self.run_of(instance, activity).ok()?;
        let run = self.runs.get(&key)?;
        let since = run.life(activity)?.paused_since()?;
        let people = &run.activity(activity)?.people;
        Some((
            since,
            people.pause_stops_deadline && people.deadline.is_some(),
        ))
    }
}
