//! Instance data in derived documents: what each adjacent carries, the declarations a
//! document needs, and, for a contingency activity placed after a failure, what its adjacents
//! carry in the failed activity's place. Apart from `derive.rs` so that file stays about the
//! documents' shape; the flow itself (what is available after and needed from each activity)
//! is `crate::flow`.

use std::collections::HashSet;

use crate::flow::{Flow, Names, StandIns};
use crate::model::{
    Activity, ActivityId, Adjacent, DataItem, PartitionActivity, WorkflowDefinition,
};

/// What a notification from activity `from` to its successor `to` carries: the declared names
/// `to`, or an activity after it, reads that `from`, or an activity before it, writes, in
/// declaration order ("after" and "before" through preconditions and `<depends>` rules).
/// Whatever partitions hold them: [`crate::derive_partitions`] writes it on the adjacents to
/// another partition only (a node keeps the instance's data for all its activities). `to`
/// need not wait for `from` directly (a stand-in's successors do not). Empty when either
/// activity is not in `def`.
///
/// Each call goes over the whole definition once (linear in its activities, preconditions and
/// rule terms); deriving the partitions computes it once for all their adjacents.
pub fn carried_names(def: &WorkflowDefinition, from: ActivityId, to: ActivityId) -> Vec<String> {
    let flow = Flow::new(def);
    match (flow.index(from), flow.index(to)) {
        (Some(f), Some(t)) => flow.carried(f, t),
        _ => Vec::new(),
    }
}

/// The declarations of `def` (the first of each name, in definition order) of every name the
/// `activities` read or write or their adjacents carry.
pub(super) fn declarations(
    def: &WorkflowDefinition,
    activities: &[PartitionActivity],
) -> Vec<DataItem> {
    let mut used: HashSet<&str> = HashSet::new();
    for a in activities {
        let carried = a.adjacents.iter().flat_map(|adj| &adj.carries);
        let looped = a.loop_back.iter().flat_map(|l| &l.body);
        let carried = carried.chain(looped.flat_map(|m| &m.carries));
        used.extend(
            a.data
                .reads
                .iter()
                .chain(&a.data.writes)
                .chain(carried)
                .map(String::as_str),
        );
    }
    if used.is_empty() {
        return Vec::new();
    }
    let mut seen: HashSet<&str> = HashSet::new();
    def.data
        .iter()
        .filter(|item| used.contains(item.name.as_str()) && seen.insert(item.name.as_str()))
        .cloned()
        .collect()
}

/// `adjacents` of the contingency activity `x`, each carrying the names its successor, or an
/// activity after it, reads among what is available in the failed activity's place: what `x`
/// writes, and what was written before `x` and before the activity it stands in for (of
/// several, the first whose successors are all among `adjacents`, else the first).
pub(super) fn stand_in_carries(
    def: &WorkflowDefinition,
    flow: &Flow<'_>,
    x: &Activity,
    adjacents: Vec<Adjacent>,
) -> Vec<Adjacent> {
    let mut available: Names = flow.set(&x.data.writes);
    if let Some(i) = flow.index(x.id) {
        available.add(&flow.before(i));
    }
    if let Some(failed) = stood_for(def, flow, x.id, &adjacents) {
        available.add(&flow.before(failed));
    }
    adjacents
        .into_iter()
        .map(|mut adj| {
            adj.carries = flow
                .index(adj.id)
                .map(|s| flow.names(&flow.needed(s).and(&available)))
                .unwrap_or_default();
            adj
        })
        .collect()
}

/// Of the activities contingency activity `x` may stand in for, the first whose successors are
/// all among `adjacents` (the failed one's successors), else the first.
fn stood_for(
    def: &WorkflowDefinition,
    flow: &Flow<'_>,
    x: ActivityId,
    adjacents: &[Adjacent],
) -> Option<usize> {
    let failed = StandIns::new(def, flow).failed(x);
    let covers = |&i: &usize| {
        adjacents
            .iter()
            .all(|adj| flow.index(adj.id).is_some_and(|s| flow.comes_after(s, i)))
    };
    failed
        .iter()
        .copied()
        .find(covers)
        .or_else(|| failed.first().copied())
}
