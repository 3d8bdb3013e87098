//! What the host decides on one user's action on a work item: the guards (who may, on which
//! copy, in which state), then at most one event on one copy, carried out through the copy's
//! transition function (`lifecycle`). Select and lock: the first wins, the others are told the
//! item is "no longer available"; release and unlock: offered again to its audience;
//! complete: only its holder; delegate: its holder, an administrator or the controller;
//! insert and remove: an administrator or the controller.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{DataValue, Hold, Holder, ItemAction, UserId, Verdict};
use mobiwf_xml_schema::{Method, flag_problem};

use super::assign::available;
use super::claim::{Ctx, Decided};
use super::lifecycle::{Completion, CopyEvent};
use super::status::gone;
use super::{Item, ItemCopy};
use crate::Finish;

/// What the host decides on one action, before anything changes: refused, nothing to do, or
/// one event on one copy.
enum Decision {
    Refused(Verdict),
    Unchanged,
    /// `event` happens to copy `index` (the item's one copy, created offered to nobody when
    /// it has none yet).
    Event {
        index: usize,
        event: CopyEvent,
    },
    /// A copy of the claim's user's own is added, offered to them (method `all`).
    NewCopy,
}

/// The decision on one action, carried out on `item`.
pub(super) fn decide(
    ctx: &Ctx,
    item: &mut Item,
    action: &ItemAction,
    written: BTreeMap<String, DataValue>,
) -> Decided {
    let decision = match action {
        ItemAction::Select => take(ctx, item, Hold::Selected),
        ItemAction::Lock => take(ctx, item, Hold::Locked),
        ItemAction::Release => give_back(ctx, item, Hold::Selected),
        ItemAction::Unlock => give_back(ctx, item, Hold::Locked),
        ItemAction::Complete {
            succeeded,
            detail,
            flag,
            ..
        } => match flag.as_deref().and_then(flag_problem) {
            Some(problem) => invalid(&problem),
            None => complete(
                ctx,
                item,
                Completion {
                    finish: Finish::of(*succeeded, detail.clone(), flag.clone()),
                    written,
                    ended_ms: ctx.now_ms,
                },
            ),
        },
        ItemAction::Delegate { to } => delegate(ctx, item, to),
        ItemAction::Insert => insert(ctx, item),
        ItemAction::Remove => remove(ctx, item),
        // The activity is paused or resumed by the claim (`crate::pause`); the item stays
        // its holder's.
        ItemAction::Pause | ItemAction::Resume => return holder_only(ctx, item),
        ItemAction::Extend { hours } => {
            return match super::deadline::extend(item, *hours, ctx.admin, ctx.now_ms) {
                Ok(()) => Decided::Changed,
                Err(verdict) => Decided::Refused(verdict),
            };
        }
    };
    let decided = carry_out(ctx, item, decision);
    // An insert undoes the user's removal; a removal keeps later assignments from them.
    match (&decided, action) {
        (Decided::Changed, ItemAction::Insert) => item.taken_off(ctx.user, false),
        (Decided::Changed, ItemAction::Remove) => item.taken_off(ctx.user, true),
        _ => {}
    }
    decided
}

/// Carries a decision out: its event goes through the copy's transition function, and one
/// the copy does not take refuses the claim (nothing changes).
fn carry_out(ctx: &Ctx, item: &mut Item, decision: Decision) -> Decided {
    match decision {
        Decision::Refused(verdict) => Decided::Refused(verdict),
        Decision::Unchanged => Decided::Unchanged,
        Decision::NewCopy => {
            let copy = ItemCopy::offered_to(BTreeSet::from([ctx.user.clone()]), ctx.now_ms);
            item.copies.push(copy);
            Decided::Changed
        }
        Decision::Event { index, event } => {
            if item.copies.is_empty() {
                item.copies.push(ItemCopy::offered_to(BTreeSet::new(), 0));
            }
            let Some(copy) = item.copies.get_mut(index) else {
                return Decided::Refused(Verdict::Forbidden {
                    reason: "it is not offered to you".to_owned(),
                });
            };
            match copy.apply(event) {
                Ok(()) => Decided::Changed,
                Err(e) => Decided::Refused(Verdict::Invalid {
                    reason: format!("the host cannot do it: {e}"),
                }),
            }
        }
    }
}

/// Pause and resume: only the holder of an open copy.
fn holder_only(ctx: &Ctx, item: &Item) -> Decided {
    if let Some(verdict) = gone(&item.status) {
        return Decided::Refused(verdict);
    }
    let holds = item
        .copies
        .iter()
        .any(|c| c.is_open() && c.held_by(ctx.user));
    if holds {
        Decided::Changed
    } else {
        Decided::Refused(Verdict::Forbidden {
            reason: "only its holder may pause or resume it: select it first".to_owned(),
        })
    }
}

/// Select or lock: the first claim on an offered copy wins.
fn take(ctx: &Ctx, item: &Item, hold: Hold) -> Decision {
    if hold == Hold::Locked && !ctx.people.disconnected {
        return invalid(
            "it cannot be locked: its activity is not marked <disconnected>true</disconnected>; \
             select it instead",
        );
    }
    if let Some(verdict) = gone(&item.status) {
        return Decision::Refused(verdict);
    }
    let user = ctx.user;
    let Some((index, copy)) = copy_of(ctx, item).and_then(|i| Some((i, item.copies.get(i)?)))
    else {
        return forbidden("it is not offered to you");
    };
    if let Some(verdict) = gone(&copy.status()) {
        return Decision::Refused(verdict);
    }
    if let Some(h) = copy.holder() {
        return match (&h.user == user, h.hold == hold) {
            (true, true) => Decision::Unchanged,
            (true, false) => invalid(&format!(
                "you hold it {}: {} it first",
                held_word(h.hold),
                undo_word(h.hold)
            )),
            (false, _) => Decision::Refused(Verdict::Unavailable {
                reason: format!("no longer available: {} {} it", h.user, held_word(h.hold)),
            }),
        };
    }
    if !copy.offered().contains(user) {
        return forbidden("it is not offered to you");
    }
    if ctx.dir.user(user.as_str()).is_some_and(|u| u.on_leave) {
        return forbidden("you are on leave");
    }
    let holder = Holder {
        user: user.clone(),
        hold,
        since_ms: ctx.now_ms,
        grantor: None,
    };
    Decision::Event {
        index,
        event: CopyEvent::Take { holder },
    }
}

/// Release or unlock: only the holder, with the matching hold; offered again to its
/// audience, as far as they are available.
fn give_back(ctx: &Ctx, item: &Item, hold: Hold) -> Decision {
    let held = item
        .copies
        .iter()
        .enumerate()
        .find(|(_, c)| c.held_by(ctx.user));
    let Some((index, copy)) = held else {
        let verdict = gone(&item.status).unwrap_or(Verdict::Forbidden {
            reason: "you do not hold it".to_owned(),
        });
        return Decision::Refused(verdict);
    };
    let held = copy.holder().map_or(hold, |h| h.hold);
    if held != hold {
        return invalid(&format!(
            "it is {}: {} it instead",
            held_word(held),
            undo_word(held)
        ));
    }
    let to = available(ctx.dir, copy.audience());
    Decision::Event {
        index,
        event: CopyEvent::Release {
            to,
            at_ms: ctx.now_ms,
        },
    }
}

/// Complete: only the holder of a held copy.
fn complete(ctx: &Ctx, item: &Item, completion: Completion) -> Decision {
    let user = ctx.user;
    let succeeded = completion.finish.succeeded();
    let Some(index) = item.copies.iter().position(|c| c.held_by(user)) else {
        let did = item.copies.iter().find_map(|c| match c.done() {
            Some((by, done)) if by == user => Some(done.finish.succeeded()),
            _ => None,
        });
        // The same completion again (a retry) is done; another outcome is not taken.
        match did {
            Some(was) if was == succeeded => return Decision::Unchanged,
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
            return Decision::Refused(verdict);
        }
        let copy = copy_of(ctx, item).and_then(|i| item.copies.get(i));
        return match copy.and_then(ItemCopy::holder) {
            Some(h) => forbidden(&format!(
                "only its holder completes it, and {} holds it",
                h.user
            )),
            None if copy.is_some_and(|c| c.offered().contains(user)) => {
                invalid("select (or lock) it first: only its holder completes it")
            }
            None => forbidden("it is not offered to you: only its holder completes it"),
        };
    };
    Decision::Event {
        index,
        event: CopyEvent::Complete { completion },
    }
}

/// Delegate: the holder (their copy), an administrator or the controller (the copy of an
/// item that has one) hands it to `to`, who then holds it selected.
fn delegate(ctx: &Ctx, item: &Item, to: &UserId) -> Decision {
    if let Some(verdict) = gone(&item.status) {
        return Decision::Refused(verdict);
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
        None => ONE_COPY,
    };
    if let Err(verdict) = super::eligible::may_be_given(ctx.dir, to) {
        return Decision::Refused(verdict);
    }
    let has_copy = item
        .copies
        .iter()
        .enumerate()
        .any(|(i, c)| i != index && c.is_open() && c.concerns(to));
    if item.copies.get(index).is_some_and(|c| c.held_by(to)) {
        return invalid(&format!("{to} already holds it"));
    }
    if all && has_copy {
        return invalid(&format!("{to} already has a copy of it"));
    }
    let holder = Holder {
        user: to.clone(),
        hold: Hold::Selected,
        since_ms: ctx.now_ms,
        grantor: Some(ctx.user.clone()),
    };
    Decision::Event {
        index,
        event: CopyEvent::Delegate { holder },
    }
}

/// Insert: the claim's user gets the item on their worklist (their own copy, for method
/// `all`); offered to them unless it is held.
fn insert(ctx: &Ctx, item: &Item) -> Decision {
    if !ctx.admin {
        return forbidden("only an administrator or the controller may put it on a worklist");
    }
    if let Some(verdict) = gone(&item.status) {
        return Decision::Refused(verdict);
    }
    let user = ctx.user;
    if let Err(verdict) = super::eligible::may_be_given(ctx.dir, user) {
        return Decision::Refused(verdict);
    }
    if ctx.people.method == Method::All {
        if item.copies.iter().any(|c| c.is_open() && c.concerns(user)) {
            return Decision::Unchanged;
        }
        return Decision::NewCopy;
    }
    if let Some(copy) = item.copies.get(ONE_COPY) {
        let on_list = copy.offered().contains(user) || copy.held_by(user);
        if copy.audience().contains(user) && (on_list || copy.holder().is_some()) {
            return Decision::Unchanged;
        }
    }
    Decision::Event {
        index: ONE_COPY,
        event: CopyEvent::Insert {
            user: user.clone(),
            at_ms: ctx.now_ms,
        },
    }
}

/// Remove: the claim's user loses the item (their copy is closed, for method `all`); a
/// hold of theirs ends and the copy is offered again to the others.
fn remove(ctx: &Ctx, item: &Item) -> Decision {
    if !ctx.admin {
        return forbidden("only an administrator or the controller may take it off a worklist");
    }
    if let Some(verdict) = gone(&item.status) {
        return Decision::Refused(verdict);
    }
    let user = ctx.user;
    let all = ctx.people.method == Method::All;
    let theirs = if all {
        item.copies
            .iter()
            .position(|c| c.is_open() && c.concerns(user))
    } else {
        item.copies
            .first()
            .filter(|c| c.concerns(user))
            .map(|_| ONE_COPY)
    };
    let Some((index, copy)) = theirs.and_then(|i| Some((i, item.copies.get(i)?))) else {
        return invalid(&format!("it is not on {user}'s worklist"));
    };
    let event = if all {
        CopyEvent::Close {
            why: format!("removed from {user}'s worklist"),
            at_ms: ctx.now_ms,
        }
    } else {
        let mut rest = copy.audience().clone();
        rest.remove(user);
        CopyEvent::Remove {
            user: user.clone(),
            to: available(ctx.dir, &rest),
            at_ms: ctx.now_ms,
        }
    };
    Decision::Event { index, event }
}

/// The copy a user's claim is about: for method `all` theirs (held, offered, or once
/// theirs); otherwise the item's one copy.
fn copy_of(ctx: &Ctx, item: &Item) -> Option<usize> {
    if ctx.people.method != Method::All {
        return (!item.copies.is_empty()).then_some(ONE_COPY);
    }
    let user = ctx.user;
    let copies = &item.copies;
    copies
        .iter()
        .position(|c| c.held_by(user))
        .or_else(|| copies.iter().position(|c| c.is_open() && c.concerns(user)))
        .or_else(|| copies.iter().position(|c| c.concerns(user)))
}

/// Where the one copy of an item of every method but `all` is.
const ONE_COPY: usize = 0;

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

fn invalid(reason: &str) -> Decision {
    Decision::Refused(Verdict::Invalid {
        reason: reason.to_owned(),
    })
}

fn forbidden(reason: &str) -> Decision {
    Decision::Refused(Verdict::Forbidden {
        reason: reason.to_owned(),
    })
}
