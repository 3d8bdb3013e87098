//! A user of this device acts on an item: what the desk's snapshot makes certain is answered
//! here and now; the rest goes to the item's host as a claim with a request number.
//!
//! Certain here: an item that ended, or that someone here holds, or that was taken off the
//! user's worklist, is "no longer available"; an item never offered to the user is not theirs
//! to take; release, unlock, complete and delegate need the user's hold (delegate also an
//! administrator's word, which the host checks), and the hold must fit the action. While the
//! user has a claim on the item under way, only "ended" is decided here: the host orders the
//! claims.

use mobiwf_proto::{Claim, HAND_OVER_HOURS_LEFT, Hold, ItemAction, ItemStatus, NodeName, Verdict};

use super::{Applied, Desk, DeskEffect, DeskItem, DeskRefusal, LocalClaim, PendingClaim};
use crate::Directory;

impl Desk {
    pub(super) fn claim(
        &mut self,
        now_ms: u64,
        dir: &Directory,
        me: &NodeName,
        claim: LocalClaim,
    ) -> Result<Applied, DeskRefusal> {
        super::here(dir, me, claim.user.as_str())?;
        let key = (claim.instance, claim.activity);
        let Some(item) = self.items.get(&key) else {
            return Err(DeskRefusal::UnknownItem {
                user: claim.user,
                instance: claim.instance,
                activity: claim.activity,
            });
        };
        let away = self.is_away(claim.user.as_str());
        let decided = self.decided_here(item, dir, &claim);
        let host = item.info.host.clone();
        let offered_ms = item.info.ready_ms;
        let request = self.take_request();
        let effect = match decided {
            Some(verdict) => DeskEffect::Answered {
                request,
                user: claim.user,
                verdict,
            },
            None => {
                let sent = Claim {
                    instance: claim.instance,
                    activity: claim.activity,
                    user: claim.user.clone(),
                    action: claim.action.clone(),
                    request,
                    offline_ms: away.then_some(now_ms),
                    offered_ms: Some(offered_ms),
                };
                self.pending.insert(
                    request,
                    PendingClaim {
                        request,
                        user: claim.user,
                        instance: claim.instance,
                        activity: claim.activity,
                        action: claim.action,
                        host: host.clone(),
                        sent_ms: now_ms,
                        offline: away,
                    },
                );
                DeskEffect::Send {
                    to: host,
                    claim: Box::new(sent),
                }
            }
        };
        Ok(Applied {
            request: Some(request),
            effects: vec![effect],
        })
    }

    /// What the desk's snapshot makes certain of `claim` on `item`, if anything: the host
    /// decides the rest.
    fn decided_here(
        &self,
        item: &DeskItem,
        dir: &Directory,
        claim: &LocalClaim,
    ) -> Option<Verdict> {
        let key = (claim.instance, claim.activity);
        let under_way = self
            .pending
            .values()
            .any(|p| p.user == claim.user && (p.instance, p.activity) == key);
        // A handed-away user's completion still goes to the host, which records it.
        let handed = handed_away(item, &claim.action, claim.user.as_str());
        if self.is_away(claim.user.as_str()) && !handed {
            offline(item, claim)
        } else {
            None
        }
        .or_else(|| self.refused_disabled(item, claim.user.as_str()))
        .or_else(|| decide(item, dir, claim, under_way))
        .or_else(|| self.wrong_os(item, &claim.action))
    }
}

/// While the user is away only the items they locked can be worked on (*Synchronization and
/// Disconnected Operation in WorkToDo* (IC-03-006), §5.1.2 step 10: the others are disabled until
/// they reconnect).
fn offline(item: &DeskItem, claim: &LocalClaim) -> Option<Verdict> {
    let user = claim.user.as_str();
    let locked = item.holder(user).is_some_and(|h| h.hold == Hold::Locked);
    (item.is_open() && !locked).then(|| Verdict::Invalid {
        reason: format!(
            "you ({user}) are disconnected: only the items you locked can be worked on until \
             you reconnect (`mobiwf-node reconnect --user {user}`)"
        ),
    })
}

/// The verdict the desk can give alone, or none when the host must decide.
fn decide(
    item: &DeskItem,
    dir: &Directory,
    claim: &LocalClaim,
    under_way: bool,
) -> Option<Verdict> {
    let label = super::label(&item.info);
    let user = claim.user.as_str();
    if handed_away(item, &claim.action, user) {
        // Its host records the result (history) and refuses it: it passed to the
        // responsible user before its deadline.
        return None;
    }
    if let Some(verdict) = ended(item, &claim.action, user, &label) {
        return Some(verdict);
    }
    match &claim.action {
        ItemAction::Insert | ItemAction::Remove | ItemAction::Extend { .. } => {
            Some(Verdict::Invalid {
                reason: format!(
                    "{} is an administrator's action the controller carries to the item's host: \
                 use `mobiwf-controller worklist {} {} {} --user {user}`",
                    claim.action.as_str(),
                    claim.action.as_str(),
                    item.info.instance,
                    item.info.activity,
                ),
            })
        }
        _ if under_way => None,
        // The host decides whether the activity can be paused or resumed now.
        ItemAction::Pause | ItemAction::Resume => {
            item.holder(user).is_none().then(|| Verdict::Forbidden {
                reason: format!(
                    "you ({user}) do not hold {label}: only its holder may {} it; select it \
                     first",
                    claim.action.as_str()
                ),
            })
        }
        ItemAction::Select | ItemAction::Lock => take(item, &claim.action, user, &label),
        ItemAction::Release
        | ItemAction::Unlock
        | ItemAction::Complete { .. }
        | ItemAction::Delegate { .. } => give(item, dir, &claim.action, user, &label),
    }
}

/// Whether this is the completion of a user the item was taken from when it passed to the
/// responsible user 24 hours before its deadline: sent to the host, which records it.
fn handed_away(item: &DeskItem, action: &ItemAction, user: &str) -> bool {
    let handed = item.info.due.as_ref().is_some_and(|d| {
        d.passed.contains(&HAND_OVER_HOURS_LEFT) && d.hours > HAND_OVER_HOURS_LEFT
    });
    handed
        && matches!(action, ItemAction::Complete { .. })
        && item.former.iter().any(|u| u.as_str() == user)
}

/// The verdict on any action on an item that ended: "no longer available", except a
/// repeated complete by the one who completed it (done, as it was).
fn ended(item: &DeskItem, action: &ItemAction, user: &str, label: &str) -> Option<Verdict> {
    let why = match &item.status {
        ItemStatus::Open => return None,
        ItemStatus::Done { by, succeeded } => {
            if let ItemAction::Complete { succeeded: s, .. } = action
                && by.as_str() == user
                && s == succeeded
            {
                return Some(Verdict::Done);
            }
            format!("done by {by}")
        }
        ItemStatus::Closed { why } => format!("closed ({why})"),
    };
    Some(Verdict::Unavailable {
        reason: format!("{label} is no longer available: {why}"),
    })
}

/// Select or lock: the user must be offered it (or hold it), and a lock needs
/// `<disconnected>`.
fn take(item: &DeskItem, action: &ItemAction, user: &str, label: &str) -> Option<Verdict> {
    let hold = item.holder(user);
    if hold.is_some() || item.is_offered_to(user) {
        if matches!(action, ItemAction::Lock) && !item.info.disconnected {
            return Some(Verdict::Invalid {
                reason: format!(
                    "activity {} may not be locked: it does not allow disconnected work \
                     (<disconnected>); select it instead",
                    item.info.activity
                ),
            });
        }
        // The same hold again is done already; another hold, or an offer, is the host's.
        let same = hold.is_some_and(|h| {
            matches!(
                (action, h.hold),
                (ItemAction::Select, Hold::Selected) | (ItemAction::Lock, Hold::Locked)
            )
        });
        return same.then_some(Verdict::Done);
    }
    if let Some(other) = item.holders.first() {
        return Some(Verdict::Unavailable {
            reason: format!("{label} is no longer available: {} holds it", other.user),
        });
    }
    if item.former.iter().any(|u| u.as_str() == user) {
        return Some(Verdict::Unavailable {
            reason: format!(
                "{label} is no longer available: someone else took it, or it was taken off \
                 your worklist"
            ),
        });
    }
    Some(Verdict::Forbidden {
        reason: format!("{label} is not offered to you ({user})"),
    })
}

/// Release, unlock, complete or delegate: the holder's actions.
fn give(
    item: &DeskItem,
    dir: &Directory,
    action: &ItemAction,
    user: &str,
    label: &str,
) -> Option<Verdict> {
    let what = action.as_str();
    let Some(hold) = item.holder(user) else {
        if matches!(action, ItemAction::Delegate { .. }) && dir.is_administrator(user) {
            return None;
        }
        if item.is_offered_to(user) {
            return Some(Verdict::Invalid {
                reason: format!(
                    "{label} is offered to you but you do not hold it: select or lock it \
                     before you {what} it"
                ),
            });
        }
        let held = item
            .holders
            .first()
            .map(|h| format!(" ({} holds it)", h.user))
            .unwrap_or_default();
        return Some(Verdict::Forbidden {
            reason: format!(
                "you ({user}) do not hold {label}{held}: only its holder may {what} it"
            ),
        });
    };
    let locked = hold.hold == Hold::Locked;
    match action {
        ItemAction::Release if locked => Some(Verdict::Invalid {
            reason: format!("{label} is locked, not selected: unlock it instead"),
        }),
        ItemAction::Unlock if !locked => Some(Verdict::Invalid {
            reason: format!("{label} is selected, not locked: release it instead"),
        }),
        ItemAction::Delegate { to } if to.as_str() == user => Some(Verdict::Invalid {
            reason: format!("you hold {label} already: delegate it to someone else"),
        }),
        _ => None,
    }
}
