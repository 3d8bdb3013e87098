//! Backward recovery (*Algoritmo para recuperação de falhas em sistemas de gerenciamento de
//! workflow*, §4): when an instance ends cancelled (an operator's cancel) or failed (an activity
//! failed with contingency -1), once nothing of it runs any more (every partition reported or was
//! given up), the compensation of every activity that succeeded and has a `<compensation>` runs on
//! the node that ran it, one at a time, in the reverse order of the activities' ends (their nodes'
//! `finished_us`; the larger activity id first on a tie). The instance is `compensating`, then
//! `compensated`, or `compensation_failed` at the first compensation that fails (the rest are not
//! run).
//!
//! The plan and how far it got are part of the instance ([`Compensation`]), stored with it:
//! each `Message::Compensate` is staged with the state that asks for it, so a restarted
//! controller neither asks twice nor forgets to (its outbox delivers what was staged), and a
//! node's answer that comes again is ignored.

use mobiwf_proto::{ActivityId, ActivityState, Compensate, Compensated, Message, Millis};
use serde::{Deserialize, Serialize};

use crate::history::Event;
use crate::recovery::{Ctx, label, label_text, view};
use crate::{ActivityLifecycle, Instance, InstanceEvent, InstanceState, Subject};

/// An instance's backward recovery: its compensations in the order they run, and how far
/// they got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compensation {
    /// The activities whose compensations run, in order (the last to end first).
    pub order: Vec<ActivityId>,
    /// How many of them succeeded: the one asked for now is `order[done]`.
    pub done: usize,
    /// The compensation that failed, and why (the instance is `compensation_failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<(ActivityId, String)>,
}

impl Instance {
    /// True once nothing more happens to the instance by itself: it is final, and no
    /// compensation waits for its cancelled activities' nodes to report (`wait` waits for
    /// this).
    pub fn is_settled(&self) -> bool {
        self.state().is_final() && !self.awaits_compensation()
    }

    /// True while a cancelled instance waits for its partitions' last words before its
    /// compensations can be planned: some activity with a compensation succeeded, or may
    /// still say it did.
    fn awaits_compensation(&self) -> bool {
        self.state() == InstanceState::Cancelled
            && self.compensation.is_none()
            && !reported(self)
            && self.activities.iter().any(|a| {
                a.compensable
                    && a.partition.is_some()
                    && matches!(
                        a.lifecycle(),
                        ActivityLifecycle::Succeeded
                            | ActivityLifecycle::CancelledByOperator { .. }
                            | ActivityLifecycle::Waiting
                            | ActivityLifecycle::Running
                            | ActivityLifecycle::Overdue { .. }
                    )
            })
    }
}

/// True when every partition reported its result or was given up.
fn reported(inst: &Instance) -> bool {
    inst.partitions.iter().all(|p| p.is_over())
}

/// The compensations to run, the last activity to end first.
fn plan(inst: &Instance) -> Vec<ActivityId> {
    let mut done: Vec<(u64, ActivityId)> = inst
        .activities
        .iter()
        .filter(|a| a.compensable && a.partition.is_some())
        .filter(|a| a.state() == ActivityState::Succeeded)
        .map(|a| {
            let at = a
                .finished_us
                .or_else(|| a.finished_ms.map(|ms| Millis(ms).as_micros()))
                .unwrap_or(0);
            (at, a.id)
        })
        .collect();
    done.sort_unstable_by(|x, y| y.cmp(x));
    done.into_iter().map(|(_, id)| id).collect()
}

/// Begins the compensations of a cancelled or failed instance once every partition reported,
/// when some succeeded activity has one; otherwise the instance stays as it ended.
pub(crate) fn begin_if_due(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let ended = matches!(
        inst.state(),
        InstanceState::Cancelled | InstanceState::Failed
    );
    if !ended || inst.compensation.is_some() || !reported(inst) {
        return;
    }
    let order = plan(inst);
    if order.is_empty() || inst.step(InstanceEvent::Compensate).is_err() {
        return;
    }
    inst.finished_ms = None;
    inst.compensation = Some(Compensation {
        order,
        done: 0,
        failed: None,
    });
    ask_next(inst, ctx);
}

/// Asks the node of the next activity to compensate for its compensation; one that cannot be
/// asked (its node is not registered) fails the compensation.
fn ask_next(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let Some(id) = inst
        .compensation
        .as_ref()
        .and_then(|c| c.order.get(c.done))
        .copied()
    else {
        return;
    };
    let place = view(inst, id).and_then(|v| v.partition).and_then(|p| {
        let part = inst.partitions.iter().find(|x| x.id == p)?;
        Some((p, part.node.clone(), ctx.nodes.get(&part.peer).cloned()))
    });
    let Some((partition, name, Some(node))) = place else {
        let why = "its node is not registered with the controller any more".to_owned();
        end(inst, ctx, id, Err(why));
        return;
    };
    let what = Event::Compensating {
        activity: label(inst, id),
    };
    ctx.log(inst, Some(id), Some(&name), what);
    let message = Message::Compensate(Compensate {
        instance: inst.id,
        partition,
        activity: id,
    });
    ctx.send(&node, message);
}

/// A node says how the compensation of one activity ended: the next runs, or the instance's
/// recovery ends. An answer about anything but the compensation asked for now (a duplicate,
/// or one that comes after the recovery ended) changes nothing.
pub(crate) fn on_answer(inst: &mut Instance, ctx: &mut Ctx<'_>, answer: &Compensated) {
    let asked = inst
        .compensation
        .as_ref()
        .and_then(|c| c.order.get(c.done))
        .copied();
    let partition = view(inst, answer.activity).and_then(|v| v.partition);
    if inst.state() != InstanceState::Compensating
        || asked != Some(answer.activity)
        || partition != Some(answer.partition)
    {
        return;
    }
    let outcome = if answer.succeeded {
        Ok(())
    } else {
        Err(answer
            .detail
            .clone()
            .unwrap_or_else(|| "no reason given".to_owned()))
    };
    end(inst, ctx, answer.activity, outcome);
}

/// The compensation of `id` ended as `outcome` says.
fn end(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, outcome: Result<(), String>) {
    let node = view(inst, id).and_then(|v| v.node.clone());
    let Some(c) = inst.compensation.as_mut() else {
        return;
    };
    match outcome {
        Ok(()) => {
            c.done += 1;
            let last = c.done >= c.order.len();
            let what = Event::CompensationDone {
                activity: label(inst, id),
            };
            ctx.log(inst, Some(id), node.as_ref(), what);
            if !last {
                ask_next(inst, ctx);
                return;
            }
            // The instance is compensating (checked by the callers).
            let step = inst.step(InstanceEvent::Compensated);
            ctx.refused.report(inst.id, Subject::Instance, step);
        }
        Err(why) => {
            c.failed = Some((id, why.clone()));
            let what = Event::CompensationFailed {
                activity: label(inst, id),
                reason: why.clone(),
            };
            ctx.log(inst, Some(id), node.as_ref(), what);
            let on = node.map(|n| format!(" on {n}")).unwrap_or_default();
            let cause = inst.detail.take().unwrap_or_else(|| "it ended".to_owned());
            inst.detail = Some(format!(
                "the compensation of {}{on} failed: {why} (compensating because {cause})",
                label_text(inst, id)
            ));
            let step = inst.step(InstanceEvent::CompensationFailed);
            ctx.refused.report(inst.id, Subject::Instance, step);
        }
    }
    inst.finished_ms = Some(ctx.now);
    let what = Event::InstanceEnded {
        state: inst.state(),
        detail: inst.detail.clone(),
    };
    ctx.log(inst, None, None, what);
}
