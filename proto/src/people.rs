//! What travels between a work item's host, the users' devices and the controller: the
//! directory replica, claims on items, the host's view of an item for one device, the answer to
//! a claim on no item, item events for the controller's history, notices to a user, and which
//! users of a device are away (*Synchronization and Disconnected Operation
//! in WorkToDo* (IC-03-006), Table 2; *A lightweight workflow engine based on a relational
//! structure* (He, Li, Jiao, Liu), §3.3).
//!
//! Every message goes through the durable outbox like the others; the host answers a claim
//! with the item's new state (and the claim's answer) to the claimant's device, so a claim
//! made while the host is unreachable waits in the outbox and is answered when it arrives.

use serde::{Deserialize, Serialize};

use crate::{ActivityId, InstanceId, Location, NodeId, NodeName, PartitionId};
pub use mobiwf_xml_schema::{RoleId, UserId};

/// A registered node as the directory knows it: where the worklists of its users live.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceEntry {
    /// The name it registered with (`user@device` names it).
    pub name: NodeName,
    /// Its peer id.
    pub node: NodeId,
    /// Its full libp2p address (`.../p2p/<peer id>`), where hosts send its users' items (its
    /// first registered address: empty in an entry made before registrations had to give one).
    pub location: Location,
    /// How many times it registered (connected) with the controller.
    pub connections: u32,
    /// When it last registered, in ms since the epoch.
    pub last_connected_ms: u64,
    /// Its users who disconnected (`mobiwf-node disconnect`) and have not reconnected: they
    /// get no new offers, and the node is not suspected while any is away.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub away: Vec<UserId>,
    /// The `seq` of the device's latest presence taken (older ones are ignored).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub presence_seq: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Controller → node: the organisation directory, version `version` (a node keeps the
/// highest it was sent and assigns work from it) ([`crate::Message::Directory`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectoryVersion {
    /// Grows by one with every change (document applied, device registered).
    pub version: u64,
    /// The organisation document (XML), validated by the controller.
    pub document: String,
    /// The registered nodes: where each user's device is reached.
    pub devices: Vec<DeviceEntry>,
}

/// What a user does to a work item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ItemAction {
    /// Take an offered item: it leaves the other users' worklists.
    Select,
    /// Give a selected item back: it is offered again.
    Release,
    /// Take an offered item for work without the network (`<disconnected>true`).
    Lock,
    /// Give a locked item back: it is offered again.
    Unlock,
    /// The holder finished the work.
    Complete {
        /// True when it succeeded.
        succeeded: bool,
        /// The person's words.
        detail: Option<String>,
        /// The completion flag the person chose (routes and `<merge flag>` read it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flag: Option<String>,
        /// The instance data the person set (`--set`, `--file`).
        #[serde(default, skip_serializing_if = "crate::data::Written::is_empty")]
        data: crate::data::Written,
    },
    /// The holder (or an administrator) hands the item to another user.
    Delegate {
        /// The user who gets it.
        to: UserId,
    },
    /// An administrator puts the item on a user's worklist (offered to them too).
    Insert,
    /// An administrator takes the item off a user's worklist.
    Remove,
    /// An administrator (the instance's responsible user, through the controller) moves the
    /// item's `<deadline>` this many hours later; the thresholds that are ahead again come
    /// again.
    Extend {
        /// How many hours later.
        hours: u32,
    },
    /// The holder suspends work on the item (it stays theirs); its activity is paused.
    Pause,
    /// The holder goes on with a paused item.
    Resume,
}

impl ItemAction {
    /// The action without the instance data it carries: what histories and the controller
    /// are told (values travel partner to partner, never through the controller).
    pub fn without_data(&self) -> ItemAction {
        match self {
            ItemAction::Complete {
                succeeded,
                detail,
                flag,
                ..
            } => ItemAction::Complete {
                succeeded: *succeeded,
                detail: detail.clone(),
                flag: flag.clone(),
                data: crate::data::Written::default(),
            },
            other => other.clone(),
        }
    }

    /// The word used on the command line, in the API and in histories.
    pub fn as_str(&self) -> &'static str {
        match self {
            ItemAction::Select => "select",
            ItemAction::Release => "release",
            ItemAction::Lock => "lock",
            ItemAction::Unlock => "unlock",
            ItemAction::Complete { .. } => "complete",
            ItemAction::Delegate { .. } => "delegate",
            ItemAction::Insert => "insert",
            ItemAction::Remove => "remove",
            ItemAction::Extend { .. } => "extend",
            ItemAction::Pause => "pause",
            ItemAction::Resume => "resume",
        }
    }
}

/// Device (or controller, for insert and remove) → host: a user acts on a work item
/// ([`crate::Message::Claim`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// Who acts.
    pub user: UserId,
    /// What they do.
    pub action: ItemAction,
    /// The sender's number for this claim; the answer carries it.
    pub request: u64,
    /// When the user acted, in ms since the epoch, when they did it while disconnected
    /// (the claim waited on their device until it reconnected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline_ms: Option<u64>,
    /// Which offer of the item the user acted on: its `ItemInfo::ready_ms` on their
    /// device. An item offered again since (its activity rerun) is another item: the
    /// claim is answered "no longer available" instead of acting on the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offered_ms: Option<u64>,
}

/// Host → device: a work item as this device's users see it now ([`crate::Message::Item`]).
/// Newer versions win (messages may arrive out of order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemSnapshot {
    /// What the item is.
    pub info: ItemInfo,
    /// Grows with every change of the item on its host; an older one than a device holds is
    /// ignored (its answer is still taken).
    pub version: u64,
    /// This device's users it is offered to (not held).
    pub offered: Vec<UserId>,
    /// This device's users holding it (a copy each, for method `all`).
    pub holders: Vec<Holder>,
    /// Open, done or closed.
    pub status: ItemStatus,
    /// The answer to this device's claim, when the change answers one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
}

/// How a user holds an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// Selected: being worked on, online.
    Selected,
    /// Locked: taken for work without the network.
    Locked,
}

/// Who holds an item (a copy of it, for method `all`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The user.
    pub user: UserId,
    /// Selected or locked.
    pub hold: Hold,
    /// Since when, in ms since the epoch.
    pub since_ms: u64,
    /// Who delegated it to them, if someone did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grantor: Option<UserId>,
}

/// What a work item is, as a worklist shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemInfo {
    /// The instance.
    pub instance: InstanceId,
    /// The partition on its host.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// The activity's name.
    pub name: String,
    /// The activity's description.
    pub description: String,
    /// `manual` or `semiAutomatic`.
    pub kind: String,
    /// `<priority>`: higher first in the priority view.
    pub priority: i64,
    /// `<disconnected>`: may be locked.
    pub disconnected: bool,
    /// When the activity became ready (offered), in ms since the epoch.
    pub ready_ms: u64,
    /// When its `timeOut` runs out, if it has one, in ms since the epoch.
    pub deadline_ms: Option<u64>,
    /// The host's full libp2p address: where claims go.
    pub host: Location,
    /// Its `<deadline>`, when it has one: the absolute end on the host's clock, the
    /// thresholds passed, and the host's clock when the snapshot was made (so a device keeps
    /// the deadline on its own clock while it cannot reach the host).
    /// (Boxed: most items have none, and every message is as large as its largest kind.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<Box<ItemDeadline>>,
    /// Since when its activity is paused (by an operator or its holder), in ms since the
    /// epoch on the host's clock; `None` while it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_ms: Option<u64>,
    /// Its `<application>` (semi-automatic activities), when it has one: what the device of
    /// the user who selects it runs. (Boxed: most items have none.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub application: Option<Box<ItemApplication>>,
    /// The pass of a loop's body its activity is in (left out for the first: worklists show
    /// `3#2`).
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
}

/// The application of a work item, as its host tells the devices of its users: the
/// application itself and the instance data it may write (what its device reads back from
/// `MOBIWF_DATA_DIR` when it exits 0).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemApplication {
    /// The application (`<application id>` with its command, size and os).
    #[serde(flatten)]
    pub application: mobiwf_xml_schema::Application,
    /// The activity's `<writes>`, each with what it holds as the partition declares it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<(String, mobiwf_xml_schema::DataKind)>,
}

/// The notices before a `<deadline>`: when this many hours are left (only those shorter than
/// the deadline; 0, the deadline itself, always), the holder (else everyone offered the item)
/// and the instance's responsible user are told. See *WorkToDo: um sistema de gerenciamento de
/// workflows para ambientes de comunicação sem fio*, §3.3.2.
pub const DEADLINE_THRESHOLDS: [u32; 5] = [48, 24, 12, 6, 0];

/// At this many hours left (only when the deadline is longer) an item not done passes to the
/// instance's responsible user, even when someone selected or locked it.
pub const HAND_OVER_HOURS_LEFT: u32 = 24;

/// The length of an hour in ms: the default of `--hour-ms` (tests and demos use less).
pub const DEFAULT_HOUR_MS: u64 = 3_600_000;

/// The thresholds (hours left) of a deadline of `hours`, latest first: those shorter than it
/// and 0.
pub fn thresholds_of(hours: u32) -> impl Iterator<Item = u32> {
    DEADLINE_THRESHOLDS.into_iter().filter(move |t| *t < hours)
}

/// A work item's `<deadline>` as the host keeps it and sends it to devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemDeadline {
    /// The deadline in hours (`<deadline>`): which thresholds apply.
    pub hours: u32,
    /// When it is reached, in ms since the epoch on the host's clock.
    pub at_ms: u64,
    /// The length of an hour the host counts with (`--hour-ms`).
    pub hour_ms: u64,
    /// The host's clock when it made this snapshot, in ms since the epoch: a device takes the
    /// difference to its own clock as the offset (the smallest it has seen from that host).
    pub sent_ms: u64,
    /// The thresholds (hours left) the host already passed, latest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<u32>,
}

impl ItemDeadline {
    /// When `hours_left` remain, on the host's clock.
    pub fn threshold_ms(&self, hours_left: u32) -> u64 {
        self.at_ms
            .saturating_sub(u64::from(hours_left).saturating_mul(self.hour_ms))
    }
}

/// Whether a work item can still be worked on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ItemStatus {
    /// Offered or held: work to do.
    Open,
    /// Finished by a person.
    Done {
        /// Who.
        by: UserId,
        /// True when it succeeded.
        succeeded: bool,
    },
    /// Ended otherwise (the activity was cancelled, withdrawn or timed out).
    Closed {
        /// Why.
        why: String,
    },
}

/// How the host answered one claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum Verdict {
    /// Done.
    Done,
    /// Someone else holds it, or it is finished: "no longer available".
    Unavailable {
        /// The words for the user.
        reason: String,
    },
    /// This user may not (not offered to them, on leave, not the holder, not an
    /// administrator).
    Forbidden {
        /// The words for the user.
        reason: String,
    },
    /// The request makes no sense for this item (lock without `<disconnected>`, complete
    /// before select, delegate to an unknown user).
    Invalid {
        /// The words for the user.
        reason: String,
    },
}

/// The answer to a device's claim, riding on the item's state sent to that device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// Who claimed.
    pub user: UserId,
    /// The device's number for the claim.
    pub request: u64,
    /// What the host decided.
    pub verdict: Verdict,
}

/// Host → device: the answer to a claim on something that is not (or not yet) a work item on
/// that host (the activity has not started, or names no role), so there is no item to send
/// ([`crate::Message::Answer`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemAnswer {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// The answer.
    pub answer: Answer,
}

/// What happened to a work item, for the controller's history and status (admin view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ItemEvent {
    /// Offered to these users (by the assignment, again after a release, or by an insert).
    Offered {
        /// The users.
        users: Vec<UserId>,
    },
    /// No user can be offered the item now (nobody in the role, all on leave, no
    /// directory); it is offered when the directory changes.
    Unassigned {
        /// Why.
        why: String,
    },
    /// A user acted on it (select, release, lock, unlock, complete, delegate, insert, remove).
    Acted {
        /// Who acted.
        user: UserId,
        /// What they did.
        action: ItemAction,
        /// When the user acted, in ms since the epoch on their device, when they did it while
        /// disconnected (the claim waited on their device until it reconnected).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offline_ms: Option<u64>,
    },
    /// A claim the host refused.
    Refused {
        /// Who claimed.
        user: UserId,
        /// What they tried.
        action: String,
        /// Why not.
        reason: String,
    },
    /// Taken off these users' worklists (someone else took it, or it ended).
    Revoked {
        /// The users.
        users: Vec<UserId>,
    },
    /// `hours_left` hours remain before its `<deadline>` (0: it is reached); the host told
    /// these users (the holders, else those offered it); the controller tells the instance's
    /// responsible user.
    Deadline {
        /// Hours left (one of [`DEADLINE_THRESHOLDS`]).
        hours_left: u32,
        /// Who was told on their devices.
        told: Vec<UserId>,
    },
    /// 24 hours before its deadline the item passed to the instance's responsible user, who
    /// holds it now; it was taken from these users (holders or offered). A later result of
    /// theirs is recorded and ignored.
    HandedOver {
        /// The users it was taken from.
        from: Vec<UserId>,
        /// The responsible user, its holder now.
        to: UserId,
    },
}

/// Host → controller: what happened to a work item, for its history and status
/// ([`crate::Message::ItemEvents`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemEvents {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// When, in ms since the epoch.
    pub at_ms: u64,
    /// What happened, in order.
    pub events: Vec<ItemEvent>,
    /// The activity's pass the item was offered in (a loop's body offers it again in each).
    /// Absent from hosts older than it: then the pass the controller knows the activity in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass: Option<crate::Pass>,
}

/// What a user is told on their device's notices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// The user.
    pub user: UserId,
    /// The instance it is about.
    pub instance: InstanceId,
    /// The activity, when it is about one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<ActivityId>,
    /// What kind of notice (`offered`, `revoked`, `started`, `failed`, `ended`, ...).
    pub kind: String,
    /// The words.
    pub text: String,
    /// When, in ms since the epoch.
    pub at_ms: u64,
}

/// Controller → device: tell a user something (the instances they are responsible for
/// started, failed, ended) ([`crate::Message::Notice`]). The notice is a field of its own, not
/// the message's fields: its `kind` would meet the message's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tell {
    /// What to tell.
    pub notice: Notice,
}

/// Device → controller: the users of this device who are disconnected now (each disconnection
/// and reconnection sends the whole set) ([`crate::Message::Presence`]). An away user gets no
/// new offers; a node with an away user is not suspected. Messages may arrive out of order:
/// the one with the highest `seq` wins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    /// The device's users who are away (none: everyone is back).
    pub away: Vec<UserId>,
    /// Grows with every presence the device sends.
    pub seq: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The controller made a device's entry from its first registered address, or the empty
    /// text when it had none: entries of either kind, as the book and the nodes stored them,
    /// load and are written back byte for byte.
    #[test]
    fn device_entries_older_versions_stored_load_as_they_were() {
        for (stored, peer) in [
            (
                r#"{"name":"ana@phone","node":"12D3KooWPeer","location":"","connections":1,"last_connected_ms":5}"#,
                None,
            ),
            (
                r#"{"name":"ana@phone","node":"12D3KooWPeer","location":"/ip4/10.0.0.2/tcp/4001/p2p/12D3KooWPeer","connections":2,"last_connected_ms":5,"away":["ana"],"presence_seq":3}"#,
                Some("12D3KooWPeer"),
            ),
        ] {
            let entry: DeviceEntry = serde_json::from_str(stored).unwrap();
            assert_eq!(entry.location.peer().map(NodeId::as_str), peer);
            assert_eq!(serde_json::to_string(&entry).unwrap(), stored);
        }
    }
}
