//! What the daemon writes and reads back: the changes since the last commit, already encoded
//! (an encoding failure is an error the daemon refuses to commit on, never an empty value),
//! and the engine rebuilt from what the store holds, with the commands to resume.

use mobiwf_proto::{ActivityId, InstanceId};
use mobiwf_xml_schema::ActivityKind;

use crate::compensate::Undo;
use crate::items::{StoredDirectory, StoredItem, StoredToken};
use crate::known::Known;
use crate::lifecycle::Life;
use crate::run::{Run, RunKey, StoredRun};
use crate::{Effect, Engine, Transition};

/// What changed since the last [`Engine::take_changes`], encoded for the store.
#[derive(Debug, Default)]
pub struct Changes {
    /// Runs to write.
    pub runs: Vec<StoredRun>,
    /// Instances whose knowledge to write.
    pub known: Vec<StoredKnown>,
    /// Work items to write (`item/<instance>/<activity>`).
    pub items: Vec<StoredItem>,
    /// Round-robin tokens to write (`token/<role>`).
    pub tokens: Vec<StoredToken>,
    /// The directory replica, when a newer one was taken (`directory`).
    pub directory: Option<StoredDirectory>,
}

/// What is known of an instance, as the store keeps it (`known/<instance>`).
#[derive(Debug, Clone)]
pub struct StoredKnown {
    /// The instance.
    pub instance: InstanceId,
    /// The [`Known`] as JSON.
    pub state: Vec<u8>,
}

impl StoredKnown {
    fn of(instance: InstanceId, known: &Known) -> Result<StoredKnown, EncodeError> {
        let state = serde_json::to_vec(known).map_err(|e| EncodeError::Known {
            instance,
            reason: e.to_string(),
        })?;
        Ok(StoredKnown { instance, state })
    }
}

impl Engine {
    /// Rebuilds the engine from what the store holds.
    pub fn restore(runs: Vec<Run>, known: Vec<(InstanceId, Known)>) -> Engine {
        let mut engine = Engine {
            runs: runs.into_iter().map(|r| (r.key, r)).collect(),
            known: known.into_iter().collect(),
            ..Engine::default()
        };
        engine.timers_stale = engine.runs.keys().copied().collect();
        engine.refresh_deadlines();
        engine
    }

    /// What to do again after a restart: the commands of activities that were running, the
    /// compensations under way (the daemon makes sure a command that is still running, or
    /// already ran, is not run twice), and the fetches of files not arrived yet.
    pub fn resume(&self) -> Vec<Effect> {
        let mut effects = Vec::new();
        for (instance, known) in &self.known {
            for m in &known.missing {
                effects.push(Effect::Fetch {
                    instance: *instance,
                    file: m.file.clone(),
                    from: m.holder.clone(),
                });
            }
        }
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let Some(p) = run.progress(act.id) else {
                    continue;
                };
                // A paused try runs on too: its end is held until the resumption.
                let running = matches!(
                    p.life(),
                    Life::Running { .. }
                        | Life::Paused {
                            resume: crate::lifecycle::PausedFrom::Running { .. },
                            ..
                        }
                );
                if running && act.kind == ActivityKind::Automatic {
                    effects.extend(self.execute(run.key, act.id));
                }
                // A try a pause killed: its kill was written before it was carried out, and
                // may have been lost with the node, its command running on; asked again
                // (the kill of a try that ended does nothing).
                let killed = matches!(
                    p.life(),
                    Life::Paused {
                        resume: crate::lifecycle::PausedFrom::Killed { .. },
                        ..
                    }
                );
                if killed && act.kind == ActivityKind::Automatic {
                    effects.push(Effect::Kill {
                        key: run.key,
                        activity: act.id,
                        attempt: p.try_number(),
                        why: "its activity was paused with --kill (asked again at the restart)"
                            .to_owned(),
                    });
                }
            }
            // Compensations under way when the node stopped (run once by the executor).
            for (activity, undo) in &run.compensations {
                let command = run.activity(*activity).and_then(|a| a.compensation.clone());
                if let (Undo::Running, Some(command)) = (undo, command) {
                    effects.push(Effect::Compensate {
                        key: run.key,
                        activity: *activity,
                        command,
                        reads: self.compensation_reads(run.key, *activity),
                    });
                }
            }
        }
        effects
    }

    /// Hands over what changed since the last call, encoded, for the daemon to write. On an
    /// error nothing is handed over and the daemon must not commit (the changes stay marked,
    /// so a later call hands them over again).
    pub fn take_changes(&mut self) -> Result<Changes, EncodeError> {
        let mut changes = Changes::default();
        for key in &self.dirty_runs {
            if let Some(run) = self.runs.get(key) {
                changes.runs.push(StoredRun::of(run)?);
            }
        }
        for instance in &self.dirty_known {
            let known = self.known.get(instance).cloned().unwrap_or_default();
            changes.known.push(StoredKnown::of(*instance, &known)?);
        }
        self.people_changes(&mut changes)?;
        // Everything encoded, so handed over: the documents' texts leave memory (their parsed
        // forms stay). Not before: after an error the runs are handed over again, with them.
        for key in &self.dirty_runs {
            if let Some(run) = self.runs.get_mut(key) {
                run.take_unwritten_document();
            }
        }
        self.people_written();
        self.dirty_runs.clear();
        self.dirty_known.clear();
        Ok(changes)
    }

    /// Hands over the state changes of activities since the last call.
    pub fn take_transitions(&mut self) -> Vec<Transition> {
        std::mem::take(&mut self.transitions)
    }
}

/// The engine's state could not be encoded for the store: the daemon must not commit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A partition run.
    #[error("cannot encode the run of instance {}, partition {}: {reason}", key.instance, key.partition)]
    Run {
        /// Which run.
        key: RunKey,
        /// What serde said.
        reason: String,
    },
    /// What the node knows about an instance.
    #[error("cannot encode what is known of instance {instance}: {reason}")]
    Known {
        /// The instance.
        instance: InstanceId,
        /// What serde said.
        reason: String,
    },
    /// A work item.
    #[error("cannot encode the work item of instance {instance}, activity {activity}: {reason}")]
    Item {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// What serde said.
        reason: String,
    },
    /// A round-robin token.
    #[error("cannot encode the round-robin token of role {role}: {reason}")]
    Token {
        /// The role.
        role: mobiwf_proto::RoleId,
        /// What serde said.
        reason: String,
    },
    /// The directory replica.
    #[error("cannot encode the organisation directory: {reason}")]
    Directory {
        /// What serde said.
        reason: String,
    },
}
