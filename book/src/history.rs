//! The event history of each instance: every transition the controller learnt or decided,
//! with its time and partner, for `mobiwf-controller history`.
//!
//! Events are data ([`Event`]); the controller's API and command line render them as text.

use std::collections::BTreeMap;

use mobiwf_proto::{
    ActivityId, ActivityState, Control, InstanceId, ItemAction, NodeName, PartitionId, Verdict,
};
use mobiwf_xml_schema::{ActivityTypeId, ClassName, UserId};
use serde::{Deserialize, Serialize};

use crate::InstanceState;

/// One entry of an instance's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEvent {
    /// When it happened (for activity transitions: the node's time), ms since the epoch.
    pub at_ms: u64,
    /// The activity it is about, if any.
    pub activity: Option<ActivityId>,
    /// The partner (node name) it happened on or concerns, if any.
    pub partner: Option<NodeName>,
    /// What happened.
    pub what: Event,
}

/// An activity as history events name it: its id and its name (empty when it has none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    /// The activity id.
    pub id: ActivityId,
    /// Its name in the definition.
    pub name: String,
    /// The pass of a loop's body it was in (left out for the first: `3#2` is pass 2 of 3).
    #[serde(default, skip_serializing_if = "mobiwf_proto::Pass::is_first")]
    pub pass: mobiwf_proto::Pass,
}

/// What the controller decided after a node said one of its activities waits too long for a
/// precondition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "then", rename_all = "snake_case")]
pub enum OverdueThen {
    /// The precondition's outcome is known: it was sent again to the waiting node.
    Resent,
    /// The controller decides after a grace period, unless the predecessor's partner reports.
    DecidesIn {
        /// The grace period, in seconds.
        secs: u64,
    },
    /// The precondition failed; its contingency activity is not placed yet.
    NotPlacedYet,
    /// The precondition failed; a contingency activity runs in its place, not finished yet.
    StandIn {
        /// The contingency activity.
        by: Label,
    },
}

/// What happened, by kind, with its data. Stored tagged (`kind`); events stored as text by
/// earlier versions load as [`Event::Text`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// An operator submitted the instance (or started it from a deployed definition); its
    /// partitions went to these nodes.
    Submitted {
        /// The definition's name for error messages (a file name), or the deployed
        /// definition's name.
        source: String,
        /// Each partition and the node that runs it.
        partitions: Vec<(PartitionId, NodeName)>,
        /// The deployed definition it was started from, when started by name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        definition: Option<crate::DefinitionRef>,
    },
    /// A node acknowledged a partition.
    Deployed {
        /// The partition.
        partition: PartitionId,
    },
    /// A node refused a partition.
    Refused {
        /// The partition.
        partition: PartitionId,
        /// Its reason.
        reason: String,
    },
    /// An activity's preconditions and dependency rule held (it entered `synchronizing`);
    /// recorded when it stayed there for a while (an activity that passes on in the same
    /// millisecond shows only the state it reached).
    Synchronizing {
        /// The activity.
        activity: Label,
    },
    /// The loop whose body holds an activity ran again: its node says it is in a new pass
    /// (`activity` names it in that pass).
    NewPass {
        /// The activity, in its new pass.
        activity: Label,
    },
    /// An activity became ready (a manual one: offered), and stayed so for a while.
    Ready {
        /// The activity.
        activity: Label,
    },
    /// A node started an activity.
    Started {
        /// The activity.
        activity: Label,
    },
    /// A node started an activity by its `timeToWait` emergency trigger.
    StartedByEmergency {
        /// The activity.
        activity: Label,
    },
    /// A node tried an activity again (`<retries>`).
    Retried {
        /// The activity.
        activity: Label,
        /// How many times in all.
        times: u32,
    },
    /// A node says an activity ended.
    Ended {
        /// The activity.
        activity: Label,
        /// How.
        state: ActivityState,
        /// Why, when it failed or was cancelled.
        detail: Option<String>,
        /// The completion flag it ended with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flag: Option<String>,
    },
    /// The controller decided that an activity ended (failed or cancelled).
    Decided {
        /// The activity.
        activity: Label,
        /// How.
        state: ActivityState,
        /// Why.
        reason: String,
    },
    /// An activity ended on its node before the operator's cancel reached it.
    EndedBeforeCancel {
        /// The activity.
        activity: Label,
        /// How it ended.
        state: ActivityState,
    },
    /// A node's word about an activity the controller had decided otherwise: recorded, ignored.
    LateWord {
        /// The activity.
        activity: Label,
        /// What the node says.
        state: ActivityState,
        /// The node's name, when known.
        on: Option<NodeName>,
        /// What the controller had decided.
        decided: ActivityState,
        /// Why it had.
        reason: String,
    },
    /// A partition's result came back.
    PartitionFinished {
        /// The partition.
        partition: PartitionId,
    },
    /// A partition's result came after the controller gave up on it: kept for the record.
    LateResult {
        /// The partition.
        partition: PartitionId,
    },
    /// The controller gave up on a partition.
    GivenUp {
        /// The partition.
        partition: PartitionId,
        /// Why.
        reason: String,
    },
    /// A node said an activity waited longer than a precondition's `timeOut`.
    Overdue {
        /// The waiting activity.
        waiting: Label,
        /// Its node's name, when known.
        on: Option<NodeName>,
        /// The precondition's `timeOut`, in seconds.
        secs: u32,
        /// The precondition.
        precondition: Label,
        /// What the controller did.
        then: OverdueThen,
    },
    /// A contingency activity was placed on a node in place of a failed activity.
    ContingencyPlaced {
        /// The contingency activity.
        contingency: Label,
        /// The node's name.
        on: NodeName,
        /// The failed activity.
        failed: Label,
    },
    /// A contingency activity waits for a partner with its skill.
    AwaitingPartner {
        /// The skill.
        skill: ActivityTypeId,
        /// The failed activity it is to run in place of.
        failed: Label,
    },
    /// A contingency activity could not be used (already in use): the failed activity's
    /// successors are cancelled.
    ContingencyInUse {
        /// The contingency activity.
        contingency: Label,
        /// The failed activity.
        failed: Label,
    },
    /// An operator asked the node of an activity to pause or resume it.
    PauseAsked {
        /// What.
        action: mobiwf_proto::PauseAction,
        /// The operator.
        by: String,
    },
    /// An activity's node paused or resumed it (for an operator or its item's holder), or
    /// refused an operator's order.
    Pause {
        /// Who paused or resumed it.
        by: String,
        /// What became of it.
        outcome: mobiwf_proto::PauseOutcome,
    },
    /// An operator interrupted, resumed or cancelled the instance.
    Operator {
        /// What.
        action: Control,
        /// How many partners were told.
        told: usize,
    },
    /// A completion activity succeeded: the instance is complete, and what is not final is
    /// cancelled on every node.
    Completed {
        /// The completion activity.
        activity: Label,
    },
    /// The instance reached a final state.
    InstanceEnded {
        /// Which.
        state: InstanceState,
        /// Why, when it failed or was cancelled.
        detail: Option<String>,
    },
    /// A work item was offered to these users (its host says: assigned, offered again after
    /// a release, or inserted).
    ItemOffered {
        /// The activity.
        activity: Label,
        /// The users.
        users: Vec<UserId>,
    },
    /// Nobody can be offered a work item now (its host says why).
    ItemUnassigned {
        /// The activity.
        activity: Label,
        /// Why.
        why: String,
    },
    /// A user acted on a work item (select, release, lock, unlock, complete, delegate,
    /// insert, remove), as its host took it.
    ItemActed {
        /// The activity.
        activity: Label,
        /// Who.
        user: UserId,
        /// What.
        action: ItemAction,
        /// When they did it, when they did it disconnected (ms since the epoch, their
        /// device's clock): the event itself is when it reached the host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offline_ms: Option<u64>,
    },
    /// A work item's host refused a user's claim.
    ItemRefused {
        /// The activity.
        activity: Label,
        /// Who claimed.
        user: UserId,
        /// What they tried (`select`, ...).
        action: String,
        /// Why not.
        reason: String,
    },
    /// A work item was taken off these users' worklists (someone else took it, or it ended).
    ItemRevoked {
        /// The activity.
        activity: Label,
        /// The users.
        users: Vec<UserId>,
    },
    /// A work item's deadline is `hours_left` hours away (0: reached); its host told these
    /// users (the holders, else those offered it).
    ItemDeadline {
        /// The activity.
        activity: Label,
        /// Hours left.
        hours_left: u32,
        /// Who was told on their devices.
        told: Vec<UserId>,
    },
    /// 24 hours before its deadline a work item passed to the instance's responsible user.
    ItemHandedOver {
        /// The activity.
        activity: Label,
        /// The users it was taken from.
        from: Vec<UserId>,
        /// The responsible user, its holder now.
        to: UserId,
    },
    /// An operator asked a work item's host to insert it on a user's worklist, remove it
    /// from one, or delegate it (a claim with this request number went to the host).
    Administered {
        /// The activity.
        activity: Label,
        /// Whose worklist (for a delegation: who gives it).
        user: UserId,
        /// What.
        action: ItemAction,
        /// The claim's request number.
        request: u64,
    },
    /// A work item's host answered an operator's claim.
    AdminAnswered {
        /// The activity.
        activity: Label,
        /// The claim's user.
        user: UserId,
        /// The claim's request number.
        request: u64,
        /// What the host decided.
        verdict: Verdict,
    },
    /// A notice for the instance's responsible user could not be sent: they have no
    /// registered device.
    NoticeUndelivered {
        /// The responsible user.
        user: UserId,
        /// What kind of notice (`started`, `failed`, `ended`).
        notice: String,
        /// Its words.
        text: String,
        /// Why it could not be sent.
        why: String,
    },
    /// The controller asked an activity's node to run its compensation (backward recovery).
    Compensating {
        /// The activity.
        activity: Label,
    },
    /// An activity's compensation succeeded.
    CompensationDone {
        /// The activity.
        activity: Label,
    },
    /// An activity's compensation failed (or could not run): the others are not run.
    CompensationFailed {
        /// The activity.
        activity: Label,
        /// Why.
        reason: String,
    },
    /// An operator reran a failed activity (forward recovery): it and the activities cancelled
    /// because of it wait again.
    Rerun {
        /// The failed activity.
        activity: Label,
        /// The activities cancelled because of it, waiting again with it.
        with: Vec<Label>,
    },
    /// An activity's request for its task class waits (`behind`: what holds a conflicting
    /// class, then the earlier requests of one).
    SyncWaiting {
        /// The activity.
        activity: Label,
        /// Its class.
        class: ClassName,
        /// What it waits behind.
        behind: Vec<crate::Blocker>,
    },
    /// The synchronization manager granted an activity its task class: it may run.
    SyncGranted {
        /// The activity.
        activity: Label,
        /// Its class.
        class: ClassName,
    },
    /// The synchronization manager refused an activity its task class: it fails.
    SyncRefused {
        /// The activity.
        activity: Label,
        /// Its class.
        class: ClassName,
        /// Why, as its node was told.
        detail: String,
    },
    /// An activity's hold of (or wait for) its task class ended.
    SyncReleased {
        /// The activity.
        activity: Label,
        /// Its class.
        class: ClassName,
        /// True when it held the class; false when it waited for it.
        held: bool,
        /// Why: its node said so, or what the controller saw.
        why: String,
    },
    /// A request of an ordered task waits for the relative order of its instance (`after`:
    /// `waits for the relative order of its instance: after instance 12's T11`).
    OrderWaiting {
        /// The activity.
        activity: Label,
        /// What it waits after, in words.
        after: String,
    },
    /// The tasks before an ordered task in its instance's relative order are over: it goes
    /// on, to ask for its class if it has one, else granted.
    OrderPassed {
        /// The activity.
        activity: Label,
        /// Its class, asked for next.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        class: Option<ClassName>,
    },
    /// A wait for the relative order ended without passing (its activity or instance is
    /// over, a later request came, or the request was refused).
    OrderReleased {
        /// The activity.
        activity: Label,
        /// Why.
        why: String,
    },
    /// An event stored as text by an earlier version.
    #[serde(untagged)]
    Text(String),
}

/// Every instance's history, and what was added since the last write.
#[derive(Debug, Default)]
pub struct History {
    events: BTreeMap<InstanceId, Vec<HistoryEvent>>,
    new: Vec<(InstanceId, usize, HistoryEvent)>,
}

impl History {
    /// Rebuilds from stored events, each with its instance (in order).
    pub fn restore(stored: Vec<(InstanceId, HistoryEvent)>) -> History {
        let mut events: BTreeMap<InstanceId, Vec<HistoryEvent>> = BTreeMap::new();
        for (instance, event) in stored {
            events.entry(instance).or_default().push(event);
        }
        History {
            events,
            new: Vec::new(),
        }
    }

    /// Appends an event to an instance's history.
    pub fn push(
        &mut self,
        instance: InstanceId,
        at_ms: u64,
        activity: Option<ActivityId>,
        partner: Option<&NodeName>,
        what: Event,
    ) {
        let event = HistoryEvent {
            at_ms,
            activity,
            partner: partner.cloned(),
            what,
        };
        let list = self.events.entry(instance).or_default();
        self.new.push((instance, list.len(), event.clone()));
        list.push(event);
    }

    /// One instance's history, in the order the controller learnt it.
    pub fn of(&self, instance: InstanceId) -> &[HistoryEvent] {
        self.events.get(&instance).map_or(&[], Vec::as_slice)
    }

    /// Forgets an instance's events (it left the book; they are in the store).
    pub(crate) fn forget(&mut self, instance: InstanceId) {
        self.events.remove(&instance);
    }

    /// Takes an instance's stored events back (it was recalled).
    pub(crate) fn recall(&mut self, instance: InstanceId, events: Vec<HistoryEvent>) {
        self.events.insert(instance, events);
    }

    /// True when events of `instance` were added since the last [`History::take_new`].
    pub(crate) fn has_new(&self, instance: InstanceId) -> bool {
        self.new.iter().any(|(i, _, _)| *i == instance)
    }

    /// The events added since the last call: (instance, position, event).
    pub fn take_new(&mut self) -> Vec<(InstanceId, usize, HistoryEvent)> {
        std::mem::take(&mut self.new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_stored_as_text_still_load_and_new_ones_are_tagged() {
        let old = r#"{"at_ms":1,"activity":null,"partner":"P1","what":"partition 1 deployed"}"#;
        let e: HistoryEvent = serde_json::from_str(old).expect("old event");
        assert_eq!(e.what, Event::Text("partition 1 deployed".to_owned()));
        let new = Event::Deployed {
            partition: PartitionId(1),
        };
        let json = serde_json::to_string(&new).expect("ser");
        assert_eq!(json, r#"{"kind":"deployed","partition":1}"#);
        assert_eq!(serde_json::from_str::<Event>(&json).expect("de"), new);
    }
}
