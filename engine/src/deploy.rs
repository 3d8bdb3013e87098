//! The controller deploys a partition of an instance: the run is created (or the same
//! document again is a no-op) and whatever is ready starts.

use crate::run::{Run, RunKey};
use crate::{Effect, Engine, Refusal};

impl Engine {
    /// A partition document arrives for `key`. Refused, with nothing changed, when it does
    /// not load, names another instance, or differs from the one deployed before.
    pub(crate) fn deploy(
        &mut self,
        key: RunKey,
        document: String,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        if let Some(run) = self.runs.get(&key) {
            if run.document == document {
                return Ok(());
            }
            return Err(Refusal::Conflict {
                instance: key.instance,
                partition: key.partition,
            });
        }
        let run = Run::new(key, document, now_ms)?;
        self.runs.insert(key, run);
        self.new_runs.insert(key);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        self.advance(key, effects);
        Ok(())
    }
}
