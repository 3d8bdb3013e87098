//! Contingency activities: placing a failed activity's contingency activity on another partner with
//! the skill (its document derived by `mobiwf-xml-schema`), telling the successors' nodes to wait
//! for it, and relaying to it the outcomes it waits for.

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, Location, Message, NodeId, Outcome, PartitionId, Substitute};
use mobiwf_xml_schema::{
    Activity, Adjacent, Contingency, DeriveOptions, WorkflowDefinition, WorkflowId,
    derive_contingency,
};

use crate::history::Event;
use crate::recovery::{
    Ctx, awaiting_on, effective_outcome, label, notify_peer, notify_successors, partition,
    successors, view, view_mut,
};
use crate::{
    ActivityEvent, ActivityLifecycle, ActivityView, Instance, NodeInfo, PartitionView, Replacement,
    Subject, format_time,
};

/// True for a failed activity whose contingency activity is still to be placed.
pub(crate) fn awaits_stand_in(a: &ActivityView) -> bool {
    matches!(a.contingency, Contingency::Run(_))
        && a.lifecycle()
            == (ActivityLifecycle::Failed {
                replaced: Replacement::No,
            })
}

/// Relays the outcomes that placed contingency activities wait for, once each, as they become
/// known.
pub(crate) fn relay_to_stand_ins(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let mut sends = Vec::new();
    // Only stand-ins are looked at: this runs on every change, over every activity, and
    // finding a partition is a search of the instance's partitions.
    for x in inst.activities.iter().filter(|x| x.stands_for.is_some()) {
        let Some(p) = x.partition.and_then(|p| partition(inst, p)) else {
            continue;
        };
        if x.state().is_final() || p.abandoned().is_some() {
            continue;
        }
        for &pre in &x.awaits {
            if !x.relayed.contains(&pre)
                && let Some(outcome) = effective_outcome(inst, pre)
            {
                sends.push((x.id, p.peer.clone(), pre, outcome));
            }
        }
    }
    for (x, peer, pre, outcome) in sends {
        notify_peer(inst, ctx, &peer, pre, outcome);
        if let Some(v) = view_mut(inst, x) {
            v.relayed.insert(pre);
        }
    }
}

/// Runs contingency activity `x` in place of failed `a` on another available partner with
/// the skill, or says that it waits for one.
pub(crate) fn place(inst: &mut Instance, ctx: &mut Ctx<'_>, a: ActivityId, x: ActivityId) {
    let Some(def) = ctx.def else {
        return;
    };
    let Some(act_x) = def.activity(x) else {
        return;
    };
    if view(inst, x).is_some_and(|v| v.partition.is_some()) {
        // Already running elsewhere (for another failure, or as a regular activity).
        block_instead(inst, ctx, a, x);
        return;
    }
    let Some(node) = choose_node(inst, ctx, a, act_x) else {
        await_partner(inst, ctx, a, x, act_x);
        return;
    };
    let awaits = stand_in_awaits(inst, def, a);
    let (adjacents, holders) = successor_holders(inst, ctx, def, a);
    let opts = DeriveOptions {
        workflow_id: Some(WorkflowId::from(inst.id)),
        start_time: Some(format_time(ctx.now)),
        locations: BTreeMap::new(),
    };
    let Some(document) = derive_contingency(def, x, &awaits, adjacents, &opts) else {
        return;
    };
    let pid = record_placement(inst, ctx, a, x, &node, awaits);
    ctx.send(
        &node,
        Message::Deploy(mobiwf_proto::Deploy {
            runs_on: inst.runs_on().into_iter().collect(),
            instance: inst.id,
            partition: pid,
            responsible: inst.responsible.clone(),
            hour_ms: crate::submit::hour_ms_for(&document, ctx.hour_ms),
            inputs: crate::inputs::read_by(&inst.inputs, &document),
            document: mobiwf_xml_schema::write_partition(&document),
        }),
    );
    let location = Location::registered(&node.addrs);
    for holder in holders.values() {
        ctx.send(
            holder,
            Message::Substitute(Substitute {
                instance: inst.id,
                replaced: a,
                by: x,
                location: location.clone(),
            }),
        );
    }
}

/// Contingency activity `x` is in use already: the successors of `a` are cancelled instead.
fn block_instead(inst: &mut Instance, ctx: &mut Ctx<'_>, a: ActivityId, x: ActivityId) {
    if let Some(v) = view_mut(inst, a) {
        // `a` awaits its stand-in (`settle` asked).
        let step = v.step(&ActivityEvent::StandInInUse);
        ctx.refused.report(inst.id, Subject::Activity(a), step);
    }
    let what = Event::ContingencyInUse {
        contingency: label(inst, x),
        failed: label(inst, a),
    };
    ctx.log(inst, Some(a), None, what);
    notify_successors(inst, ctx, a, Outcome::Blocked);
}

/// The available partner with the skill of `act_x`, other than the one `a` failed on, with
/// the fewest unfinished partitions (then by name).
fn choose_node(
    inst: &Instance,
    ctx: &Ctx<'_>,
    a: ActivityId,
    act_x: &Activity,
) -> Option<NodeInfo> {
    let failed_on = view(inst, a)
        .and_then(|v| v.partition)
        .and_then(|p| partition(inst, p))
        .map(|p| p.peer.clone());
    let skill = act_x.activity_type;
    ctx.nodes
        .values()
        .filter(|n| n.suspected.is_none() && Some(&n.peer) != failed_on.as_ref())
        .filter(|n| n.skills.contains(&skill) && !n.addrs.is_empty())
        .min_by_key(|n| {
            let load = inst
                .partitions
                .iter()
                .filter(|p| p.peer == n.peer && !p.is_over())
                .count();
            (load, n.name.clone())
        })
        .cloned()
}

/// No partner can run `x` now: says so once (in `x`'s detail and the history).
fn await_partner(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    a: ActivityId,
    x: ActivityId,
    act_x: &Activity,
) {
    let skill = act_x.activity_type;
    let waiting = format!(
        "waiting for an available partner with skill {skill} to run it in place of {}",
        crate::recovery::label_text(inst, a)
    );
    if view(inst, x).and_then(|v| v.detail.as_deref()) != Some(waiting.as_str()) {
        if let Some(v) = view_mut(inst, x) {
            v.detail = Some(waiting);
        }
        let what = Event::AwaitingPartner {
            skill,
            failed: label(inst, a),
        };
        ctx.log(inst, Some(x), None, what);
    }
}

/// What the contingency activity for `a` waits for. `a` started: its preconditions were met,
/// nothing. Not started: `a`'s preconditions (the controller relays their outcomes,
/// `relay_to_stand_ins`). A contingency activity that failed before it started waited for
/// what the activity it stood for waited for (its own definition has no preconditions): its
/// stand-in waits for the same.
fn stand_in_awaits(inst: &Instance, def: &WorkflowDefinition, a: ActivityId) -> Vec<ActivityId> {
    let started = view(inst, a).is_some_and(|v| v.started_ms.is_some());
    let stood_in = view(inst, a).filter(|v| v.stands_for.is_some());
    match (started, stood_in, def.activity(a)) {
        (true, _, _) => Vec::new(),
        (false, Some(v), _) => v.awaits.clone(),
        (false, None, Some(act_a)) => act_a.preconditions.clone(),
        (false, None, None) => Vec::new(),
    }
}

/// The successors of `a` that may wait for it (their partition live, or a loop's later pass
/// on a given-up one's node: `awaiting_on`), as adjacents of its stand-in (at their node's
/// location, or the hub's), and their nodes.
fn successor_holders(
    inst: &Instance,
    ctx: &Ctx<'_>,
    def: &WorkflowDefinition,
    a: ActivityId,
) -> (Vec<Adjacent>, BTreeMap<NodeId, NodeInfo>) {
    let mut adjacents = Vec::new();
    let mut holders = BTreeMap::new();
    for s in successors(inst, def, a) {
        if let Some((n, _)) = awaiting_on(inst, ctx.nodes, def, s) {
            adjacents.push(Adjacent {
                states: Vec::new(),
                carries: Vec::new(),
                id: s,
                location: ctx
                    .routing
                    .location(n.addrs.first().map_or("", String::as_str)),
            });
            holders.insert(n.peer.clone(), n.clone());
        }
    }
    (adjacents, holders)
}

/// Records that `x` runs on `node` in place of `a`, in a new partition; returns its id.
fn record_placement(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    a: ActivityId,
    x: ActivityId,
    node: &NodeInfo,
    awaits: Vec<ActivityId>,
) -> PartitionId {
    let pid = PartitionId(inst.partitions.iter().map(|p| p.id.0).max().unwrap_or(0) + 1);
    inst.partitions
        .push(PartitionView::sent(pid, node, None, Some(a)));
    let id = inst.id;
    if let Some(v) = view_mut(inst, x) {
        // `x` is not placed (`place` checked), but it may have been withdrawn already (a
        // node said it waited too long for it): `placed` is then refused, and `x` placed all
        // the same. Reachable (the property test reaches it), so counted and logged but not
        // loud under test.
        if let Err(refusal) = v.step(&ActivityEvent::Placed) {
            ctx.refused.record(id, Subject::Activity(x), refusal);
        }
        v.partition = Some(pid);
        v.node = Some(node.name.clone());
        v.stands_for = Some(a);
        v.awaits = awaits;
        v.detail = None;
    }
    if let Some(v) = view_mut(inst, a) {
        // `a` awaits its stand-in (`settle` asked).
        let step = v.step(&ActivityEvent::StandInPlaced(x));
        ctx.refused.report(id, Subject::Activity(a), step);
    }
    let what = Event::ContingencyPlaced {
        contingency: label(inst, x),
        on: node.name.clone(),
        failed: label(inst, a),
    };
    ctx.log(inst, Some(x), Some(&node.name), what);
    pid
}
