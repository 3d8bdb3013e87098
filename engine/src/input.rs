//! The inputs of the engine: everything that happens to a node's partitions, one variant
//! each (the daemon turns messages, commands' ends, people's actions and time into these).

use std::collections::BTreeMap;

use mobiwf_proto::{
    ActivityId, Control, InstanceId, ItemAction, NodeId, Outcome, PartitionId, StateSet, UserId,
};

use crate::{Carried, Finisher, Missing};

/// What happens to the engine.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// The controller sends a partition of an instance.
    Deploy {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The partition document, as XML.
        document: String,
        /// The instance's responsible user, when it has one: told of its items' deadlines
        /// and given an item 24 hours before its deadline.
        responsible: Option<UserId>,
        /// The length of an hour for `<deadline>`s, in ms; `None`: this node's own
        /// ([`Engine::set_hour_ms`]).
        hour_ms: Option<u64>,
        /// The peer running each activity of the instance: whose word about it is taken
        /// (empty: everyone's, as before this was sent).
        runs_on: BTreeMap<ActivityId, NodeId>,
    },
    /// Another partner says an activity finished.
    Notified {
        /// Who says so: a partner's peer id, `None` for the controller (relays, contingency
        /// outcomes), whose word is always taken.
        from: Option<NodeId>,
        /// The instance.
        instance: InstanceId,
        /// The finished activity.
        activity: ActivityId,
        /// What it means for its successors.
        outcome: Outcome,
        /// Every state it entered, when a dependency rule here names it (else empty).
        entered: StateSet,
        /// The completion flag it ended with, if any.
        flag: Option<String>,
        /// Where its routes led (the successors that go on), when it has routes.
        routed: Option<Vec<ActivityId>>,
        /// The instance data it carries.
        carried: Carried,
    },
    /// The daemon holds the content of a file it was asked to fetch ([`Effect::Fetch`]).
    Fetched {
        /// The instance that needed it.
        instance: InstanceId,
        /// The content's reference.
        file: mobiwf_proto::FileRef,
    },
    /// Another partner says an activity that a dependency rule here names entered a state.
    StateChanged {
        /// Who says so (as for [`Input::Notified`]).
        from: Option<NodeId>,
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// Every state it entered so far.
        entered: StateSet,
    },
    /// The controller says these activities failed (their partner did not answer in time).
    Withdraw {
        /// The instance.
        instance: InstanceId,
        /// The activities.
        activities: Vec<ActivityId>,
        /// Why.
        reason: String,
    },
    /// The controller says contingency activity `by` runs in place of failed `replaced`.
    Substitute {
        /// The instance.
        instance: InstanceId,
        /// The failed activity.
        replaced: ActivityId,
        /// The contingency activity.
        by: ActivityId,
        /// The peer that runs it (whose word about it is taken).
        peer: Option<NodeId>,
    },
    /// The controller says completion activity `by` succeeded: the instance is complete.
    Completed {
        /// The instance.
        instance: InstanceId,
        /// The completion activity.
        by: ActivityId,
    },
    /// An operator interrupted, resumed or cancelled the instance.
    Control {
        /// The instance.
        instance: InstanceId,
        /// What to do.
        action: Control,
    },
    /// Time passed: start the activities whose `timeToWait` ran out, fail those that ran longer
    /// than their `timeOut`, try failed commands again, report overdue preconditions. The daemon
    /// sends it at [`Engine::next_deadline`].
    Tick,
    /// An activity finished.
    Finished {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// True when it succeeded.
        succeeded: bool,
        /// Why it failed (exit status, the person's words).
        detail: Option<String>,
        /// Who says so.
        by: Finisher,
        /// Which try of the command ended (ignored for people): the end of an earlier try
        /// that was given up on is ignored.
        attempt: u32,
        /// The completion flag it ended with (a person's choice, or what its command wrote
        /// to its flag file), read by routes and `<merge flag>`.
        flag: Option<String>,
        /// The instance data it wrote (kept when it succeeded): each a name of its `<writes>`;
        /// a person's text for a number is checked as a number. A file's content is already
        /// in the daemon's store.
        written: Vec<(String, mobiwf_proto::DataValue)>,
    },
    /// The controller asks for the compensation of an activity of a partition here (backward
    /// recovery): it runs when the activity succeeded and has one; the controller is told how
    /// it ended, or why it cannot run.
    Compensate {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The activity.
        activity: ActivityId,
    },
    /// The compensation command of an activity ended.
    CompensationEnded {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The activity.
        activity: ActivityId,
        /// True on exit status 0.
        succeeded: bool,
        /// Why it failed.
        detail: Option<String>,
    },
    /// An operator reruns a failed activity (forward recovery): those of `activities` this
    /// partition holds go back to `NotReady`, and what was heard of each is forgotten.
    Rerun {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// Every activity rerun (of all partitions).
        activities: Vec<ActivityId>,
    },
    /// The controller sent a version of the organisation directory: kept when newer than
    /// the one held (an older one is ignored); then every open work item nobody could be
    /// offered is assigned again.
    Directory(mobiwf_people::Directory),
    /// Deliveries to a peer failed `UNREACHABLE_AFTER_FAILURES` times in a row
    /// (`reachable: false`), or it answered again (`true`): the users whose device it is get
    /// no new offers while it cannot be reached (*Synchronization and Disconnected Operation in
    /// WorkToDo* (IC-03-006), §5.3: marked inactive; they keep what they hold and what they were
    /// offered), and once it answers, open items nobody could be offered are assigned again.
    Link {
        /// The peer.
        peer: NodeId,
        /// True when it answered again.
        reachable: bool,
    },
    /// A user acts on a work item hosted here (see `items`). The answer goes to the
    /// claimant's device as the `answer` of a `Message::Item`; a claim from the controller
    /// is answered only in the `Message::ItemEvents` (a refusal).
    Claim {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// Who acts (for insert and remove: whose worklist).
        user: UserId,
        /// What they do.
        action: ItemAction,
        /// The sender's number for the claim, carried by the answer.
        request: u64,
        /// The peer id of the device that sent it; `None` when the controller sent it.
        from: Option<NodeId>,
        /// The files a completion names whose content the daemon does not hold, and where
        /// to fetch them (the claimant's device).
        missing: Vec<Missing>,
        /// When the user acted, when they did it disconnected (ms since the epoch, their
        /// device's clock); told to the controller with the item's events.
        offline_ms: Option<u64>,
        /// Which offer of the item the user acted on (its `ready_ms` on their device); `None`
        /// from the controller. Another offer since: the claim is for an item that is gone.
        offered_ms: Option<u64>,
    },
}
