//! A device's desk: the worklists and notices of the users whose device this node is, pure.
//!
//! `apply(now, input) -> effects`, like the engine: the node daemon feeds it the hosts' item
//! snapshots (`Message::Item`), the controller's notices (`Message::Notice`) and its users'
//! actions (the API), writes [`Desk::take_changes`] with the outbox entries the effects cause
//! in one synced batch, and only then sends the claims and wakes the waiting API calls.
//!
//! The host of an item arbitrates every claim on it; the desk decides alone only what its
//! snapshot makes certain (the item ended or someone here holds it: "no longer available";
//! the user is not offered it; the action does not fit the user's hold) and sends the rest to
//! the host as a `Message::Claim` with a request number, answered on a later snapshot.
//!
//! Layout: this file holds the types and [`Desk::apply`], a dispatch of one call per input;
//! `claim` a user's action, `item` a host's snapshot (and the notices it causes), `deadline`
//! the deadline notices on this device's clock, `notices`
//! the notice lists, `view` the worklists, `store` what the daemon writes and reads back.
//! Finished items are remembered (to answer "no longer available" without asking the host) up
//! to [`MAX_FINISHED_ITEMS`].

mod application;
mod claim;
mod deadline;
mod item;
mod link;
mod notices;
mod offline;
mod store;
mod view;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    ActivityId, Claim, Datum, FileRef, Holder, InstanceId, ItemAction, ItemAnswer, ItemInfo,
    ItemStatus, Location, Message, NodeId, NodeName, Notice, UserId, Verdict,
};
use mobiwf_xml_schema::User;
use serde::{Deserialize, Serialize};

use crate::Directory;

pub use application::{AppEnd, AppEnded, AppToTake, DeviceProfile, Launch};
pub use deadline::DEADLINE_NOTICE;
pub use mobiwf_proto::ItemSnapshot;
pub use offline::{ItemCopy, Offline};
pub use store::{DeskChanges, DeskEncodeError, DeskRestoreError, PREFIX, item_key};
pub use view::{Entry, EntryLink, EntryState, Order, WorklistPage};

/// The most notices kept per user; the oldest go first.
pub const MAX_NOTICES_PER_USER: usize = 1000;

/// The most finished (done or closed) items the desk remembers, to answer "no longer
/// available" without asking their hosts; the longest finished go first. A claim on a
/// forgotten item is answered as on an unknown one.
pub const MAX_FINISHED_ITEMS: usize = 10_000;

/// An item: its instance and activity.
pub type ItemKey = (InstanceId, ActivityId);

/// A work item as this device knows it: the host's latest snapshot for this device, and
/// what the desk remembers beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeskItem {
    /// What the item is (and where its host is).
    pub info: ItemInfo,
    /// The host's version of the snapshot.
    pub version: u64,
    /// This device's users it is offered to.
    pub offered: Vec<UserId>,
    /// This device's users holding it.
    pub holders: Vec<Holder>,
    /// Open, done or closed.
    pub status: ItemStatus,
    /// This device's users it was offered to or held by, and no longer is: their claims are
    /// answered "no longer available" (someone, here or on another device, took it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub former: Vec<UserId>,
    /// When the desk learned it was done or closed, or that it involves none of this device's
    /// users any more, in ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<u64>,
    /// What it reads, copied from its host for work without the network (lockable items).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<ItemCopy>,
    /// The thresholds of its `<deadline>` (hours left) already noticed here, by the desk's
    /// own timer or the host's snapshot: each is told once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warned: Vec<u32>,
    /// Its application ended on this device (semi-automatic items): it never runs again here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_ended: Option<AppEnded>,
}

impl DeskItem {
    /// Its key.
    pub fn key(&self) -> ItemKey {
        (self.info.instance, self.info.activity)
    }

    /// Whether it can still be worked on.
    pub fn is_open(&self) -> bool {
        self.status == ItemStatus::Open
    }

    /// The user's hold on it, if they hold it.
    pub fn holder(&self, user: &str) -> Option<&Holder> {
        self.holders.iter().find(|h| h.user.as_str() == user)
    }

    /// Whether it is offered to the user (and not held by them).
    pub fn is_offered_to(&self, user: &str) -> bool {
        self.offered.iter().any(|u| u.as_str() == user)
    }
}

/// A claim sent to an item's host and not answered yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingClaim {
    /// The desk's number for it; the host's answer carries it.
    pub request: u64,
    /// Who acts.
    pub user: UserId,
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// What they do.
    pub action: ItemAction,
    /// Where it was sent (the host's location).
    pub host: Location,
    /// When, in ms since the epoch.
    pub sent_ms: u64,
    /// True when the user was disconnected: the claim waits here until the host can be
    /// reached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offline: bool,
}

/// A user of this device acts on an item (the local API).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalClaim {
    /// Who acts.
    pub user: UserId,
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// What they do (`Insert` and `Remove` are the controller's, refused here).
    pub action: ItemAction,
}

/// What happens to the desk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeskInput {
    /// Host → this device: an item snapshot (`Message::Item`).
    Item(Box<ItemSnapshot>),
    /// Controller → this device: a notice for one of its users (`Message::Notice`); one for
    /// a user whose device is not this node is ignored.
    Notice(Notice),
    /// A user of this device acts on an item.
    Claim(LocalClaim),
    /// Time passed: the deadline notices due by now are raised. The daemon sends it at
    /// [`Desk::next_deadline`].
    Tick,
    /// Host → this device: the answer to a claim on something that is no work item there
    /// (`Message::Answer`); taken only for a claim under way with the same item and user.
    Answer(ItemAnswer),
    /// A user of this device disconnects (`mobiwf-node disconnect`).
    Disconnect(UserId),
    /// A user of this device reconnects (`mobiwf-node reconnect`).
    Reconnect(UserId),
    /// An item's host answered what the item reads (`Message::ItemData`).
    Copied {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// The values.
        data: Vec<Datum>,
        /// The files of `data` on this device already.
        held: Vec<FileRef>,
    },
    /// A file is whole on this device (fetched, or received inline).
    FileHeld(FileRef),
    /// The application a user of this device selected the item for ended
    /// ([`Desk::to_launch`]).
    ApplicationEnded {
        /// The item.
        key: ItemKey,
        /// The user it ran for.
        user: UserId,
        /// How it ended.
        end: AppEnd,
    },
    /// Deliveries to a host failed `UNREACHABLE_AFTER_FAILURES` times in a row
    /// (`reachable: false`), or it answered again (`true`).
    HostLink {
        /// The host's peer id.
        host: NodeId,
        /// True when it answered again.
        reachable: bool,
    },
}

impl DeskInput {
    /// The input a `Message::Item`, `Message::Notice` or `Message::Answer` is; none for any
    /// other message.
    pub fn from_message(message: Message) -> Option<DeskInput> {
        match message {
            Message::Item(snapshot) => Some(DeskInput::Item(Box::new(snapshot))),
            Message::Notice(tell) => Some(DeskInput::Notice(tell.notice)),
            Message::Answer(answered) => Some(DeskInput::Answer(answered)),
            Message::Register(_)
            | Message::Deploy(_)
            | Message::Notify(_)
            | Message::StateChanged(_)
            | Message::Completed(_)
            | Message::Report(_)
            | Message::PartitionResult(_)
            | Message::Overdue(_)
            | Message::Withdraw(_)
            | Message::Substitute(_)
            | Message::Control(_)
            | Message::Probe(_)
            | Message::Directory(_)
            | Message::Claim(_)
            | Message::ItemEvents(_)
            | Message::Fetch(_)
            | Message::ReadData(_)
            | Message::ItemData(_)
            | Message::Presence(_)
            | Message::Compensate(_)
            | Message::Compensated(_)
            | Message::Rerun(_)
            | Message::Locate(_)
            | Message::BeginSync(_)
            | Message::SyncGranted(_)
            | Message::SyncRefused(_)
            | Message::EndSync(_)
            | Message::Pause(_)
            | Message::PauseReport(_)
            | Message::NewPass(_) => None,
        }
    }
}

/// Something the daemon must do once the desk's changes are on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeskEffect {
    /// Send this claim (a `Message::Claim`) to the item's host at `to` (through the outbox,
    /// or to the node's own engine when `to` is this node).
    Send {
        /// The host's location (`ItemInfo::host`).
        to: Location,
        /// The claim (boxed: it is much larger than an answer).
        claim: Box<Claim>,
    },
    /// A claim got its answer: wake the API call waiting for `request`, if there is one.
    Answered {
        /// The desk's number for the claim.
        request: u64,
        /// Who claimed.
        user: UserId,
        /// What was decided.
        verdict: Verdict,
    },
}

/// What [`Desk::apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// For a claim: its request number. Its answer is an [`DeskEffect::Answered`] with this
    /// number, among `effects` when the desk decided it alone, else on a later snapshot.
    pub request: Option<u64>,
    /// What to do once the changes are written.
    pub effects: Vec<DeskEffect>,
}

impl Applied {
    /// The verdict on this claim when the desk decided it alone (nothing was sent).
    pub fn verdict(&self) -> Option<&Verdict> {
        let request = self.request?;
        self.effects.iter().find_map(|e| match e {
            DeskEffect::Answered {
                request: r,
                verdict,
                ..
            } if *r == request => Some(verdict),
            _ => None,
        })
    }

    /// Where the claim was sent, when it was.
    pub fn sent_to(&self) -> Option<&Location> {
        self.effects.iter().find_map(|e| match e {
            DeskEffect::Send { to, .. } => Some(to),
            DeskEffect::Answered { .. } => None,
        })
    }
}

/// Why an input could not be applied at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeskRefusal {
    /// The user is not in the directory, or their worklist is on another node (or none).
    #[error("{why}")]
    NotHere {
        /// The user.
        user: UserId,
        /// What is wrong and what to do.
        why: String,
    },
    /// The user holds selected items: they cannot take them offline (lock them, or release
    /// them, first).
    #[error(
        "{user} cannot disconnect while holding selected items ({}): a selected item stays with \
         its host; lock it (if it allows disconnected work), or release it, then disconnect",
        items.join("; ")
    )]
    Selected {
        /// The user.
        user: UserId,
        /// The selected items, named.
        items: Vec<String>,
    },
    /// No item of this instance and activity reached this node.
    #[error(
        "no work item for activity {activity} of instance {instance} reached this node (none \
         was offered to its users, or it ended long ago); `mobiwf-node worklist --user {user}` \
         lists {user}'s items"
    )]
    UnknownItem {
        /// Who asked.
        user: UserId,
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
    },
}

/// The worklists and notices of the users whose device this node is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Desk {
    items: BTreeMap<ItemKey, DeskItem>,
    /// The finished items by when they finished: the oldest are forgotten first.
    finished: BTreeSet<(u64, ItemKey)>,
    notices: BTreeMap<UserId, notices::UserNotices>,
    pending: BTreeMap<u64, PendingClaim>,
    /// The number the next claim gets (from 1).
    next_request: u64,
    /// The number the next notice gets (from 1; global, so a notice's store key is unique).
    next_notice: u64,
    /// The users who disconnected, with when (ms since the epoch).
    away: BTreeMap<UserId, u64>,
    /// The number of the last presence sent to the controller.
    presence_seq: u64,
    /// Per host (peer id), the smallest (this device's clock on arrival − the host's clock at
    /// sending) seen: added to a host's deadline, it gives the time on this device's clock.
    offsets: BTreeMap<String, i64>,
    /// The hosts (peer ids) this device failed to reach and that have not answered since:
    /// their items are disabled (`link`). Not stored: a restarted device finds out again.
    unreachable_hosts: link::Unreachable,
    /// What this device is: its operating system and installed applications (configuration,
    /// not stored).
    device: application::DeviceProfile,
    dirty: store::Dirty,
}

impl Desk {
    /// An empty desk.
    pub fn new() -> Desk {
        Desk::default()
    }

    /// Applies one input. The changes it made are handed over by [`Desk::take_changes`].
    pub fn apply(
        &mut self,
        now_ms: u64,
        dir: &Directory,
        me: &NodeName,
        input: DeskInput,
    ) -> Result<Applied, DeskRefusal> {
        match input {
            DeskInput::Item(snapshot) => Ok(self.snapshot(now_ms, *snapshot)),
            DeskInput::Notice(notice) => Ok(self.notice(dir, me, notice)),
            DeskInput::Claim(claim) => self.claim(now_ms, dir, me, claim),
            DeskInput::Tick => Ok(self.tick(now_ms)),
            DeskInput::Answer(answered) => Ok(self.answer_without_item(now_ms, answered)),
            DeskInput::Disconnect(user) => self.disconnect(now_ms, dir, me, &user),
            DeskInput::Reconnect(user) => self.reconnect(dir, me, &user),
            DeskInput::Copied {
                instance,
                activity,
                data,
                held,
            } => Ok(self.copied(now_ms, (instance, activity), data, &|f| held.contains(f))),
            DeskInput::FileHeld(file) => Ok(self.file_held(&file)),
            DeskInput::HostLink { host, reachable } => Ok(self.host_link(host, reachable)),
            DeskInput::ApplicationEnded { key, user, end } => {
                Ok(self.application_ended(now_ms, dir, me, (key, user), end))
            }
        }
    }

    /// An item the desk knows (open or finished).
    pub fn item(&self, instance: InstanceId, activity: ActivityId) -> Option<&DeskItem> {
        self.items.get(&(instance, activity))
    }

    /// Every item the desk knows, by key.
    pub fn items(&self) -> impl Iterator<Item = &DeskItem> {
        self.items.values()
    }

    /// The claims sent and not answered yet, by request number.
    pub fn pending(&self) -> impl Iterator<Item = &PendingClaim> {
        self.pending.values()
    }

    fn take_request(&mut self) -> u64 {
        let request = self.next_request.max(1);
        self.next_request = request + 1;
        self.dirty.meta = true;
        request
    }
}

/// The user, when this node is their device; else why not (the worklist and notices of a
/// user are served by their device only).
pub fn here<'a>(dir: &'a Directory, me: &NodeName, user: &str) -> Result<&'a User, DeskRefusal> {
    let not_here = |why: String| DeskRefusal::NotHere {
        user: UserId::new(user),
        why,
    };
    let Some(found) = dir.user(user) else {
        return Err(not_here(if dir.version == 0 {
            format!(
                "user {user} is unknown here: no organisation directory has reached this node \
                 ({me}) yet; wait for the controller's, or check that this node registered"
            )
        } else {
            format!(
                "user {user} is not in the organisation directory this node ({me}) holds \
                 (version {}); check the name",
                dir.version
            )
        }));
    };
    match found.device.as_deref() {
        Some(device) if device == me.as_str() => Ok(found),
        Some(device) => Err(not_here(format!(
            "{user}'s worklist is on node {device}, not on this node {me}; ask there"
        ))),
        None => Err(not_here(format!(
            "{user} has no device in the organisation directory (version {}), so no node keeps \
             their worklist; give them one (user@device) and apply the document again",
            dir.version
        ))),
    }
}

/// How an item is named in notices and answers.
pub(crate) fn label(info: &ItemInfo) -> String {
    if info.name.is_empty() {
        format!("activity {} of instance {}", info.activity, info.instance)
    } else {
        format!(
            "activity {} \"{}\" of instance {}",
            info.activity, info.name, info.instance
        )
    }
}
