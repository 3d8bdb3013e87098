//! A host's snapshot of an item for this device: it replaces the desk's when newer (messages
//! may arrive out of order), tells each user of this device what changed for them, and
//! carries the answer to one of the desk's claims (always taken, even on an older snapshot).
//!
//! Notices, per user of the snapshots: offered (newly on the worklist); delegated (held now,
//! by someone else's doing); revoked (off the worklist while the item is still open, or done
//! by someone else: "no longer available"); closed (the activity ended otherwise). A user's
//! own doing causes none: a claim of theirs this snapshot answers "done", or one still under
//! way (its answer tells them, and a refused one gives a "refused" notice, for the user whose
//! API call may no longer wait for it).

use std::collections::BTreeSet;

use mobiwf_proto::{
    ActivityId, Answer, Holder, InstanceId, ItemAnswer, ItemStatus, Location, NodeId, Notice,
    UserId, Verdict,
};

use super::{Applied, Desk, DeskEffect, DeskItem, ItemKey, ItemSnapshot, MAX_FINISHED_ITEMS};

/// Where an item is for one user.
#[derive(Debug, Clone, Copy)]
enum Place<'a> {
    Offered,
    Held(&'a Holder),
}

impl Desk {
    pub(super) fn snapshot(&mut self, now_ms: u64, snap: ItemSnapshot) -> Applied {
        let key = (snap.info.instance, snap.info.activity);
        // Only the item's own host speaks for it: a snapshot naming another host (by peer id)
        // for an item this desk knows is ignored, answer and all.
        if self
            .items
            .get(&key)
            .is_some_and(|old| host_key(&old.info.host) != host_key(&snap.info.host))
        {
            return Applied::default();
        }
        let newer = self
            .items
            .get(&key)
            .is_none_or(|old| snap.version > old.version);
        let mut applied = Applied::default();
        let info = snap.info.clone();
        if newer {
            // The users whose own doing the change may be.
            let mut quiet: BTreeSet<UserId> = self
                .pending
                .values()
                .filter(|p| (p.instance, p.activity) == key)
                .map(|p| p.user.clone())
                .collect();
            quiet.extend(
                snap.answer
                    .as_ref()
                    .filter(|a| a.verdict == Verdict::Done)
                    .map(|a| a.user.clone()),
            );
            let new = DeskItem {
                info: snap.info,
                version: snap.version,
                offered: snap.offered,
                holders: snap.holders,
                status: snap.status,
                former: Vec::new(),
                finished_ms: None,
                copy: self.items.get(&key).and_then(|old| old.copy.clone()),
                warned: Vec::new(),
                app_ended: self.items.get(&key).and_then(|old| old.app_ended.clone()),
            };
            let before = self.items.get(&key).cloned();
            self.replace(now_ms, key, new, &quiet);
            if let Some(due) = &info.due {
                self.take_due(now_ms, key, due, &info.host, before.as_ref());
            }
        }
        if let Some(answer) = snap.answer {
            let label = super::label(&info);
            self.answer(
                now_ms,
                (info.instance, info.activity, &label),
                answer,
                &mut applied,
            );
        }
        applied
    }

    fn replace(&mut self, now_ms: u64, key: ItemKey, mut new: DeskItem, quiet: &BTreeSet<UserId>) {
        let old = self.items.get(&key);
        let told = notices(old, &new, quiet, now_ms);
        let (before, after) = (users(old), users(Some(&new)));
        let mut former: BTreeSet<UserId> = old
            .map(|o| o.former.iter().cloned().collect())
            .unwrap_or_default();
        former.extend(before.difference(&after).cloned());
        new.former = former.difference(&after).cloned().collect();
        // An open item none of this device's users is offered or holds any more is finished
        // here too: its host tells this device no more of it (unless it is offered again),
        // so it is forgotten like a done one, after `MAX_FINISHED_ITEMS` others.
        let involved = !after.is_empty();
        new.finished_ms = match (&new.status, involved) {
            (ItemStatus::Open, true) => None,
            _ => Some(old.and_then(|o| o.finished_ms).unwrap_or(now_ms)),
        };
        if new.finished_ms.is_some() {
            // Off the list: its copy for offline work goes with it.
            new.copy = None;
        }
        if let Some(at) = old.and_then(|o| o.finished_ms) {
            self.finished.remove(&(at, key));
        }
        if let Some(at) = new.finished_ms {
            self.finished.insert((at, key));
        }
        self.items.insert(key, new);
        self.dirty.item_written(key);
        for notice in told {
            self.push_notice(notice);
        }
        self.forget_finished(MAX_FINISHED_ITEMS);
    }

    /// Forgets the longest finished items beyond `keep`.
    pub(super) fn forget_finished(&mut self, keep: usize) {
        while self.finished.len() > keep {
            let Some((_, key)) = self.finished.pop_first() else {
                break;
            };
            self.items.remove(&key);
            self.dirty.item_gone(key);
        }
    }

    /// The host's answer to a claim on something that is no work item there.
    pub(super) fn answer_without_item(&mut self, now_ms: u64, answered: ItemAnswer) -> Applied {
        let ItemAnswer {
            instance,
            activity,
            answer,
        } = answered;
        let mut applied = Applied::default();
        let label = format!("activity {activity} of instance {instance}");
        self.answer(now_ms, (instance, activity, &label), answer, &mut applied);
        applied
    }

    /// The host's answer to a claim under way: the waiting API call is woken, a refusal
    /// noticed. An answer to no claim under way (a repeat of one already taken), or one whose
    /// item or user is not the claim's, is ignored.
    pub(crate) fn answer(
        &mut self,
        now_ms: u64,
        (instance, activity, label): (InstanceId, ActivityId, &str),
        answer: Answer,
        applied: &mut Applied,
    ) {
        let matches = self.pending.get(&answer.request).is_some_and(|claim| {
            (claim.instance, claim.activity) == (instance, activity) && claim.user == answer.user
        });
        if !matches {
            return;
        }
        let Some(claim) = self.pending.remove(&answer.request) else {
            return;
        };
        self.dirty.meta = true;
        if let Some(reason) = refusal(&answer.verdict) {
            self.push_notice(Notice {
                user: claim.user.clone(),
                instance,
                activity: Some(activity),
                kind: "refused".to_owned(),
                text: format!(
                    "your {} of {label} was refused: {reason}",
                    claim.action.as_str()
                ),
                at_ms: now_ms,
            });
        }
        applied.effects.push(DeskEffect::Answered {
            request: answer.request,
            user: answer.user,
            verdict: answer.verdict,
        });
    }
}

fn refusal(verdict: &Verdict) -> Option<&str> {
    match verdict {
        Verdict::Done => None,
        Verdict::Unavailable { reason }
        | Verdict::Forbidden { reason }
        | Verdict::Invalid { reason } => Some(reason),
    }
}

/// The users an item is on the worklist of (offered or held), while it is open.
fn users(item: Option<&DeskItem>) -> BTreeSet<UserId> {
    item.filter(|i| i.is_open())
        .map(|i| {
            i.offered
                .iter()
                .cloned()
                .chain(i.holders.iter().map(|h| h.user.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn place<'a>(item: Option<&'a DeskItem>, user: &UserId) -> Option<Place<'a>> {
    let item = item.filter(|i| i.is_open())?;
    if let Some(h) = item.holders.iter().find(|h| &h.user == user) {
        return Some(Place::Held(h));
    }
    item.offered.contains(user).then_some(Place::Offered)
}

/// What the change from `old` to `new` tells each user of either.
fn notices(
    old: Option<&DeskItem>,
    new: &DeskItem,
    quiet: &BTreeSet<UserId>,
    at_ms: u64,
) -> Vec<Notice> {
    if old.is_some_and(|o| !o.is_open()) {
        // It ended before; nothing more to tell.
        return Vec::new();
    }
    let label = super::label(&new.info);
    let mut everyone = users(old);
    everyone.extend(new.offered.iter().cloned());
    everyone.extend(new.holders.iter().map(|h| h.user.clone()));
    let mut out = Vec::new();
    for user in &everyone {
        let mine = quiet.contains(user);
        let told = match (&new.status, place(old, user), place(Some(new), user)) {
            (ItemStatus::Open, None, Some(Place::Offered)) => {
                Some(("offered", format!("{label} is offered to you")))
            }
            (ItemStatus::Open, None | Some(Place::Offered), Some(Place::Held(h))) if !mine => {
                Some(handed(&label, h))
            }
            (ItemStatus::Open, Some(_), None) if !mine => {
                Some(("revoked", revoked(&label, new, user)))
            }
            (ItemStatus::Done { by, .. }, Some(_), _) if by != user && !mine => Some((
                "revoked",
                format!("{label} is no longer available: done by {by}"),
            )),
            (ItemStatus::Closed { why }, _, _) => {
                Some(("closed", format!("{label} was closed: {why}")))
            }
            _ => None,
        };
        if let Some((kind, text)) = told {
            out.push(Notice {
                user: user.clone(),
                instance: new.info.instance,
                activity: Some(new.info.activity),
                kind: kind.to_owned(),
                text,
                at_ms,
            });
        }
    }
    out
}

fn handed(label: &str, h: &Holder) -> (&'static str, String) {
    let how = match h.hold {
        mobiwf_proto::Hold::Selected => "selected",
        mobiwf_proto::Hold::Locked => "locked",
    };
    match &h.grantor {
        Some(grantor) => (
            "delegated",
            format!("{label} was delegated to you by {grantor} ({how})"),
        ),
        None => ("assigned", format!("{label} is yours now ({how})")),
    }
}

/// A host's identity, whatever address it listens at: the peer id its address names (for an
/// address that names none, as older records may hold, its whole text). The desk keeps the
/// hosts' clock offsets under it, as it did before addresses were typed, but for two spellings
/// libp2p never prints (an `/ipfs/` peer, a relay circuit without its target), keyed otherwise
/// then: such a host's offset is learnt again from its next item.
pub(super) fn host_key(location: &Location) -> &str {
    location.peer().map_or(location.as_str(), NodeId::as_str)
}

fn revoked(label: &str, new: &DeskItem, user: &UserId) -> String {
    match new.holders.iter().find(|h| &h.user != user) {
        Some(h) => format!("{label} is no longer available: {} holds it", h.user),
        None => format!(
            "{label} is no longer available: someone else took it, or it was taken off your \
             worklist"
        ),
    }
}
