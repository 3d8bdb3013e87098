//! A completion activity (`<completion>true</completion>`: the COMPLETION activity of
//! *A lightweight workflow engine based on a relational structure* (He, Li, Jiao, Liu), §3.2.1)
//! succeeded: the instance is complete. Its own node cancelled what it runs of the instance at
//! once; the controller tells every other node of the instance (`Message::Completed`), whose
//! activities not final end cancelled with the completion as reason, and the instance ends
//! succeeded when their results are in.

use mobiwf_proto::{ActivityId, ActivityRecord, ActivityState, Completed, Message};

use crate::history::Event;
use crate::recovery::{Ctx, label};
use crate::{Instance, NodeInfo};

/// After a node's word about `record`: when it says a completion activity succeeded (the
/// first time), every node of the instance is told.
pub(crate) fn on_word(inst: &mut Instance, ctx: &mut Ctx<'_>, record: &ActivityRecord) {
    let completes = record.state == ActivityState::Succeeded
        && ctx.def.is_some_and(|d| {
            d.activities
                .iter()
                .any(|a| a.id == record.activity && a.completion)
        });
    if !completes || inst.completed_by.is_some() {
        return;
    }
    complete(inst, ctx, record.activity);
}

fn complete(inst: &mut Instance, ctx: &mut Ctx<'_>, by: ActivityId) {
    inst.completed_by = Some(by);
    let nodes: Vec<NodeInfo> = inst
        .partitions
        .iter()
        .filter(|p| !p.is_over())
        .filter_map(|p| ctx.nodes.get(&p.peer).cloned())
        .collect();
    let mut told = Vec::new();
    for node in nodes {
        if told.contains(&node.peer) {
            continue;
        }
        told.push(node.peer.clone());
        let message = Message::Completed(Completed {
            instance: inst.id,
            by,
        });
        ctx.send(&node, message);
    }
    let what = Event::Completed {
        activity: label(inst, by),
    };
    ctx.log(inst, Some(by), None, what);
}
