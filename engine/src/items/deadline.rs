//! Deadlines of work items (`<deadline>`; *WorkToDo: um sistema de gerenciamento de workflows para
//! ambientes de comunicação sem fio*, §3.3.2; *Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §5.1.1): the host is the authority. An item's deadline counts from when
//! it is offered (`Item::ready_ms`), in hours of `--hour-ms` ms (the deployment's, else the
//! node's). At each threshold (48, 24, 12, 6 hours left, each only when the deadline is longer,
//! and 0) the item's snapshot goes again to its devices with the threshold passed (the desk there
//! tells the holder, else everyone offered it) and an item event to the controller (which tells the
//! instance's responsible user and keeps it in the history). At 24 hours left (only when the
//! deadline is longer) an item not done passes to the responsible user, even when selected or
//! locked: taken from everyone, the responsible holds it; a later result of those it was taken from
//! is recorded (a refusal in the history) and ignored.
//!
//! What passed is kept in the stored item (`Due::passed`), so every threshold fires once,
//! also across restarts. The items' next thresholds are kept in an ordered index beside the
//! runs' timers, refreshed for the items an input changed.

use std::collections::BTreeSet;

use mobiwf_proto::{
    DEFAULT_HOUR_MS, HAND_OVER_HOURS_LEFT, Hold, Holder, ItemDeadline, ItemEvent, UserId, Verdict,
    thresholds_of,
};
use mobiwf_xml_schema::Method;
use mobiwf_xml_schema::limits::MAX_DEADLINE_HOURS;
use serde::{Deserialize, Serialize};

use super::lifecycle::{CopyEvent, NotAllowed};
use super::{Item, ItemCopy, ItemKey};
use crate::run::RunKey;
use crate::{Effect, Engine};

/// A work item's `<deadline>` as its host keeps it (stored with the item).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Due {
    /// The deadline in hours.
    pub hours: u32,
    /// When it is reached, in ms since the epoch.
    pub at_ms: u64,
    /// The length of an hour it counts with, in ms.
    pub hour_ms: u64,
    /// The thresholds (hours left) passed, in the order they passed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passed: Vec<u32>,
    /// The users the item was taken from when it passed to the responsible user: a later
    /// result of theirs is recorded and ignored.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub handed_from: BTreeSet<UserId>,
}

impl Due {
    /// A deadline of `hours` hours of `hour_ms` ms, counted from `ready_ms`.
    pub(crate) fn new(hours: u32, ready_ms: u64, hour_ms: u64) -> Due {
        Due {
            hours,
            at_ms: ready_ms.saturating_add(u64::from(hours).saturating_mul(hour_ms)),
            hour_ms,
            passed: Vec::new(),
            handed_from: BTreeSet::new(),
        }
    }

    /// The next threshold not passed yet (hours left) and when it comes, in ms.
    pub fn next(&self) -> Option<(u32, u64)> {
        thresholds_of(self.hours)
            .find(|t| !self.passed.contains(t))
            .map(|t| {
                let before = u64::from(t).saturating_mul(self.hour_ms);
                (t, self.at_ms.saturating_sub(before))
            })
    }

    /// What devices are sent, with the host's clock `now_ms`.
    pub fn wire(&self, now_ms: u64) -> ItemDeadline {
        ItemDeadline {
            hours: self.hours,
            at_ms: self.at_ms,
            hour_ms: self.hour_ms,
            sent_ms: now_ms,
            passed: self.passed.clone(),
        }
    }
}

impl Engine {
    /// The length of an hour for `<deadline>`s of deployments that do not say (the node's
    /// `--hour-ms`); the default is an hour.
    pub fn set_hour_ms(&mut self, hour_ms: u64) {
        self.hour_ms = hour_ms;
    }

    /// The length of an hour for the deadlines of `instance`.
    fn hour_ms_of(&self, instance: mobiwf_proto::InstanceId) -> u64 {
        let deployed = self.known.get(&instance).and_then(|k| k.hour_ms);
        let own = (self.hour_ms > 0).then_some(self.hour_ms);
        deployed.or(own).unwrap_or(DEFAULT_HOUR_MS).max(1)
    }

    /// The deadline of an item of `activity` offered at `now_ms`, when it has one.
    pub(crate) fn due_for(&self, key: RunKey, activity: mobiwf_proto::ActivityId) -> Option<Due> {
        let hours = self.people_of(key, activity)?.deadline?;
        Some(Due::new(
            hours,
            self.now_ms(),
            self.hour_ms_of(key.instance),
        ))
    }

    /// The earliest threshold of any open item, in ms since the epoch.
    pub(crate) fn next_item_deadline(&self) -> Option<u64> {
        self.item_deadlines.first().map(|(at, _)| *at)
    }

    /// Brings the index up to date with the items changed since the last hand-over to the
    /// store (`dirty_items`).
    pub(crate) fn refresh_item_deadlines(&mut self) {
        let dirty: Vec<ItemKey> = self.host.dirty_items.iter().copied().collect();
        for id in dirty {
            self.index_item(id);
        }
    }

    /// Every item's entry in the index again (after a restore).
    pub(crate) fn rebuild_item_deadlines(&mut self) {
        self.item_deadlines.clear();
        self.item_deadline_of.clear();
        let ids: Vec<ItemKey> = self.host.items.keys().copied().collect();
        for id in ids {
            self.index_item(id);
        }
    }

    pub(crate) fn index_item(&mut self, id: ItemKey) {
        if let Some(at) = self.item_deadline_of.remove(&id) {
            self.item_deadlines.remove(&(at, id));
        }
        // Its clock stopped while its activity is paused (`crate::pause`).
        let stopped = self.pause_of(id.0, id.1).is_some_and(|(_, stops)| stops);
        let next = self
            .host
            .items
            .get(&id)
            .filter(|i| i.is_open() && !stopped)
            .and_then(|i| i.due.as_ref())
            .and_then(Due::next);
        if let Some((_, at)) = next {
            self.item_deadlines.insert((at, id));
            self.item_deadline_of.insert(id, at);
        }
    }

    /// Every item threshold that came by `now_ms`, earliest first, each once.
    pub(crate) fn tick_items(&mut self, now_ms: u64, fx: &mut Vec<Effect>) {
        loop {
            self.refresh_item_deadlines();
            let Some(&(at, id)) = self.item_deadlines.first() else {
                break;
            };
            if at > now_ms {
                break;
            }
            // Out of the index first: whatever the firing does, it is not taken again.
            self.item_deadlines.remove(&(at, id));
            self.item_deadline_of.remove(&id);
            self.pass_threshold(id, now_ms, fx);
        }
    }

    /// The item's next threshold came: passed (stored), its devices get its snapshot, the
    /// controller an event; at 24 hours left it passes to the responsible user.
    fn pass_threshold(&mut self, id: ItemKey, now_ms: u64, fx: &mut Vec<Effect>) {
        let Some(item) = self.host.items.get(&id).filter(|i| i.is_open()) else {
            return;
        };
        let Some((hours_left, _)) = item.due.as_ref().and_then(Due::next) else {
            return;
        };
        let known = self.known.get(&id.0);
        let responsible = known.and_then(|k| k.responsible.clone());
        let interrupted = known.is_some_and(|k| k.interrupted);
        let all = self
            .people_of(item.run_key(), item.activity)
            .is_some_and(|p| p.method == Method::All);
        let before = item.involved();
        let mut after = item.clone();
        let told = if before.held.is_empty() {
            &before.offered
        } else {
            &before.held
        };
        let mut events = vec![ItemEvent::Deadline {
            hours_left,
            told: told.iter().cloned().collect(),
        }];
        let long = after.due.as_ref().is_some_and(|d| d.hours > hours_left);
        let mut handed = false;
        let mut refused = Vec::new();
        if let (HAND_OVER_HOURS_LEFT, true, Some(to)) = (hours_left, long, &responsible) {
            let from = hand_over(&mut after, to, all, now_ms, &mut refused);
            if let Some(due) = after.due.as_mut() {
                due.handed_from.extend(from.iter().cloned());
            }
            if from.is_empty() && after.copies == item.copies {
                // The responsible user held it already.
            } else {
                handed = true;
                events.push(ItemEvent::HandedOver {
                    from,
                    to: to.clone(),
                });
            }
        }
        if let Some(due) = after.due.as_mut() {
            due.passed.push(hours_left);
        }
        after.version += 1;
        let taken = after.taken();
        self.record_copies_refused(after.run_key(), after.activity, refused);
        self.host.items.insert(id, after);
        self.host.dirty_items.insert(id);
        if handed && !interrupted {
            self.follow_item(id, taken, fx);
        }
        self.publish(id, &before, None, events, fx);
    }
}

/// Gives the item to `to`, the responsible user, selected: the item's one copy (its holder and
/// offers replaced), or for method `all` a copy of theirs (the other open copies closed).
/// Returns the users it was taken from. A copy's refusal (a bug) goes to `refused`.
fn hand_over(
    item: &mut Item,
    to: &UserId,
    all: bool,
    now_ms: u64,
    refused: &mut Vec<NotAllowed>,
) -> Vec<UserId> {
    let mut from: BTreeSet<UserId> = item.involved().users();
    from.remove(to);
    let holder = Holder {
        user: to.clone(),
        hold: Hold::Selected,
        since_ms: now_ms,
        grantor: None,
    };
    let why = format!(
        "it passed to the responsible user {to} {HAND_OVER_HOURS_LEFT} hours before its deadline"
    );
    if all {
        let mut theirs = false;
        // Open copies take both `Close` and `HandOver`.
        for copy in item.copies.iter_mut().filter(|c| c.is_open()) {
            if copy.held_by(to) {
                theirs = true;
                continue;
            }
            let close = CopyEvent::Close {
                why: why.clone(),
                at_ms: now_ms,
            };
            copy.apply_allowed(close, refused);
        }
        if !theirs {
            let mut copy = ItemCopy::offered_to(BTreeSet::from([to.clone()]), now_ms);
            copy.apply_allowed(CopyEvent::HandOver { holder }, refused);
            item.copies.push(copy);
        }
    } else {
        if item.copies.is_empty() {
            item.copies
                .push(ItemCopy::offered_to(BTreeSet::new(), now_ms));
        }
        // The one copy of an open item is open.
        if let Some(copy) = item.copies.first_mut() {
            copy.apply_allowed(CopyEvent::HandOver { holder }, refused);
        }
    }
    item.assigned();
    from.into_iter().collect()
}

/// Why a claim of a user the item was taken from at its hand-over is refused, when it is.
pub(crate) fn handed_away(item: &Item, user: &UserId) -> Option<String> {
    let due = item.due.as_ref()?;
    if !due.handed_from.contains(user) || item.involved().users().contains(user) {
        return None;
    }
    let to = item
        .copies
        .iter()
        .filter_map(ItemCopy::holder)
        .map(|h| h.user.to_string())
        .next_back()
        .unwrap_or_else(|| "the responsible user".to_owned());
    Some(format!(
        "no longer available: it passed to {to}, responsible for its instance, \
         {HAND_OVER_HOURS_LEFT} hours before its deadline; your result is recorded and ignored"
    ))
}

/// Moves the item's deadline `hours` hours later (an administrator or the controller only):
/// the thresholds whose time is ahead of `now_ms` again are no longer passed, so they come
/// again (24 hours left: handed over again, which changes nothing while the responsible user
/// holds it); a hand-over that happened stays.
pub(crate) fn extend(item: &mut Item, hours: u32, admin: bool, now_ms: u64) -> Result<(), Verdict> {
    let invalid = |reason: String| Err(Verdict::Invalid { reason });
    if !admin {
        return Err(Verdict::Forbidden {
            reason: "only an administrator or the controller may extend its deadline".to_owned(),
        });
    }
    if !item.is_open() {
        return invalid("it is finished: there is no deadline to extend".to_owned());
    }
    let Some(due) = item.due.as_mut() else {
        return invalid("its activity has no <deadline> to extend".to_owned());
    };
    if hours == 0 || hours > MAX_DEADLINE_HOURS {
        return invalid(format!(
            "extend by 1 to {MAX_DEADLINE_HOURS} hours, not {hours}"
        ));
    }
    due.hours = due.hours.saturating_add(hours);
    due.at_ms = due
        .at_ms
        .saturating_add(u64::from(hours).saturating_mul(due.hour_ms));
    // Passed: what is behind now on the new deadline (also a threshold that did not apply
    // to the shorter one: it is not told late); the rest comes again.
    let (at_ms, hour_ms) = (due.at_ms, due.hour_ms);
    due.passed = thresholds_of(due.hours)
        .filter(|t| at_ms.saturating_sub(u64::from(*t).saturating_mul(hour_ms)) <= now_ms)
        .collect();
    Ok(())
}
