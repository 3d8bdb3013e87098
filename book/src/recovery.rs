//! What the controller decides when partners fail or are too slow (MISSION P5, P6, F1):
//! giving up on a partition (its partner stopped answering, or its `timeOut` passed),
//! withdrawing an activity whose successors waited too long, applying contingency rules
//! (-1 block, 0 release, x > 0 run x on another partner with the skill), relaying outcomes to
//! contingency activities, and deciding when an instance is over.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, ActivityState, Message, NodeId, NodeName, Outcome, PartitionId};
use mobiwf_xml_schema::{
    Adjacent, Contingency, PartitionActivity, PartitionDocument, Precondition, WorkflowDefinition,
    WorkflowId,
};

use super::history::History;
use super::hub::Routing;
use super::{ActivityView, Effect, Instance, InstanceState, NodeInfo, PartitionView, format_time};

/// The longest chain of contingency activities followed when deciding an outcome.
pub const MAX_CONTINGENCY_CHAIN: usize = 64;

/// What the recovery rules need besides the instance: borrowed from the book's other fields.
pub(super) struct Ctx<'a> {
    pub nodes: &'a BTreeMap<NodeId, NodeInfo>,
    pub def: Option<&'a WorkflowDefinition>,
    pub history: &'a mut History,
    pub effects: &'a mut Vec<Effect>,
    pub now: u64,
    pub routing: &'a Routing,
}

impl Ctx<'_> {
    fn send(&mut self, node: &NodeInfo, message: Message) {
        self.effects.push(Effect::Send {
            to: node.peer.clone(),
            addrs: node.addrs.clone(),
            message,
        });
    }

    fn log(
        &mut self,
        inst: &Instance,
        activity: Option<ActivityId>,
        partner: Option<&NodeName>,
        what: String,
    ) {
        self.history
            .push(inst.id, self.now, activity, partner, what);
    }
}

pub(super) fn view(inst: &Instance, id: ActivityId) -> Option<&ActivityView> {
    inst.activities.iter().find(|a| a.id == id)
}

pub(super) fn view_mut(inst: &mut Instance, id: ActivityId) -> Option<&mut ActivityView> {
    inst.activities.iter_mut().find(|a| a.id == id)
}

fn partition(inst: &Instance, id: PartitionId) -> Option<&PartitionView> {
    inst.partitions.iter().find(|p| p.id == id)
}

/// A short name for an activity in history lines: `A2 (17)`.
pub(super) fn label(inst: &Instance, id: ActivityId) -> String {
    match view(inst, id) {
        Some(a) if !a.name.is_empty() => format!("{} ({id})", a.name),
        _ => format!("activity {id}"),
    }
}

/// The node that runs activity `id`, with its partition, while that partition is live.
fn holder<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    id: ActivityId,
) -> Option<(&'n NodeInfo, PartitionId)> {
    let p = partition(inst, view(inst, id)?.partition?)?;
    if p.abandoned.is_some() {
        return None;
    }
    Some((nodes.get(&p.peer)?, p.id))
}

/// The partition that runs activity `id`, when it is placed.
pub(super) fn partition_of(inst: &Instance, id: ActivityId) -> Option<PartitionId> {
    view(inst, id)?.partition
}

/// The activities that wait for `id`: its successors in the definition, or, for a contingency
/// activity, those of the activity it stands for.
fn successors(inst: &Instance, def: &WorkflowDefinition, id: ActivityId) -> Vec<ActivityId> {
    let mut at = id;
    for _ in 0..MAX_CONTINGENCY_CHAIN {
        match view(inst, at).and_then(|v| v.stands_for) {
            Some(a) => at = a,
            None => break,
        }
    }
    def.activities
        .iter()
        .filter(|a| a.preconditions.contains(&at))
        .map(|a| a.id)
        .collect()
}

/// What the successors of `id` learn from it, as far as the controller knows: following
/// contingency activities; `None` while undecided.
pub(super) fn effective_outcome(inst: &Instance, id: ActivityId) -> Option<Outcome> {
    let mut at = id;
    for _ in 0..MAX_CONTINGENCY_CHAIN {
        let v = view(inst, at)?;
        match v.state {
            ActivityState::Succeeded => return Some(Outcome::Succeeded),
            ActivityState::Cancelled => return Some(Outcome::Blocked),
            ActivityState::Failed => match (v.contingency, v.replaced_by) {
                (Contingency::Release, _) => return Some(Outcome::Released),
                (Contingency::Block, _) => return Some(Outcome::Blocked),
                _ if v.blocked_instead => return Some(Outcome::Blocked),
                (_, Some(x)) => at = x,
                (_, None) => return None,
            },
            ActivityState::Waiting | ActivityState::Running => return None,
        }
    }
    None
}

/// Tells the nodes that run successors of `id` in other partitions its outcome (the controller
/// decided it: the node that ran `id` cannot be relied on to).
fn notify_successors(inst: &Instance, ctx: &mut Ctx<'_>, id: ActivityId, outcome: Outcome) {
    let Some(def) = ctx.def else {
        return;
    };
    let to: Vec<NodeInfo> = successor_nodes(inst, ctx.nodes, def, id)
        .into_iter()
        .cloned()
        .collect();
    for node in to {
        notify_peer(inst, ctx, &node.peer, id, outcome);
    }
}

/// The nodes to tell that activity `id` ended: those running its successors in other
/// partitions than its own (a node may run several partitions), each once.
pub(super) fn successor_nodes<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    def: &WorkflowDefinition,
    id: ActivityId,
) -> Vec<&'n NodeInfo> {
    let own = view(inst, id).and_then(|v| v.partition);
    let mut told = BTreeSet::new();
    successors(inst, def, id)
        .into_iter()
        .filter_map(|s| holder(inst, nodes, s))
        .filter(|(node, p)| Some(*p) != own && told.insert(node.peer.clone()))
        .map(|(node, _)| node)
        .collect()
}

/// The controller decides that activity `id` ends in `state` (failed or cancelled), for
/// `reason`, and records it; returns its contingency, or `None` when it was final already.
fn decide(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    id: ActivityId,
    state: ActivityState,
    reason: &str,
) -> Option<Contingency> {
    let node = view(inst, id).and_then(|v| v.node.clone());
    let v = view_mut(inst, id).filter(|v| !v.state.is_final())?;
    v.state = state;
    v.finished_ms = Some(ctx.now);
    v.detail = Some(reason.to_owned());
    let contingency = v.contingency;
    let what = format!("{} {}: {reason}", label(inst, id), state.as_str());
    ctx.log(inst, Some(id), node.as_ref(), what);
    Some(contingency)
}

/// The controller decides that activity `id` failed, for `reason`; its contingency applies.
pub(super) fn fail(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, reason: &str) {
    match decide(inst, ctx, id, ActivityState::Failed, reason) {
        Some(Contingency::Release) => notify_successors(inst, ctx, id, Outcome::Released),
        Some(Contingency::Block) => notify_successors(inst, ctx, id, Outcome::Blocked),
        // x > 0: `settle` places the contingency activity.
        _ => {}
    }
}

/// Gives up on a partition: every activity not final fails for `reason`, the node is told to
/// abort them (if it ever hears it), and their contingencies apply.
pub(super) fn abandon(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    partition_id: PartitionId,
    reason: &str,
) {
    let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition_id) else {
        return;
    };
    if p.finished || p.abandoned.is_some() {
        return;
    }
    p.abandoned = Some(reason.to_owned());
    let (peer, node_name) = (p.peer.clone(), p.node.clone());
    let ids: Vec<ActivityId> = inst
        .activities
        .iter()
        .filter(|a| a.partition == Some(partition_id) && !a.state.is_final())
        .map(|a| a.id)
        .collect();
    ctx.log(
        inst,
        None,
        Some(&node_name),
        format!("partition {partition_id} given up: {reason}"),
    );
    if let Some(node) = ctx.nodes.get(&peer).cloned() {
        ctx.send(
            &node,
            Message::Withdraw {
                instance: inst.id,
                partition: partition_id,
                activities: ids.clone(),
                reason: reason.to_owned(),
            },
        );
    }
    // Predecessors first, so that an activity whose predecessor here blocks it is cancelled,
    // transitively (F1), rather than failed with its own contingency.
    let mut remaining = ids;
    let def = ctx.def;
    let preds = |id: ActivityId| -> Vec<ActivityId> {
        def.and_then(|d| d.activity(id))
            .map(|a| a.preconditions.clone())
            .unwrap_or_default()
    };
    while !remaining.is_empty() {
        let (ready, later): (Vec<ActivityId>, Vec<ActivityId>) = remaining
            .iter()
            .partition(|&&id| preds(id).iter().all(|p| !remaining.contains(p)));
        // No cycles pass validation; should one be here, end the rest anyway.
        let (ready, later) = if ready.is_empty() {
            (later, Vec::new())
        } else {
            (ready, later)
        };
        for id in ready {
            let blocked_by = preds(id)
                .into_iter()
                .find(|&p| effective_outcome(inst, p) == Some(Outcome::Blocked));
            match blocked_by {
                Some(p) => cancel(
                    inst,
                    ctx,
                    id,
                    &format!("precondition {p} failed or was cancelled"),
                ),
                None => fail(inst, ctx, id, reason),
            }
        }
        remaining = later;
    }
}

/// The controller decides that activity `id` will never run: a predecessor blocks it.
fn cancel(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, reason: &str) {
    if decide(inst, ctx, id, ActivityState::Cancelled, reason).is_some() {
        notify_successors(inst, ctx, id, Outcome::Blocked);
    }
}

/// Withdraws one activity that its successors waited for too long.
pub(super) fn withdraw(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, reason: &str) {
    if let Some((node, p)) = holder(inst, ctx.nodes, id) {
        let node = node.clone();
        ctx.send(
            &node,
            Message::Withdraw {
                instance: inst.id,
                partition: p,
                activities: vec![id],
                reason: reason.to_owned(),
            },
        );
    }
    fail(inst, ctx, id, reason);
}

/// Relays an outcome the controller knows to the node of one waiting activity.
pub(super) fn notify_peer(
    inst: &Instance,
    ctx: &mut Ctx<'_>,
    to_peer: &NodeId,
    id: ActivityId,
    outcome: Outcome,
) {
    if let Some(node) = ctx.nodes.get(to_peer).cloned() {
        ctx.send(
            &node,
            Message::Notify {
                instance: inst.id,
                activity: id,
                outcome,
            },
        );
    }
}

/// After any change: places the contingency activities that failures call for, relays known
/// outcomes to contingency activities waiting for them, and ends the instance when nothing
/// can change any more.
pub(super) fn settle(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    if inst.state.is_final() {
        return;
    }
    // An interrupted instance starts nothing new: its contingency activities are placed when
    // it is resumed (a node that was not told of the interruption would run them at once).
    let interrupted = inst.state == InstanceState::Interrupted;
    let pending: Vec<(ActivityId, ActivityId)> = inst
        .activities
        .iter()
        .filter(|a| !interrupted && awaits_stand_in(a))
        .filter_map(|a| match a.contingency {
            Contingency::Run(x) => Some((a.id, x)),
            _ => None,
        })
        .collect();
    for (a, x) in pending {
        place(inst, ctx, a, x);
    }
    relay_to_stand_ins(inst, ctx);
    finish_if_done(inst, ctx);
}

fn relay_to_stand_ins(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let mut sends = Vec::new();
    for x in &inst.activities {
        let Some(p) = x.partition.and_then(|p| partition(inst, p)) else {
            continue;
        };
        if x.stands_for.is_none() || x.state.is_final() || p.abandoned.is_some() {
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
fn place(inst: &mut Instance, ctx: &mut Ctx<'_>, a: ActivityId, x: ActivityId) {
    let Some(def) = ctx.def else {
        return;
    };
    let Some(act_x) = def.activity(x) else {
        return;
    };
    if view(inst, x).is_some_and(|v| v.partition.is_some()) {
        // Already running elsewhere (for another failure, or as a regular activity).
        if let Some(v) = view_mut(inst, a) {
            v.blocked_instead = true;
        }
        let what = format!(
            "contingency activity {} is already in use: the successors of {} are cancelled",
            label(inst, x),
            label(inst, a)
        );
        ctx.log(inst, Some(a), None, what);
        notify_successors(inst, ctx, a, Outcome::Blocked);
        return;
    }
    let failed_on = view(inst, a)
        .and_then(|v| v.partition)
        .and_then(|p| partition(inst, p))
        .map(|p| p.peer.clone());
    let skill = act_x.activity_type;
    let chosen = ctx
        .nodes
        .values()
        .filter(|n| n.suspected.is_none() && Some(&n.peer) != failed_on.as_ref())
        .filter(|n| n.skills.contains(&skill) && !n.addrs.is_empty())
        .min_by_key(|n| {
            let load = inst
                .partitions
                .iter()
                .filter(|p| p.peer == n.peer && !p.finished && p.abandoned.is_none())
                .count();
            (load, n.name.clone())
        })
        .cloned();
    let Some(node) = chosen else {
        let waiting = format!(
            "waiting for an available partner with skill {skill} to run it in place of {}",
            label(inst, a)
        );
        if view(inst, x).and_then(|v| v.detail.as_deref()) != Some(waiting.as_str()) {
            if let Some(v) = view_mut(inst, x) {
                v.detail = Some(waiting.clone());
            }
            ctx.log(inst, Some(x), None, waiting);
        }
        return;
    };
    let started = view(inst, a).is_some_and(|v| v.started_ms.is_some());
    let act_a = def.activity(a);
    // Started: its preconditions were met. Not started: the contingency activity waits for
    // them, and the controller relays their outcomes (`relay_to_stand_ins`). A contingency
    // activity that failed before it started waited for what the activity it stood for
    // waited for (its own definition has no preconditions): its successor waits for the same.
    let stood_in = view(inst, a).filter(|v| v.stands_for.is_some());
    let awaits: Vec<ActivityId> = match (started, stood_in, act_a) {
        (true, _, _) => Vec::new(),
        (false, Some(v), _) => v.awaits.clone(),
        (false, None, Some(act_a)) => act_a.preconditions.clone(),
        (false, None, None) => Vec::new(),
    };
    let location = node.addrs.first().cloned().unwrap_or_default();
    let mut adjacents = Vec::new();
    let mut holders: BTreeMap<NodeId, NodeInfo> = BTreeMap::new();
    for s in successors(inst, def, a) {
        if let Some((n, _)) = holder(inst, ctx.nodes, s) {
            adjacents.push(Adjacent {
                id: s,
                location: ctx
                    .routing
                    .location(n.addrs.first().map_or("", String::as_str)),
            });
            holders.insert(n.peer.clone(), n.clone());
        }
    }
    let by_id = def.activities_by_id();
    let preconditions = awaits
        .iter()
        .map(|&p| {
            let pre = by_id.get(&p);
            Precondition {
                id: p,
                status: pre.map(|d| d.status).unwrap_or_default(),
                local: false,
                time_out_secs: pre.map_or(0, |d| d.time_out_secs),
            }
        })
        .collect();
    let document = PartitionDocument {
        workflow_id: WorkflowId::from(inst.id),
        start_time: Some(format_time(ctx.now)),
        activities: vec![PartitionActivity {
            id: act_x.id,
            name: act_x.name.clone(),
            description: act_x.description.clone(),
            status: act_x.status,
            response_immediate: true,
            time_to_wait_secs: act_x.time_to_wait_secs,
            contingency: act_x.contingency,
            preconditions,
            adjacents,
            time_out_secs: act_x.time_out_secs,
            kind: act_x.kind,
            command: act_x.command.clone(),
            retries: act_x.retries,
        }],
    };
    let pid = PartitionId(inst.partitions.iter().map(|p| p.id.0).max().unwrap_or(0) + 1);
    inst.partitions.push(PartitionView {
        id: pid,
        node: node.name.clone(),
        peer: node.peer.clone(),
        deployed: false,
        finished: false,
        deadline_ms: None,
        stands_for: Some(a),
        abandoned: None,
    });
    if let Some(v) = view_mut(inst, x) {
        v.partition = Some(pid);
        v.node = Some(node.name.clone());
        v.stands_for = Some(a);
        v.awaits = awaits;
        v.detail = None;
    }
    if let Some(v) = view_mut(inst, a) {
        v.replaced_by = Some(x);
    }
    let what = format!(
        "contingency activity {} runs on {} in place of {}",
        label(inst, x),
        node.name,
        label(inst, a)
    );
    ctx.log(inst, Some(x), Some(&node.name), what);
    ctx.send(
        &node,
        Message::Deploy {
            instance: inst.id,
            partition: pid,
            document: mobiwf_xml_schema::write_partition(&document),
        },
    );
    for holder in holders.values() {
        ctx.send(
            holder,
            Message::Substitute {
                instance: inst.id,
                replaced: a,
                by: x,
                location: location.clone(),
            },
        );
    }
}

/// True for a failed activity whose contingency activity is still to be placed.
fn awaits_stand_in(a: &ActivityView) -> bool {
    a.state == ActivityState::Failed
        && matches!(a.contingency, Contingency::Run(_))
        && a.replaced_by.is_none()
        && !a.blocked_instead
}

/// Ends the instance once every partition finished or was given up and no contingency
/// activity waits to be placed.
fn finish_if_done(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let partitions_done = inst
        .partitions
        .iter()
        .all(|p| p.finished || p.abandoned.is_some());
    let placing = inst.activities.iter().any(awaits_stand_in);
    if !partitions_done || placing {
        return;
    }
    let blocking = |a: &&ActivityView| {
        a.state == ActivityState::Failed
            && (a.contingency == Contingency::Block || a.blocked_instead)
    };
    let cause = inst
        .activities
        .iter()
        .filter(|a| a.partition.is_some())
        .find(blocking)
        .or_else(|| {
            inst.activities
                .iter()
                .find(|a| a.partition.is_some() && a.state == ActivityState::Cancelled)
        });
    match cause {
        Some(a) => {
            inst.state = InstanceState::Failed;
            let on = a
                .node
                .as_ref()
                .map(|n| format!(" on {n}"))
                .unwrap_or_default();
            let verb = if a.state == ActivityState::Cancelled {
                "was cancelled"
            } else {
                "failed"
            };
            inst.detail = Some(format!(
                "{}{on} {verb}: {}",
                label(inst, a.id),
                a.detail.as_deref().unwrap_or("no reason given")
            ));
        }
        None => inst.state = InstanceState::Succeeded,
    }
    inst.finished_ms = Some(ctx.now);
    let what = match &inst.detail {
        Some(d) => format!("instance {}: {d}", inst.state.as_str()),
        None => format!("instance {}", inst.state.as_str()),
    };
    ctx.log(inst, None, None, what);
}
