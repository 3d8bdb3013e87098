//! How a run is stored: the JSON of the form every version wrote (a wire record per
//! activity, the retry times apart, and since forward and backward recovery the earlier
//! tries and the compensations, since task classes the activities' requests for their class,
//! and since loops when each later pass began, each left out when empty), and a changed run as
//! the store keeps it.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, ActivityRecord};
use serde::{Deserialize, Serialize};

use super::{Progress, Run, RunKey, unparsed};
use crate::compensate::Undo;
use crate::lifecycle::{Life, PausedFrom};
use crate::pause::HeldEnd;
use crate::store::EncodeError;
use crate::sync::Gate;

/// A run as JSON: the form every version wrote.
#[derive(Serialize, Deserialize)]
struct RunRepr {
    key: RunKey,
    #[serde(default, skip_serializing)]
    document: String,
    deployed_ms: u64,
    activities: BTreeMap<ActivityId, ActivityRecord>,
    reported: bool,
    #[serde(default)]
    retry_at: BTreeMap<ActivityId, u64>,
    #[serde(default)]
    overdue: BTreeSet<(ActivityId, ActivityId)>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    earlier_tries: BTreeMap<ActivityId, u32>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    compensations: BTreeMap<ActivityId, Undo>,
    /// Since task classes: the requests of the activities that made one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    gates: BTreeMap<ActivityId, Gate>,
    /// The paused activities (their records show the state they resume to).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    paused: BTreeMap<ActivityId, PausedRepr>,
    /// How long each activity was paused since its `timeOut` began to count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    paused_for: BTreeMap<ActivityId, u64>,
    /// When a loop's later pass of each activity in one began (runs stored before, whose
    /// deployment time a new pass moved, have none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pass_began: BTreeMap<ActivityId, u64>,
}

/// A pause as stored: since when, whether its command was killed, and the end of its
/// command that came meanwhile.
#[derive(Serialize, Deserialize)]
struct PausedRepr {
    since_ms: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    killed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    held_end: Option<HeldEnd>,
}

impl Serialize for Run {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let retry_at = self
            .activities
            .iter()
            .filter_map(|(id, p)| match p.life {
                Life::RetryWait { at_ms, .. } => Some((*id, at_ms)),
                _ => None,
            })
            .collect();
        RunRepr {
            key: self.key,
            document: String::new(),
            deployed_ms: self.deployed_ms,
            activities: self
                .activities
                .iter()
                .map(|(id, p)| (*id, p.record(*id)))
                .collect(),
            reported: self.reported,
            retry_at,
            overdue: self.overdue.clone(),
            earlier_tries: self
                .activities
                .iter()
                .filter(|(_, p)| p.earlier_tries > 0)
                .map(|(id, p)| (*id, p.earlier_tries))
                .collect(),
            compensations: self.compensations.clone(),
            gates: self
                .activities
                .iter()
                .filter(|(_, p)| !p.gate.is_unused())
                .map(|(id, p)| (*id, p.gate.clone()))
                .collect(),
            paused: self
                .activities
                .iter()
                .filter_map(|(id, p)| match p.life {
                    Life::Paused { resume, since_ms } => Some((
                        *id,
                        PausedRepr {
                            since_ms,
                            killed: matches!(resume, PausedFrom::Killed { .. }),
                            held_end: p.held_end.clone(),
                        },
                    )),
                    _ => None,
                })
                .collect(),
            paused_for: self
                .activities
                .iter()
                .filter(|(_, p)| p.paused_for_ms > 0)
                .map(|(id, p)| (*id, p.paused_for_ms))
                .collect(),
            pass_began: self
                .activities
                .iter()
                .filter_map(|(id, p)| Some((*id, p.pass_began_ms?)))
                .collect(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Run {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Run, D::Error> {
        let mut repr = RunRepr::deserialize(deserializer)?;
        let activities = std::mem::take(&mut repr.activities)
            .into_iter()
            .map(|(id, rec)| {
                let mut p = Progress::from_record(rec, repr.retry_at.get(&id).copied());
                p.earlier_tries = repr.earlier_tries.get(&id).copied().unwrap_or(0);
                p.gate = repr.gates.remove(&id).unwrap_or_default();
                p.paused_for_ms = repr.paused_for.get(&id).copied().unwrap_or(0);
                p.pass_began_ms = repr.pass_began.get(&id).copied();
                if let Some(paused) = repr.paused.remove(&id) {
                    p.pause_again(paused.since_ms, paused.killed, paused.held_end);
                }
                (id, p)
            })
            .collect();
        Ok(Run {
            key: repr.key,
            unwritten: (!repr.document.is_empty()).then_some(repr.document),
            deployed_ms: repr.deployed_ms,
            activities,
            reported: repr.reported,
            overdue: repr.overdue,
            compensations: repr.compensations,
            doc: unparsed(),
            index: super::ById::default(),
        })
    }
}

/// A changed run as the store keeps it: its state as JSON (without the document) and, for a
/// run deployed since the last changes were taken, its document, written once.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// Which run.
    pub key: RunKey,
    /// The run without its document, as JSON.
    pub state: Vec<u8>,
    /// The document, when it was not stored yet (the run is new).
    pub document: Option<String>,
}

impl StoredRun {
    pub(crate) fn of(run: &Run) -> Result<StoredRun, EncodeError> {
        Ok(StoredRun {
            key: run.key,
            state: serde_json::to_vec(run).map_err(|e| EncodeError::Run {
                key: run.key,
                reason: e.to_string(),
            })?,
            document: run.unwritten.clone(),
        })
    }
}

impl Run {
    /// A run from its stored state and its document (ignored when the state carries one,
    /// as runs stored by earlier versions do).
    /// Only the parsed document stays in memory, but for the text such an earlier run
    /// carried: it stays until it is stored under its own key.
    pub fn from_stored(state: &[u8], document: Option<String>) -> Result<Run, String> {
        let mut run: Run = serde_json::from_slice(state).map_err(|e| e.to_string())?;
        match (run.unwritten.take(), document) {
            (Some(inside), _) => {
                let mut run = run.reload(&inside).map_err(|e| e.to_string())?;
                run.unwritten = Some(inside);
                Ok(run)
            }
            (None, Some(document)) => run.reload(&document).map_err(|e| e.to_string()),
            (None, None) => Err("its partition document is missing".to_owned()),
        }
    }
}
