//! What a node knows about an instance beyond its own partitions' records: the outcomes other
//! partners told it, the contingency substitutions the controller told it, late words it
//! ignored, and whether an operator interrupted or cancelled the instance.

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, Outcome, StateSet};
use serde::{Deserialize, Serialize};

/// The longest chain of substitutions followed (a contingency activity that failed and was
/// replaced in turn, and so on); a longer chain is treated as not yet decided.
pub const MAX_SUBSTITUTIONS: usize = 64;

/// Per-instance knowledge, stored under `known/<instance>`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Known {
    /// Outcomes of remote activities, from notifications (first word wins).
    pub heard: BTreeMap<ActivityId, Outcome>,
    /// The states remote activities entered, as far as their partners said: what the
    /// dependency rules of this node's activities look at.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub states: BTreeMap<ActivityId, StateSet>,
    /// The completion flags remote activities ended with, from notifications.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub flags: BTreeMap<ActivityId, String>,
    /// Where remote activities' routes led: the successors that go on (the others are
    /// skipped), from notifications.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub routed: BTreeMap<ActivityId, Vec<ActivityId>>,
    /// The completion activity that succeeded and completed the instance: everything not
    /// final is cancelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_by: Option<ActivityId>,
    /// Failed activity → the contingency activity that runs in its place.
    pub replaced: BTreeMap<ActivityId, ActivityId>,
    /// Words about replaced activities that came after the substitution: recorded, ignored.
    pub late: BTreeMap<ActivityId, Outcome>,
    /// Activities the controller withdrew (it decided they failed), with its reason; kept here
    /// so that a withdrawal that overtakes its partition's deployment still applies.
    pub withdrawn: BTreeMap<ActivityId, String>,
    /// The pass each withdrawal of `withdrawn` names, where it is not the first (absent: the
    /// first, as stored before loops): a later pass of the activity is not withdrawn.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub withdrawn_passes: BTreeMap<ActivityId, mobiwf_proto::Pass>,
    /// An operator interrupted the instance: nothing new starts until it is resumed.
    pub interrupted: bool,
    /// An operator cancelled the instance: everything not finished is cancelled.
    pub cancelled: bool,
    /// The number of the newest operator's control taken (`ControlInstance::order`): an
    /// older interrupt or resumption that arrives after it is not taken. Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub control_order: u64,
    /// The instance data as this node knows it, by name: written here or carried here.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub data: BTreeMap<String, mobiwf_proto::Datum>,
    /// What earlier passes of loops wrote, superseded in `data` by a later pass: the last
    /// write of each name in each such pass (`mobiwf_proto::data_passes`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<mobiwf_proto::Datum>,
    /// Files `data` references whose content is not here yet, being fetched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<crate::data::Missing>,
    /// The instance's responsible user, as the controller deployed it: told of its work
    /// items' deadlines, and given an item 24 hours before its deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsible: Option<mobiwf_proto::UserId>,
    /// The length of an hour for its `<deadline>`s, in ms, as the controller deployed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour_ms: Option<u64>,
    /// The peer that runs each activity whose word this node takes (what its deployments and
    /// substitutions said): whose word about it is taken.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub runs_on: BTreeMap<ActivityId, mobiwf_proto::NodeId>,
    /// The pass each remote activity of a loop's body is in, as far as this node heard (from
    /// a new pass, or a word about a later pass); absent: the first. A word about an earlier
    /// pass does not count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub passes: BTreeMap<ActivityId, mobiwf_proto::Pass>,
    /// Partners' words kept until this node knows who runs their activity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub early: Vec<crate::speakers::EarlyWord>,
    /// The latest rerun of the instance applied here (`Rerun::rerun`), which this node's
    /// notifies carry. Left out while 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rerun: u64,
    /// The sender's latest rerun applied when it said each end of `heard` (absent: none): a
    /// rerun numbered so far that arrives later does not forget it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub heard_in: BTreeMap<ActivityId, u64>,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Known {
    /// The reason `id` was withdrawn for, when it was in `pass` or a later one (a withdrawal
    /// names the pass the controller decided; an earlier pass still here is over too).
    pub fn withdrawal(&self, id: ActivityId, pass: mobiwf_proto::Pass) -> Option<&String> {
        let withdrawn = self.withdrawn_passes.get(&id).copied().unwrap_or_default();
        self.withdrawn.get(&id).filter(|_| pass <= withdrawn)
    }

    /// The activity whose outcome stands for `id`: itself, or the end of its substitution
    /// chain. `None` when the chain is longer than [`MAX_SUBSTITUTIONS`] (or loops). This is
    /// the engine's only walk along a substitution chain; every other use of `replaced` looks
    /// one step (is this activity replaced?).
    pub fn stand_in(&self, id: ActivityId) -> Option<ActivityId> {
        let mut at = id;
        for _ in 0..MAX_SUBSTITUTIONS {
            match self.replaced.get(&at) {
                Some(&next) => at = next,
                None => return Some(at),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_follows_a_chain_to_its_end_and_gives_up_on_a_loop() {
        let mut known = Known::default();
        known.replaced.insert(ActivityId(1), ActivityId(5));
        known.replaced.insert(ActivityId(5), ActivityId(6));
        assert_eq!(known.stand_in(ActivityId(1)), Some(ActivityId(6)));
        assert_eq!(known.stand_in(ActivityId(7)), Some(ActivityId(7)));
        known.replaced.insert(ActivityId(6), ActivityId(1));
        assert_eq!(known.stand_in(ActivityId(1)), None);
    }
}
