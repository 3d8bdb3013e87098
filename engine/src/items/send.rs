//! What the host sends after a work item changed: to each affected device the item as that
//! device's users see it (`Message::Item`, with the answer to its claim when it made one),
//! and to the controller what happened (`Message::ItemEvents`).
//!
//! Affected devices: those of the users offered or holding a copy before or after the
//! change, and the claimant's. A claim that changed nothing is answered with the item as it
//! stands, at its current version: a device takes an answer whatever the version, and the
//! item's state only when it is not older than the one it has.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mobiwf_proto::{
    Answer, DeviceEntry, ItemEvent, ItemEvents, ItemInfo, ItemStatus, Message, Millis, NodeName,
    UserId,
};

use super::{Involved, Item, ItemKey};
use crate::{Effect, Engine, Target};

/// The claimant's device and the answer it is owed.
pub(crate) struct Reply {
    /// Where the claim came from.
    pub(crate) device: DeviceEntry,
    /// The answer.
    pub(crate) answer: Answer,
}

impl Engine {
    /// Item `id` changed (it involved `before` until now): every affected device gets its
    /// view, and the controller `events` followed by the offers, revocations and loss of
    /// every user the change caused.
    pub(crate) fn publish(
        &self,
        id: ItemKey,
        before: &Involved,
        reply: Option<Reply>,
        mut events: Vec<ItemEvent>,
        fx: &mut Vec<Effect>,
    ) {
        let Some(item) = self.host.items.get(&id) else {
            return;
        };
        let after = item.involved();
        let offered: Vec<UserId> = after.offered.difference(&before.offered).cloned().collect();
        if !offered.is_empty() {
            events.push(ItemEvent::Offered { users: offered });
        }
        let done_by = done_by(item);
        let (was, is) = (before.users(), after.users());
        let revoked: Vec<UserId> = was
            .difference(&is)
            .filter(|u| !done_by.contains(*u))
            .cloned()
            .collect();
        if !revoked.is_empty() {
            events.push(ItemEvent::Revoked { users: revoked });
        }
        if let (Some(why), false) = (&item.unassigned, before.unassigned) {
            events.push(ItemEvent::Unassigned { why: why.clone() });
        }
        let users: BTreeSet<UserId> = was.union(&is).cloned().collect();
        self.send_views(item, &users, reply, fx);
        self.send_events(item, events, fx);
    }

    /// A claim that changed nothing: its answer to the claimant's device (with the item as
    /// it stands), and `events` (a refusal) to the controller.
    pub(crate) fn answer(
        &self,
        id: ItemKey,
        reply: Option<Reply>,
        events: Vec<ItemEvent>,
        fx: &mut Vec<Effect>,
    ) {
        let Some(item) = self.host.items.get(&id) else {
            return;
        };
        self.send_views(item, &BTreeSet::new(), reply, fx);
        self.send_events(item, events, fx);
    }

    /// One `Message::Item` per device of `users`, and to the claimant's.
    pub(super) fn send_views(
        &self,
        item: &Item,
        users: &BTreeSet<UserId>,
        reply: Option<Reply>,
        fx: &mut Vec<Effect>,
    ) {
        let Some(info) = self.info(item) else {
            return;
        };
        let dir = &self.host.directory;
        let mut devices: BTreeMap<NodeName, DeviceEntry> = users
            .iter()
            .filter_map(|u| dir.device_of(u.as_str()))
            .map(|d| (d.name.clone(), d.clone()))
            .collect();
        if let Some(reply) = &reply {
            devices.insert(reply.device.name.clone(), reply.device.clone());
        }
        // Each user the copies name, with their device: looked up once, not per device.
        let home: BTreeMap<&UserId, &NodeName> = item
            .copies
            .iter()
            .flat_map(|c| {
                let done_by = c.done().map(|(by, _)| by);
                c.offered()
                    .iter()
                    .chain(c.holder().map(|h| &h.user))
                    .chain(done_by)
            })
            .filter_map(|u| dir.device_of(u.as_str()).map(|d| (u, &d.name)))
            .collect();
        let offered = item.involved().offered;
        for device in devices.values() {
            let on = |u: &UserId| home.get(u) == Some(&&device.name);
            let open = item.copies.iter().filter(|c| c.is_open());
            let message = Message::Item(mobiwf_proto::ItemSnapshot {
                info: info.clone(),
                version: item.version,
                offered: offered.iter().filter(|u| on(u)).cloned().collect(),
                holders: open
                    .filter_map(|c| c.holder().cloned())
                    .filter(|h| on(&h.user))
                    .collect(),
                status: device_status(item, &on),
                answer: reply
                    .as_ref()
                    .filter(|r| r.device.name == device.name)
                    .map(|r| r.answer.clone()),
            });
            fx.push(Effect::Send {
                to: Target::Partner(device.location.clone()),
                message,
            });
        }
    }

    /// The events of one change to the controller, when there are any.
    fn send_events(&self, item: &Item, events: Vec<ItemEvent>, fx: &mut Vec<Effect>) {
        if events.is_empty() {
            return;
        }
        fx.push(Effect::Send {
            to: Target::Controller,
            message: Message::ItemEvents(ItemEvents {
                instance: item.instance,
                activity: item.activity,
                at_ms: self.now_ms(),
                events,
                pass: Some(self.pass_of(item.instance, item.activity)),
            }),
        });
    }

    /// What the item is, from its activity.
    fn info(&self, item: &Item) -> Option<ItemInfo> {
        let run = self.runs.get(&item.run_key())?;
        let act = run.activity(item.activity)?;
        let pass = run
            .progress(item.activity)
            .map(|p| p.pass)
            .unwrap_or_default();
        let time_out = Duration::from_secs(act.time_out_secs.into());
        let deadline_ms = (act.time_out_secs > 0)
            .then(|| Millis(item.ready_ms).saturating_add(time_out).as_u64());
        Some(ItemInfo {
            instance: item.instance,
            partition: item.partition,
            activity: item.activity,
            name: act.name.clone(),
            description: act.description.clone(),
            kind: act.kind.as_str().to_owned(),
            priority: act.people.priority,
            disconnected: act.people.disconnected,
            ready_ms: item.ready_ms,
            deadline_ms,
            host: self.host.location.clone(),
            due: item.due.as_ref().map(|d| Box::new(d.wire(self.now_ms()))),
            application: act.application.as_ref().map(|application| {
                let doc = self.runs.get(&item.run_key()).map(|r| r.doc());
                let writes = act
                    .data
                    .writes
                    .iter()
                    .filter_map(|name| Some((name.clone(), doc?.data_kind(name)?)))
                    .collect();
                Box::new(mobiwf_proto::ItemApplication {
                    application: application.clone(),
                    writes,
                })
            }),
            paused_ms: self
                .pause_of(item.instance, item.activity)
                .map(|(since, _)| since),
            pass,
        })
    }
}

/// The users who did a copy.
fn done_by(item: &Item) -> BTreeSet<UserId> {
    item.copies
        .iter()
        .filter_map(|c| c.done().map(|(by, _)| by.clone()))
        .collect()
}

/// How the item stands for the users `on` a device: open while one of them is offered or
/// holds an open copy; else done when one of them did a copy; else as the item stands (open
/// for users it was taken from, done or closed once the activity ended).
fn device_status(item: &Item, on: &impl Fn(&UserId) -> bool) -> ItemStatus {
    let theirs = |c: &&super::ItemCopy| {
        c.offered().iter().any(on) || c.holder().is_some_and(|h| on(&h.user))
    };
    if item
        .copies
        .iter()
        .filter(|c| c.is_open())
        .any(|c| theirs(&c))
    {
        return ItemStatus::Open;
    }
    item.copies
        .iter()
        .find(|c| c.done().is_some_and(|(by, _)| on(by)))
        .map_or_else(|| item.status.clone(), super::ItemCopy::status)
}
