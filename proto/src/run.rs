//! What the controller and the partners tell a node about the run of its partitions: a
//! partition to run, a predecessor's end, a state a dependency rule looks at, and the
//! controller's orders about an instance under way (it is complete, activities are withdrawn,
//! a stand-in runs instead, an operator's interruption, resumption or cancel). Named structs,
//! apart from `wire`, so that the node's core passes them along whole; each is the content of
//! its [`crate::Message`] variant, and its bytes are the ones that variant always had.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::data::{Datum, FileBody};
use crate::inputs::InstanceInputs;
use crate::wire::{Control, Outcome};
use crate::{ActivityId, InstanceId, Location, NodeId, PartitionId, Pass, StateSet, UserId};

/// Controller → node: run this partition of this instance ([`crate::Message::Deploy`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deploy {
    /// The instance.
    pub instance: InstanceId,
    /// The partition's id in the workflow definition.
    pub partition: PartitionId,
    /// The partition document (MobiWfMS partition XML; `workflow@id` is the instance).
    pub document: String,
    /// The instance's responsible user (`submit --responsible`): told of its work items'
    /// deadlines and given an item 24 hours before its deadline. Left out when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responsible: Option<UserId>,
    /// The length of an hour for its `<deadline>`s, in ms (the controller's `--hour-ms`);
    /// sent only with a partition that has deadlines, else the node's own `--hour-ms`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hour_ms: Option<u64>,
    /// The peer that runs each activity whose word this partition's node takes (its own, the
    /// ones they wait for, the ends of the loops they are in; as placed when this was sent),
    /// as (activity, peer) pairs: the node takes a partner's word about an activity only
    /// from its peer. Left out when empty (a deployment from before: every partner's
    /// word is taken). Pairs, not a map: a map's number keys do not survive the internally
    /// tagged [`crate::Message`]'s decoding.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs_on: Vec<(ActivityId, NodeId)>,
    /// The inputs of the instance that this partition's activities read, as the controller
    /// checked them (defaults filled in): the node keeps them as the instance's data, given
    /// before any activity ran. Left out when there are none (as before inputs).
    #[serde(default, skip_serializing_if = "InstanceInputs::is_empty")]
    pub inputs: InstanceInputs,
}

/// Node → node: an activity that one of yours waits for has finished
/// ([`crate::Message::Notify`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notify {
    /// The instance.
    pub instance: InstanceId,
    /// The finished activity (a precondition of the receiver's activity).
    pub activity: ActivityId,
    /// What it means for the successors.
    pub outcome: Outcome,
    /// Every state it entered, when the receiver's dependency rules name it (empty when
    /// only preconditions wait for it).
    #[serde(default, skip_serializing_if = "StateSet::is_empty")]
    pub entered: StateSet,
    /// The completion flag it ended with, if any (`<merge flag>` reads it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// When its `<routes>` chose: the successors the route leads to; its other successors
    /// are skipped. `None`: every successor goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routed: Option<Vec<ActivityId>>,
    /// The instance data the receiver's activities (or the ones after them) read, as the
    /// sender knows it (`<carries>` of the adjacents says which names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<Datum>,
    /// The contents of the files among `data` that travel inline (up to
    /// `MAX_INLINE_FILE_BYTES` each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileBody>,
    /// Where the files among `data` not carried inline are fetched from (the sender's
    /// location), when there are such files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<Location>,
    /// The pass of the activity this is about (left out for the first): a word from an
    /// earlier pass than the receiver knows of does not count.
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
    /// The sender's latest rerun of the instance applied when it said this
    /// ([`crate::Rerun::rerun`]; 0, left out: none, or the controller's word): a rerun
    /// numbered higher that reaches the receiver later forgets the word, one numbered so far
    /// does not (the word is about the end after it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rerun: u64,
}

impl Notify {
    /// The bare word that `activity` of `instance` ended with `outcome`: no states, flag,
    /// route or data.
    pub fn new(instance: InstanceId, activity: ActivityId, outcome: Outcome) -> Notify {
        Notify {
            instance,
            activity,
            outcome,
            entered: StateSet::default(),
            flag: None,
            routed: None,
            data: Vec::new(),
            files: Vec::new(),
            holder: None,
            pass: crate::Pass::FIRST,
            rerun: 0,
        }
    }
}

/// Node → node: an activity that a dependency rule of yours names entered a state the rule
/// looks at ([`crate::Message::StateChanged`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChanged {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// Every state it entered so far.
    pub entered: StateSet,
    /// The pass of the activity (left out for the first).
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
}

/// Controller → node: activity `by`, marked `<completion>`, succeeded: the instance is
/// complete, and every activity of it not final is cancelled (the COMPLETION activity of
/// *A lightweight workflow engine based on a relational structure* (He, Li, Jiao, Liu),
/// §3.2.1) ([`crate::Message::Completed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completed {
    /// The instance.
    pub instance: InstanceId,
    /// The completion activity.
    pub by: ActivityId,
}

/// Controller → node: the controller decided that these activities of your partition failed
/// (their partner did not answer in time); abort them and leave their successors to the
/// controller's contingency decision ([`crate::Message::Withdraw`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Withdraw {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// The activities.
    pub activities: Vec<ActivityId>,
    /// Why.
    pub reason: String,
    /// The pass of each activity the controller decided, where it is not the first (left out
    /// then, as before loops): a later pass of the activity, which a loop's body may run on
    /// its node after the decision, is not withdrawn.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub passes: BTreeMap<ActivityId, Pass>,
}

impl Withdraw {
    /// The pass of `activity` this withdrawal is about.
    pub fn pass_of(&self, activity: ActivityId) -> Pass {
        self.passes.get(&activity).copied().unwrap_or_default()
    }
}

/// Controller → node: activity `replaced` failed and contingency activity `by` runs in its
/// place at `location`; your activities that wait for `replaced` wait for `by` instead, and a
/// late word about `replaced` is ignored ([`crate::Message::Substitute`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Substitute {
    /// The instance.
    pub instance: InstanceId,
    /// The failed activity.
    pub replaced: ActivityId,
    /// The contingency activity that runs instead.
    pub by: ActivityId,
    /// Where it runs (the partner's libp2p address).
    pub location: Location,
}

/// Controller → node: an operator interrupted, resumed or cancelled the instance
/// ([`crate::Message::Control`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlInstance {
    /// The instance.
    pub instance: InstanceId,
    /// What to do.
    pub action: Control,
    /// The control's number among the instance's controls, as the controller counted them
    /// (1 for the first): a node takes an interrupt or a resumption only when it is newer
    /// than the last it took, so that an interrupt overtaken by the resumption after it (the
    /// outbox assumes no order) does not leave the instance interrupted. 0 (left out, a
    /// controller before this) says nothing: taken as it comes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub order: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_withdrawal_names_a_later_pass_and_one_without_is_about_the_first() {
        // As written before loops: about the first pass of each activity.
        let old = r#"{"instance":7,"partition":2,"activities":[3,4],"reason":"too slow"}"#;
        let w: Withdraw = serde_json::from_str(old).unwrap();
        assert_eq!(w.pass_of(ActivityId(3)), Pass::FIRST);
        assert_eq!(
            serde_json::to_string(&w).unwrap(),
            old,
            "its bytes unchanged"
        );
        let later = Withdraw {
            passes: [(ActivityId(4), Pass(3))].into_iter().collect(),
            ..w
        };
        let line = serde_json::to_string(&later).unwrap();
        assert_eq!(
            line,
            r#"{"instance":7,"partition":2,"activities":[3,4],"reason":"too slow","passes":{"4":3}}"#
        );
        let back: Withdraw = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (back.pass_of(ActivityId(3)), back.pass_of(ActivityId(4))),
            (Pass::FIRST, Pass(3))
        );
    }
}
