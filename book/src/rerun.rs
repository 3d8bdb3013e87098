//! Forward recovery (*Algoritmo para recuperação de falhas em sistemas de gerenciamento de
//! workflow*, §4): `mobiwf-controller rerun INSTANCE
//! ACTIVITY`. Only a failed instance, none of whose compensations started, and only an
//! activity that failed with contingency -1: it, and the activities cancelled because of it
//! (transitively through their preconditions), go back to waiting; the instance runs again
//! and carries on from its stored state.
//!
//! Every node holding one of them is sent `Message::Rerun` with the whole list. A node
//! forgets what it heard of the listed activities' ends, so their new ends must not reach it
//! before its rerun: the failed activity's partition, the only one where something can start
//! at once (everything else waits for it), is sent its rerun last, once every other partition
//! acknowledged its own ([`PendingRerun`], stored with the instance; a partition given up
//! meanwhile is not waited for). The ends the controller itself decides meanwhile (a
//! partition given up, an activity withdrawn) would race a rerun still on its way, since the
//! outbox keeps no order: what it tells a node of a listed activity waits, stored with the
//! rerun, until that node acknowledged every rerun it was sent. The ends nodes decide at
//! once (an activity rerun with another failed precondition, cancelled again by its node as
//! soon as its rerun arrives) are not the controller's to hold: each rerun is numbered
//! (`Instance::reruns`, `Rerun::rerun`) and a node's notifies carry the latest it applied,
//! so a node forgets only the words said before the rerun it applies.

use std::collections::BTreeSet;
use std::time::Duration;

use mobiwf_proto::{
    ActivityId, InstanceId, Message, Millis, NodeId, PartitionId, Rerun, cancelled_by_design,
};
use mobiwf_xml_schema::{Contingency, WorkflowDefinition};
use serde::{Deserialize, Serialize};

use crate::chain::{self, Way};
use crate::history::Event;
use crate::recovery::{
    Ctx, effective_outcome, label, label_text, notify_peer, partition, view, view_mut,
};
use crate::{
    ActivityEvent, ActivityLifecycle, Applied, Book, BookError, Instance, InstanceEvent,
    InstanceState, PartitionEvent, Replacement, Subject,
};

/// A rerun some node has not acknowledged yet: its last message waits for the others'
/// acknowledgements, and the controller's word on the activities rerun waits for those of
/// the nodes it goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingRerun {
    /// The activities rerun, the failed one first.
    pub activities: Vec<ActivityId>,
    /// The partitions whose node was sent its rerun and has not acknowledged it yet.
    pub awaiting: BTreeSet<PartitionId>,
    /// The failed activity's partition: sent its rerun once `awaiting` is empty.
    pub last: PartitionId,
    /// `last` was sent its rerun (it is in `awaiting` until acknowledged). Stored before
    /// this field, a pending rerun had not sent it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub last_sent: bool,
    /// The ends of activities rerun the controller decided and held back from a node whose
    /// rerun is not acknowledged (it would forget them): sent to it once it is.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub held: BTreeSet<(NodeId, ActivityId)>,
    /// The number of the instance's latest operator control when the rerun was decided, which
    /// every partition's rerun carries, the last one's too (sent later: a control given
    /// meanwhile is newer than the rerun, and must not be taken as overtaken by it). 0 when
    /// stored before this field: the node then learns nothing of the controls from it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub controls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PendingRerun {
    /// The partitions whose node has not acknowledged its rerun, sent or still to be sent.
    fn unacknowledged(&self) -> impl Iterator<Item = PartitionId> + '_ {
        let last = (!self.last_sent).then_some(self.last);
        self.awaiting.iter().copied().chain(last)
    }
}

impl Book {
    /// An operator reruns failed `activity` of failed instance `id`.
    pub(crate) fn rerun(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        activity: ActivityId,
    ) -> Result<Applied, BookError> {
        let inst = self
            .instances
            .get(&id)
            .ok_or(BookError::UnknownInstance(id))?;
        let def = self.definitions.get(&id).map(|d| &**d);
        let again = what_reruns(inst, def, activity).map_err(BookError::Rerun)?;
        for a in &again {
            let p = view(inst, *a).and_then(|v| v.partition);
            let node = p.and_then(|p| partition(inst, p)).map(|p| &p.peer);
            if !node.is_some_and(|n| self.nodes.contains_key(n)) {
                return Err(BookError::Rerun(format!(
                    "the node that ran {} of instance {id} is not registered with the \
                     controller: start it again, then rerun",
                    label_text(inst, *a)
                )));
            }
        }
        let deadlines = partition_timeouts(def);
        let mut effects = Vec::new();
        self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
            restart(inst, ctx, &again, &deadlines);
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// A node acknowledged (or refused) the rerun of a partition: the last one goes once
    /// every other was.
    pub(crate) fn rerun_delivered(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        partition: PartitionId,
    ) -> Result<Applied, BookError> {
        let mut effects = Vec::new();
        self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
            if let Some(pending) = inst.rerun.as_mut() {
                pending.awaiting.remove(&partition);
            }
            send_last_if_due(inst, ctx);
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }
}

/// The activities a rerun of `activity` puts back to waiting (it first), or why it cannot.
fn what_reruns(
    inst: &Instance,
    def: Option<&WorkflowDefinition>,
    activity: ActivityId,
) -> Result<Vec<ActivityId>, String> {
    check_instance(inst)?;
    check_activity(inst, activity)?;
    let again = cancelled_because(inst, def, activity);
    for a in &again {
        let p = view(inst, *a).and_then(|v| v.partition);
        if let Some(reason) = p.and_then(|p| partition(inst, p)?.abandoned().map(str::to_owned)) {
            return Err(format!(
                "the controller gave up on the partition of {} of instance {} ({reason}): \
                 nothing would run it again",
                label_text(inst, *a),
                inst.id
            ));
        }
    }
    Ok(again)
}

/// Only a failed instance whose compensations did not start is rerun.
fn check_instance(inst: &Instance) -> Result<(), String> {
    let id = inst.id;
    match inst.state() {
        InstanceState::Failed => Ok(()),
        InstanceState::Compensating
        | InstanceState::Compensated
        | InstanceState::CompensationFailed => Err(format!(
            "instance {id} is {}: its compensations have started (backward recovery), so it \
             is not rerun",
            inst.state().as_str()
        )),
        state => Err(format!(
            "instance {id} is {}: only a failed instance is rerun",
            state.as_str()
        )),
    }
}

/// Only an activity that failed with contingency -1 (its successors were cancelled because
/// of it) is rerun.
fn check_activity(inst: &Instance, activity: ActivityId) -> Result<(), String> {
    let id = inst.id;
    let Some(v) = view(inst, activity) else {
        return Err(format!("instance {id} has no activity {activity}"));
    };
    let name = label_text(inst, activity);
    let life = v.lifecycle();
    let ActivityLifecycle::Failed { replaced } = life else {
        return Err(format!(
            "{name} of instance {id} is {}: only a failed activity is rerun",
            life.kind().name()
        ));
    };
    match (replaced, v.contingency) {
        (Replacement::By(x), _) => Err(format!(
            "{name} of instance {id} failed and its contingency activity {} took its place: \
             rerun that one instead, if it failed",
            label_text(inst, x)
        )),
        (Replacement::InUse, _) => Err(format!(
            "{name} of instance {id} failed while its contingency activity was in use \
             elsewhere: only an activity that failed with contingency -1 is rerun"
        )),
        (Replacement::No, Contingency::Block) => Ok(()),
        (Replacement::No, Contingency::Release) => Err(format!(
            "{name} of instance {id} failed with contingency 0: its successors did not wait \
             for it, so it is not rerun; rerun the activity that failed with contingency -1"
        )),
        (Replacement::No, Contingency::Run(x)) => Err(format!(
            "{name} of instance {id} failed with contingency {x}: its contingency activity \
             decides for its successors, so it is not rerun"
        )),
    }
}

/// `failed` and the activities cancelled because of it, transitively through their
/// preconditions (a contingency activity's successors are those of the activity it stands
/// for); not those cancelled by design (a rule, a completion) or by an operator.
fn cancelled_because(
    inst: &Instance,
    def: Option<&WorkflowDefinition>,
    failed: ActivityId,
) -> Vec<ActivityId> {
    let mut again = vec![failed];
    let Some(def) = def else {
        return again;
    };
    let mut i = 0;
    while let Some(&at) = again.get(i) {
        let origin = chain::end(inst, at, Way::ToOrigin);
        for a in def
            .activities
            .iter()
            .filter(|a| a.preconditions.contains(&origin))
        {
            let blocked = view(inst, a.id).is_some_and(|v| {
                v.lifecycle() == ActivityLifecycle::Cancelled
                    && !v.detail.as_deref().is_some_and(cancelled_by_design)
            });
            if blocked && !again.contains(&a.id) {
                again.push(a.id);
            }
        }
        i += 1;
    }
    again
}

/// Each partition's `timeOut` in the definition (a rerun partition's deadline counts from the
/// rerun).
fn partition_timeouts(def: Option<&WorkflowDefinition>) -> Vec<(PartitionId, Duration)> {
    def.map(|d| {
        d.partitions
            .iter()
            .filter(|p| p.time_out_secs > 0)
            .map(|p| (p.id, Duration::from_secs(p.time_out_secs.into())))
            .collect()
    })
    .unwrap_or_default()
}

/// Puts `again` back to waiting and the instance to running, and sends the reruns.
fn restart(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    again: &[ActivityId],
    deadlines: &[(PartitionId, Duration)],
) {
    // The instance is failed (checked before).
    let step = inst.step(InstanceEvent::Rerun);
    ctx.refused.report(inst.id, Subject::Instance, step);
    inst.detail = None;
    inst.finished_ms = None;
    let mut partitions = BTreeSet::new();
    for &a in again {
        let Some(v) = view_mut(inst, a) else {
            continue;
        };
        if v.step(&ActivityEvent::Rerun).is_err() {
            continue;
        }
        (v.synchronized_ms, v.ready_ms, v.started_ms) = (None, None, None);
        (v.finished_ms, v.finished_us, v.detail, v.flag) = (None, None, None, None);
        (v.emergency, v.retried) = (false, 0);
        partitions.extend(v.partition);
    }
    for p in inst
        .partitions
        .iter_mut()
        .filter(|p| partitions.contains(&p.id))
    {
        // Refused only by a partition whose result is not back (its instance failed on
        // another partition's refusal): it stays deployed, where a rerun puts it.
        let _ = p.step(&PartitionEvent::Rerun);
        if let Some((_, time_out)) = deadlines.iter().find(|(id, _)| *id == p.id) {
            let deadline = Millis(ctx.now).saturating_add(*time_out);
            p.deadline_ms = (p.stands_for.is_none()).then_some(deadline.as_u64());
        }
    }
    let failed = again[0];
    let with = again[1..].iter().map(|a| label(inst, *a)).collect();
    let what = Event::Rerun {
        activity: label(inst, failed),
        with,
    };
    let node = view(inst, failed).and_then(|v| v.node.clone());
    ctx.log(inst, Some(failed), node.as_ref(), what);
    let Some(last) = view(inst, failed).and_then(|v| v.partition) else {
        return;
    };
    inst.reruns += 1;
    partitions.remove(&last);
    let controls = inst.controls;
    for p in &partitions {
        send(inst, ctx, *p, again, controls);
    }
    // What an earlier rerun held back of activities not rerun now is not forgotten by this
    // one: it goes now. The rest is decided anew.
    let earlier = inst.rerun.take().map(|r| r.held).unwrap_or_default();
    for (peer, a) in earlier.into_iter().filter(|(_, a)| !again.contains(a)) {
        if let Some(outcome) = effective_outcome(inst, a) {
            notify_peer(inst, ctx, &peer, a, outcome);
        }
    }
    inst.rerun = Some(PendingRerun {
        activities: again.to_vec(),
        awaiting: partitions,
        last,
        last_sent: false,
        held: BTreeSet::new(),
        controls,
    });
    send_last_if_due(inst, ctx);
}

/// Sends the failed activity's partition its rerun once no other partition's is awaited
/// (acknowledged, or given up meanwhile), sends each node what was held back from it once
/// its reruns are acknowledged, and forgets the rerun once every one is.
pub(crate) fn send_last_if_due(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let Some(pending) = inst.rerun.as_mut() else {
        return;
    };
    let abandoned: BTreeSet<PartitionId> = inst
        .partitions
        .iter()
        .filter(|p| p.abandoned().is_some())
        .map(|p| p.id)
        .collect();
    pending.awaiting.retain(|p| !abandoned.contains(p));
    if pending.awaiting.is_empty() && !pending.last_sent {
        pending.last_sent = true;
        if !abandoned.contains(&pending.last) {
            pending.awaiting.insert(pending.last);
        }
        let (last, activities) = (pending.last, pending.activities.clone());
        let controls = pending.controls;
        send(inst, ctx, last, &activities, controls);
    }
    release(inst, ctx);
    if inst
        .rerun
        .as_ref()
        .is_some_and(|r| r.last_sent && r.awaiting.is_empty())
    {
        inst.rerun = None;
    }
}

/// True when the controller's word on activity `id` must not go to node `to` yet: `id` is
/// rerun and `to` has not acknowledged its rerun (it would forget the word when the rerun
/// arrives). The word is recorded, to go once it has ([`release`]).
pub(crate) fn hold_back(inst: &mut Instance, to: &NodeId, id: ActivityId) -> bool {
    let Some(pending) = inst.rerun.as_ref() else {
        return false;
    };
    if !pending.activities.contains(&id) || !unacknowledged_by(inst, pending, to) {
        return false;
    }
    if let Some(pending) = inst.rerun.as_mut() {
        pending.held.insert((to.clone(), id));
    }
    true
}

/// True when node `peer` holds a partition whose rerun it has not acknowledged.
fn unacknowledged_by(inst: &Instance, pending: &PendingRerun, peer: &NodeId) -> bool {
    pending
        .unacknowledged()
        .any(|p| partition(inst, p).is_some_and(|v| v.peer == *peer))
}

/// Sends each node whose reruns are all acknowledged (or given up) what was held back from
/// it, as the controller knows it now.
fn release(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let Some(pending) = inst.rerun.as_ref() else {
        return;
    };
    let due: Vec<(NodeId, ActivityId)> = pending
        .held
        .iter()
        .filter(|(peer, _)| !unacknowledged_by(inst, pending, peer))
        .cloned()
        .collect();
    if let Some(pending) = inst.rerun.as_mut() {
        pending.held.retain(|h| !due.contains(h));
    }
    for (peer, a) in due {
        // Held back only once decided: a final state never changes before the next rerun.
        if let Some(outcome) = effective_outcome(inst, a) {
            notify_peer(inst, ctx, &peer, a, outcome);
        }
    }
}

/// Sends partition `p`'s node the rerun of `activities`, decided when the instance's latest
/// control was number `controls`.
fn send(
    inst: &Instance,
    ctx: &mut Ctx<'_>,
    p: PartitionId,
    activities: &[ActivityId],
    controls: u64,
) {
    let Some(node) = partition(inst, p)
        .and_then(|v| ctx.nodes.get(&v.peer))
        .cloned()
    else {
        return;
    };
    let message = Message::Rerun(Rerun {
        instance: inst.id,
        partition: p,
        activities: activities.to_vec(),
        controls,
        rerun: inst.reruns,
    });
    ctx.send(&node, message);
}
