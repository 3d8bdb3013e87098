//! The controller deploys a partition of an instance: the run is created (or the same
//! document again is a no-op), the instance's inputs it carries are kept as the instance's
//! data, and whatever is ready starts.

use mobiwf_proto::{Deploy, InstanceInputs, UserId};
use mobiwf_xml_schema::PartitionDocument;

use crate::run::{Run, RunKey};
use crate::{Effect, Engine, ReadLocation, Refusal};

/// What a deployment says about its instance beyond the partition's document: its people and
/// its inputs, kept in `Known`.
pub(crate) struct InstanceFacts {
    pub(crate) responsible: Option<UserId>,
    pub(crate) hour_ms: Option<u64>,
    pub(crate) inputs: InstanceInputs,
}

/// Why one of `doc`'s remote adjacents' locations cannot be read, if one cannot: every
/// adjacent outside the document must have a full libp2p address, or its notifications could
/// never be delivered.
pub(crate) fn unreadable_adjacent(read: ReadLocation, doc: &PartitionDocument) -> Option<String> {
    doc.activities.iter().find_map(|act| {
        act.adjacents
            .iter()
            .filter(|adj| !doc.activities.iter().any(|a| a.id == adj.id))
            .find_map(|adj| {
                read(&adj.location)
                    .err()
                    .map(|e| format!("activity {}: adjacent {}: {e}", act.id, adj.id))
            })
    })
}

impl Engine {
    /// Deployments are refused when one of their remote adjacents' locations does not read
    /// with `read` (the daemon's check, done on the document the run parses anyway).
    pub fn set_read_location(&mut self, read: ReadLocation) {
        self.read_location = Some(read);
    }

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
            inputs,
        } = deploy;
        let key = RunKey {
            instance,
            partition,
        };
        let facts = InstanceFacts {
            responsible,
            hour_ms,
            inputs,
        };
        self.deploy_run(key, document, facts, now_ms, effects)?;
        self.learn_speakers(instance, runs_on.into_iter().collect());
        self.replay_early(instance, effects);
        Ok(())
    }

    /// A partition document arrives for `key`. Refused, with nothing changed, when it does
    /// not load, names another instance, differs from the one deployed before, or the inputs
    /// it comes with do not fit its declarations.
    fn deploy_run(
        &mut self,
        key: RunKey,
        document: String,
        facts: InstanceFacts,
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
        if let Some(reason) = self
            .read_location
            .and_then(|read| unreadable_adjacent(read, run.doc()))
        {
            return Err(Refusal::UnreadableLocation {
                instance: key.instance,
                partition: key.partition,
                reason,
            });
        }
        if let Some(reason) = crate::data::inputs_problem(run.doc(), &facts.inputs) {
            return Err(Refusal::BadInputs {
                instance: key.instance,
                partition: key.partition,
                reason,
            });
        }
        if facts.responsible.is_some() || facts.hour_ms.is_some() {
            let known = self.known.entry(key.instance).or_default();
            if facts.responsible.is_some() {
                known.responsible = facts.responsible;
            }
            if facts.hour_ms.is_some() {
                known.hour_ms = facts.hour_ms;
            }
            self.dirty_known.insert(key.instance);
        }
        self.seed_inputs(key.instance, &facts.inputs);
        self.runs.insert(key, run);
        self.dirty_runs.insert(key);
        self.timers_stale.insert(key);
        self.advance(key, effects);
        Ok(())
    }
}
