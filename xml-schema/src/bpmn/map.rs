//! Maps the classified flow graph onto the definition model: one activity per task and per
//! gateway kept as a dummy (and per branch of an exclusive split that leads to no activity),
//! numbered in the order they are written; preconditions through the folded gateways; merges
//! from the joins; routes from the splits onto the deciding task.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::graph::{Kind, Process};
use super::shape::{Role, Shape};
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{ActivityId, Merge, Route};

/// Where an activity of the model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Origin {
    /// A task, or a gateway kept as a dummy (node index).
    Node(usize),
    /// The branch of an exclusive split (flow index) that leads to no activity: a dummy gives
    /// its route somewhere to go.
    BranchEnd(usize),
}

/// One activity of the model, before it is assembled.
#[derive(Debug)]
pub(crate) struct Member {
    pub origin: Origin,
    /// Where it is written.
    pub pos: Pos,
    /// Its preconditions (member ids), each with the flow it came by.
    pub preconditions: Vec<(ActivityId, Pos)>,
    pub merge: Merge,
    /// Its routes, each with where its flow is written.
    pub routes: Vec<(Route, Pos)>,
}

/// Something a flow comes from, seen through the folded gateways.
#[derive(Debug, Clone, Copy)]
struct Up {
    /// The node of the member it comes from.
    node: usize,
    /// The flow out of an exclusive split it passed, when it did: its route.
    branch: Option<usize>,
    /// The flow into the member, where the precondition is written.
    at: Pos,
}

/// The members of `p`, in document order, with their preconditions, merges and routes.
pub(crate) fn members(p: &Process, s: &Shape) -> Result<Vec<Member>, Vec<Diagnostic>> {
    let origins = origins(p, s);
    let id_of = ids(&origins);
    let node_id = |n: usize| id_of.get(&Origin::Node(n)).copied();
    let mut diags = Vec::new();
    let mut members = Vec::with_capacity(origins.len());
    // Per decider: (branch flow, successor) and its successors by unconditional flows.
    let mut branches: BTreeMap<usize, Vec<(usize, ActivityId)>> = BTreeMap::new();
    let mut always: BTreeMap<usize, BTreeSet<ActivityId>> = BTreeMap::new();
    for &(pos, origin) in &origins {
        let Some(&me) = id_of.get(&origin) else {
            continue;
        };
        let (ups, merge) = match origin {
            Origin::Node(n) => sources(p, s, n, &mut diags),
            Origin::BranchEnd(f) => (branch_source(p, s, f), Merge::All),
        };
        let mut preconditions: Vec<(ActivityId, Pos)> = Vec::new();
        for up in ups {
            let Some(pre) = node_id(up.node) else {
                continue;
            };
            if !preconditions.iter().any(|(id, _)| *id == pre) {
                preconditions.push((pre, up.at));
            }
            match up.branch {
                Some(f) => branches.entry(up.node).or_default().push((f, me)),
                None => {
                    always.entry(up.node).or_default().insert(me);
                }
            }
        }
        let merge = if preconditions.len() < 2 {
            Merge::All
        } else {
            merge
        };
        members.push(Member {
            origin,
            pos,
            preconditions,
            merge,
            routes: Vec::new(),
        });
    }
    for (decider, list) in branches {
        let Some(me) = node_id(decider) else { continue };
        let Some(member) = members
            .iter_mut()
            .find(|m| id_of.get(&m.origin) == Some(&me))
        else {
            continue;
        };
        member.routes = routes(p, s, &list, always.get(&decider));
    }
    if diags.is_empty() {
        Ok(members)
    } else {
        Err(diags)
    }
}

/// What becomes an activity, in document order: each node that is one (not a start or an
/// end event), and each branch of an exclusive split that reaches no activity (a dummy where
/// it ends).
fn origins(p: &Process, s: &Shape) -> Vec<(Pos, Origin)> {
    let mut origins: Vec<(Pos, Origin)> = Vec::new();
    for (i, n) in p.nodes.iter().enumerate() {
        if s.roles[i] == Role::Activity && !matches!(n.kind, Kind::Start | Kind::End) {
            origins.push((n.pos, Origin::Node(i)));
        }
    }
    for &f in s.flags.keys() {
        if !reaches_activity(s, s.dst[f]) {
            origins.push((p.flows[f].pos, Origin::BranchEnd(f)));
        }
    }
    origins.sort_by_key(|(pos, _)| *pos);
    origins
}

/// The activity id of each of `origins`: 1, 2, ... in their order.
fn ids(origins: &[(Pos, Origin)]) -> HashMap<Origin, ActivityId> {
    origins
        .iter()
        .enumerate()
        .map(|(k, (_, o))| {
            (
                *o,
                ActivityId(u64::try_from(k).unwrap_or(u64::MAX).saturating_add(1)),
            )
        })
        .collect()
}

/// Whether a flow into `node` reaches an activity (a task, a dummy, or the task a join is
/// folded into) through gateways that pass it on.
fn reaches_activity(s: &Shape, node: usize) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![node];
    while let Some(n) = todo.pop() {
        if !seen.insert(n) {
            continue;
        }
        match s.roles[n] {
            Role::Activity | Role::Join { .. } => return true,
            Role::Through => todo.extend(s.outs[n].iter().map(|&f| s.dst[f])),
            Role::Start | Role::End | Role::Split { .. } | Role::Timer => {}
        }
    }
    false
}

/// The sources of the member of node `n` and how they merge: through its incoming flows, or
/// through the join folded into it.
fn sources(p: &Process, s: &Shape, n: usize, diags: &mut Vec<Diagnostic>) -> (Vec<Up>, Merge) {
    let first = Merge::First { flag: None };
    let folded = match s.ins[n].as_slice() {
        [f] => match s.roles[s.src[*f]] {
            Role::Join { parallel } => Some((s.src[*f], parallel)),
            _ => None,
        },
        _ => None,
    };
    let (flows, merge) = match (folded, &p.nodes[n].kind) {
        (Some((join, parallel)), _) => (&s.ins[join], if parallel { Merge::All } else { first }),
        (None, Kind::Gateway { parallel: true, .. }) => (&s.ins[n], Merge::All),
        (None, _) => (&s.ins[n], first),
    };
    let ups = flows.iter().filter_map(|&f| up(p, s, f, diags)).collect();
    (ups, merge)
}

/// The member a branch end waits for: the decider of its split, by its branch.
fn branch_source(p: &Process, s: &Shape, f: usize) -> Vec<Up> {
    match s.roles[s.src[f]] {
        Role::Split { decider } => vec![Up {
            node: decider,
            branch: Some(f),
            at: p.flows[f].pos,
        }],
        _ => Vec::new(),
    }
}

/// What flow `f` comes from, through gateways that pass it on; `None` from a start event.
fn up(p: &Process, s: &Shape, f: usize, diags: &mut Vec<Diagnostic>) -> Option<Up> {
    let at = p.flows[f].pos;
    let mut flow = f;
    // Each step goes one flow back; more steps than nodes is a loop of gateways.
    for _ in 0..=p.nodes.len() {
        let from = s.src[flow];
        match s.roles[from] {
            Role::Activity => {
                return Some(Up {
                    node: from,
                    branch: None,
                    at,
                });
            }
            Role::Split { decider } => {
                return Some(Up {
                    node: decider,
                    branch: Some(flow),
                    at,
                });
            }
            Role::Through => match s.ins[from].first() {
                Some(&before) => flow = before,
                None => return None,
            },
            Role::Start | Role::End | Role::Join { .. } | Role::Timer => return None,
        }
    }
    diags.push(Diagnostic::new(
        at,
        format!(
            "{} comes out of a loop of gateways with no task in it; remove the loop",
            p.flows[f].label
        ),
    ));
    None
}

/// The routes of a decider: per flow of its split (in the order they are written), the
/// successors that branch leads to, and with every branch the successors it has by plain
/// flows.
fn routes(
    p: &Process,
    s: &Shape,
    list: &[(usize, ActivityId)],
    always: Option<&BTreeSet<ActivityId>>,
) -> Vec<(Route, Pos)> {
    let mut by_flow: BTreeMap<usize, BTreeSet<ActivityId>> = BTreeMap::new();
    for &(f, to) in list {
        by_flow.entry(f).or_default().insert(to);
    }
    let mut out: Vec<(Route, Pos)> = by_flow
        .into_iter()
        .map(|(f, mut to)| {
            to.extend(always.into_iter().flatten().copied());
            let flag = s.flags.get(&f).cloned().flatten();
            (
                Route {
                    flag,
                    to: to.into_iter().collect(),
                },
                p.flows[f].pos,
            )
        })
        .collect();
    out.sort_by_key(|(_, pos)| *pos);
    out
}
