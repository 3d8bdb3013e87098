//! Reports from nodes: an activity with `responseImmediate` ended (`Report`) or a whole
//! partition did (`PartitionResult`). A node's word is taken unless the controller decided
//! the activity already: then it is recorded as late and ignored (a final state never
//! changes), except that an activity that ended before an operator's cancel reached its node
//! ended as its node says, and that a word of a later pass of a loop's body starts that pass
//! (`passes`); a word of an earlier pass is ignored.

use mobiwf_proto::{
    ActivityRecord, ActivityState, NodeId, NodeName, PartitionId, PartitionResult, Report,
};

use crate::completion;
use crate::history::{Event, Label};
use crate::recovery::{Ctx, label};
use crate::{
    ActivityEvent, ActivityLifecycle, ActivityView, Applied, Book, BookError,
    CANCELLED_BY_OPERATOR, Instance, PartitionEvent, Subject, check_sender,
};

impl Book {
    /// An activity of a partition ended (or started) on its node.
    pub(crate) fn report(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        report: &Report,
    ) -> Result<Applied, BookError> {
        let (instance, partition) = (report.instance, report.partition);
        check_sender(self.instance_mut(instance)?, peer, partition)?;
        let mut effects = Vec::new();
        self.with_instance(instance, now_ms, &mut effects, |inst, ctx| {
            update(inst, ctx, partition, &report.record);
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// Every activity of a partition is final on its node.
    pub(crate) fn partition_result(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        result: &PartitionResult,
    ) -> Result<Applied, BookError> {
        let (instance, partition) = (result.instance, result.partition);
        check_sender(self.instance_mut(instance)?, peer, partition)?;
        let mut effects = Vec::new();
        self.with_instance(instance, now_ms, &mut effects, |inst, ctx| {
            for record in &result.activities {
                update(inst, ctx, partition, record);
            }
            if let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition) {
                // Every state takes a result (again, or late).
                let step = p.step(&PartitionEvent::Result);
                ctx.refused
                    .report(inst.id, Subject::Partition(partition), step);
                let (late, node) = (p.lifecycle().is_given_up(), p.node.clone());
                let what = if late {
                    Event::LateResult { partition }
                } else {
                    Event::PartitionFinished { partition }
                };
                ctx.history.push(inst.id, ctx.now, None, Some(&node), what);
            }
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }
}

/// Takes a node's word about an activity of its partition, never going back from a final
/// state; records what it learnt in the history.
fn update(inst: &mut Instance, ctx: &mut Ctx<'_>, partition: PartitionId, record: &ActivityRecord) {
    let Some(i) = inst
        .activities
        .iter()
        .position(|a| a.id == record.activity && a.partition == Some(partition))
    else {
        return;
    };
    let a = &mut inst.activities[i];
    // A word of an earlier pass changes nothing; one of a later pass starts it here first.
    let Some(new_pass) = crate::passes::take_pass(a, record) else {
        return;
    };
    let name = label(inst, record.activity);
    let a = &mut inst.activities[i];
    let node = a.node.clone();
    let was_retried = a.retried;
    let mut events: Vec<(Option<u64>, Event)> = new_pass
        .into_iter()
        .map(|what| (record.synchronized_ms.or(record.started_ms), what))
        .collect();
    events.extend(facts(a, &name, record));
    let word = ActivityEvent::NodeSays {
        state: record.state,
        by_operator: record.detail.as_deref() == Some(CANCELLED_BY_OPERATOR),
    };
    // An operator's cancel is marked at once on everything not known final; a node's word
    // that the activity had finished (or was cancelled) on it is the truth, not a late word.
    let by_operator = matches!(a.lifecycle(), ActivityLifecycle::CancelledByOperator { .. });
    if by_operator && a.step(&word).is_ok() {
        if record.state != ActivityState::Cancelled {
            let what = Event::EndedBeforeCancel {
                activity: name,
                state: record.state,
            };
            events.push((record.finished_ms, what));
        }
        a.finished_ms = record.finished_ms;
        // Kept only where it orders compensations: a workflow without them writes no more.
        a.finished_us = record.finished_us.filter(|_| a.compensable);
        a.detail = record.detail.clone();
    } else if a.state().is_final() {
        if record.state.is_final() && record.state != a.state() {
            events.push((Some(ctx.now), late_word(a, name, node.as_ref(), record)));
        }
    } else if a.step(&word).is_ok() {
        events.extend(take_word(a, name, record, was_retried));
    }
    let taken = a.state() == record.state;
    for (at, what) in events {
        let at = at.unwrap_or(ctx.now);
        ctx.history
            .push(inst.id, at, Some(record.activity), node.as_ref(), what);
    }
    if taken {
        completion::on_word(inst, ctx, record);
    }
}

/// What the node did is a fact even when the controller decided the state: when it started
/// (by emergency or not), how often it was tried. Reports can arrive out of order: an
/// emergency start is kept whenever it is heard.
fn facts(a: &mut ActivityView, name: &Label, record: &ActivityRecord) -> Vec<(Option<u64>, Event)> {
    let mut events = Vec::new();
    if record.emergency && !a.emergency {
        let what = Event::StartedByEmergency {
            activity: name.clone(),
        };
        events.push((record.started_ms, what));
    }
    a.emergency |= record.emergency;
    // A state held for a while is shown; one passed on the way in the same millisecond is not.
    let next = record.started_ms.or(record.finished_ms);
    let lasted =
        |at: Option<u64>, until: Option<u64>| at.is_some_and(|t| until.is_none_or(|u| t < u));
    if a.synchronized_ms.is_none() && lasted(record.synchronized_ms, record.ready_ms) {
        let what = Event::Synchronizing {
            activity: name.clone(),
        };
        events.push((record.synchronized_ms, what));
    }
    if a.ready_ms.is_none() && lasted(record.ready_ms, next) {
        let what = Event::Ready {
            activity: name.clone(),
        };
        events.push((record.ready_ms, what));
    }
    a.synchronized_ms = a.synchronized_ms.or(record.synchronized_ms);
    a.ready_ms = a.ready_ms.or(record.ready_ms);
    if a.started_ms.is_none() && record.started_ms.is_some() && !record.emergency {
        let what = Event::Started {
            activity: name.clone(),
        };
        events.push((record.started_ms, what));
    }
    a.started_ms = a.started_ms.or(record.started_ms);
    a.retried = a.retried.max(record.retried);
    events
}

/// The node's word about an activity the controller decided otherwise.
fn late_word(
    a: &ActivityView,
    name: Label,
    node: Option<&NodeName>,
    record: &ActivityRecord,
) -> Event {
    Event::LateWord {
        activity: name,
        state: record.state,
        on: node.cloned(),
        decided: a.state(),
        reason: a.detail.clone().unwrap_or_default(),
    }
}

/// The node's word about an activity not final: taken (its state by the caller).
fn take_word(
    a: &mut ActivityView,
    name: Label,
    record: &ActivityRecord,
    was_retried: u32,
) -> Vec<(Option<u64>, Event)> {
    let mut events = Vec::new();
    if record.retried > was_retried {
        let what = Event::Retried {
            activity: name.clone(),
            times: record.retried,
        };
        events.push((record.finished_ms.or(record.started_ms), what));
    }
    if record.state.is_final() {
        let what = Event::Ended {
            activity: name,
            state: record.state,
            detail: record.detail.clone(),
            flag: record.flag.clone(),
        };
        events.push((record.finished_ms, what));
    }
    a.started_ms = record.started_ms.or(a.started_ms);
    a.flag = record.flag.clone();
    a.finished_ms = record.finished_ms;
    a.finished_us = record.finished_us.filter(|_| a.compensable);
    a.detail = record.detail.clone();
    a.retried = record.retried;
    events
}
