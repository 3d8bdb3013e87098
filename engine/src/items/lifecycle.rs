//! The life of one copy of a work item on its host: its states ([`CopyLife`]), the events that
//! move it ([`CopyEvent`]), and the one function ([`transition`]) through which every change
//! of a copy goes, checked against the table of allowed transitions ([`TRANSITIONS`]). The
//! copy's fields are private to this module (and `stored`, its JSON form): the rest of the
//! engine reads them and sends events.
//!
//! A copy is created offered ([`ItemCopy::offered_to`]); `Done` and `Closed` are final (an item
//! whose activity is rerun is replaced by a new one). Beside its state a copy keeps two facts
//! the events update: its audience (who it was offered to by the assignment, an insert, a
//! delegation: it goes back to them when its holder gives it back) and when it was last
//! offered.
//!
//! Most events lead from a state to one state; `Remove` from `Held` leads back to `Offered`
//! when the user taken off holds it, and stays `Held` otherwise (the event's data decides).

mod stored;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{DataValue, Holder, ItemStatus, UserId};

use crate::Finish;

/// One copy of a work item: who it is for, and where it is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemCopy {
    /// The users it was offered to (by the assignment, an insert, a delegation): it is
    /// offered to them again when its holder releases it (minus those then on leave or
    /// without a device).
    audience: BTreeSet<UserId>,
    /// When it was last offered, in ms since the epoch.
    offered_ms: u64,
    life: CopyLife,
}

/// Where a copy of a work item is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyLife {
    /// Open and held by nobody: offered to `to` (to nobody, when none of its audience can be
    /// offered it now).
    Offered {
        /// The users it is offered to now.
        to: BTreeSet<UserId>,
    },
    /// Open and held (selected or locked).
    Held {
        /// Who, how, since when, and who gave it to them.
        holder: Holder,
    },
    /// Done by its holder.
    Done {
        /// Who did it (the holder when they completed it).
        holder: Holder,
        /// What they said.
        completion: Completion,
    },
    /// Ended without being done: taken off its user (method `all`), handed over to the
    /// responsible user, or its activity ended otherwise.
    Closed {
        /// Why.
        why: String,
        /// Who held it then, if someone did.
        holder: Option<Holder>,
        /// When, in ms since the epoch.
        ended_ms: u64,
    },
}

/// What a user said when completing a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// Succeeded (their words, the completion flag they chose) or failed (their words).
    pub finish: Finish,
    /// The instance data they set (written when the activity succeeds).
    pub written: BTreeMap<String, DataValue>,
    /// When, in ms since the epoch.
    pub ended_ms: u64,
}

/// What happens to a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyEvent {
    /// Offered to `to` instead (the directory changed); `at_ms` when that is a new offer.
    Offer {
        /// Who it is offered to now.
        to: BTreeSet<UserId>,
        /// When it was offered anew, if it was.
        at_ms: Option<u64>,
    },
    /// The assignment chose `to`: its audience and who it is offered to.
    Assign {
        /// The users chosen.
        to: BTreeSet<UserId>,
        /// When.
        at_ms: u64,
    },
    /// An administrator put it on `user`'s worklist: offered to them too, unless it is held.
    Insert {
        /// Whose.
        user: UserId,
        /// When.
        at_ms: u64,
    },
    /// An administrator took it off `user`'s worklist; when they held it, it is offered to
    /// `to` (those of the rest of its audience available now).
    Remove {
        /// Whose.
        user: UserId,
        /// Who it goes to when the user held it.
        to: BTreeSet<UserId>,
        /// When.
        at_ms: u64,
    },
    /// A user it is offered to selects or locks it.
    Take {
        /// Who, and how.
        holder: Holder,
    },
    /// Its holder gives it back (release, unlock): offered to `to`.
    Release {
        /// Who it is offered to (its audience as far as available now).
        to: BTreeSet<UserId>,
        /// When.
        at_ms: u64,
    },
    /// Its holder, an administrator or the controller gives it to someone (who joins its
    /// audience).
    Delegate {
        /// The new holder (its grantor the one who delegated).
        holder: Holder,
    },
    /// Its deadline came close: it passes to the responsible user (their audience alone),
    /// who keeps their hold if they held it already.
    HandOver {
        /// The responsible user, selecting it.
        holder: Holder,
    },
    /// Its holder completes it.
    Complete {
        /// What they said.
        completion: Completion,
    },
    /// It ends without being done.
    Close {
        /// Why.
        why: String,
        /// When.
        at_ms: u64,
    },
}

/// The kind of a [`CopyLife`], without its data: what the table of transitions speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateKind {
    /// [`CopyLife::Offered`].
    Offered,
    /// [`CopyLife::Held`].
    Held,
    /// [`CopyLife::Done`].
    Done,
    /// [`CopyLife::Closed`].
    Closed,
}

/// The kind of a [`CopyEvent`], without its data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventKind {
    /// [`CopyEvent::Offer`].
    Offer,
    /// [`CopyEvent::Assign`].
    Assign,
    /// [`CopyEvent::Insert`].
    Insert,
    /// [`CopyEvent::Remove`].
    Remove,
    /// [`CopyEvent::Take`].
    Take,
    /// [`CopyEvent::Release`].
    Release,
    /// [`CopyEvent::Delegate`].
    Delegate,
    /// [`CopyEvent::HandOver`].
    HandOver,
    /// [`CopyEvent::Complete`].
    Complete,
    /// [`CopyEvent::Close`].
    Close,
}

/// Every transition allowed: (from, event, to). Each is reached by a scenario test (the
/// coverage test fails otherwise); a transition no scenario can reach does not belong here.
pub const TRANSITIONS: &[(StateKind, EventKind, StateKind)] = {
    use EventKind as E;
    use StateKind as S;
    &[
        (S::Offered, E::Offer, S::Offered),
        (S::Offered, E::Assign, S::Offered),
        (S::Offered, E::Insert, S::Offered),
        (S::Offered, E::Remove, S::Offered),
        (S::Offered, E::Take, S::Held),
        (S::Offered, E::Delegate, S::Held),
        (S::Offered, E::HandOver, S::Held),
        (S::Offered, E::Close, S::Closed),
        (S::Held, E::Insert, S::Held),
        (S::Held, E::Remove, S::Held),
        (S::Held, E::Remove, S::Offered),
        (S::Held, E::Release, S::Offered),
        (S::Held, E::Delegate, S::Held),
        (S::Held, E::HandOver, S::Held),
        (S::Held, E::Complete, S::Done),
        (S::Held, E::Close, S::Closed),
    ]
};

/// An event that the copy's state does not take: nothing changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a work item copy that is {from:?} does not take {event:?}")]
pub struct NotAllowed {
    /// The state it is in.
    pub from: StateKind,
    /// The event.
    pub event: EventKind,
}

/// The one way a copy changes: the copy after `event`, or why it is not allowed.
pub fn transition(copy: &ItemCopy, event: CopyEvent) -> Result<ItemCopy, NotAllowed> {
    use CopyEvent as E;
    use CopyLife as L;
    let (from, kind) = (copy.life.kind(), event.kind());
    let mut next = copy.clone();
    next.life = match (&copy.life, event) {
        (L::Offered { .. }, E::Offer { to, at_ms }) => {
            next.offered_ms = at_ms.unwrap_or(copy.offered_ms);
            L::Offered { to }
        }
        (L::Offered { .. }, E::Assign { to, at_ms }) => {
            next.audience.clone_from(&to);
            next.offered_ms = at_ms;
            L::Offered { to }
        }
        (L::Offered { to }, E::Insert { user, at_ms }) => {
            let mut to = to.clone();
            to.insert(user.clone());
            next.audience.insert(user);
            next.offered_ms = at_ms;
            L::Offered { to }
        }
        (L::Held { holder }, E::Insert { user, .. }) => {
            next.audience.insert(user);
            L::Held {
                holder: holder.clone(),
            }
        }
        (L::Offered { to }, E::Remove { user, .. }) => {
            next.audience.remove(&user);
            let mut to = to.clone();
            to.remove(&user);
            L::Offered { to }
        }
        (L::Held { holder }, E::Remove { user, to, at_ms }) => {
            next.audience.remove(&user);
            if holder.user == user {
                next.offered_ms = at_ms;
                L::Offered { to }
            } else {
                L::Held {
                    holder: holder.clone(),
                }
            }
        }
        (L::Offered { .. }, E::Take { holder }) => L::Held { holder },
        (L::Held { .. }, E::Release { to, at_ms }) => {
            next.offered_ms = at_ms;
            L::Offered { to }
        }
        (L::Offered { .. } | L::Held { .. }, E::Delegate { holder }) => {
            next.audience.insert(holder.user.clone());
            L::Held { holder }
        }
        (L::Offered { .. } | L::Held { .. }, E::HandOver { holder }) => {
            next.audience = BTreeSet::from([holder.user.clone()]);
            match &copy.life {
                L::Held { holder: held } if held.user == holder.user => L::Held {
                    holder: held.clone(),
                },
                _ => L::Held { holder },
            }
        }
        (L::Held { holder }, E::Complete { completion }) => L::Done {
            holder: holder.clone(),
            completion,
        },
        (L::Offered { .. } | L::Held { .. }, E::Close { why, at_ms }) => L::Closed {
            why,
            holder: copy.holder().cloned(),
            ended_ms: at_ms,
        },
        _ => return Err(NotAllowed { from, event: kind }),
    };
    #[cfg(test)]
    crate::coverage::record::<Taken>((from, kind, next.life.kind()));
    Ok(next)
}

/// Nobody: what a copy that is not offered is offered to.
static NOBODY: BTreeSet<UserId> = BTreeSet::new();

impl ItemCopy {
    /// A new copy offered to `users` (its audience).
    pub(crate) fn offered_to(users: BTreeSet<UserId>, now_ms: u64) -> ItemCopy {
        ItemCopy {
            audience: users.clone(),
            offered_ms: now_ms,
            life: CopyLife::Offered { to: users },
        }
    }

    /// `event` happens to it (through [`transition`]); refused, it stays as it was.
    pub(crate) fn apply(&mut self, event: CopyEvent) -> Result<(), NotAllowed> {
        *self = transition(self, event)?;
        Ok(())
    }

    /// `event`, which the caller's guards allowed, happens to it (through [`transition`]);
    /// refused (a bug), it stays as it was and the refusal is added to `refused`, for the
    /// engine to record (`Engine::record_copies_refused`).
    pub(crate) fn apply_allowed(&mut self, event: CopyEvent, refused: &mut Vec<NotAllowed>) {
        if let Err(not_allowed) = self.apply(event) {
            refused.push(not_allowed);
        }
    }

    /// Where it is in its life.
    pub fn life(&self) -> &CopyLife {
        &self.life
    }

    /// The users it was offered to (see [`CopyEvent::Insert`], [`CopyEvent::Delegate`]).
    pub fn audience(&self) -> &BTreeSet<UserId> {
        &self.audience
    }

    /// The users it is offered to now (nobody unless it is [`CopyLife::Offered`]).
    pub fn offered(&self) -> &BTreeSet<UserId> {
        match &self.life {
            CopyLife::Offered { to } => to,
            _ => &NOBODY,
        }
    }

    /// When it was last offered, in ms since the epoch.
    pub fn offered_ms(&self) -> u64 {
        self.offered_ms
    }

    /// Who holds it; once done, who did it; once closed, who held it then.
    pub fn holder(&self) -> Option<&Holder> {
        match &self.life {
            CopyLife::Offered { .. } => None,
            CopyLife::Held { holder } | CopyLife::Done { holder, .. } => Some(holder),
            CopyLife::Closed { holder, .. } => holder.as_ref(),
        }
    }

    /// Open, done (by whom) or closed (why), as the wire says it.
    pub fn status(&self) -> ItemStatus {
        match &self.life {
            CopyLife::Offered { .. } | CopyLife::Held { .. } => ItemStatus::Open,
            CopyLife::Done { holder, completion } => ItemStatus::Done {
                by: holder.user.clone(),
                succeeded: completion.finish.succeeded(),
            },
            CopyLife::Closed { why, .. } => ItemStatus::Closed { why: why.clone() },
        }
    }

    /// Who did it and whether it succeeded, once done.
    pub fn done(&self) -> Option<(&UserId, &Completion)> {
        match &self.life {
            CopyLife::Done { holder, completion } => Some((&holder.user, completion)),
            _ => None,
        }
    }

    /// When it was done or closed, in ms since the epoch.
    pub fn ended_ms(&self) -> Option<u64> {
        match &self.life {
            CopyLife::Done { completion, .. } => Some(completion.ended_ms),
            CopyLife::Closed { ended_ms, .. } => Some(*ended_ms),
            _ => None,
        }
    }

    /// Whether it can still be worked on.
    pub fn is_open(&self) -> bool {
        matches!(self.life, CopyLife::Offered { .. } | CopyLife::Held { .. })
    }

    /// Whether `user` holds it and it is open.
    pub(crate) fn held_by(&self, user: &UserId) -> bool {
        matches!(&self.life, CopyLife::Held { holder } if &holder.user == user)
    }

    /// Whether the copy is `user`'s at all: they are or were offered it, hold it or did it.
    pub(crate) fn concerns(&self, user: &UserId) -> bool {
        self.audience.contains(user)
            || self.offered().contains(user)
            || self.holder().is_some_and(|h| &h.user == user)
    }

    /// Open, not held and offered to nobody.
    pub(crate) fn orphaned(&self) -> bool {
        matches!(&self.life, CopyLife::Offered { to } if to.is_empty())
    }
}

impl CopyLife {
    /// Its kind.
    pub fn kind(&self) -> StateKind {
        match self {
            CopyLife::Offered { .. } => StateKind::Offered,
            CopyLife::Held { .. } => StateKind::Held,
            CopyLife::Done { .. } => StateKind::Done,
            CopyLife::Closed { .. } => StateKind::Closed,
        }
    }
}

impl CopyEvent {
    /// Its kind.
    pub fn kind(&self) -> EventKind {
        match self {
            CopyEvent::Offer { .. } => EventKind::Offer,
            CopyEvent::Assign { .. } => EventKind::Assign,
            CopyEvent::Insert { .. } => EventKind::Insert,
            CopyEvent::Remove { .. } => EventKind::Remove,
            CopyEvent::Take { .. } => EventKind::Take,
            CopyEvent::Release { .. } => EventKind::Release,
            CopyEvent::Delegate { .. } => EventKind::Delegate,
            CopyEvent::HandOver { .. } => EventKind::HandOver,
            CopyEvent::Complete { .. } => EventKind::Complete,
            CopyEvent::Close { .. } => EventKind::Close,
        }
    }
}

/// The table as markdown; `docs/lifecycles.md` shows it, and a test fails when the two differ.
pub fn table_markdown() -> String {
    crate::lifecycle::markdown(TRANSITIONS)
}

/// A transition taken, as the coverage tests collect them (`crate::coverage`).
#[cfg(test)]
pub(crate) type Taken = (StateKind, EventKind, StateKind);
