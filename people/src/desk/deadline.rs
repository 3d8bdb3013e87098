//! Deadlines kept by the device too (`<deadline>`; *WorkToDo: um sistema de gerenciamento de
//! workflows para ambientes de comunicação sem fio*, §3.3.2): each snapshot of an item with a
//! deadline carries its absolute end on the host's clock, the thresholds the host passed, and the
//! host's clock when it was made. The desk keeps, per host, the smallest difference between its own
//! clock on arrival and the host's at sending (clock skew plus the shortest transit seen: a
//! snapshot that waited in an outbox never makes it later), and raises the threshold notices (48,
//! 24, 12, 6 hours left, each only when the deadline is longer, and 0) on its own clock when they
//! come, so a user whose device cannot reach the host is still told on time. A threshold is noticed
//! once per item, whichever comes first: the desk's own timer
//! ([`DeskInput::Tick`](super::DeskInput::Tick) at [`Desk::next_deadline`]) or the host's snapshot
//! saying it passed.
//!
//! Who is told: the item's holders on this device, else the users here it is offered to.

use mobiwf_proto::{HAND_OVER_HOURS_LEFT, ItemDeadline, Location, Notice, UserId, thresholds_of};

use super::{Applied, Desk, DeskItem, ItemKey};

/// The kind of the notices of a deadline's thresholds.
pub const DEADLINE_NOTICE: &str = "deadline";

impl Desk {
    /// When the desk's next threshold notice is due, on this device's clock (ms since the
    /// epoch): the daemon ticks the desk then.
    pub fn next_deadline(&self) -> Option<u64> {
        self.items
            .values()
            .filter_map(|item| self.next_of(item).map(|(_, at)| at))
            .min()
    }

    /// Raises every threshold notice due by `now_ms`.
    pub(super) fn tick(&mut self, now_ms: u64) -> Applied {
        let due: Vec<(ItemKey, u32)> = self
            .items
            .iter()
            .filter_map(|(key, item)| {
                let (t, at) = self.next_of(item)?;
                (at <= now_ms).then_some((*key, t))
            })
            .collect();
        for (key, hours_left) in due {
            // Several thresholds of one item may be due at once (the device was off): each
            // is told, in order.
            self.warn(key, hours_left, now_ms, None);
            while let Some((t, at)) = self.items.get(&key).and_then(|i| self.next_of(i)) {
                if at > now_ms {
                    break;
                }
                self.warn(key, t, now_ms, None);
            }
        }
        Applied::default()
    }

    /// A newer snapshot of an item with a deadline arrived at `now_ms`: the host's clock
    /// offset is taken, and the thresholds the host passed that were not noticed here are,
    /// to the users of `before` (the item as the desk had it, when it was open) or else of
    /// the snapshot.
    pub(super) fn take_due(
        &mut self,
        now_ms: u64,
        key: ItemKey,
        due: &ItemDeadline,
        host: &Location,
        before: Option<&DeskItem>,
    ) {
        let seen = i128::from(now_ms) - i128::from(due.sent_ms);
        let seen = i64::try_from(seen).unwrap_or(if seen < 0 { i64::MIN } else { i64::MAX });
        let peer = super::item::host_key(host).to_owned();
        let offset = self.offsets.get(&peer).map_or(seen, |o| (*o).min(seen));
        if self.offsets.get(&peer) != Some(&offset) {
            self.offsets.insert(peer, offset);
            self.dirty.meta = true;
        }
        // First seen, or seen by none of this device's users until now: what passed before
        // was told to others (the host's rule), not news for them.
        let Some(before) = before.filter(|b| b.is_open() && !told(b).is_empty()) else {
            if let Some(item) = self.items.get_mut(&key) {
                item.warned = due.passed.clone();
            }
            return;
        };
        // A deadline moved later (extended): what the host counts as behind is not told late,
        // what is ahead again is told again when it comes.
        let moved = before
            .info
            .due
            .as_ref()
            .is_some_and(|d| d.at_ms != due.at_ms);
        let warned: Vec<u32> = if moved {
            due.passed.clone()
        } else {
            before.warned.clone()
        };
        if let Some(item) = self.items.get_mut(&key) {
            item.warned = warned.clone();
        }
        let users = Some(told(before));
        for t in &due.passed {
            if !warned.contains(t) {
                self.warn(key, *t, now_ms, users.clone());
            }
        }
    }

    /// The item's next threshold not noticed here and not passed by the host, and when it is
    /// due on this device's clock; none when it is not open or involves nobody here.
    fn next_of(&self, item: &DeskItem) -> Option<(u32, u64)> {
        let due = item.info.due.as_ref()?;
        if !item.is_open() || told(item).is_empty() {
            return None;
        }
        let t = thresholds_of(due.hours)
            .find(|t| !item.warned.contains(t) && !due.passed.contains(t))?;
        let offset = self
            .offsets
            .get(super::item::host_key(&item.info.host))
            .copied()
            .unwrap_or(0);
        let at = i128::from(due.threshold_ms(t)) + i128::from(offset);
        Some((t, u64::try_from(at.max(0)).unwrap_or(u64::MAX)))
    }

    /// Notices threshold `hours_left` of item `key` (once) to `users`, or to the item's
    /// holders here, else those offered it here.
    fn warn(&mut self, key: ItemKey, hours_left: u32, now_ms: u64, users: Option<Vec<UserId>>) {
        let Some(item) = self.items.get_mut(&key) else {
            return;
        };
        if item.warned.contains(&hours_left) {
            return;
        }
        item.warned.push(hours_left);
        self.dirty.item_written(key);
        let users = users.unwrap_or_else(|| told(item));
        let label = super::label(&item.info);
        let hours = item.info.due.as_ref().map_or(0, |d| d.hours);
        let text = match hours_left {
            0 => format!("the deadline of {label} is reached"),
            HAND_OVER_HOURS_LEFT if hours > HAND_OVER_HOURS_LEFT => format!(
                "{HAND_OVER_HOURS_LEFT} hours are left before the deadline of {label}: it passes \
                 to the instance's responsible user now"
            ),
            t => format!("{t} hours are left before the deadline of {label}"),
        };
        for user in users {
            self.push_notice(Notice {
                user,
                instance: key.0,
                activity: Some(key.1),
                kind: DEADLINE_NOTICE.to_owned(),
                text: text.clone(),
                at_ms: now_ms,
            });
        }
    }
}

/// Who is told of an item's threshold: its holders here, else the users here offered it.
fn told(item: &DeskItem) -> Vec<UserId> {
    if item.holders.is_empty() {
        item.offered.clone()
    } else {
        item.holders.iter().map(|h| h.user.clone()).collect()
    }
}
