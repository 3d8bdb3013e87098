//! The controller deploys a partition of an instance: the run is created (or the same
//! document again is a no-op) and whatever is ready starts.

use mobiwf_proto::{Deploy, UserId};

use crate::run::{Run, RunKey};
use crate::{Effect, Engine, Refusal};

/// What a deployment says about its instance's people: kept in `Known`.
pub(crate) struct InstancePeople {
    pub(crate) responsible: Option<UserId>,
    pub(crate) hour_ms: Option<u64>,
}

impl Engine {
    /// The controller deploys a partition: it runs, and the words kept until this node knew
    /// who runs the instance's activities are judged.
    pub(crate) fn deploy(
        &mut self,
        deploy: Deploy,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Deploy {
            instance,
            partition,
            document,
            responsible,
            hour_ms,
            runs_on,
        } = deploy;
        let key = RunKey {
            instance,
            partition,
        };
        let people = InstancePeople {
            responsible,
            hour_ms,
        };
        self.deploy_run(key, document, people, now_ms, effects)?;
        self.learn_speakers(instance, runs_on.into_iter().collect());
        self.replay_early(instance, effects);
        Ok(())
    }

    /// A partition document arrives for `key`. Refused, with nothing changed, when it does
    /// not load, names another instance, or differs from the one deployed before.
    fn deploy_run(
        &mut self,
        key: RunKey,
        document: String,
        people: InstancePeople,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        if let Some(run) = self.runs.get(&key) {
            if run.same_document(&document) {
                return Ok(());
            }
            return Err(Refusal::Conflict {
                instance: key.instance,
                partition: key.partition,
            });
        }
        let run = Run::new(key, document, now_ms)?;
        if people.responsible.is_some() || people.hour_ms.is_some() {
            let known = self.known.entry(key.instance).or_default();
            if people.responsible.is_some() {
                known.responsible = people.responsible;
            }
            if people.hour_ms.is_some() {
                known.hour_ms = people.hour_ms;
            }
            self.dirty_known.insert(key.instance);
        }
        self.runs.insert(key, run);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        self.advance(key, effects);
        Ok(())
    }
}
