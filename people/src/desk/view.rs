//! What the desk shows: a user's worklist in one of the WorkToDo views (*Synchronization and
//! Disconnected Operation in WorkToDo* (IC-03-006), §4.4: arrival, priority, deadline, data size).

use std::cmp::Reverse;
use std::fmt;

use mobiwf_proto::{Hold, ItemInfo, UserId};
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

impl Desk {
    /// The open items offered to or held by `user`, in `order`; while the user is away, only
    /// those they locked (the others are disabled until they reconnect).
    pub fn worklist(&self, user: &str, order: Order) -> Vec<Entry> {
        let away = self.is_away(user);
        let mut entries: Vec<Entry> = self
            .items
            .values()
            .filter(|i| i.is_open())
            .filter_map(|i| self.entry(i, user))
            .filter(|e| !away || e.state == EntryState::Locked)
            .collect();
        entries.sort_by_key(|e| sort_key(order, &e.info));
        entries
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
            .pending
            .values()
            .rev()
            .find(|p| p.user.as_str() == user && (p.instance, p.activity) == item.key())
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
