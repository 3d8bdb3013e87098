//! Work item events from their hosts: a host tells the controller what happened to the work item of
//! a manual activity (offered, unassigned, acted on, a claim refused, revoked, a deadline's
//! threshold, the hand-over to the responsible user, who is told of both). Each event goes into the
//! instance's history, and the instance keeps a summary of each item for `status`: who it is
//! offered to, who holds it, who finished it. A host's answer to a claim of the controller's own
//! (an operator's insert, remove or delegate) is recorded too.

use mobiwf_proto::{
    ActivityId, ActivityState, Answer, Hold, Holder, ItemAction, ItemEvent, ItemEvents, ItemInfo,
    NodeId, PartitionId, Pass,
};
use mobiwf_xml_schema::UserId;
use serde::{Deserialize, Serialize};

use crate::history::{Event, Label};
use crate::recovery::{label, view};
use crate::{ActivityEvent, Applied, Book, BookError, Instance, check_sender};

/// A work item as the controller knows it from its host's events.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemSummary {
    /// The users it is offered to and who do not hold it, by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offered: Vec<UserId>,
    /// Who holds it (a copy each, for method `all`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<Holder>,
    /// Who finished it (each copy's user, for method `all`), by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub done_by: Vec<UserId>,
    /// Why nobody can be offered it, while nobody can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unassigned: Option<String>,
    /// When its host last changed it, ms since the epoch.
    pub last_change_ms: u64,
}

impl Book {
    /// A host says what happened to the work item of `activity`. Events about an instance the
    /// controller does not have are ignored (the message was valid; there is nothing to
    /// record them in); only the node that runs the activity's partition speaks of it.
    pub(crate) fn item_events(
        &mut self,
        peer: &NodeId,
        told: &ItemEvents,
    ) -> Result<Applied, BookError> {
        let (instance, activity, at_ms) = (told.instance, told.activity, told.at_ms);
        let Some(inst) = self.instances.get_mut(&instance) else {
            return Ok(Applied::default());
        };
        let partition = view(inst, activity)
            .and_then(|a| a.partition)
            .unwrap_or(PartitionId(0));
        check_sender(inst, peer, partition)?;
        let node = view(inst, activity).and_then(|a| a.node.clone());
        // Events of an item of an earlier pass than the activity's here, arriving late, are
        // history under their own pass; they change nothing of the current pass's item.
        let now = view(inst, activity).map(|a| a.pass).unwrap_or_default();
        let pass = told.pass.unwrap_or(now);
        let stale = pass < now;
        let mut notices = Vec::new();
        for event in &told.events {
            if let Some(notice) = responsible_notice(inst, activity, event).filter(|_| !stale) {
                notices.push(notice);
            }
            let what = history_event(inst, activity, pass, event);
            self.history
                .push(instance, at_ms, Some(activity), node.as_ref(), what);
            // A refused claim changes nothing of the item.
            if !stale && !matches!(event, ItemEvent::Refused { .. }) {
                let item = inst.items.entry(activity).or_default();
                summarise(item, event, at_ms);
                item.last_change_ms = item.last_change_ms.max(at_ms);
                self.dirty_instances.insert(instance);
            }
        }
        if !stale && follow_item(inst, activity) {
            self.dirty_instances.insert(instance);
        }
        let mut effects = Vec::new();
        for (kind, text) in notices {
            self.notice(at_ms, instance, Some(activity), kind, text, &mut effects);
        }
        Ok(Applied {
            effects,
            instance: None,
        })
    }

    /// A host sent a work item's state to the controller: it answers one of the controller's
    /// claims (recorded); without an answer, or about an instance the controller does not
    /// have, there is nothing to keep.
    pub(crate) fn answered(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        info: &ItemInfo,
        answer: Option<Answer>,
    ) -> Result<Applied, BookError> {
        let (Some(answer), Some(inst)) = (answer, self.instances.get(&info.instance)) else {
            return Ok(Applied::default());
        };
        check_sender(inst, peer, info.partition)?;
        let what = Event::AdminAnswered {
            activity: label(inst, info.activity),
            user: answer.user,
            request: answer.request,
            verdict: answer.verdict,
        };
        let node = view(inst, info.activity).and_then(|a| a.node.clone());
        self.history.push(
            info.instance,
            now_ms,
            Some(info.activity),
            node.as_ref(),
            what,
        );
        Ok(Applied::default())
    }
}

/// The activity goes with its item, as its host decided: running while someone holds a copy
/// or did one, ready while it is only offered (until its node reports its end).
/// True when the activity's state changed.
fn follow_item(inst: &mut Instance, activity: ActivityId) -> bool {
    let Some(item) = inst.items.get(&activity) else {
        return false;
    };
    let state = if !item.holders.is_empty() || !item.done_by.is_empty() {
        ActivityState::Running
    } else if !item.offered.is_empty() {
        ActivityState::Ready
    } else {
        return false;
    };
    let Some(a) = inst.activities.iter_mut().find(|a| a.id == activity) else {
        return false;
    };
    // A word the lifecycle does not take (an item event after the end) changes nothing.
    !a.state().is_final()
        && a.state() != state
        && a.step(&ActivityEvent::NodeSays {
            state,
            by_operator: false,
        })
        .is_ok()
}

/// A host's item event of the item offered in pass `pass` as a history event.
fn history_event(inst: &Instance, activity: ActivityId, pass: Pass, event: &ItemEvent) -> Event {
    let activity = Label {
        pass,
        ..label(inst, activity)
    };
    match event.clone() {
        ItemEvent::Offered { users } => Event::ItemOffered { activity, users },
        ItemEvent::Unassigned { why } => Event::ItemUnassigned { activity, why },
        ItemEvent::Acted {
            user,
            action,
            offline_ms,
        } => Event::ItemActed {
            activity,
            user,
            action,
            offline_ms,
        },
        ItemEvent::Refused {
            user,
            action,
            reason,
        } => Event::ItemRefused {
            activity,
            user,
            action,
            reason,
        },
        ItemEvent::Revoked { users } => Event::ItemRevoked { activity, users },
        ItemEvent::Deadline { hours_left, told } => Event::ItemDeadline {
            activity,
            hours_left,
            told,
        },
        ItemEvent::HandedOver { from, to } => Event::ItemHandedOver { activity, from, to },
    }
}

/// The kind of the responsible user's notice of a deadline's threshold.
pub(crate) const DEADLINE: &str = "deadline";
/// The kind of the responsible user's notice that an item's deadline is reached: they decide.
pub(crate) const DEADLINE_REACHED: &str = "deadline_reached";
/// The kind of the responsible user's notice that an item passed to them.
pub(crate) const HANDED_OVER: &str = "handed_over";

/// What the instance's responsible user is told of an item event: each threshold of a
/// deadline (at 0 they decide: interrupt, cancel, or complete the item they hold), and the
/// hand-over to them.
fn responsible_notice(
    inst: &Instance,
    activity: ActivityId,
    event: &ItemEvent,
) -> Option<(&'static str, String)> {
    let what = crate::recovery::label_text(inst, activity);
    match event {
        ItemEvent::Deadline { hours_left: 0, .. } => Some((
            DEADLINE_REACHED,
            format!(
                "the deadline of {what} of instance {} is reached; as its responsible user you decide: complete it, or interrupt or cancel the instance",
                inst.id
            ),
        )),
        // The responsible user holding the item is told by their own device already.
        ItemEvent::Deadline { told, .. }
            if inst.responsible.as_ref().is_some_and(|r| told.contains(r)) =>
        {
            None
        }
        ItemEvent::Deadline { hours_left, .. } => Some((
            DEADLINE,
            format!(
                "{hours_left} hours are left before the deadline of {what} of instance {}",
                inst.id
            ),
        )),
        ItemEvent::HandedOver { from, .. } => Some((
            HANDED_OVER,
            format!(
                "{what} of instance {} passed to you, its responsible user, {} hours before its deadline{}; it is on your worklist, selected",
                inst.id,
                mobiwf_proto::HAND_OVER_HOURS_LEFT,
                if from.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (taken from {})",
                        from.iter()
                            .map(UserId::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            ),
        )),
        _ => None,
    }
}

/// Applies an event to an item's summary.
fn summarise(item: &mut ItemSummary, event: &ItemEvent, at_ms: u64) {
    match event {
        ItemEvent::Offered { users } => {
            item.unassigned = None;
            for u in users {
                if !item.holders.iter().any(|h| &h.user == u) {
                    add(&mut item.offered, u);
                }
            }
        }
        ItemEvent::Unassigned { why } => item.unassigned = Some(why.clone()),
        ItemEvent::Acted { user, action, .. } => acted(item, user, action, at_ms),
        ItemEvent::Refused { .. } | ItemEvent::Deadline { .. } => {}
        ItemEvent::HandedOver { from, to } => {
            item.offered.retain(|u| !from.contains(u) && u != to);
            item.holders
                .retain(|h| !from.contains(&h.user) && &h.user != to);
            item.holders.push(Holder {
                user: to.clone(),
                hold: Hold::Selected,
                since_ms: at_ms,
                grantor: None,
            });
        }
        ItemEvent::Revoked { users } => {
            item.offered.retain(|u| !users.contains(u));
            item.holders.retain(|h| !users.contains(&h.user));
        }
    }
}

/// What a user's action does to an item's summary.
fn acted(item: &mut ItemSummary, user: &UserId, action: &ItemAction, at_ms: u64) {
    let hold = |item: &mut ItemSummary, user: &UserId, hold: Hold, grantor: Option<UserId>| {
        item.offered.retain(|u| u != user);
        item.holders.retain(|h| &h.user != user);
        item.holders.push(Holder {
            user: user.clone(),
            hold,
            since_ms: at_ms,
            grantor,
        });
    };
    match action {
        ItemAction::Select => hold(item, user, Hold::Selected, None),
        ItemAction::Lock => hold(item, user, Hold::Locked, None),
        ItemAction::Release | ItemAction::Unlock => item.holders.retain(|h| &h.user != user),
        ItemAction::Complete { .. } => {
            item.holders.retain(|h| &h.user != user);
            add(&mut item.done_by, user);
        }
        // The host gives a delegated item to its new holder selected (a lock is for its
        // holder's own work without the network), whoever held it before.
        ItemAction::Delegate { to } => {
            item.holders.retain(|h| &h.user != user);
            hold(item, to, Hold::Selected, Some(user.clone()));
        }
        // Offered to them too, unless the item is held (by anyone): the host offers a held
        // copy to nobody; they are only in its audience.
        ItemAction::Insert => {
            if item.holders.is_empty() {
                add(&mut item.offered, user);
            }
        }
        ItemAction::Remove => {
            item.offered.retain(|u| u != user);
            item.holders.retain(|h| &h.user != user);
        }
        // Who holds or is offered it does not change (a pause keeps its holder).
        ItemAction::Extend { .. } | ItemAction::Pause | ItemAction::Resume => {}
    }
}

/// Adds `user` to a list kept in id order, once.
fn add(list: &mut Vec<UserId>, user: &UserId) {
    if let Err(i) = list.binary_search(user) {
        list.insert(i, user.clone());
    }
}
