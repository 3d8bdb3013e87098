//! An activity's command exited, or a person completed it: success ends it (or, for the end of
//! a loop, runs its body again: `passes`); a failure ends it or, as its `<retries>` allow,
//! waits for the next try.

use std::time::Duration;

use mobiwf_proto::{ActivityId, ActivityState, DataValue, InstanceId, Millis};
use mobiwf_xml_schema::{ActivityKind, flag_problem};

use crate::lifecycle::{Event, Life};
use crate::passes::Turn;
use crate::run::RunKey;
use crate::{Effect, Ended, Engine, Finish, Finisher, Refusal};

/// What is wrong with what a successful end left: the activity fails of it (a person's
/// completion is refused instead).
enum Flaw {
    /// Its flag is not a flag.
    Flag(String),
    /// It wrote data the activity may not.
    Writes(String),
}

impl Flaw {
    /// What is wrong.
    fn reason(&self) -> &str {
        match self {
            Flaw::Flag(reason) | Flaw::Writes(reason) => reason,
        }
    }

    /// Why the activity fails of it.
    fn why(&self) -> String {
        match self {
            Flaw::Flag(reason) => {
                format!("its command wrote a flag file that is not a flag: {reason}")
            }
            Flaw::Writes(reason) => format!("its command wrote data it may not: {reason}"),
        }
    }
}

impl Engine {
    /// A try or a person's work ended. Refused when the activity is not running here or is
    /// not finished this way; the end of a try already given up on is ignored.
    pub(crate) fn finished(
        &mut self,
        now_ms: u64,
        ended: Ended,
        effects: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        if ended.by == Finisher::Command
            && self.killed_try_ended(ended.instance, ended.activity, ended.attempt)
        {
            // The end of a killed held try of a final activity: it releases the request.
            return Ok(());
        }
        if self.is_paused(ended.instance, ended.activity) {
            return self.finished_while_paused(&ended);
        }
        let Ended {
            instance,
            activity,
            finish,
            by,
            attempt,
            written,
        } = ended;
        let key = self.finishable(instance, activity, by)?;
        let Some(p) = self.runs.get(&key).and_then(|r| r.progress(activity)) else {
            return Ok(());
        };
        let checked = self.checked(key, activity, &finish, written);
        if let (Err(flaw), Finisher::Person) = (&checked, by) {
            return Err(Refusal::InvalidCompletion {
                instance,
                activity,
                reason: flaw.reason().to_owned(),
            });
        }
        let waiting_to_retry = matches!(p.life(), Life::RetryWait { .. });
        let (try_number, ready) = (p.try_number(), *p.life() == Life::Ready);
        let interrupted = self.known.get(&instance).is_some_and(|k| k.interrupted);
        if by == Finisher::Person && ready && interrupted {
            // Taking it up and finishing it would start it: not while the instance is held.
            return Err(Refusal::NotCompletable {
                instance,
                activity,
                reason: crate::items::INTERRUPTED.to_owned(),
            });
        }
        if by == Finisher::Person && ready {
            self.step(key, activity, Event::Start);
        }
        if by == Finisher::Command && (attempt != try_number || waiting_to_retry) {
            // The end of a try that was already given up on (killed on timeOut).
            return Ok(());
        }
        self.take_end(key, activity, finish, checked, now_ms, effects);
        self.advance(key, effects);
        Ok(())
    }

    /// An end that came while the activity is paused: a person's is refused (resume first);
    /// a command's is held until the resumption (or ignored, the end of a killed try).
    fn finished_while_paused(&mut self, ended: &Ended) -> Result<(), Refusal> {
        let (instance, activity) = (ended.instance, ended.activity);
        if ended.by == Finisher::Person {
            return Err(Refusal::NotCompletable {
                instance,
                activity,
                reason: crate::pause::PAUSED.to_owned(),
            });
        }
        if let Ok(key) = self.run_of(instance, activity) {
            self.hold_end(key, ended);
        }
        Ok(())
    }

    /// The data a success wrote, as the activity may write it, or what is wrong with what it
    /// left (its flag first); a failure leaves nothing to check.
    fn checked(
        &self,
        key: RunKey,
        activity: ActivityId,
        finish: &Finish,
        written: Vec<(String, DataValue)>,
    ) -> Result<Vec<(String, DataValue)>, Flaw> {
        match finish {
            Finish::Succeeded { flag, .. } => {
                if let Some(reason) = flag.as_deref().and_then(flag_problem) {
                    return Err(Flaw::Flag(reason));
                }
                self.accepted_writes(key, activity, written)
                    .map_err(Flaw::Writes)
            }
            Finish::Failed { .. } => Ok(Vec::new()),
        }
    }

    /// What a taken end comes to: a success concludes the activity with its flag and data; a
    /// failure, or a success that left something wrong, fails it (or waits for its next try).
    fn take_end(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        finish: Finish,
        checked: Result<Vec<(String, DataValue)>, Flaw>,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        match (finish, checked) {
            (_, Err(flaw)) => self.fail(key, activity, flaw.why(), now_ms, effects),
            (Finish::Succeeded { detail, flag }, Ok(written)) => {
                if let Some(run) = self.runs.get_mut(&key) {
                    run.set_flag(activity, flag);
                }
                self.keep_writes(key, activity, written);
                match self.loop_turn(key, activity) {
                    Turn::Out => self.conclude(key, activity, Event::Succeed { detail }, effects),
                    Turn::Again(pass) => self.loop_again(key, activity, detail, pass, effects),
                    Turn::Spent(max) => {
                        let detail = format!("loop ran its {max} passes");
                        self.conclude(key, activity, Event::Fail { detail }, effects);
                    }
                }
            }
            (Finish::Failed { detail }, Ok(_)) => {
                let why = detail.unwrap_or_else(|| "failed".to_owned());
                self.fail(key, activity, why, now_ms, effects);
            }
        }
    }

    /// The run of `activity` when it is running and `by` may finish it.
    fn finishable(
        &self,
        instance: InstanceId,
        activity: ActivityId,
        by: Finisher,
    ) -> Result<RunKey, Refusal> {
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
            match (act.kind, by) {
                (ActivityKind::Automatic, Finisher::Person) => {
                    return Err(not(
                        "it is automatic: its command's exit status decides".to_owned()
                    ));
                }
                (_, Finisher::Person) if act.people.assigned() => {
                    return Err(not(
                        "it is on its users' worklists: its holder completes it".to_owned(),
                    ));
                }
                (ActivityKind::Manual | ActivityKind::SemiAutomatic, Finisher::Command) => {
                    return Err(not("it is done by a person, not by a command".to_owned()));
                }
                _ => {}
            }
            let state = run.life(activity).map(Life::wire);
            // A person takes an item of the node's worklist and completes it in one go.
            let taken = by == Finisher::Person && state == Some(ActivityState::Ready);
            if state != Some(ActivityState::Running) && !taken {
                let s = state.map_or("unknown", ActivityState::as_str);
                return Err(not(format!("it is {s}, not running")));
            }
            return Ok(key);
        }
        Err(Refusal::UnknownActivity { instance, activity })
    }

    /// A try of an activity failed: try again if its `<retries>` allow (after their wait),
    /// else it fails.
    pub(crate) fn fail(
        &mut self,
        key: RunKey,
        activity: ActivityId,
        why: String,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.get(&key.instance);
        let cancelled = known.is_some_and(|k| k.cancelled);
        let interrupted = known.is_some_and(|k| k.interrupted);
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        let (Some(act), Some(p)) = (run.activity(activity), run.progress(activity)) else {
            return;
        };
        let (count, wait) = (act.retries.count, act.retries.wait_secs);
        if act.kind != ActivityKind::Automatic || cancelled || p.retried >= count {
            self.conclude(key, activity, Event::Fail { detail: why }, effects);
            return;
        }
        let note = format!("try {} of {} failed: {why}", p.retried + 1, count + 1);
        let at_ms = Millis(now_ms)
            .saturating_add(Duration::from_secs(wait.into()))
            .as_u64();
        self.step(key, activity, Event::TryFailed { at_ms, note });
        // An interrupted instance starts nothing, not even a next try: it waits for the
        // resumption (its timer is held until then, see `Run::timer`).
        if wait == 0 && !interrupted {
            self.retry(key, activity, effects);
        }
    }

    /// Runs the next try of an activity's command, if it waits for one.
    pub(crate) fn retry(&mut self, key: RunKey, activity: ActivityId, effects: &mut Vec<Effect>) {
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        if !matches!(run.life(activity), Some(Life::RetryWait { .. })) {
            return;
        }
        if !self.step(key, activity, Event::Retry) {
            return;
        }
        effects.extend(self.execute(key, activity));
    }
}
