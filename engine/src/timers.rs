//! Time passed ([`crate::Input::Tick`]): emergency starts (`timeToWait`), activity `timeOut`s, the
//! next tries of failed commands and overdue remote preconditions (told to the controller), and
//! work items' `<deadline>` thresholds (`items::deadline`). Each run's earliest timer is kept in an
//! ordered index, so that the next deadline and the due timers are found without looking at every
//! run.

use mobiwf_proto::{ActivityId, Message, Overdue};

use crate::progress::{report, runs_command};
use crate::run::{RunKey, Timer};
use crate::{Effect, Engine, Target};

impl Engine {
    /// The earliest timer of any activity (see `Run::timer`), in ms since the epoch. Timers
    /// count from stored times, so they survive restarts.
    pub fn next_deadline(&self) -> Option<u64> {
        let runs = self.deadlines.first().map(|(at, _)| *at);
        match (runs, self.next_item_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Brings `deadlines` up to date with the runs whose timers may have changed.
    pub(crate) fn refresh_deadlines(&mut self) {
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
        self.refresh_item_deadlines();
    }

    /// Carries out every timer that has run out, earliest first, one at a time: each is taken
    /// from the state the previous one left, because a timer that fires can start or end
    /// activities whose own timers were due too (an activity started by its predecessor's
    /// emergency start must not be started again by its own), and an activity can have
    /// several timers due at once (a precondition `timeOut` and its `timeToWait`). This ends:
    /// each timer that fires is gone afterwards (the activity started or ended, the overdue
    /// precondition is marked, the retry is consumed) or replaced by one later than now.
    pub(crate) fn tick(&mut self, now_ms: u64, effects: &mut Vec<Effect>) {
        loop {
            self.refresh_deadlines();
            let Some((key, activity, timer)) = self.first_due(now_ms) else {
                break;
            };
            self.fire(key, activity, timer, now_ms, effects);
        }
        self.tick_items(now_ms, effects);
    }

    /// The earliest timer that has run out (`deadlines` being up to date): the earliest
    /// timer of the run with the earliest deadline.
    fn first_due(&self, now_ms: u64) -> Option<(RunKey, ActivityId, Timer)> {
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
        activity: ActivityId,
        timer: Timer,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        match timer {
            Timer::Emergency => self.emergency_start(key, activity, effects),
            Timer::RunTooLong => self.time_out(key, activity, now_ms, effects),
            Timer::Retry => self.retry(key, activity, effects),
            Timer::Unfence => self.unfence(key, activity, now_ms),
            Timer::Overdue {
                precondition,
                time_out_secs,
            } => {
                if let Some(run) = self.runs.get_mut(&key) {
                    run.overdue.insert((activity, precondition));
                    self.touch_run(key);
                }
                effects.push(Effect::Send {
                    to: Target::Controller,
                    message: Message::Overdue(Overdue {
                        instance: key.instance,
                        waiting: activity,
                        precondition,
                        time_out_secs,
                    }),
                });
            }
        }
        self.advance(key, effects);
    }

    /// `timeToWait` ran out: the activity starts anyway, and the controller is told at once.
    fn emergency_start(&mut self, key: RunKey, activity: ActivityId, effects: &mut Vec<Effect>) {
        if let Some(run) = self.runs.get_mut(&key) {
            run.mark_emergency(activity);
        }
        let before = effects.len();
        self.start(key, activity, effects);
        // Told at once, unless it already finished and `conclude` told (responseImmediate).
        let told = effects[before..].iter().any(|e| {
            matches!(e, Effect::Send { message: Message::Report(report), .. }
                if report.record.activity == activity)
        });
        if !told && let Some(record) = self.runs.get(&key).and_then(|r| r.record(activity)) {
            effects.push(report(key, record));
        }
    }

    /// The activity ran longer than its `timeOut`: its command is killed and the try fails.
    fn time_out(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        let Some(act) = run.activity(activity) else {
            return;
        };
        let why = format!("ran longer than its timeOut of {} s", act.time_out_secs);
        if runs_command(act) {
            let attempt = run.progress(activity).map_or(0, |p| p.try_number());
            self.kill_try(key, activity, attempt, why.clone(), effects);
        }
        self.fail(key, activity, why, now_ms, effects);
    }
}
