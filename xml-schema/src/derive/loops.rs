//! Loops in derived documents: a loop's body (the activities on the paths from its head to
//! its end, through preconditions) and the `<member>`s the end's partition document lists, so
//! that its node can tell every partner of the body that a new pass starts. Apart from
//! `derive.rs` because validation computes the body too.

use std::collections::{HashMap, HashSet};

use crate::flow::Flow;
use crate::model::{ActivityId, Loop, LoopMember, WorkflowDefinition};

/// The body of the loop that `end` ends and whose head is `head`: every activity on a path
/// from `head` to `end` through preconditions, both included, in definition order. Empty
/// when `head` is not before `end` on a path (nor `end` itself).
pub fn loop_body(def: &WorkflowDefinition, head: ActivityId, end: ActivityId) -> Vec<ActivityId> {
    crate::work::count(def.activities.len());
    let mut successors: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
    let mut predecessors: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
    for a in &def.activities {
        crate::work::count(a.preconditions.len());
        for &p in &a.preconditions {
            successors.entry(p).or_default().push(a.id);
            predecessors.entry(a.id).or_default().push(p);
        }
    }
    let after_head = reach(head, &successors);
    if !after_head.contains(&end) {
        return Vec::new();
    }
    let before_end = reach(end, &predecessors);
    let mut seen = HashSet::new();
    def.activities
        .iter()
        .map(|a| a.id)
        .filter(|id| after_head.contains(id) && before_end.contains(id) && seen.insert(*id))
        .collect()
}

/// `from` and every activity reached from it along `edges`.
fn reach(from: ActivityId, edges: &HashMap<ActivityId, Vec<ActivityId>>) -> HashSet<ActivityId> {
    let mut seen = HashSet::from([from]);
    let mut todo = vec![from];
    while let Some(at) = todo.pop() {
        for &next in edges.get(&at).map(Vec::as_slice).unwrap_or_default() {
            crate::work::count(1);
            if seen.insert(next) {
                todo.push(next);
            }
        }
    }
    seen
}

/// The loop of activity `end` as its partition document holds it: the definition's, with a
/// member for every activity of its body that a partition holds, at its partner's location
/// (`home` gives it, and whether that partition is another than the end's), carrying, when
/// it is, what its next pass reads that the end or an activity before it writes.
pub(super) fn derived_loop(
    def: &WorkflowDefinition,
    flow: &Flow<'_>,
    end: ActivityId,
    l: &Loop,
    home: impl Fn(ActivityId) -> Option<(String, bool)>,
) -> Loop {
    let body = loop_body(def, l.to, end)
        .into_iter()
        .filter_map(|id| {
            let (location, remote) = home(id)?;
            let carries = match (remote, flow.index(end), flow.index(id)) {
                (true, Some(e), Some(m)) => flow.carried(e, m),
                _ => Vec::new(),
            };
            Some(LoopMember {
                id,
                location,
                carries,
            })
        })
        .collect();
    Loop { body, ..l.clone() }
}
