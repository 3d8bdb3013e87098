//! Boundary timers: an interrupting timer with a duration on a task is the task's `timeOut`,
//! and the task its flow leads to is the task's contingency activity, which the controller
//! runs in its place when it runs out of time (or fails). A contingency activity stands in for
//! the task, so it must lead where the task leads; its flows are then implied by the model.

use std::collections::{BTreeSet, HashSet};

use super::graph::{Kind, Process};
use super::shape::Shape;
use crate::diagnostic::Diagnostic;

/// Records every boundary timer of `p` in `s` (time limits, contingency tasks); the flows the
/// model implies (a timer's and its contingency task's), to leave out of the graph.
pub(crate) fn timers(p: &Process, s: &mut Shape, diags: &mut Vec<Diagnostic>) -> HashSet<usize> {
    let mut implied = HashSet::new();
    for (b, node) in p.nodes.iter().enumerate() {
        let Kind::Timer {
            attached: (attached, at),
            secs,
        } = &node.kind
        else {
            continue;
        };
        let task = s
            .index
            .get(attached)
            .copied()
            .filter(|&t| matches!(p.nodes[t].kind, Kind::Task(_)));
        let Some(task) = task else {
            diags.push(Diagnostic::new(
                *at,
                format!(
                    "{} is attached to {attached:?}, which is no task of the process; attach it \
                     to the task whose time it limits",
                    node.label
                ),
            ));
            continue;
        };
        let outs: Vec<usize> = (0..p.flows.len()).filter(|&f| s.src[f] == b).collect();
        let ins = (0..p.flows.len()).find(|&f| s.dst[f] == b);
        let target = match (outs.as_slice(), ins) {
            ([f], None) => s.dst[*f],
            _ => {
                diags.push(Diagnostic::new(
                    node.pos,
                    format!(
                        "{} needs exactly one outgoing flow, to the task that runs in place of \
                         {} when its time is up, and no incoming flow",
                        node.label, p.nodes[task].label
                    ),
                ));
                continue;
            }
        };
        if let Some(problem) = stand_in_problem(p, s, task, target, outs[0]) {
            diags.push(problem);
            continue;
        }
        if s.timers.insert(task, (*secs, target)).is_some() {
            diags.push(Diagnostic::new(
                node.pos,
                format!(
                    "{} is a second boundary timer on {}: a task has one time limit; keep one",
                    node.label, p.nodes[task].label
                ),
            ));
        }
        s.stand_ins.insert(target);
        implied.insert(outs[0]);
        implied.extend((0..p.flows.len()).filter(|&f| s.src[f] == target));
    }
    implied
}

/// What is wrong with `target`, reached by `flow` from a timer on `task`, as the task's
/// contingency activity: it must be a task, reached by this flow only, leading to the same
/// flow nodes as the task.
fn stand_in_problem(
    p: &Process,
    s: &Shape,
    task: usize,
    target: usize,
    flow: usize,
) -> Option<Diagnostic> {
    let (t, c) = (&p.nodes[task], &p.nodes[target]);
    if !matches!(c.kind, Kind::Task(_)) || target == task {
        return Some(Diagnostic::new(
            p.flows[flow].pos,
            format!(
                "{} leads to {}: the flow of a boundary timer leads to the task that runs in \
                 place of {} when its time is up",
                p.flows[flow].label, c.label, t.label
            ),
        ));
    }
    if let Some(other) = (0..p.flows.len()).find(|&f| f != flow && s.dst[f] == target) {
        return Some(Diagnostic::new(
            p.flows[other].pos,
            format!(
                "{} leads into {}, which runs only in place of {} when its time is up: nothing \
                 else may lead to it; remove this flow",
                p.flows[other].label, c.label, t.label
            ),
        ));
    }
    let after = |n: usize| -> BTreeSet<usize> {
        (0..p.flows.len())
            .filter(|&f| s.src[f] == n)
            .map(|f| s.dst[f])
            .collect()
    };
    if after(task) != after(target) {
        return Some(Diagnostic::new(
            c.pos,
            format!(
                "{} runs in place of {} when its time is up, so it must lead where {} leads: \
                 give it flows to the same elements as {}'s flows, and no others",
                c.label, t.label, t.label, t.label
            ),
        ));
    }
    None
}
