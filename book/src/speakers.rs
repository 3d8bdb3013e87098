//! What a deployment tells a partition's node of who runs what: the peers of the activities
//! whose word that node takes (a notification, a state change, a loop's new pass), and no
//! more. Those are its own activities and every activity whose partner sends to one of them:
//! read from the senders' side of the partition documents (an activity's adjacents, a loop
//! end's body), the same lists the senders send by, so that the two cannot part. Telling every
//! partition of every activity made each deployment's bytes (stored in the outbox, copied,
//! encoded, sent) grow with the instance's partners twice over.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, NodeId};
use mobiwf_xml_schema::DerivedPartition;

/// For each partition of `derived` (in its order), the activities whose word its node takes.
pub(crate) fn heard(derived: &[DerivedPartition]) -> Vec<BTreeSet<ActivityId>> {
    let holder: BTreeMap<ActivityId, usize> = derived
        .iter()
        .enumerate()
        .flat_map(|(i, d)| d.document.activities.iter().map(move |a| (a.id, i)))
        .collect();
    let mut heard: Vec<BTreeSet<ActivityId>> = derived
        .iter()
        .map(|d| d.document.activities.iter().map(|a| a.id).collect())
        .collect();
    for activity in derived.iter().flat_map(|d| &d.document.activities) {
        // Its end (with the states a rule names) goes to its adjacents' partners; a loop
        // end's new pass to its body's.
        let adjacents = activity.adjacents.iter().map(|a| a.id);
        let body = activity.loop_back.iter().flat_map(|l| l.body_ids());
        for to in adjacents.chain(body) {
            if let Some(&i) = holder.get(&to) {
                heard[i].insert(activity.id);
            }
        }
    }
    heard
}

/// The (activity, peer) pairs of `runs_on` that a node hearing `heard` is told.
pub(crate) fn told(
    runs_on: &BTreeMap<ActivityId, NodeId>,
    heard: &BTreeSet<ActivityId>,
) -> Vec<(ActivityId, NodeId)> {
    heard
        .iter()
        .filter_map(|a| Some((*a, runs_on.get(a)?.clone())))
        .collect()
}
