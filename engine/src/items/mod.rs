//! Work items, the host side: a manual or semi-automatic activity with people extensions
//! (`<role>`, `<department>` or `<team>`) becomes a work item when it starts; this node (its
//! host) offers it from its replica of the organisation directory, arbitrates the users'
//! claims on it durably, tells each affected device how the item stands for its users
//! ([`mobiwf_proto::Message::Item`]) and the controller what happened
//! ([`mobiwf_proto::Message::ItemEvents`]). The activity is [`crate::Life::Ready`] while
//! its item is only offered and [`crate::Life::Running`] once someone holds it (or did a
//! copy): the item is data of those states, and the activity ends
//! through the usual paths (a holder's completion concludes it; a cancel, a withdrawal or a
//! `timeOut` closes the item).
//!
//! Layout: this file holds the item; `lifecycle` is the life of one copy (its states, the
//! events that move it, the one transition function and its table; the copy's fields are
//! private to it); `assign` creates items and offers them (again, when a newer directory
//! comes), `claim` takes the users' actions and `decide` decides on each (guards, then one
//! event), `deadline` keeps `<deadline>`s (notices, the hand-over to the responsible user),
//! `end` ends them, `send` builds the messages, `store` encodes and restores the host's state.
//!
//! Activities without people extensions keep the node-wide worklist (`Engine::worklist`,
//! finished with `Finished { by: Person }`); an activity with them refuses that input.

mod assign;
mod claim;
mod claimed;
mod deadline;
mod decide;
mod eligible;
mod end;
pub mod lifecycle;
mod reads;
mod send;
mod status;
mod store;
mod written;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_people::Directory;
use mobiwf_proto::{
    ActivityId, InstanceId, ItemStatus, Location, NodeId, PartitionId, RoleId, UserId,
};
use serde::{Deserialize, Serialize};

use crate::run::RunKey;

pub(crate) use claim::INTERRUPTED;
pub use deadline::Due;
pub(crate) use deadline::handed_away;
use lifecycle::NotAllowed;
pub use lifecycle::{Completion, CopyLife, ItemCopy};
pub use store::{RestoredPeople, StoredDirectory, StoredItem, StoredToken};

/// Names a work item on its host: its instance and its activity.
pub type ItemKey = (InstanceId, ActivityId);

/// A work item on its host: one activity with people extensions, offered to or held by
/// users. Stored as JSON under `item/<instance>/<activity>`; also the view the host's API
/// shows ([`crate::Engine::items`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// The instance.
    pub instance: InstanceId,
    /// The partition that holds the activity.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Grows by one with every change; devices keep the newest they were sent.
    pub version: u64,
    /// When the activity started and the item was created, in ms since the epoch.
    pub ready_ms: u64,
    /// Open while the activity runs; done once every copy is done; closed when the activity
    /// ended otherwise. Changed only by [`Item::conclude`] and [`Item::close`].
    status: ItemStatus,
    /// The copies: one for most methods, one per user for method `all`. Empty while nobody
    /// could ever be offered it.
    pub copies: Vec<ItemCopy>,
    /// Why nobody is offered it now (nobody in the group, all on leave, no directory);
    /// assigned again when a newer directory comes. `None` when someone is offered or holds
    /// a copy, or once it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unassigned: Option<String>,
    /// The users an administrator took it off (`remove`): no later assignment offers it to
    /// them again; an `insert` of theirs undoes it.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    removed: BTreeSet<UserId>,
    /// Its `<deadline>`, when it has one: when, and the thresholds passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<Due>,
}

/// The users an item involves at one moment: offered an open copy, or holding one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Involved {
    pub(crate) offered: BTreeSet<UserId>,
    pub(crate) held: BTreeSet<UserId>,
    /// Whether nobody was offered it (see [`Item::unassigned`]).
    pub(crate) unassigned: bool,
}

impl Involved {
    /// Everyone offered or holding.
    pub(crate) fn users(&self) -> BTreeSet<UserId> {
        self.offered.union(&self.held).cloned().collect()
    }
}

impl Item {
    /// A new item of an activity that started at `now_ms`, offered to nobody yet.
    pub(crate) fn new(key: RunKey, activity: ActivityId, now_ms: u64) -> Item {
        Item {
            instance: key.instance,
            partition: key.partition,
            activity,
            version: 0,
            ready_ms: now_ms,
            status: ItemStatus::Open,
            copies: Vec::new(),
            unassigned: None,
            removed: BTreeSet::new(),
            due: None,
        }
    }

    /// Its key.
    pub fn key(&self) -> ItemKey {
        (self.instance, self.activity)
    }

    /// The partition run that holds its activity.
    pub fn run_key(&self) -> RunKey {
        RunKey {
            instance: self.instance,
            partition: self.partition,
        }
    }

    /// Whether the activity still waits for people.
    pub fn is_open(&self) -> bool {
        self.status == ItemStatus::Open
    }

    /// Open, done (by whom) or closed (why).
    pub fn status(&self) -> &ItemStatus {
        &self.status
    }

    /// Why nobody is offered it now, while that is so.
    pub fn unassigned(&self) -> Option<&str> {
        self.unassigned.as_deref()
    }

    /// The users an administrator took it off.
    pub fn removed(&self) -> &BTreeSet<UserId> {
        &self.removed
    }

    /// An open item whose last open copy was just finished ends: done (see
    /// `status::overall`) when a copy was done; when every copy was taken off its users'
    /// worklists instead, it stays open and waits, unassigned, for an insert or a newer
    /// directory. True when it ended.
    pub(crate) fn conclude(&mut self) -> bool {
        let ends = self.is_open() && !self.any_open_copy() && self.any_done_copy();
        if ends {
            self.status = status::overall(self);
        }
        ends
    }

    /// Its activity ended otherwise (`why`): its open copies and the item close. A copy's
    /// refusal (a bug) goes to `refused`.
    pub(crate) fn close(&mut self, why: String, at_ms: u64, refused: &mut Vec<NotAllowed>) {
        for copy in self.copies.iter_mut().filter(|c| c.is_open()) {
            let close = lifecycle::CopyEvent::Close {
                why: why.clone(),
                at_ms,
            };
            // An open copy takes `Close` in every state.
            copy.apply_allowed(close, refused);
        }
        self.status = ItemStatus::Closed { why };
        self.unassigned = None;
    }

    /// Someone was given it (the deadline's hand-over): it is assigned.
    pub(crate) fn assigned(&mut self) {
        self.unassigned = None;
    }

    /// An administrator took it off `user`'s worklist (`taken_off`), or put it back on: no
    /// later assignment offers it to a user taken off.
    pub(crate) fn taken_off(&mut self, user: &UserId, taken_off: bool) {
        if taken_off {
            self.removed.insert(user.clone());
        } else {
            self.removed.remove(user);
        }
    }

    /// Who it involves now.
    pub(crate) fn involved(&self) -> Involved {
        let mut involved = Involved {
            unassigned: self.unassigned.is_some(),
            ..Involved::default()
        };
        for copy in self.copies.iter().filter(|c| c.is_open()) {
            involved.offered.extend(copy.offered().iter().cloned());
            if let Some(h) = copy.holder() {
                involved.held.insert(h.user.clone());
            }
        }
        involved
    }

    /// Open, and nobody is offered or holds any open copy.
    pub(crate) fn orphaned(&self) -> bool {
        self.is_open()
            && self
                .copies
                .iter()
                .filter(|c| c.is_open())
                .all(ItemCopy::orphaned)
    }

    /// Whether some copy is still open.
    pub(crate) fn any_open_copy(&self) -> bool {
        self.copies.iter().any(ItemCopy::is_open)
    }

    /// Whether someone took it up: a copy is held, or done by its user. Its activity is
    /// `Running` while this holds, `Ready` (offered) otherwise.
    pub(crate) fn taken(&self) -> bool {
        self.copies.iter().any(|c| c.holder().is_some()) || self.any_done_copy()
    }

    /// Whether some copy was done by its user.
    pub(crate) fn any_done_copy(&self) -> bool {
        self.copies.iter().any(|c| c.done().is_some())
    }

    /// Marks it unassigned (with `why`) when nobody is offered it any more, or assigned.
    pub(crate) fn settle(&mut self, why: impl FnOnce() -> String) {
        if self.orphaned() {
            if self.unassigned.is_none() {
                self.unassigned = Some(why());
            }
        } else {
            self.unassigned = None;
        }
    }
}

/// The host's part of the engine: its items, the round-robin tokens, the directory replica
/// and its own address, with what changed since the last [`crate::Engine::take_changes`].
#[derive(Debug, Default)]
pub(crate) struct Host {
    /// Every work item this node hosts (ended ones too: late claims are answered from them).
    pub(crate) items: BTreeMap<ItemKey, Item>,
    /// Per role, the last user round-robin gave an item to.
    pub(crate) tokens: BTreeMap<RoleId, UserId>,
    /// The newest directory the controller sent.
    pub(crate) directory: Directory,
    /// This node's own full libp2p address, where devices send claims.
    pub(crate) location: Location,
    pub(crate) dirty_items: BTreeSet<ItemKey>,
    pub(crate) dirty_tokens: BTreeSet<RoleId>,
    pub(crate) dirty_directory: bool,
    /// Activities with an open item that ended during the input being applied: their items
    /// are closed once it is applied.
    pub(crate) ending: Vec<(RunKey, ActivityId)>,
}

impl Host {
    /// Whether the node a claim came from is the device of `user`.
    pub(crate) fn is_device_of(&self, user: &UserId, node: &NodeId) -> bool {
        self.directory
            .device_of(user.as_str())
            .is_some_and(|d| &d.node == node)
    }
}
