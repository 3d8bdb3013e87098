//! Overdue preconditions: a node says one of its activities waited longer than a precondition's
//! `timeOut` for a remote predecessor. The controller sends the outcome again when it knows it;
//! otherwise it gives the predecessor's own partner a grace period to report it, then withdraws it
//! (fails it) and its contingency applies (at a tick).

use mobiwf_proto::{ActivityId, InstanceId, Millis, NodeId, Overdue, PartitionId};

use crate::chain::{self, Way};
use crate::history::{Event, OverdueThen};
use crate::recovery::{self, Ctx, label, label_text};
use crate::{
    ActivityEvent, Applied, Book, BookError, Effect, Grace, Instance, OVERDUE_GRACE_MS, Subject,
    check_sender,
};

impl Book {
    /// Node `peer` says its activity `waiting` waited more than `time_out_secs` for
    /// `precondition`.
    pub(crate) fn overdue(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        said: Overdue,
    ) -> Result<Applied, BookError> {
        let inst = self.instance_mut(said.instance)?;
        let partition = inst
            .activities
            .iter()
            .find(|a| a.id == said.waiting)
            .and_then(|a| a.partition)
            .unwrap_or(PartitionId(0));
        check_sender(inst, peer, partition)?;
        let mut effects = Vec::new();
        self.with_instance(said.instance, now_ms, &mut effects, |inst, ctx| {
            said_overdue(inst, ctx, peer, said);
        })?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// Withdraws the activities of instance `id` whose overdue grace ran out and that are
    /// still not final.
    pub(crate) fn decide_overdue(
        &mut self,
        id: InstanceId,
        now_ms: u64,
        effects: &mut Vec<Effect>,
    ) -> Result<(), BookError> {
        let decide: Vec<(ActivityId, String)> = self.instances[&id]
            .activities
            .iter()
            .filter_map(|a| {
                a.overdue()
                    .filter(|grace| grace.at_ms <= now_ms)
                    .map(|grace| (a.id, grace.reason.clone()))
            })
            .collect();
        if decide.is_empty() {
            return Ok(());
        }
        self.with_instance(id, now_ms, effects, |inst, ctx| {
            for (a, why) in decide {
                if let Some(v) = recovery::view_mut(inst, a) {
                    // Not final: back to where it was, withdrawn next. Final: its partner
                    // reported it during the grace; the timer is dropped.
                    v.grace_over();
                }
                if recovery::view(inst, a).is_some_and(|v| !v.state().is_final()) {
                    recovery::withdraw(inst, ctx, a, &why);
                }
            }
        })
    }
}

/// A node says one of its activities waited longer than a precondition's `timeOut`: if the
/// controller knows the predecessor's outcome it relays it; otherwise the predecessor is
/// withdrawn (failed) after the grace period and its contingency applies.
fn said_overdue(inst: &mut Instance, ctx: &mut Ctx<'_>, from_peer: &NodeId, said: Overdue) {
    let Overdue {
        waiting,
        precondition,
        time_out_secs: secs,
        ..
    } = said;
    let node = ctx.nodes.get(from_peer).map(|n| n.name.clone());
    let event = |inst: &Instance, then| Event::Overdue {
        waiting: label(inst, waiting),
        on: node.clone(),
        secs,
        precondition: label(inst, precondition),
        then,
    };
    if let Some(outcome) = recovery::effective_outcome(inst, precondition) {
        let what = event(inst, OverdueThen::Resent);
        ctx.log(inst, Some(precondition), node.as_ref(), what);
        recovery::notify_peer(inst, ctx, from_peer, precondition, outcome);
        return;
    }
    let undecided = recovery::view(inst, precondition).is_some_and(|v| !v.state().is_final());
    let pending = recovery::view(inst, precondition).is_some_and(|v| v.overdue().is_some());
    if undecided {
        if !pending {
            let then = OverdueThen::DecidesIn {
                secs: Millis(OVERDUE_GRACE_MS).as_secs(),
            };
            let what = event(inst, then);
            ctx.log(inst, Some(precondition), node.as_ref(), what);
            // The reason the activity is withdrawn for, sent to its node.
            let waited = format!(
                "{} on {} waited more than {secs} s (its precondition timeOut) for {}",
                label_text(inst, waiting),
                node.as_ref().map_or("?", |n| n.as_str()),
                label_text(inst, precondition)
            );
            if let Some(v) = recovery::view_mut(inst, precondition) {
                let grace = Grace {
                    at_ms: ctx.now + OVERDUE_GRACE_MS,
                    reason: waited,
                };
                // It is not final and not overdue (checked above).
                let step = v.step(&ActivityEvent::SaidOverdue(grace));
                ctx.refused
                    .report(inst.id, Subject::Activity(precondition), step);
            }
        }
    } else {
        // It failed and its successors wait for its contingency activity (or a chain of them).
        let stand_in = chain::end(inst, precondition, Way::ToStandIns);
        let then = if stand_in == precondition {
            OverdueThen::NotPlacedYet
        } else {
            OverdueThen::StandIn {
                by: label(inst, stand_in),
            }
        };
        let what = event(inst, then);
        ctx.log(inst, Some(precondition), node.as_ref(), what);
    }
}
