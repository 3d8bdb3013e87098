//! What the controller decides when partners fail or are too slow: giving up on a partition (its
//! partner stopped answering, or its `timeOut` passed), withdrawing an activity whose successors
//! waited too long, applying contingency rules (-1 block, 0 release, x > 0 run x on another partner
//! with the skill), relaying outcomes to contingency activities, and deciding when an instance is
//! over.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, ActivityState, Message, NodeId, NodeName, Outcome, PartitionId, Pass, StateSet,
    Withdraw, cancelled_by_design,
};
use mobiwf_xml_schema::{Activity, Contingency, WorkflowDefinition, routed_to};

use crate::chain::{self, Way};
use crate::contingency::{awaits_stand_in, place, relay_to_stand_ins};
use crate::history::{Event, History, Label};
use crate::hub::Routing;
use crate::{
    ActivityEvent, ActivityView, Effect, Instance, InstanceEvent, InstanceState, NodeInfo,
    PartitionEvent, PartitionView, Refusals, Subject,
};

/// What the recovery rules need besides the instance: borrowed from the book's other fields.
pub(crate) struct Ctx<'a> {
    pub nodes: &'a BTreeMap<NodeId, NodeInfo>,
    pub def: Option<&'a WorkflowDefinition>,
    pub history: &'a mut History,
    pub effects: &'a mut Vec<Effect>,
    pub now: u64,
    pub routing: &'a Routing,
    /// The length of an hour for `<deadline>`s (`--hour-ms`).
    pub hour_ms: u64,
    /// The transitions a lifecycle table refused (a bug), for the daemon.
    pub refused: &'a mut Refusals,
}

impl Ctx<'_> {
    pub(crate) fn send(&mut self, node: &NodeInfo, message: Message) {
        self.effects.push(Effect::Send {
            to: node.peer.clone(),
            addrs: node.addrs.clone(),
            message,
        });
    }

    pub(crate) fn log(
        &mut self,
        inst: &Instance,
        activity: Option<ActivityId>,
        partner: Option<&NodeName>,
        what: Event,
    ) {
        self.history
            .push(inst.id, self.now, activity, partner, what);
    }
}

pub(crate) fn view(inst: &Instance, id: ActivityId) -> Option<&ActivityView> {
    inst.activities.iter().find(|a| a.id == id)
}

pub(crate) fn view_mut(inst: &mut Instance, id: ActivityId) -> Option<&mut ActivityView> {
    inst.activities.iter_mut().find(|a| a.id == id)
}

pub(crate) fn partition(inst: &Instance, id: PartitionId) -> Option<&PartitionView> {
    inst.partitions.iter().find(|p| p.id == id)
}

/// An activity as history events name it.
pub(crate) fn label(inst: &Instance, id: ActivityId) -> Label {
    let v = view(inst, id);
    Label {
        id,
        name: v.map(|a| a.name.clone()).unwrap_or_default(),
        pass: v.map(|a| a.pass).unwrap_or_default(),
    }
}

/// A short name for an activity in reasons sent to nodes: `A2 (17)`, `A2 (17#2)` in a loop's
/// second pass.
pub(crate) fn label_text(inst: &Instance, id: ActivityId) -> String {
    match view(inst, id) {
        Some(a) if !a.name.is_empty() => format!("{} ({})", a.name, a.pass.of(id)),
        Some(a) => format!("activity {}", a.pass.of(id)),
        None => format!("activity {id}"),
    }
}

/// The node that runs activity `id`, with its partition, while that partition is live.
pub(crate) fn holder<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    id: ActivityId,
) -> Option<(&'n NodeInfo, PartitionId)> {
    let (node, p) = placed_on(inst, nodes, id)?;
    partition(inst, p)?
        .abandoned()
        .is_none()
        .then_some((node, p))
}

/// The registered node activity `id`'s partition was placed on, with the partition, given up
/// on or not: that node may still run a loop's later pass of the activity (a withdrawal ends
/// only the pass it names).
pub(crate) fn placed_on<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    id: ActivityId,
) -> Option<(&'n NodeInfo, PartitionId)> {
    let p = partition(inst, view(inst, id)?.partition?)?;
    Some((nodes.get(&p.peer)?, p.id))
}

/// The node where activity `id` may still wait for its predecessors' ends, with its
/// partition: its holder while its partition is live; once given up, the node it was placed
/// on while a loop's later pass of `id` may begin there. A withdrawal ends only the pass it
/// names, and the later pass waits for the same ends outside the loop's body, which that
/// node heard of only if they came before the give-up.
pub(crate) fn awaiting_on<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    def: &WorkflowDefinition,
    id: ActivityId,
) -> Option<(&'n NodeInfo, PartitionId)> {
    holder(inst, nodes, id).or_else(|| {
        crate::passes::may_run_again(inst, Some(def), id)
            .then(|| placed_on(inst, nodes, id))
            .flatten()
    })
}

/// The partition that runs activity `id`, when it is placed.
pub(crate) fn partition_of(inst: &Instance, id: ActivityId) -> Option<PartitionId> {
    view(inst, id)?.partition
}

/// The activities that wait for `id`: its successors in the definition, or, for a contingency
/// activity, those of the activity it stands for.
pub(crate) fn successors(
    inst: &Instance,
    def: &WorkflowDefinition,
    id: ActivityId,
) -> Vec<ActivityId> {
    let at = chain::end(inst, id, Way::ToOrigin);
    def.activities
        .iter()
        .filter(|a| a.preconditions.contains(&at) || rule_names(a, id) || rule_names(a, at))
        .map(|a| a.id)
        .collect()
}

/// What the successors of `id` learn from it, as far as the controller knows: following
/// contingency activities; `None` while undecided.
pub(crate) fn effective_outcome(inst: &Instance, id: ActivityId) -> Option<Outcome> {
    for v in chain::walk(inst, id, Way::ToStandIns) {
        match v.state() {
            ActivityState::Succeeded => return Some(Outcome::Succeeded),
            ActivityState::Cancelled => return Some(Outcome::Blocked),
            ActivityState::Skipped => return Some(Outcome::Skipped),
            ActivityState::Failed => match (v.contingency, v.replaced_by()) {
                (Contingency::Release, _) => return Some(Outcome::Released),
                (Contingency::Block, _) => return Some(Outcome::Blocked),
                _ if v.blocked_instead() => return Some(Outcome::Blocked),
                // The stand-in decides: the walk goes on to it.
                (_, Some(_)) => {}
                (_, None) => return None,
            },
            ActivityState::NotReady
            | ActivityState::Synchronizing
            | ActivityState::Ready
            | ActivityState::Running => return None,
        }
    }
    None
}

/// Tells the nodes that run successors of `id` in other partitions its outcome (the controller
/// decided it: the node that ran `id` cannot be relied on to).
pub(crate) fn notify_successors(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    id: ActivityId,
    outcome: Outcome,
) {
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
/// partitions than its own (a node may run several partitions), or that may run a loop's
/// later pass of one on a partition given up (`awaiting_on`), each once.
pub(crate) fn successor_nodes<'n>(
    inst: &Instance,
    nodes: &'n BTreeMap<NodeId, NodeInfo>,
    def: &WorkflowDefinition,
    id: ActivityId,
) -> Vec<&'n NodeInfo> {
    let own = view(inst, id).and_then(|v| v.partition);
    let mut told = BTreeSet::new();
    successors(inst, def, id)
        .into_iter()
        .filter_map(|s| awaiting_on(inst, nodes, def, s))
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
    let v = view_mut(inst, id)?;
    // Refused when it is final already: a final state never changes.
    v.step(&ActivityEvent::Decided(state)).ok()?;
    v.finished_ms = Some(ctx.now);
    v.detail = Some(reason.to_owned());
    let contingency = v.contingency;
    let what = Event::Decided {
        activity: label(inst, id),
        state,
        reason: reason.to_owned(),
    };
    ctx.log(inst, Some(id), node.as_ref(), what);
    Some(contingency)
}

/// The controller decides that activity `id` failed, for `reason`; its contingency applies.
pub(crate) fn fail(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, reason: &str) {
    match decide(inst, ctx, id, ActivityState::Failed, reason) {
        Some(Contingency::Release) => notify_successors(inst, ctx, id, Outcome::Released),
        Some(Contingency::Block) => notify_successors(inst, ctx, id, Outcome::Blocked),
        // x > 0: `settle` places the contingency activity; the rules that name the failed
        // activity hear of its end now.
        Some(Contingency::Run(_)) => tell_rule_partners(inst, ctx, id),
        None => {}
    }
}

/// Gives up on a partition: every activity not final fails for `reason`, the node is told to
/// abort them (if it ever hears it), and their contingencies apply.
pub(crate) fn abandon(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    partition_id: PartitionId,
    reason: &str,
) {
    let Some(p) = inst.partitions.iter_mut().find(|p| p.id == partition_id) else {
        return;
    };
    // Refused when it finished or was given up already.
    if p.step(&PartitionEvent::GiveUp(reason.to_owned())).is_err() {
        return;
    }
    let (peer, node_name) = (p.peer.clone(), p.node.clone());
    let ids: Vec<ActivityId> = inst
        .activities
        .iter()
        .filter(|a| a.partition == Some(partition_id) && !a.state().is_final())
        .map(|a| a.id)
        .collect();
    let passes = passes_of(inst, &ids);
    ctx.log(
        inst,
        None,
        Some(&node_name),
        Event::GivenUp {
            partition: partition_id,
            reason: reason.to_owned(),
        },
    );
    if let Some(node) = ctx.nodes.get(&peer).cloned() {
        ctx.send(
            &node,
            Message::Withdraw(Withdraw {
                instance: inst.id,
                partition: partition_id,
                activities: ids.clone(),
                reason: reason.to_owned(),
                passes,
            }),
        );
    }
    end_given_up(inst, ctx, ids, reason);
}

/// The pass the controller knows each of `ids` in, where it is not the first: what a
/// withdrawal of them names, so that their node withdraws that pass and no later one.
fn passes_of(inst: &Instance, ids: &[ActivityId]) -> BTreeMap<ActivityId, Pass> {
    ids.iter()
        .filter_map(|&id| view(inst, id).map(|v| (id, v.pass)))
        .filter(|(_, pass)| !pass.is_first())
        .collect()
}

/// Ends activities `ids` of a partition given up on for `reason`, predecessors first, so that
/// an activity whose predecessor here blocks it is cancelled, transitively, rather than
/// failed with its own contingency; one its node said started fails (it ran).
fn end_given_up(inst: &mut Instance, ctx: &mut Ctx<'_>, ids: Vec<ActivityId>, reason: &str) {
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
            // One its node said started had its preconditions hold there: it failed with its
            // partition, whatever the controller makes of its predecessors' ends it never got.
            let started = view(inst, id).is_some_and(|a| a.state() == ActivityState::Running);
            let blocked_by = preds(id)
                .into_iter()
                .filter(|_| !started)
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
pub(crate) fn withdraw(inst: &mut Instance, ctx: &mut Ctx<'_>, id: ActivityId, reason: &str) {
    if let Some((node, p)) = holder(inst, ctx.nodes, id) {
        let node = node.clone();
        ctx.send(
            &node,
            Message::Withdraw(Withdraw {
                instance: inst.id,
                partition: p,
                activities: vec![id],
                reason: reason.to_owned(),
                passes: passes_of(inst, &[id]),
            }),
        );
    }
    fail(inst, ctx, id, reason);
}

/// Relays an outcome the controller knows to the node of one waiting activity; held back
/// while `id` is rerun and that node has not acknowledged its rerun, which would make it
/// forget this word (`rerun::hold_back`).
pub(crate) fn notify_peer(
    inst: &mut Instance,
    ctx: &mut Ctx<'_>,
    to_peer: &NodeId,
    id: ActivityId,
    outcome: Outcome,
) {
    if crate::rerun::hold_back(inst, to_peer, id) {
        return;
    }
    let inst = &*inst;
    // The states a dependency rule there may look at, as the controller knows them: sent
    // when some rule names the activity.
    let ruled = ctx
        .def
        .is_some_and(|d| d.activities.iter().any(|a| rule_names(a, id)));
    let entered = if ruled {
        entered_of(inst, id)
    } else {
        StateSet::EMPTY
    };
    let mut flag = None;
    let mut routed = None;
    if let Some(v) = view(inst, id).filter(|v| v.state().is_final()) {
        flag = v.flag.clone();
        // A success whose routes chose: the successors they lead to.
        routed = ctx
            .def
            .and_then(|d| d.activities.iter().find(|a| a.id == id))
            .and_then(|a| routed_to(&a.routes, flag.as_deref()))
            .filter(|_| v.state() == ActivityState::Succeeded);
    }
    if let Some(node) = ctx.nodes.get(to_peer).cloned() {
        ctx.send(
            &node,
            Message::Notify(mobiwf_proto::Notify {
                instance: inst.id,
                activity: id,
                outcome,
                entered,
                flag,
                routed,
                // Values never pass through the controller: a contingency activity reads
                // only what its own partner knows.
                data: Vec::new(),
                files: Vec::new(),
                holder: None,
                // The pass the controller last heard of it in (a loop's body runs in passes).
                pass: view(inst, id).map(|v| v.pass).unwrap_or_default(),
                // The controller applies no rerun: its words on activities rerun are held
                // back until the node applied its own (`rerun::hold_back`).
                rerun: 0,
            }),
        );
    }
}

/// After any change: places the contingency activities that failures call for, relays known
/// outcomes to contingency activities waiting for them, and ends the instance when nothing
/// can change any more.
pub(crate) fn settle(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    if !inst.state().is_live() {
        crate::compensation::begin_if_due(inst, ctx);
        return;
    }
    crate::rerun::send_last_if_due(inst, ctx);
    // An interrupted instance starts nothing new: its contingency activities are placed when
    // it is resumed (a node that was not told of the interruption would run them at once).
    // A complete instance (its completion activity succeeded) places nothing more.
    let holding = inst.state() == InstanceState::Interrupted || inst.completed_by.is_some();
    let pending: Vec<(ActivityId, ActivityId)> = inst
        .activities
        .iter()
        .filter(|a| !holding && awaits_stand_in(a))
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
    crate::compensation::begin_if_due(inst, ctx);
}

/// Ends the instance once every partition finished or was given up, every loop's body said
/// its last pass (`passes`), and no contingency activity waits to be placed.
fn finish_if_done(inst: &mut Instance, ctx: &mut Ctx<'_>) {
    let partitions_done =
        inst.partitions.iter().all(|p| p.is_over()) && crate::passes::loops_settled(inst, ctx.def);
    let placing = inst.completed_by.is_none() && inst.activities.iter().any(awaits_stand_in);
    if !partitions_done || placing {
        return;
    }
    let blocking = |a: &&ActivityView| {
        a.state() == ActivityState::Failed
            && (a.contingency == Contingency::Block || a.blocked_instead())
    };
    // A cancellation the workflow designed (a dependency rule that can no longer hold, a
    // completion activity that ended the instance) is no failure.
    let failure_cancel = |a: &&ActivityView| {
        a.partition.is_some()
            && a.state() == ActivityState::Cancelled
            && !a.detail.as_deref().is_some_and(cancelled_by_design)
    };
    let cause = inst
        .activities
        .iter()
        .filter(|a| a.partition.is_some())
        .find(blocking)
        .or_else(|| inst.activities.iter().find(failure_cancel))
        .filter(|_| inst.completed_by.is_none());
    let why = cause.map(|a| {
        let on = a
            .node
            .as_ref()
            .map(|n| format!(" on {n}"))
            .unwrap_or_default();
        let verb = if a.state() == ActivityState::Cancelled {
            "was cancelled"
        } else {
            "failed"
        };
        format!(
            "{}{on} {verb}: {}",
            label_text(inst, a.id),
            a.detail.as_deref().unwrap_or("no reason given")
        )
    });
    // The instance is not final (`settle` checked).
    let step = inst.step(InstanceEvent::Ended {
        failed: why.is_some(),
    });
    ctx.refused.report(inst.id, Subject::Instance, step);
    if why.is_some() {
        inst.detail = why;
    }
    inst.finished_ms = Some(ctx.now);
    let what = Event::InstanceEnded {
        state: inst.state(),
        detail: inst.detail.clone(),
    };
    ctx.log(inst, None, None, what);
}

/// The states activity `id` entered, as far as the controller knows (its times and state).
fn entered_of(inst: &Instance, id: ActivityId) -> StateSet {
    let Some(v) = view(inst, id) else {
        return StateSet::EMPTY.with(ActivityState::NotReady);
    };
    StateSet::of_times([v.synchronized_ms, v.ready_ms, v.started_ms], v.state())
}

/// Tells the nodes whose dependency rules name `id` (in other partitions than its own) the
/// states it entered: the controller decided its end, and when no outcome goes to its
/// successors yet (they wait for its contingency activity), nothing else would tell them.
fn tell_rule_partners(inst: &Instance, ctx: &mut Ctx<'_>, id: ActivityId) {
    let Some(def) = ctx.def else {
        return;
    };
    let own = view(inst, id).and_then(|v| v.partition);
    let mut told = BTreeSet::new();
    let nodes: Vec<NodeInfo> = def
        .activities
        .iter()
        .filter(|a| rule_names(a, id))
        .filter_map(|a| awaiting_on(inst, ctx.nodes, def, a.id))
        .filter(|(node, p)| Some(*p) != own && told.insert(node.peer.clone()))
        .map(|(node, _)| node.clone())
        .collect();
    let entered = entered_of(inst, id);
    for node in nodes {
        let message = Message::StateChanged(mobiwf_proto::StateChanged {
            pass: mobiwf_proto::Pass::FIRST,
            instance: inst.id,
            activity: id,
            entered,
        });
        ctx.send(&node, message);
    }
}

/// True when activity `a`'s dependency rule names activity `id`.
fn rule_names(a: &Activity, id: ActivityId) -> bool {
    a.depends.as_ref().is_some_and(|r| r.names(id))
}
