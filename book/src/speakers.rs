//! What a deployment tells a partition's node of who runs what: the peers of the activities
//! whose word that node takes (a notification, a state change, a loop's new pass), and no
//! more. Those are its own activities, the ones they wait for (preconditions and the terms of
//! dependency rules) and the ends of the loops they are in, which say when a new pass begins.
//! Telling every partition of every activity made each deployment's bytes (stored in the
//! outbox, copied, encoded, sent) grow with the instance's partners twice over.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, NodeId};
use mobiwf_xml_schema::{DerivedPartition, PartitionDocument};

/// The ends of the loops each activity is in (a body member of several loops hears each end).
#[derive(Debug, Default)]
pub(crate) struct LoopEnds(BTreeMap<ActivityId, Vec<ActivityId>>);

impl LoopEnds {
    /// The loops of an instance, from its partitions' documents: only a loop's end holds its
    /// body (`<loop>`'s members), so the other partitions learn their ends here.
    pub(crate) fn of(derived: &[DerivedPartition]) -> LoopEnds {
        let mut ends: BTreeMap<ActivityId, Vec<ActivityId>> = BTreeMap::new();
        for activity in derived.iter().flat_map(|d| &d.document.activities) {
            if let Some(back) = &activity.loop_back {
                for member in back.body_ids() {
                    ends.entry(member).or_default().push(activity.id);
                }
            }
        }
        LoopEnds(ends)
    }
}

/// The activities whose word the node of `document` takes.
pub(crate) fn heard_by(document: &PartitionDocument, loops: &LoopEnds) -> BTreeSet<ActivityId> {
    let mut heard = BTreeSet::new();
    for activity in &document.activities {
        heard.insert(activity.id);
        heard.extend(activity.preconditions.iter().map(|p| p.id));
        if let Some(rule) = &activity.depends {
            heard.extend(rule.terms().into_iter().map(|(a, _)| a));
        }
        heard.extend(loops.0.get(&activity.id).into_iter().flatten());
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
