//! A user acts on a work item (`Input::Claim`): the host decides, once and durably, on a
//! copy of the item as it stands. Select and lock: the first wins, the others are told the
//! item is "no longer available"; release and unlock: offered again to its audience;
//! complete: only its holder; delegate: its holder, an administrator or the controller;
//! insert and remove: an administrator or the controller.
//!
//! The decision works on a copy of the item: a refusal leaves the item as it was.
//!
//! A device's claim names the offer it acted on (`offered_ms`, the item's `ready_ms` there):
//! one made on an earlier offer (the activity was rerun since) is "no longer available", and a
//! repeat of a completion is done only when it says the same.

use std::collections::BTreeSet;

use mobiwf_people::Directory;
use mobiwf_proto::{
    ActivityId, Answer, Hold, Holder, InstanceId, ItemAction, ItemEvent, ItemStatus, NodeId,
    UserId, Verdict,
};
use mobiwf_xml_schema::{Method, People, flag_problem};

use super::assign::available;
use super::send::Reply;
use super::status::{gone, overall};
use super::{Involved, Item, ItemCopy};
use crate::lifecycle::{Event, Life};
use crate::{Effect, Engine, Refusal};

/// Why work is not taken up while its instance is interrupted.
pub(crate) const INTERRUPTED: &str =
    "its instance is interrupted: nothing new starts until an operator resumes it";

/// A user's action on a work item, as [`crate::Input::Claim`] says it.
pub(crate) struct Claim {
    pub(crate) instance: InstanceId,
    pub(crate) activity: ActivityId,
    pub(crate) user: UserId,
    pub(crate) action: ItemAction,
    pub(crate) request: u64,
    /// The device it came from; `None` from the controller.
    pub(crate) from: Option<NodeId>,
    /// The files a completion names whose content is not here, and where to fetch them.
    pub(crate) missing: Vec<crate::data::Missing>,
    /// When the user acted, when they did it disconnected.
    pub(crate) offline_ms: Option<u64>,
    /// Which offer of the item the user acted on (`Item::ready_ms` as their device saw it).
    pub(crate) offered_ms: Option<u64>,
}

/// What the host decided.
enum Decided {
    /// The item changed.
    Changed,
    /// Nothing to do: the claim was granted before (a repeat).
    Unchanged,
    /// Refused, with the answer.
    Refused(Verdict),
}

/// What a decision needs to know.
struct Ctx<'a> {
    dir: &'a Directory,
    people: &'a People,
    user: &'a UserId,
    /// The controller sent the claim, or the user is an administrator.
    admin: bool,
    now_ms: u64,
}

impl Engine {
    /// Decides on a claim. When there is no such work item here (no such activity, no people
    /// extensions, not started), a device gets a `Message::Answer` saying so and the
    /// controller an item event; refused (the node replies so to the sender) only when the
    /// sending node is not a registered device, or the controller names an activity this node
    /// does not run. Every other verdict is the answer sent to the claimant's device, and told
    /// to the controller when it is a refusal.
    pub(crate) fn claim(&mut self, claim: Claim, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        let (people, device) = match self.claimed(&claim) {
            Ok(found) => found,
            Err(refusal @ (Refusal::NotAnItem { .. } | Refusal::UnknownActivity { .. })) => {
                return self.no_item(&claim, refusal, fx);
            }
            Err(refusal) => return Err(refusal),
        };
        let id = (claim.instance, claim.activity);
        let Some(item) = self.host.items.get(&id) else {
            return Ok(());
        };
        let dir = &self.host.directory;
        let ctx = Ctx {
            dir,
            people: &people,
            user: &claim.user,
            admin: claim.from.is_none() || dir.is_administrator(claim.user.as_str()),
            now_ms: self.now_ms(),
        };
        let before = item.involved();
        let mut after = item.clone();
        let decided = self.judge(&claim, item, &ctx, &mut after);
        let reply = |verdict: Verdict| {
            device.clone().map(|device| Reply {
                device,
                answer: Answer {
                    user: claim.user.clone(),
                    request: claim.request,
                    verdict,
                },
            })
        };
        match decided {
            Decided::Refused(verdict) => {
                let event = ItemEvent::Refused {
                    user: claim.user.clone(),
                    action: claim.action.as_str().to_owned(),
                    reason: reason_of(&verdict),
                };
                self.answer(id, reply(verdict), vec![event], fx);
            }
            Decided::Unchanged => self.answer(id, reply(Verdict::Done), Vec::new(), fx),
            Decided::Changed => {
                let reply = reply(Verdict::Done);
                self.fetch_claimed(&claim, fx);
                self.commit_claim(&claim, &before, after, reply, fx);
            }
        }
        Ok(())
    }

    /// What the host decides on a claim about `item`: refused (the claimant's device is not
    /// theirs, what they write does not fit, the item was handed away from them, or taking it
    /// up while the instance is interrupted), or `decide`'s verdict with the change made to
    /// `after`.
    fn judge(&self, claim: &Claim, item: &Item, ctx: &Ctx, after: &mut Item) -> Decided {
        let decided = match (&claim.from, self.claimed_writes(claim)) {
            (Some(node), _) if !self.host.is_device_of(&claim.user, node) => {
                Decided::Refused(Verdict::Forbidden {
                    reason: format!("{}'s worklist is not on this device", claim.user),
                })
            }
            (_, Err(reason)) => Decided::Refused(Verdict::Invalid { reason }),
            // Acted on an earlier offer of it (its activity was rerun since): that item is gone.
            (Some(_), _) if claim.offered_ms.is_some_and(|at| at != item.ready_ms) => {
                Decided::Refused(Verdict::Unavailable {
                    reason: "no longer available: it was offered again since you acted on it"
                        .to_owned(),
                })
            }
            (Some(_), _) if let Some(reason) = super::handed_away(item, &claim.user) => {
                Decided::Refused(Verdict::Unavailable { reason })
            }
            (_, Ok(written)) => {
                let decided = decide(ctx, after, &claim.action);
                if matches!(decided, Decided::Changed) {
                    super::written::note_written(after, &claim.user, written);
                }
                decided
            }
        };
        // Taking up work that nobody had taken starts its activity: not while an operator
        // holds the instance.
        let interrupted = self
            .known
            .get(&claim.instance)
            .is_some_and(|k| k.interrupted);
        match decided {
            Decided::Changed if interrupted && !item.taken() && after.taken() => {
                Decided::Refused(Verdict::Invalid {
                    reason: INTERRUPTED.to_owned(),
                })
            }
            other => other,
        }
    }

    /// A granted claim changed the item (to `after`): it is kept and published; when it
    /// finished the last open copy, the activity ends.
    fn commit_claim(
        &mut self,
        claim: &Claim,
        before: &Involved,
        mut after: Item,
        reply: Option<Reply>,
        fx: &mut Vec<Effect>,
    ) {
        let id = after.key();
        // It ends when its last open copy is done; when every copy was taken off its users'
        // worklists instead, it waits, unassigned, for an insert or a newer directory.
        let ends = after.is_open() && !after.any_open_copy() && after.any_done_copy();
        if ends {
            after.status = overall(&after);
        }
        let (user, action) = (&claim.user, claim.action.as_str());
        after.settle(|| format!("nobody left to offer it to after {user}'s {action}"));
        after.version += 1;
        let taken = after.taken();
        self.host.items.insert(id, after);
        self.host.dirty_items.insert(id);
        self.follow_item(id, taken, fx);
        let acted = ItemEvent::Acted {
            user: claim.user.clone(),
            // Told to the controller: without the values, which never pass through it.
            action: claim.action.without_data(),
            offline_ms: claim.offline_ms,
        };
        self.publish(id, before, reply, vec![acted], fx);
        if ends {
            self.finish_item(id, fx);
        }
    }

    /// The activity of a work item goes with it: running once someone took it up, ready
    /// (offered) again when its holder gave it back; then what waits on its state (a rule
    /// in the same partition) is looked at again.
    pub(super) fn follow_item(
        &mut self,
        (instance, activity): super::ItemKey,
        taken: bool,
        fx: &mut Vec<Effect>,
    ) {
        let Ok(key) = self.run_of(instance, activity) else {
            return;
        };
        let life = self.runs.get(&key).and_then(|r| r.life(activity));
        let moved = match (life, taken) {
            (Some(Life::Ready), true) => self.step(key, activity, Event::Start),
            (Some(Life::Running { .. }), false) => self.step(key, activity, Event::Return),
            _ => false,
        };
        if moved {
            self.advance(key, fx);
        }
    }
}

/// The decision on one action.
fn decide(ctx: &Ctx, item: &mut Item, action: &ItemAction) -> Decided {
    match action {
        ItemAction::Select => take(ctx, item, Hold::Selected),
        ItemAction::Lock => take(ctx, item, Hold::Locked),
        ItemAction::Release => give_back(ctx, item, Hold::Selected),
        ItemAction::Unlock => give_back(ctx, item, Hold::Locked),
        ItemAction::Complete {
            succeeded,
            detail,
            flag,
            ..
        } => {
            if let Some(problem) = flag.as_deref().and_then(flag_problem) {
                return invalid(&problem);
            }
            complete(ctx, item, *succeeded, detail.clone(), flag.clone())
        }
        ItemAction::Delegate { to } => delegate(ctx, item, to),
        ItemAction::Insert => insert(ctx, item),
        ItemAction::Remove => remove(ctx, item),
        ItemAction::Extend { hours } => {
            match super::deadline::extend(item, *hours, ctx.admin, ctx.now_ms) {
                Ok(()) => Decided::Changed,
                Err(verdict) => Decided::Refused(verdict),
            }
        }
    }
}

/// Select or lock: the first claim on an offered copy wins.
fn take(ctx: &Ctx, item: &mut Item, hold: Hold) -> Decided {
    if hold == Hold::Locked && !ctx.people.disconnected {
        return invalid(
            "it cannot be locked: its activity is not marked <disconnected>true</disconnected>; \
             select it instead",
        );
    }
    if let Some(verdict) = gone(&item.status) {
        return Decided::Refused(verdict);
    }
    let user = ctx.user;
    let Some(copy) = copy_of(ctx, item).and_then(|i| item.copies.get_mut(i)) else {
        return forbidden("it is not offered to you");
    };
    if let Some(verdict) = gone(&copy.status) {
        return Decided::Refused(verdict);
    }
    if let Some(h) = &copy.holder {
        return match (&h.user == user, h.hold == hold) {
            (true, true) => Decided::Unchanged,
            (true, false) => invalid(&format!(
                "you hold it {}: {} it first",
                held_word(h.hold),
                undo_word(h.hold)
            )),
            (false, _) => Decided::Refused(Verdict::Unavailable {
                reason: format!("no longer available: {} {} it", h.user, held_word(h.hold)),
            }),
        };
    }
    if !copy.offered.contains(user) {
        return forbidden("it is not offered to you");
    }
    if ctx.dir.user(user.as_str()).is_some_and(|u| u.on_leave) {
        return forbidden("you are on leave");
    }
    copy.holder = Some(Holder {
        user: user.clone(),
        hold,
        since_ms: ctx.now_ms,
        grantor: None,
    });
    copy.offered.clear();
    Decided::Changed
}

/// Release or unlock: only the holder, with the matching hold; offered again.
fn give_back(ctx: &Ctx, item: &mut Item, hold: Hold) -> Decided {
    let Some(copy) = item.copies.iter_mut().find(|c| c.held_by(ctx.user)) else {
        let verdict = gone(&item.status).unwrap_or(Verdict::Forbidden {
            reason: "you do not hold it".to_owned(),
        });
        return Decided::Refused(verdict);
    };
    let held = copy.holder.as_ref().map_or(hold, |h| h.hold);
    if held != hold {
        return invalid(&format!(
            "it is {}: {} it instead",
            held_word(held),
            undo_word(held)
        ));
    }
    copy.holder = None;
    reoffer(ctx, copy);
    Decided::Changed
}

/// Complete: only the holder of a held copy.
fn complete(
    ctx: &Ctx,
    item: &mut Item,
    succeeded: bool,
    detail: Option<String>,
    flag: Option<String>,
) -> Decided {
    let user = ctx.user;
    let Some(copy) = item.copies.iter_mut().find(|c| c.held_by(user)) else {
        let did = item.copies.iter().find_map(|c| match &c.status {
            ItemStatus::Done { by, succeeded } if by == user => Some(*succeeded),
            _ => None,
        });
        // The same completion again (a retry) is done; another outcome is not taken.
        match did {
            Some(was) if was == succeeded => return Decided::Unchanged,
            Some(was) => {
                let said = |ok: bool| if ok { "succeeded" } else { "failed" };
                return forbidden(&format!(
                    "you completed it already as {}; it cannot be completed again as {}",
                    said(was),
                    said(succeeded)
                ));
            }
            None => {}
        }
        if let Some(verdict) = gone(&item.status) {
            return Decided::Refused(verdict);
        }
        let copy = copy_of(ctx, item).and_then(|i| item.copies.get(i));
        return match copy.and_then(|c| c.holder.as_ref()) {
            Some(h) => forbidden(&format!(
                "only its holder completes it, and {} holds it",
                h.user
            )),
            None if copy.is_some_and(|c| c.offered.contains(user)) => {
                invalid("select (or lock) it first: only its holder completes it")
            }
            None => forbidden("it is not offered to you: only its holder completes it"),
        };
    };
    copy.status = ItemStatus::Done {
        by: user.clone(),
        succeeded,
    };
    copy.ended_ms = Some(ctx.now_ms);
    copy.detail = detail;
    copy.flag = flag;
    copy.offered.clear();
    Decided::Changed
}

/// Delegate: the holder (their copy), an administrator or the controller (the copy of an
/// item that has one) hands it to `to`, who then holds it selected.
fn delegate(ctx: &Ctx, item: &mut Item, to: &UserId) -> Decided {
    if let Some(verdict) = gone(&item.status) {
        return Decided::Refused(verdict);
    }
    let all = ctx.people.method == Method::All;
    let index = match item.copies.iter().position(|c| c.held_by(ctx.user)) {
        Some(i) => i,
        None if !ctx.admin => {
            return forbidden(
                "only its holder, an administrator or the controller may delegate it",
            );
        }
        None if all => {
            return invalid(
                "each user has a copy of their own (method all): its holder delegates it, or \
                 an administrator removes and inserts users",
            );
        }
        None => one_copy(item),
    };
    if let Err(verdict) = super::eligible::may_be_given(ctx.dir, to) {
        return Decided::Refused(verdict);
    }
    let has_copy = item
        .copies
        .iter()
        .enumerate()
        .any(|(i, c)| i != index && c.is_open() && c.concerns(to));
    let Some(copy) = item.copies.get_mut(index) else {
        return forbidden("it is not offered to you");
    };
    if copy.held_by(to) {
        return invalid(&format!("{to} already holds it"));
    }
    if all && has_copy {
        return invalid(&format!("{to} already has a copy of it"));
    }
    copy.holder = Some(Holder {
        user: to.clone(),
        hold: Hold::Selected,
        since_ms: ctx.now_ms,
        grantor: Some(ctx.user.clone()),
    });
    copy.offered.clear();
    copy.audience.insert(to.clone());
    Decided::Changed
}

/// Insert: the claim's user gets the item on their worklist (their own copy, for method
/// `all`); offered to them unless it is held.
fn insert(ctx: &Ctx, item: &mut Item) -> Decided {
    if !ctx.admin {
        return forbidden("only an administrator or the controller may put it on a worklist");
    }
    if let Some(verdict) = gone(&item.status) {
        return Decided::Refused(verdict);
    }
    let user = ctx.user;
    if let Err(verdict) = super::eligible::may_be_given(ctx.dir, user) {
        return Decided::Refused(verdict);
    }
    item.removed.remove(user);
    if ctx.people.method == Method::All {
        if item.copies.iter().any(|c| c.is_open() && c.concerns(user)) {
            return Decided::Unchanged;
        }
        let copy = ItemCopy::offered_to(BTreeSet::from([user.clone()]), ctx.now_ms);
        item.copies.push(copy);
        return Decided::Changed;
    }
    let index = one_copy(item);
    let Some(copy) = item.copies.get_mut(index) else {
        return forbidden("it is not offered to you");
    };
    let on_list = copy.offered.contains(user) || copy.held_by(user);
    if copy.audience.contains(user) && (on_list || copy.holder.is_some()) {
        return Decided::Unchanged;
    }
    copy.audience.insert(user.clone());
    if copy.holder.is_none() {
        copy.offered.insert(user.clone());
        copy.offered_ms = Some(ctx.now_ms);
    }
    Decided::Changed
}

/// Remove: the claim's user loses the item (their copy is closed, for method `all`); a
/// hold of theirs ends and the copy is offered again to the others.
fn remove(ctx: &Ctx, item: &mut Item) -> Decided {
    if !ctx.admin {
        return forbidden("only an administrator or the controller may take it off a worklist");
    }
    if let Some(verdict) = gone(&item.status) {
        return Decided::Refused(verdict);
    }
    let user = ctx.user;
    let all = ctx.people.method == Method::All;
    let copy = if all {
        item.copies
            .iter_mut()
            .find(|c| c.is_open() && c.concerns(user))
    } else {
        item.copies.first_mut().filter(|c| c.concerns(user))
    };
    let Some(copy) = copy else {
        return invalid(&format!("it is not on {user}'s worklist"));
    };
    item.removed.insert(user.clone());
    if all {
        copy.status = ItemStatus::Closed {
            why: format!("removed from {user}'s worklist"),
        };
        copy.ended_ms = Some(ctx.now_ms);
        copy.offered.clear();
        return Decided::Changed;
    }
    copy.audience.remove(user);
    copy.offered.remove(user);
    if copy.holder.as_ref().is_some_and(|h| &h.user == user) {
        copy.holder = None;
        reoffer(ctx, copy);
    }
    Decided::Changed
}

/// The copy a user's claim is about: for method `all` theirs (held, offered, or once
/// theirs); otherwise the item's one copy.
fn copy_of(ctx: &Ctx, item: &Item) -> Option<usize> {
    if ctx.people.method != Method::All {
        return (!item.copies.is_empty()).then_some(0);
    }
    let user = ctx.user;
    let copies = &item.copies;
    copies
        .iter()
        .position(|c| c.held_by(user))
        .or_else(|| copies.iter().position(|c| c.is_open() && c.concerns(user)))
        .or_else(|| copies.iter().position(|c| c.concerns(user)))
}

/// The item's one copy (created, offered to nobody, when it has none yet).
fn one_copy(item: &mut Item) -> usize {
    if item.copies.is_empty() {
        item.copies.push(ItemCopy::offered_to(BTreeSet::new(), 0));
    }
    0
}

/// A copy nobody holds any more goes back to its audience, as far as they are available.
fn reoffer(ctx: &Ctx, copy: &mut ItemCopy) {
    copy.offered = available(ctx.dir, &copy.audience);
    copy.offered_ms = Some(ctx.now_ms);
}

fn held_word(hold: Hold) -> &'static str {
    match hold {
        Hold::Selected => "selected",
        Hold::Locked => "locked",
    }
}

fn undo_word(hold: Hold) -> &'static str {
    match hold {
        Hold::Selected => "release",
        Hold::Locked => "unlock",
    }
}

fn invalid(reason: &str) -> Decided {
    Decided::Refused(Verdict::Invalid {
        reason: reason.to_owned(),
    })
}

fn forbidden(reason: &str) -> Decided {
    Decided::Refused(Verdict::Forbidden {
        reason: reason.to_owned(),
    })
}

/// The words of a refusal.
fn reason_of(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Done => "done".to_owned(),
        Verdict::Unavailable { reason }
        | Verdict::Forbidden { reason }
        | Verdict::Invalid { reason } => reason.clone(),
    }
}
