//! What the desk shows: a user's worklist in one of the WorkToDo views (*Synchronization and
//! Disconnected Operation in WorkToDo* (IC-03-006), §4.4: arrival, priority, deadline, data size).

use std::cmp::Reverse;
use std::fmt;

use mobiwf_proto::{ActivityId, Hold, InstanceId, ItemInfo, Location, UserId};
use serde::{Deserialize, Serialize};

use super::{Desk, DeskItem};

/// The order of a worklist. Every order ends with (instance, activity), so equal keys always
/// come out the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// When the item was offered (became ready), oldest first. The default.
    #[default]
    Arrival,
    /// `<priority>`, highest first, then arrival.
    Priority,
    /// The activity's deadline (`timeOut`), earliest first; items without one last; then
    /// arrival.
    Deadline,
    /// The size of the item's data, smallest first. Items carry no data sizes yet (instance
    /// context comes later), so this is arrival order for now.
    Size,
}

impl Order {
    /// Every order, as the API names them.
    pub const ALL: [Order; 4] = [
        Order::Arrival,
        Order::Priority,
        Order::Deadline,
        Order::Size,
    ];

    /// The order a word names (`arrival`, `priority`, `deadline`, `size`).
    pub fn parse(word: &str) -> Option<Order> {
        Order::ALL.into_iter().find(|o| o.as_str() == word)
    }

    /// Its word.
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Arrival => "arrival",
            Order::Priority => "priority",
            Order::Deadline => "deadline",
            Order::Size => "size",
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an item is on a user's worklist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    /// Offered: the user may select (or lock) it.
    Offered,
    /// Selected by the user.
    Selected,
    /// Locked by the user (for work without the network).
    Locked,
}

/// One line of a worklist. As JSON: the item's fields, then `state`, and for a held item
/// `since_ms` and `grantor`, and `pending` while a claim of the user on it is under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// What the item is.
    #[serde(flatten)]
    pub info: ItemInfo,
    /// Offered, selected or locked.
    pub state: EntryState,
    /// Since when the user holds it, in ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// Who delegated it to the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grantor: Option<UserId>,
    /// The user's claim on it sent to its host and not answered yet (`select`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<String>,
    /// For an item that may be locked: whether what it reads is on this device, ready for
    /// work without the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offline: Option<super::Offline>,
    /// Why the user cannot work on it now: its host cannot be reached and what it reads is
    /// not here in their hands (the WorkToDo report, §5.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
}

/// One page of a user's worklist: the entries from `from` on, in the order asked, and how
/// many the whole list holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorklistPage {
    /// The page's entries.
    pub entries: Vec<Entry>,
    /// How many entries the whole worklist holds.
    pub total: usize,
}

/// An entry of a user's worklist as far as the link to its host goes (the worklist page's
/// link section).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryLink<'a> {
    /// Where its host is.
    pub host: &'a Location,
    /// Whether the user holds it locked.
    pub locked: bool,
    /// Whether a claim of the user on it waits for its host's answer.
    pub pending: bool,
}

impl Desk {
    /// The open items offered to or held by `user`, in `order`; while the user is away, only
    /// those they locked (the others are disabled until they reconnect).
    pub fn worklist(&self, user: &str, order: Order) -> Vec<Entry> {
        self.worklist_page(user, order, 0, usize::MAX).entries
    }

    /// At most `limit` entries of [`Desk::worklist`] from the `from`th on, and how many it
    /// holds. Only the sort keys of the whole list are made and only the first `from + limit`
    /// of them sorted: the entries (each a copy of its item) are made for the page alone.
    pub fn worklist_page(
        &self,
        user: &str,
        order: Order,
        from: usize,
        limit: usize,
    ) -> WorklistPage {
        let away = self.is_away(user);
        let mut keyed: Vec<(SortKey, &DeskItem)> = self
            .items
            .values()
            .filter(|i| shows(i, user, away))
            .map(|i| (sort_key(order, &i.info), i))
            .collect();
        let total = keyed.len();
        let end = from.saturating_add(limit).min(total);
        if from >= end {
            return WorklistPage {
                entries: Vec::new(),
                total,
            };
        }
        if end < total {
            // Keys are unique (they end with instance and activity): the first `end` are the
            // same whichever way the rest lie.
            keyed.select_nth_unstable_by(end, |a, b| a.0.cmp(&b.0));
            keyed.truncate(end);
        }
        keyed.sort_unstable_by_key(|k| k.0);
        let entries = keyed[from..]
            .iter()
            .filter_map(|(_, i)| self.entry(i, user))
            .collect();
        WorklistPage { entries, total }
    }

    /// The entry of `user`'s worklist for one item, if the worklist shows it: what
    /// [`Desk::worklist`] would list for that item, found by its key, not by listing.
    pub fn worklist_entry(
        &self,
        user: &str,
        instance: InstanceId,
        activity: ActivityId,
    ) -> Option<Entry> {
        let item = self.items.get(&(instance, activity))?;
        shows(item, user, self.is_away(user))
            .then(|| self.entry(item, user))
            .flatten()
    }

    /// Of each entry of [`Desk::worklist`] (in no order), what the link to its host needs,
    /// without a copy of the entry.
    pub fn worklist_links(&self, user: &str) -> Vec<EntryLink<'_>> {
        let away = self.is_away(user);
        self.items
            .values()
            .filter(|i| shows(i, user, away))
            .map(|i| EntryLink {
                host: &i.info.host,
                locked: i.holder(user).is_some_and(|h| h.hold == Hold::Locked),
                pending: self.pending_of(i, user).is_some(),
            })
            .collect()
    }

    /// The user's latest claim on `item` sent to its host and not answered yet.
    fn pending_of(&self, item: &DeskItem, user: &str) -> Option<&super::PendingClaim> {
        self.pending
            .values()
            .rev()
            .find(|p| p.user.as_str() == user && (p.instance, p.activity) == item.key())
    }

    fn entry(&self, item: &DeskItem, user: &str) -> Option<Entry> {
        let (state, since_ms, grantor) = match item.holder(user) {
            Some(h) => (
                match h.hold {
                    Hold::Selected => EntryState::Selected,
                    Hold::Locked => EntryState::Locked,
                },
                Some(h.since_ms),
                h.grantor.clone(),
            ),
            None if item.is_offered_to(user) => (EntryState::Offered, None, None),
            None => return None,
        };
        let pending = self
            .pending_of(item, user)
            .map(|p| p.action.as_str().to_owned());
        Some(Entry {
            info: item.info.clone(),
            state,
            since_ms,
            grantor,
            pending,
            offline: item.info.disconnected.then(|| item.offline()),
            disabled: self.disabled(item, user),
        })
    }
}

/// Whether `item` is on `user`'s worklist (what [`Desk::worklist`] lists): open, offered to
/// or held by them; while they are away, locked by them.
fn shows(item: &DeskItem, user: &str, away: bool) -> bool {
    if !item.is_open() {
        return false;
    }
    match item.holder(user) {
        Some(h) => !away || h.hold == Hold::Locked,
        None => !away && item.is_offered_to(user),
    }
}

/// The sort key: (the order's own key, arrival, instance, activity).
type SortKey = (Reverse<i64>, (bool, u64), u64, u64, u64);

fn sort_key(order: Order, info: &ItemInfo) -> SortKey {
    let priority = match order {
        Order::Priority => Reverse(info.priority),
        Order::Arrival | Order::Deadline | Order::Size => Reverse(0),
    };
    let deadline = match (order, info.deadline_ms) {
        (Order::Deadline, Some(at)) => (false, at),
        (Order::Deadline, None) => (true, 0),
        (Order::Arrival | Order::Priority | Order::Size, _) => (false, 0),
    };
    (
        priority,
        deadline,
        info.ready_ms,
        info.instance.0,
        info.activity.0,
    )
}
