//! One partition of one instance on this node: its document and the state of each activity.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, InstanceId, Millis, Outcome, PartitionId, Pass,
    StateSet,
};
use mobiwf_xml_schema::{ActivityKind, Contingency, PartitionActivity, PartitionDocument};
use serde::{Deserialize, Serialize};

use crate::Refusal;
use crate::compensate::Undo;

mod by_id;
mod paused;
mod stored;
mod timers;
use crate::lifecycle::{self, Event, Life, NotAllowed, PausedFrom, StateKind};
use crate::sync::Gate;
use by_id::ById;
pub use stored::StoredRun;
pub(crate) use timers::Timer;

/// Names a partition run: the instance and the partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunKey {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
}

impl RunKey {
    pub(crate) fn first_of(instance: InstanceId) -> RunKey {
        RunKey {
            instance,
            partition: PartitionId(0),
        }
    }

    pub(crate) fn last_of(instance: InstanceId) -> RunKey {
        RunKey {
            instance,
            partition: PartitionId(u64::MAX),
        }
    }
}

/// One partition run: its document and where each activity is.
///
/// Stored as JSON in the form earlier versions wrote (`RunRepr`: a wire record per activity
/// and the retry times apart), so that either reads the other's.
#[derive(Debug, Clone)]
pub struct Run {
    /// Which run.
    pub key: RunKey,
    /// The partition document's text until it is handed over to be stored (once, under its
    /// own key, not with every change of the run: `StoredRun`); then only its parsed form
    /// (`doc`) stays in memory. Also the text a run stored by an earlier version carried
    /// inside its state, until it is moved to its own key ([`Run::take_unwritten_document`]).
    unwritten: Option<String>,
    /// When it was deployed, in ms since the epoch.
    pub deployed_ms: u64,
    /// Each activity, by id.
    activities: ById<Progress>,
    /// True once the partition result is sent.
    pub reported: bool,
    /// (waiting activity, remote precondition) pairs already reported overdue to the
    /// controller.
    pub overdue: BTreeSet<(ActivityId, ActivityId)>,
    /// The compensations the controller asked for, by activity: running, or how they ended.
    pub compensations: BTreeMap<ActivityId, Undo>,
    /// Parsed from `document` when created or loaded (`Run::reload`).
    doc: PartitionDocument,
    /// Activity id → position in `doc.activities`, built with `doc`.
    index: ById<usize>,
}

/// One activity of a run: its [`Life`] and the facts its record shows beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Where it is; only `Run::step` changes it, through `lifecycle::transition` (read it
    /// with [`Progress::life`]).
    life: Life,
    /// When its preconditions and dependency rule held (it entered `Synchronizing`), in ms
    /// since the epoch.
    pub synchronized_ms: Option<u64>,
    /// When it first entered `Ready` (a manual one: when it was first offered).
    pub ready_ms: Option<u64>,
    /// When it (or its latest try) started, in ms since the epoch.
    pub started_ms: Option<u64>,
    /// `started_ms` to the microsecond.
    pub started_us: Option<u64>,
    /// When it ended, in ms since the epoch.
    pub finished_ms: Option<u64>,
    /// `finished_ms` to the microsecond.
    pub finished_us: Option<u64>,
    /// While it is not final: what its last failed try left to say.
    pub note: Option<String>,
    /// True when its `timeToWait` started it.
    pub emergency: bool,
    /// How many of its tries failed and were tried again.
    pub retried: u32,
    /// The completion flag it ended with (a person's or its command's).
    pub flag: Option<String>,
    /// The tries of its earlier runs (before an operator's rerun, or in a loop's earlier
    /// passes), and those killed by a pause: this run's tries count on from there, so each has
    /// a run directory of its own.
    pub earlier_tries: u32,
    /// Its requests for its task class (`crate::sync`); unused without a class.
    pub(crate) gate: Gate,
    /// How long it was paused since its `timeOut` began to count (the start of its try, or
    /// the offer of its item): the `timeOut` moves by it.
    pub paused_for_ms: u64,
    /// While it is paused: the end of its command that came meanwhile, taken when it is
    /// resumed.
    pub held_end: Option<crate::pause::HeldEnd>,
    /// Its pass: the serial number of its run in a loop's body (the first otherwise).
    pub pass: Pass,
    /// When a loop's later pass of it, or its rerun, began (ms since the epoch): its waiting
    /// timers count from then, not from the deployment.
    pub pass_began_ms: Option<u64>,
}

impl Progress {
    fn waiting() -> Progress {
        Progress {
            life: Life::NotReady,
            synchronized_ms: None,
            ready_ms: None,
            started_ms: None,
            started_us: None,
            finished_ms: None,
            finished_us: None,
            note: None,
            emergency: false,
            retried: 0,
            flag: None,
            earlier_tries: 0,
            gate: Gate::default(),
            paused_for_ms: 0,
            held_end: None,
            pass: Pass::FIRST,
            pass_began_ms: None,
        }
    }

    /// Where it is.
    pub fn life(&self) -> &Life {
        &self.life
    }

    /// The number of its current try, counted over all its runs (0 the first): what names
    /// the try's run directory.
    pub fn try_number(&self) -> u32 {
        self.earlier_tries.saturating_add(self.retried)
    }

    /// An operator's rerun or a new pass: it starts over, its earlier tries counted, in the
    /// same pass (a new pass sets its own afterwards).
    fn start_over(&mut self) {
        let tried = if self.started_ms.is_some() {
            self.retried.saturating_add(1)
        } else {
            0
        };
        *self = Progress {
            earlier_tries: self.earlier_tries.saturating_add(tried),
            gate: self.gate.start_over(),
            pass: self.pass,
            ..Progress::waiting()
        };
    }

    /// The record the wire and the API show.
    pub fn record(&self, activity: ActivityId) -> ActivityRecord {
        let detail = match self.life.final_detail() {
            Some(detail) => detail.clone(),
            None => self.note.clone(),
        };
        ActivityRecord {
            pass: self.pass,
            activity,
            state: self.life.wire(),
            // A time equal to the next state's says nothing more (`StateSet::of_record`):
            // left out, so an activity that passed straight through costs no bytes.
            synchronized_ms: self.synchronized_ms.filter(|t| Some(*t) != self.ready_ms),
            ready_ms: self.ready_ms.filter(|t| Some(*t) != self.started_ms),
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            started_us: self.started_us,
            finished_us: self.finished_us,
            detail,
            emergency: self.emergency,
            retried: self.retried,
            flag: self.flag.clone(),
        }
    }

    /// Every state it entered (what a dependency rule's term looks at: *Synchronization and
    /// Disconnected Operation in WorkToDo* (IC-03-006), §2.2).
    pub fn entered(&self) -> StateSet {
        let times = [self.synchronized_ms, self.ready_ms, self.started_ms];
        StateSet::of_times(times, self.life.wire())
    }

    /// Back from a stored record and, when it waits for its next try, the time of that try.
    fn from_record(mut rec: ActivityRecord, retry_at: Option<u64>) -> Progress {
        let detail = rec.detail.take();
        let (life, note) = match (rec.state, retry_at) {
            (ActivityState::NotReady, _) => (Life::NotReady, detail),
            (ActivityState::Synchronizing, _) => (Life::Synchronizing, detail),
            (ActivityState::Ready, _) => (Life::Ready, detail),
            (ActivityState::Running, Some(at_ms)) => (
                Life::RetryWait {
                    attempt: rec.retried,
                    at_ms,
                },
                detail,
            ),
            (ActivityState::Running, None) => (
                Life::Running {
                    attempt: rec.retried,
                },
                detail,
            ),
            (ActivityState::Succeeded, _) => (Life::Succeeded { detail }, None),
            (ActivityState::Failed, _) => (Life::Failed { detail }, None),
            (ActivityState::Cancelled, _) => (Life::Cancelled { detail }, None),
            (ActivityState::Skipped, _) => (Life::Skipped { detail }, None),
        };
        Progress {
            life,
            synchronized_ms: rec.synchronized_ms.or(rec.ready_ms).or(rec.started_ms),
            ready_ms: rec.ready_ms.or(rec.started_ms),
            started_ms: rec.started_ms,
            started_us: rec.started_us,
            finished_ms: rec.finished_ms,
            finished_us: rec.finished_us,
            note,
            emergency: rec.emergency,
            retried: rec.retried,
            flag: rec.flag,
            earlier_tries: 0,
            gate: Gate::default(),
            paused_for_ms: 0,
            held_end: None,
            pass: rec.pass,
            pass_began_ms: None,
        }
    }
}

fn index_of(doc: &PartitionDocument) -> ById<usize> {
    doc.activities
        .iter()
        .enumerate()
        .map(|(i, a)| (a.id, i))
        .collect()
}

fn unparsed() -> PartitionDocument {
    PartitionDocument {
        workflow_id: mobiwf_xml_schema::WorkflowId(0),
        start_time: None,
        activities: Vec::new(),
        data: Vec::new(),
    }
}

/// What the successors of an activity that ended in `state` learn; `None` while they must
/// wait: a failed activity with a contingency activity x waits for x's outcome.
pub(crate) fn outcome_of(state: ActivityState, contingency: Contingency) -> Option<Outcome> {
    match (state, contingency) {
        (ActivityState::Succeeded, _) => Some(Outcome::Succeeded),
        (ActivityState::Failed, Contingency::Release) => Some(Outcome::Released),
        (ActivityState::Failed, Contingency::Run(_)) => None,
        (ActivityState::Failed | ActivityState::Cancelled, _) => Some(Outcome::Blocked),
        (ActivityState::Skipped, _) => Some(Outcome::Skipped),
        (
            ActivityState::NotReady
            | ActivityState::Synchronizing
            | ActivityState::Ready
            | ActivityState::Running,
            _,
        ) => None,
    }
}

impl Run {
    /// A new run of `document`, every activity waiting.
    pub(crate) fn new(key: RunKey, document: String, now_ms: u64) -> Result<Run, Refusal> {
        let doc = parse(key, &document)?;
        if doc.workflow_id.0 != key.instance.0 {
            return Err(Refusal::WrongInstance {
                instance: key.instance,
                found: InstanceId(doc.workflow_id.0),
            });
        }
        let activities = doc
            .activities
            .iter()
            .map(|a| (a.id, Progress::waiting()))
            .collect();
        Ok(Run {
            key,
            unwritten: Some(document),
            deployed_ms: now_ms,
            activities,
            reported: false,
            overdue: BTreeSet::new(),
            compensations: BTreeMap::new(),
            index: index_of(&doc),
            doc,
        })
    }

    /// Parses `document` into a run loaded from the store.
    fn reload(mut self, document: &str) -> Result<Run, Refusal> {
        self.doc = parse(self.key, document)?;
        self.index = index_of(&self.doc);
        Ok(self)
    }

    /// Whether `document` says what this run's document says (a partition deployed again).
    pub(crate) fn same_document(&self, document: &str) -> bool {
        parse(self.key, document).is_ok_and(|doc| doc == self.doc)
    }

    /// The document's text when it was not handed over to be stored yet, taken: a daemon
    /// that writes it itself (the text of a run stored by an earlier version) takes it.
    pub fn take_unwritten_document(&mut self) -> Option<String> {
        self.unwritten.take()
    }

    /// The parsed partition document.
    pub fn doc(&self) -> &PartitionDocument {
        &self.doc
    }

    /// The activity `id` of this partition.
    pub fn activity(&self, id: ActivityId) -> Option<&PartitionActivity> {
        self.index
            .get(&id)
            .and_then(|&i| self.doc.activities.get(i))
    }

    /// Where activity `id` is, with the facts beside its state.
    pub fn progress(&self, id: ActivityId) -> Option<&Progress> {
        self.activities.get(&id)
    }

    /// The requests of activity `id` for its class, to change (`crate::sync`).
    pub(crate) fn gate_mut(&mut self, id: ActivityId) -> Option<&mut Gate> {
        self.activities.get_mut(&id).map(|p| &mut p.gate)
    }

    /// Where activity `id` is in its life.
    pub fn life(&self, id: ActivityId) -> Option<&Life> {
        self.activities.get(&id).map(|p| &p.life)
    }

    /// The record of activity `id`, as the wire shows it.
    pub fn record(&self, id: ActivityId) -> Option<ActivityRecord> {
        self.activities.get(&id).map(|p| p.record(id))
    }

    /// Every record, in document order.
    pub fn records(&self) -> Vec<ActivityRecord> {
        self.doc
            .activities
            .iter()
            .filter_map(|a| self.record(a.id))
            .collect()
    }

    /// True when no activity can change any more.
    pub fn all_final(&self) -> bool {
        self.activities.values().all(|p| p.life.is_final())
    }

    /// Moves activity `id` by `event`, through [`lifecycle::transition`] (the only way its
    /// state changes), and keeps the facts beside the state: a try that starts sets the start
    /// time, a failed try counts and leaves its note, an end sets the end time. Gives the
    /// wire states before and after; `Ok(None)` when the run has no such activity.
    pub(crate) fn step(
        &mut self,
        id: ActivityId,
        event: Event,
        now_us: u64,
    ) -> Result<Option<(ActivityState, ActivityState)>, NotAllowed> {
        let Some(p) = self.activities.get_mut(&id) else {
            return Ok(None);
        };
        let note = match &event {
            Event::TryFailed { note, .. } => Some(note.clone()),
            _ => None,
        };
        let resumed = match (&p.life, &event) {
            (Life::Paused { resume, since_ms }, Event::Resume) => Some((*resume, *since_ms)),
            _ => None,
        };
        let life = lifecycle::transition(&p.life, event)?;
        let before = std::mem::replace(&mut p.life, life);
        let now_ms = Millis::from_micros(now_us).as_u64();
        let automatic = self
            .index
            .get(&id)
            .and_then(|&i| self.doc.activities.get(i))
            .is_some_and(|a| matches!(a.kind, ActivityKind::Automatic | ActivityKind::Dummy));
        match (p.life.kind(), resumed) {
            (StateKind::Synchronizing, _) => p.synchronized_ms = Some(now_ms),
            (StateKind::Ready, resumed) => {
                p.ready_ms.get_or_insert(now_ms);
                p.paused_for_ms = p
                    .paused_for_ms
                    .saturating_add(paused::lasted(resumed, now_ms));
            }
            // Runs on: the same try, its time paused not counted.
            (StateKind::Running, Some((PausedFrom::Running { .. }, since))) => {
                p.paused_for_ms = p.paused_for_ms.saturating_add(now_ms.saturating_sub(since));
            }
            (StateKind::Running, resumed) => {
                if let Some((PausedFrom::Killed { .. }, _)) = resumed {
                    // A new try: a run directory of its own, its retries untouched.
                    p.earlier_tries = p.earlier_tries.saturating_add(1);
                }
                // A command's timeOut counts from its try's start; a person's from the offer.
                if automatic || resumed.is_some() {
                    p.paused_for_ms = 0;
                }
                p.started_ms = Some(now_ms);
                p.started_us = Some(now_us);
            }
            (StateKind::RetryWait, _) => {
                p.retried += 1;
                p.note = note;
            }
            (StateKind::Paused, _) => {}
            // Only a rerun or a new pass leads back here.
            (StateKind::NotReady, _) => p.start_over(),
            (
                StateKind::Succeeded
                | StateKind::Failed
                | StateKind::Cancelled
                | StateKind::Skipped,
                _,
            ) => {
                p.finished_ms = Some(now_ms);
                p.finished_us = Some(now_us);
                p.note = None;
                p.held_end = None;
            }
        }
        Ok(Some((before.wire(), p.life.wire())))
    }

    /// Keeps the completion flag activity `id` ends with (set before its end is taken).
    pub(crate) fn set_flag(&mut self, id: ActivityId, flag: Option<String>) {
        if let Some(p) = self.activities.get_mut(&id) {
            p.flag = flag;
        }
    }

    /// Activity `id` runs as pass `pass`, begun at `now_ms` (a loop's body started it).
    pub(crate) fn set_pass(&mut self, id: ActivityId, pass: Pass, now_ms: u64) {
        if let Some(p) = self.activities.get_mut(&id) {
            p.pass = pass;
            p.pass_began_ms = Some(now_ms);
        }
    }

    /// Activity `id` waits again from `now_ms` (an operator reran it), in the same pass.
    pub(crate) fn began_again(&mut self, id: ActivityId, now_ms: u64) {
        if let Some(p) = self.activities.get_mut(&id) {
            p.pass_began_ms = Some(now_ms);
        }
    }

    pub(crate) fn mark_emergency(&mut self, id: ActivityId) {
        if let Some(p) = self.activities.get_mut(&id) {
            p.emergency = true;
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
