//! Backward recovery on the node: the controller asks for the `<compensation>` of an activity
//! that succeeded here (its instance was cancelled or failed); the engine asks the daemon to
//! run it ([`Effect::Compensate`]: a run directory of its own, so the executor runs it at
//! most once across crashes) and tells the controller how it ended (`Message::Compensated`).
//! What was asked is kept with the run ([`Undo`]), so a restarted node carries on
//! (`Engine::resume`) and a request that comes again is answered from what happened.

use mobiwf_proto::{ActivityId, ActivityState, Compensated, InstanceId, Message, PartitionId};
use serde::{Deserialize, Serialize};

use crate::lifecycle::Life;
use crate::run::RunKey;
use crate::{Effect, Engine, Target};

/// Where the compensation of an activity is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "undo", rename_all = "snake_case")]
pub enum Undo {
    /// Its command runs (or is to run again after a restart: the executor runs it once).
    Running,
    /// It ended; the controller was told.
    Ended {
        /// Its command exited 0.
        succeeded: bool,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
}

/// The answer to the controller about the compensation of `activity` of run `key`.
fn answer(key: RunKey, activity: ActivityId, succeeded: bool, detail: Option<String>) -> Effect {
    Effect::Send {
        to: Target::Controller,
        message: Message::Compensated(Compensated {
            instance: key.instance,
            partition: key.partition,
            activity,
            succeeded,
            detail,
        }),
    }
}

impl Engine {
    /// The controller asks for the compensation of `activity` of partition `partition`: it
    /// runs when the activity succeeded here and has a `<compensation>`; otherwise the
    /// controller is answered at once why it cannot (never refused: the controller waits for
    /// the answer). Asked again, it is answered from what happened (or, still running, when
    /// it ends).
    pub(crate) fn compensate(
        &mut self,
        instance: InstanceId,
        partition: PartitionId,
        activity: ActivityId,
        effects: &mut Vec<Effect>,
    ) {
        let key = RunKey {
            instance,
            partition,
        };
        let command = match self.compensation_of(key, activity) {
            Ok(command) => command,
            Err(why) => {
                effects.push(answer(key, activity, false, Some(why)));
                return;
            }
        };
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        match run.compensations.get(&activity) {
            Some(Undo::Running) => {}
            Some(Undo::Ended { succeeded, detail }) => {
                effects.push(answer(key, activity, *succeeded, detail.clone()));
            }
            None => {
                run.compensations.insert(activity, Undo::Running);
                self.touch_run(key);
                let reads = self.compensation_reads(key, activity);
                effects.push(Effect::Compensate {
                    key,
                    activity,
                    command,
                    reads,
                });
            }
        }
    }

    /// The compensation command of `activity` of run `key`, or why it cannot run.
    fn compensation_of(&self, key: RunKey, activity: ActivityId) -> Result<String, String> {
        let Some(run) = self.runs.get(&key) else {
            return Err(format!(
                "this node holds no partition {} of instance {}",
                key.partition, key.instance
            ));
        };
        let (Some(act), Some(life)) = (run.activity(activity), run.life(activity)) else {
            return Err(format!(
                "partition {} of instance {} has no activity {activity}",
                key.partition, key.instance
            ));
        };
        if !matches!(life, Life::Succeeded { .. }) {
            let state = life.wire();
            return Err(format!(
                "activity {activity} is {} here, not {}: there is nothing to undo",
                state.as_str(),
                ActivityState::Succeeded.as_str()
            ));
        }
        act.compensation.clone().ok_or_else(|| {
            format!("activity {activity} has no <compensation> in its partition document")
        })
    }

    /// The compensation command of `activity` ended: kept, and the controller told.
    pub(crate) fn compensation_ended(&mut self, ended: Compensated, effects: &mut Vec<Effect>) {
        let Compensated {
            instance,
            partition,
            activity,
            succeeded,
            detail,
        } = ended;
        let key = RunKey {
            instance,
            partition,
        };
        let Some(run) = self.runs.get_mut(&key) else {
            return;
        };
        if run.compensations.get(&activity) != Some(&Undo::Running) {
            return;
        }
        let ended = Undo::Ended {
            succeeded,
            detail: detail.clone(),
        };
        run.compensations.insert(activity, ended);
        self.touch_run(key);
        effects.push(answer(key, activity, succeeded, detail));
    }
}
