//! The shape of the process's flow graph, checked and classified before it is mapped: which
//! flow goes from which node to which, each boundary timer's task and contingency task, and
//! what each gateway becomes (folded into its neighbours, or a dummy activity).

use std::collections::{HashMap, HashSet};

use super::graph::{Flow, Kind, Process};
use crate::diagnostic::Diagnostic;
use crate::model::flag_fault;

/// What a flow node becomes in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A start event: what follows it has no precondition from it.
    Start,
    /// An end event: nothing.
    End,
    /// An activity: a task, or a gateway kept as a dummy activity.
    Activity,
    /// A gateway with one incoming flow that passes through: what follows it waits for what
    /// precedes it.
    Through,
    /// An exclusive gateway that splits: the task before it (`decider`, a node index) routes
    /// its successors by its completion flag.
    Split {
        /// The task whose flag decides.
        decider: usize,
    },
    /// A joining gateway folded into the task after it: that task waits for its incoming
    /// flows, all of them (`parallel`) or the first.
    Join {
        /// Parallel (all) or exclusive (the first).
        parallel: bool,
    },
    /// A boundary timer: its flow to the contingency task is implied by the model.
    Timer,
}

/// The flow graph: nodes by id, flows by node, roles, timers and the flags of split flows.
pub(crate) struct Shape {
    /// Node index of each flow's source and target.
    pub src: Vec<usize>,
    pub dst: Vec<usize>,
    /// Flows into and out of each node (without those a contingency implies).
    pub ins: Vec<Vec<usize>>,
    pub outs: Vec<Vec<usize>>,
    pub roles: Vec<Role>,
    /// Task index → (time limit in seconds, contingency task index).
    pub timers: HashMap<usize, (u32, usize)>,
    /// The contingency tasks.
    pub stand_ins: HashSet<usize>,
    /// For each flow out of an exclusive split: its flag (`None` for the default flow).
    pub flags: HashMap<usize, Option<String>>,
    /// Node index by id.
    pub index: HashMap<String, usize>,
}

/// Checks and classifies the flow graph of `p`; every problem when there is any.
pub(crate) fn shape(p: &Process) -> Result<Shape, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut index = HashMap::new();
    for (i, n) in p.nodes.iter().enumerate() {
        if let Some(&first) = index.get(&n.id) {
            let first: usize = first;
            diags.push(Diagnostic::new(
                n.pos,
                format!(
                    "{} has the id of {} at {}: ids name one element each; rename one",
                    n.label, p.nodes[first].label, p.nodes[first].pos
                ),
            ));
        } else {
            index.insert(n.id.clone(), i);
        }
    }
    let (src, dst) = ends(p, &index, &mut diags);
    if !diags.is_empty() {
        return Err(diags);
    }
    let mut s = Shape {
        ins: vec![Vec::new(); p.nodes.len()],
        outs: vec![Vec::new(); p.nodes.len()],
        roles: vec![Role::Activity; p.nodes.len()],
        src,
        dst,
        timers: HashMap::new(),
        stand_ins: HashSet::new(),
        flags: HashMap::new(),
        index,
    };
    let implied = super::timers::timers(p, &mut s, &mut diags);
    for f in 0..p.flows.len() {
        if !implied.contains(&f) {
            s.outs[s.src[f]].push(f);
            s.ins[s.dst[f]].push(f);
        }
    }
    events(p, &s, &mut diags);
    for i in 0..p.nodes.len() {
        s.roles[i] = role(p, &s, i, &mut diags);
    }
    split_flags(p, &mut s, &mut diags);
    conditions_only_on_splits(p, &s, &mut diags);
    if diags.is_empty() { Ok(s) } else { Err(diags) }
}

/// The source and target node of each flow (0 where unknown, with its problem).
fn ends(
    p: &Process,
    index: &HashMap<String, usize>,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<usize>, Vec<usize>) {
    let mut end = |f: &Flow, (id, pos): &(String, crate::Pos), what: &str| {
        index.get(id).copied().unwrap_or_else(|| {
            diags.push(Diagnostic::new(
                *pos,
                format!(
                    "{} has {what} {id:?}, which is no flow node of the process that mobiwf \
                     reads; fix the reference",
                    f.label
                ),
            ));
            0
        })
    };
    let src = p
        .flows
        .iter()
        .map(|f| end(f, &f.source, "sourceRef"))
        .collect();
    let dst = p
        .flows
        .iter()
        .map(|f| end(f, &f.target, "targetRef"))
        .collect();
    (src, dst)
}

/// Checks the events: at most one start event, nothing flows into a start event or out of
/// an end event.
fn events(p: &Process, s: &Shape, diags: &mut Vec<Diagnostic>) {
    let starts: Vec<usize> = (0..p.nodes.len())
        .filter(|&i| matches!(p.nodes[i].kind, Kind::Start))
        .collect();
    for &extra in starts.iter().skip(1) {
        diags.push(Diagnostic::new(
            p.nodes[extra].pos,
            format!(
                "{} is a second start event (the first is at {}): an instance starts once, \
                 with every task that waits for nothing; keep one start event",
                p.nodes[extra].label, p.nodes[starts[0]].pos
            ),
        ));
    }
    for (i, n) in p.nodes.iter().enumerate() {
        let (flows, what) = match n.kind {
            Kind::Start => (&s.ins[i], "flows into a start event"),
            Kind::End => (&s.outs[i], "flows out of an end event"),
            _ => continue,
        };
        if let Some(&f) = flows.first() {
            diags.push(Diagnostic::new(
                p.flows[f].pos,
                format!("{} {what} {}; remove it", p.flows[f].label, n.label),
            ));
        }
    }
}

/// What node `i` becomes; a gateway that cannot be mapped is reported.
fn role(p: &Process, s: &Shape, i: usize, diags: &mut Vec<Diagnostic>) -> Role {
    let node = &p.nodes[i];
    let parallel = match node.kind {
        Kind::Start => return Role::Start,
        Kind::End => return Role::End,
        Kind::Task(_) => return Role::Activity,
        Kind::Timer { .. } => return Role::Timer,
        Kind::Gateway { parallel, .. } => parallel,
    };
    let (ins, outs) = (&s.ins[i], &s.outs[i]);
    if ins.is_empty() || outs.is_empty() {
        let which = if ins.is_empty() {
            "incoming"
        } else {
            "outgoing"
        };
        diags.push(Diagnostic::new(
            node.pos,
            format!(
                "{} has no {which} flow; connect it or remove it",
                node.label
            ),
        ));
        return Role::Through;
    }
    if ins.len() == 1 && (parallel || outs.len() == 1) {
        return Role::Through;
    }
    if ins.len() == 1 {
        let before = s.src[ins[0]];
        if matches!(p.nodes[before].kind, Kind::Task(_)) && !s.stand_ins.contains(&before) {
            return Role::Split { decider: before };
        }
        diags.push(Diagnostic::new(
            node.pos,
            format!(
                "{} chooses a branch by the completion flag of the task before it, but {} comes \
                 before it: put the task whose flag decides directly before the gateway",
                node.label, p.nodes[before].label
            ),
        ));
        return Role::Through;
    }
    if outs.len() > 1 && !parallel {
        diags.push(Diagnostic::new(
            node.pos,
            format!(
                "{} both joins and splits: an exclusive split chooses by the flag of the task \
                 before it; join with one gateway, then put the deciding task, then split",
                node.label
            ),
        ));
        return Role::Through;
    }
    let after = s.dst[outs[0]];
    if outs.len() == 1 && matches!(p.nodes[after].kind, Kind::Task(_)) && s.ins[after].len() == 1 {
        Role::Join { parallel }
    } else {
        Role::Activity
    }
}

/// The flag of every flow out of an exclusive split: its condition's, none for the default,
/// else its name when that is a flag, else its id when that is one. Two flows of one split
/// with one flag, a decider with two splits, and a flow without flag are reported.
fn split_flags(p: &Process, s: &mut Shape, diags: &mut Vec<Diagnostic>) {
    let mut deciders: HashMap<usize, usize> = HashMap::new();
    for i in 0..p.nodes.len() {
        let Role::Split { decider } = s.roles[i] else {
            continue;
        };
        if let Some(&other) = deciders.get(&decider) {
            diags.push(Diagnostic::new(
                p.nodes[i].pos,
                format!(
                    "{} is a second exclusive gateway after {} (the first is {}): a task ends \
                     with one flag, which chooses one branch; join the two gateways into one",
                    p.nodes[i].label, p.nodes[decider].label, p.nodes[other].label
                ),
            ));
        }
        deciders.insert(decider, i);
        if s.timers.contains_key(&decider) {
            diags.push(Diagnostic::new(
                p.nodes[i].pos,
                format!(
                    "{} chooses by the flag of {}, which has a boundary timer: the task that \
                     runs in its place when its time is up would end without that flag; put a \
                     task without a timer before the gateway",
                    p.nodes[i].label, p.nodes[decider].label
                ),
            ));
        }
        branch_flags(p, s, i, diags);
    }
}

/// The flags of the flows out of the exclusive split `i` (see [`split_flags`]).
fn branch_flags(p: &Process, s: &mut Shape, i: usize, diags: &mut Vec<Diagnostic>) {
    let default = match &p.nodes[i].kind {
        Kind::Gateway { default, .. } => default.clone(),
        _ => None,
    };
    let mut seen: HashMap<String, usize> = HashMap::new();
    for &f in &s.outs[i] {
        let flow = &p.flows[f];
        let flag = if default.as_ref().is_some_and(|(d, _)| *d == flow.id) {
            None
        } else if let Some((flag, _)) = &flow.condition {
            Some(flag.clone())
        } else if flag_fault(&flow.name).is_none() {
            Some(flow.name.clone())
        } else if flag_fault(&flow.id).is_none() {
            Some(flow.id.clone())
        } else {
            diags.push(Diagnostic::new(
                flow.pos,
                format!(
                    "{} out of {} tests no completion flag, and neither its name nor its id is \
                     one; give it a condition such as ${{flag == 'approved'}}, or make it the \
                     gateway's default",
                    flow.label, p.nodes[i].label
                ),
            ));
            continue;
        };
        if let Some(flag) = &flag {
            if let Some(&other) = seen.get(flag) {
                diags.push(Diagnostic::new(
                    flow.pos,
                    format!(
                        "{} tests flag {flag}, as {} does: one flag chooses one branch; give \
                         them different flags",
                        flow.label, p.flows[other].label
                    ),
                ));
            }
            seen.insert(flag.clone(), f);
        }
        s.flags.insert(f, flag);
    }
    if let Some((id, pos)) =
        default.filter(|(d, _)| !s.outs[i].iter().any(|&f| p.flows[f].id == *d))
    {
        diags.push(Diagnostic::new(
            pos,
            format!(
                "default {id:?} of {} is none of its outgoing flows; fix it",
                p.nodes[i].label
            ),
        ));
    }
}

/// Refuses a condition on a flow that does not leave an exclusive split: elsewhere every
/// flow is taken.
fn conditions_only_on_splits(p: &Process, s: &Shape, diags: &mut Vec<Diagnostic>) {
    for (f, flow) in p.flows.iter().enumerate() {
        let Some((_, pos)) = &flow.condition else {
            continue;
        };
        if !matches!(s.roles[s.src[f]], Role::Split { .. }) {
            diags.push(Diagnostic::new(
                *pos,
                format!(
                    "{} has a condition but does not leave an exclusive gateway that chooses a \
                     branch: put an exclusive gateway after {} and the condition on its flow",
                    flow.label, p.nodes[s.src[f]].label
                ),
            ));
        }
    }
}
