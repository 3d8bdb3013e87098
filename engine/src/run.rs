//! One partition of one instance on this node: its document and the state of each activity.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityRecord, ActivityState, Outcome};
use mobiwf_xml_schema::{Contingency, PartitionActivity, PartitionDocument};
use serde::{Deserialize, Serialize};

use super::Refusal;
use super::known::Known;

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
    /// The partition document as received. Stored once, under its own key, not with every
    /// change of the run (`StoredRun`); read here for runs stored before that.
    #[serde(default, skip_serializing)]
    pub document: String,
    /// When it was deployed, in ms since the epoch.
    pub deployed_ms: u64,
    /// Each activity's record, by id.
    pub activities: BTreeMap<u64, ActivityRecord>,
    /// True once the partition result is sent.
    pub reported: bool,
    /// Activities whose command failed and waits to be tried again (`<retries>`): when, in ms
    /// since the epoch.
    #[serde(default)]
    pub retry_at: BTreeMap<u64, u64>,
    /// (waiting activity, remote precondition) pairs already reported overdue to the
    /// controller.
    #[serde(default)]
    pub overdue: BTreeSet<(u64, u64)>,
    /// Parsed from `document` when created or loaded (`Run::reload`).
    #[serde(skip, default = "unparsed")]
    doc: PartitionDocument,
    /// Activity id → position in `doc.activities`, built with `doc`.
    #[serde(skip)]
    index: BTreeMap<u64, usize>,
}

/// A changed run as the store keeps it: its state as JSON (without the document) and, for a
/// run deployed since the last changes were taken, its document, written once.
#[derive(Debug, Clone)]
pub struct StoredRun {
    /// Which run.
    pub key: RunKey,
    /// The run without its document, as JSON.
    pub state: Vec<u8>,
    /// The document, when the run is new.
    pub document: Option<String>,
}

impl StoredRun {
    pub(super) fn of(run: &Run, new: bool) -> StoredRun {
        StoredRun {
            key: run.key,
            // Serializing plain data to JSON cannot fail.
            state: serde_json::to_vec(run).unwrap_or_default(),
            document: new.then(|| run.document.clone()),
        }
    }
}

impl Run {
    /// A run from its stored state and its document (ignored when the state carries one,
    /// as runs stored by earlier versions do).
    pub fn from_stored(state: &[u8], document: Option<String>) -> Result<Run, String> {
        let mut run: Run = serde_json::from_slice(state).map_err(|e| e.to_string())?;
        if run.document.is_empty() {
            run.document = document.ok_or("its partition document is missing")?;
        }
        run.reload().map_err(|e| e.to_string())
    }
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
    /// `timeOut`: it ran too long; it fails (or is tried again).
    RunTooLong,
    /// `<retries>`: the wait after a failed try is over; run the command again.
    Retry,
    /// A remote precondition's `timeOut`: its notification did not come; tell the controller.
    Overdue {
        /// The precondition.
        precondition: u64,
        /// Its `timeOut` in seconds.
        time_out_secs: u32,
    },
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

/// What the successors of an activity that ended in `state` learn; `None` while they must
/// wait: a failed activity with a contingency activity x waits for x's outcome.
pub(super) fn outcome_of(state: ActivityState, contingency: Contingency) -> Option<Outcome> {
    match (state, contingency) {
        (ActivityState::Succeeded, _) => Some(Outcome::Succeeded),
        (ActivityState::Failed, Contingency::Release) => Some(Outcome::Released),
        (ActivityState::Failed, Contingency::Run(_)) => None,
        (ActivityState::Failed | ActivityState::Cancelled, _) => Some(Outcome::Blocked),
        (ActivityState::Waiting | ActivityState::Running, _) => None,
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
                        activity: a.id,
                        state: ActivityState::Waiting,
                        started_ms: None,
                        finished_ms: None,
                        started_us: None,
                        finished_us: None,
                        detail: None,
                        emergency: false,
                        retried: 0,
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
            retry_at: BTreeMap::new(),
            overdue: BTreeSet::new(),
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
        now_us: u64,
        detail: Option<String>,
    ) {
        if state.is_final() {
            self.retry_at.remove(&id);
        }
        if let Some(rec) = self.activities.get_mut(&id) {
            rec.state = state;
            if state == ActivityState::Running {
                rec.started_ms = Some(now_us / 1000);
                rec.started_us = Some(now_us);
            }
            if state.is_final() {
                rec.finished_ms = Some(now_us / 1000);
                rec.finished_us = Some(now_us);
                rec.detail = detail;
            }
        }
    }

    /// The run's earliest timer: (when, activity, what), the smallest activity id first among
    /// timers due at the same time.
    pub(super) fn earliest_timer(&self, known: Option<&Known>) -> Option<(u64, u64, Timer)> {
        self.doc
            .activities
            .iter()
            .filter_map(|act| {
                let (at, timer) = self.timer(act, known)?;
                Some((at, act.id.0, timer))
            })
            .min_by_key(|(at, activity, _)| (*at, *activity))
    }

    /// The next timer of an activity, in ms since the epoch: while it waits, its `timeToWait`
    /// and its remote preconditions' `timeOut`s; while it runs, its `timeOut`, or the end of
    /// the wait before its next try. All count from stored times (deployment, start, failed
    /// try), so they survive restarts. An interrupted instance starts nothing: only `timeOut`s
    /// of running activities count then.
    pub(super) fn timer(
        &self,
        act: &PartitionActivity,
        known: Option<&Known>,
    ) -> Option<(u64, Timer)> {
        let rec = self.record(act.id.0)?;
        let held = known.is_some_and(|k| k.interrupted || k.cancelled);
        let secs = |s: u32| u64::from(s) * 1000;
        match rec.state {
            ActivityState::Waiting if !held => {
                let emergency = (act.time_to_wait_secs > 0).then(|| {
                    (
                        self.deployed_ms + secs(act.time_to_wait_secs),
                        Timer::Emergency,
                    )
                });
                let overdue = act
                    .preconditions
                    .iter()
                    .filter(|p| !p.local && p.time_out_secs > 0)
                    .filter(|p| !self.overdue.contains(&(act.id.0, p.id.0)))
                    .filter(|p| self.remote_outcome(p.id.0, known).is_none())
                    .map(|p| {
                        (
                            self.deployed_ms + secs(p.time_out_secs),
                            Timer::Overdue {
                                precondition: p.id.0,
                                time_out_secs: p.time_out_secs,
                            },
                        )
                    });
                emergency
                    .into_iter()
                    .chain(overdue)
                    .min_by_key(|(at, _)| *at)
            }
            ActivityState::Running => match self.retry_at.get(&act.id.0) {
                Some(&at) if !held => Some((at, Timer::Retry)),
                Some(_) => None,
                None if act.time_out_secs > 0 => Some((
                    rec.started_ms.unwrap_or(self.deployed_ms) + secs(act.time_out_secs),
                    Timer::RunTooLong,
                )),
                None => None,
            },
            _ => None,
        }
    }

    pub(super) fn mark_emergency(&mut self, id: u64) {
        if let Some(rec) = self.activities.get_mut(&id) {
            rec.emergency = true;
        }
    }

    /// The outcome of precondition `id` as far as this run knows: a local one from its
    /// record (or, once it was replaced, its contingency activity's notification), a remote one
    /// from notifications, following substitutions.
    fn precondition_outcome(&self, id: u64, local: bool, known: Option<&Known>) -> Option<Outcome> {
        let replaced = known.is_some_and(|k| k.replaced.contains_key(&id));
        if local && !replaced {
            let (act, rec) = (self.activity(id)?, self.record(id)?);
            return outcome_of(rec.state, act.contingency);
        }
        self.remote_outcome(id, known)
    }

    fn remote_outcome(&self, id: u64, known: Option<&Known>) -> Option<Outcome> {
        let known = known?;
        known.heard.get(&known.stand_in(id)?).copied()
    }

    pub(super) fn readiness(&self, act: &PartitionActivity, known: Option<&Known>) -> Readiness {
        let mut ready = true;
        for pre in &act.preconditions {
            match self.precondition_outcome(pre.id.0, pre.local, known) {
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
