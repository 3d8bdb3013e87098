//! One partition of one instance on this node: its document and the state of each activity.

use std::collections::BTreeMap;

use mobiwf_runtime::wire::{ActivityRecord, ActivityState, Outcome};
use mobiwf_xml_schema::{Contingency, PartitionActivity, PartitionDocument};
use serde::{Deserialize, Serialize};

use super::Refusal;

/// Names a partition run: the instance and the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunKey {
    /// The instance.
    pub instance: u64,
    /// The partition.
    pub partition: u64,
}

impl RunKey {
    pub(super) fn first_of(instance: u64) -> RunKey {
        RunKey {
            instance,
            partition: 0,
        }
    }

    pub(super) fn last_of(instance: u64) -> RunKey {
        RunKey {
            instance,
            partition: u64::MAX,
        }
    }
}

/// One partition run, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Which run.
    pub key: RunKey,
    /// The partition document as received.
    pub document: String,
    /// When it was deployed, in ms since the epoch.
    pub deployed_ms: u64,
    /// Each activity's record, by id.
    pub activities: BTreeMap<u64, ActivityRecord>,
    /// True once the partition result is sent.
    pub reported: bool,
    /// Parsed from `document` when created or loaded (`Run::reload`).
    #[serde(skip, default = "unparsed")]
    doc: PartitionDocument,
    /// Activity id → position in `doc.activities`, built with `doc`.
    #[serde(skip)]
    index: BTreeMap<u64, usize>,
}

fn index_of(doc: &PartitionDocument) -> BTreeMap<u64, usize> {
    doc.activities
        .iter()
        .enumerate()
        .map(|(i, a)| (a.id.0, i))
        .collect()
}

fn unparsed() -> PartitionDocument {
    PartitionDocument {
        workflow_id: mobiwf_xml_schema::WorkflowId(0),
        start_time: None,
        activities: Vec::new(),
    }
}

/// What happens when an activity's timer runs out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Timer {
    /// `timeToWait`: start it anyway.
    Emergency,
    /// `timeOut`: it ran too long; it fails.
    RunTooLong,
}

/// Whether an activity can start.
pub(super) enum Readiness {
    /// A precondition is not met yet.
    Wait,
    /// Every precondition is met.
    Ready,
    /// A precondition will never be met: cancel, for this reason.
    Blocked(String),
}

/// What the successors of an activity that ended in `state` learn.
pub(super) fn outcome_of(state: ActivityState, contingency: Contingency) -> Outcome {
    match (state, contingency) {
        (ActivityState::Succeeded, _) => Outcome::Succeeded,
        (ActivityState::Failed, Contingency::Release) => Outcome::Released,
        _ => Outcome::Blocked,
    }
}

impl Run {
    /// A new run of `document`, every activity waiting.
    pub(super) fn new(key: RunKey, document: String, now_ms: u64) -> Result<Run, Refusal> {
        let doc = parse(key, &document)?;
        if doc.workflow_id.0 != key.instance {
            return Err(Refusal::WrongInstance {
                instance: key.instance,
                found: doc.workflow_id.0,
            });
        }
        let activities = doc
            .activities
            .iter()
            .map(|a| {
                (
                    a.id.0,
                    ActivityRecord {
                        activity: a.id.0,
                        state: ActivityState::Waiting,
                        started_ms: None,
                        finished_ms: None,
                        detail: None,
                        emergency: false,
                    },
                )
            })
            .collect();
        Ok(Run {
            key,
            document,
            deployed_ms: now_ms,
            activities,
            reported: false,
            index: index_of(&doc),
            doc,
        })
    }

    /// Parses the stored document again after loading a run from the store.
    pub fn reload(mut self) -> Result<Run, Refusal> {
        self.doc = parse(self.key, &self.document)?;
        self.index = index_of(&self.doc);
        Ok(self)
    }

    /// The parsed partition document.
    pub fn doc(&self) -> &PartitionDocument {
        &self.doc
    }

    /// The activity `id` of this partition.
    pub fn activity(&self, id: u64) -> Option<&PartitionActivity> {
        self.index
            .get(&id)
            .and_then(|&i| self.doc.activities.get(i))
    }

    /// The record of activity `id`.
    pub fn record(&self, id: u64) -> Option<&ActivityRecord> {
        self.activities.get(&id)
    }

    /// Every record, in document order.
    pub fn records(&self) -> Vec<ActivityRecord> {
        self.doc
            .activities
            .iter()
            .filter_map(|a| self.activities.get(&a.id.0).cloned())
            .collect()
    }

    /// True when no activity can change any more.
    pub fn all_final(&self) -> bool {
        self.activities.values().all(|r| r.state.is_final())
    }

    pub(super) fn set(
        &mut self,
        id: u64,
        state: ActivityState,
        now_ms: u64,
        detail: Option<String>,
    ) {
        if let Some(rec) = self.activities.get_mut(&id) {
            rec.state = state;
            if state == ActivityState::Running {
                rec.started_ms = Some(now_ms);
            }
            if state.is_final() {
                rec.finished_ms = Some(now_ms);
                rec.detail = detail;
            }
        }
    }

    /// The next timer of an activity, in ms since the epoch: its `timeToWait` while it waits,
    /// its `timeOut` while it runs. Both count from stored times (deployment, start), so they
    /// survive restarts.
    pub(super) fn timer(&self, act: &PartitionActivity) -> Option<(u64, Timer)> {
        let rec = self.record(act.id.0)?;
        match rec.state {
            ActivityState::Waiting if act.time_to_wait_secs > 0 => Some((
                self.deployed_ms + u64::from(act.time_to_wait_secs) * 1000,
                Timer::Emergency,
            )),
            ActivityState::Running if act.time_out_secs > 0 => Some((
                rec.started_ms.unwrap_or(self.deployed_ms) + u64::from(act.time_out_secs) * 1000,
                Timer::RunTooLong,
            )),
            _ => None,
        }
    }

    pub(super) fn mark_emergency(&mut self, id: u64) {
        if let Some(rec) = self.activities.get_mut(&id) {
            rec.emergency = true;
        }
    }

    pub(super) fn readiness(
        &self,
        act: &PartitionActivity,
        heard: Option<&BTreeMap<u64, Outcome>>,
    ) -> Readiness {
        let mut ready = true;
        for pre in &act.preconditions {
            let outcome = if pre.local {
                match (self.activity(pre.id.0), self.record(pre.id.0)) {
                    (Some(p), Some(r)) if r.state.is_final() => {
                        Some(outcome_of(r.state, p.contingency))
                    }
                    _ => None,
                }
            } else {
                heard.and_then(|h| h.get(&pre.id.0).copied())
            };
            match outcome {
                None => ready = false,
                Some(Outcome::Succeeded | Outcome::Released) => {}
                Some(Outcome::Blocked) => {
                    return Readiness::Blocked(format!(
                        "precondition {} failed or was cancelled",
                        pre.id.0
                    ));
                }
            }
        }
        if ready {
            Readiness::Ready
        } else {
            Readiness::Wait
        }
    }
}

fn parse(key: RunKey, document: &str) -> Result<PartitionDocument, Refusal> {
    mobiwf_xml_schema::load_partition(document.as_bytes())
        .map(|l| l.value)
        .map_err(|d| Refusal::BadDocument {
            instance: key.instance,
            partition: key.partition,
            diagnostics: d.render(&format!(
                "instance-{}-partition-{}.xml",
                key.instance, key.partition
            )),
        })
}
