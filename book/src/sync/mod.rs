//! The synchronization manager (*Synchronization and Disconnected Operation in WorkToDo*
//! (IC-03-006), §4.8): which requests hold a task class and which wait, decided for the whole
//! conflict graph at once, so that two activities of conflicting classes never run together
//! and no request starves.
//!
//! The rule: a request is granted at once iff no holder's class conflicts with its class and
//! no earlier waiting request's class does; else it waits, in arrival order. Whenever a hold
//! or a wait ends, the waiters are looked at again in arrival order, each granted under the
//! same rule (first come, first served across the conflict graph: the oldest request, the one
//! that has failed most, goes first). A waiter past its class's `maxWait` is refused. This file
//! is the rule alone, on plain data; `book.rs` ties it to the book (who may ask, what the
//! controller itself releases, the messages and the history), `view.rs` is what `sync show`
//! shows, `ordered.rs` the ordering requirements between definitions (a request of an ordered
//! task waits for the relative order of its instance first, then for its class if it has one),
//! `fence.rs` when the hold of a node that is suspected or gone, or that a later round of its
//! activity superseded, ends.
//!
//! A request is its ticket *and* the peer that asked: the same ticket from another peer (its
//! partition now runs elsewhere) is another request, which waits its turn as any other. It is
//! never answered with the first peer's grant (that peer's command may still run under it),
//! and neither ends the other: each ends by its own peer's release or when the controller ends
//! it.

mod book;
mod fence;
mod ordered;
mod view;

use mobiwf_proto::{ActivityId, InstanceId, NodeId, NodeName, PartitionId, SyncTicket};
use mobiwf_xml_schema::{ClassDocument, ClassName, DEFAULT_MAX_WAIT_SECS};
use serde::{Deserialize, Serialize};

pub use book::{ClassesRecord, DEFAULT_LEASE_MS};
pub use fence::{EndCause, Ending};
pub(crate) use ordered::Ordering;
pub use ordered::{OrderWaiter, OrderingsRecord};
pub use view::{OrderWaiterView, SyncHolder, SyncView, SyncWaiter};

/// One request for a class, holding it or waiting for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncEntry {
    /// The request.
    pub ticket: SyncTicket,
    /// Its class.
    pub class: ClassName,
    /// The node that runs its partition (its name, for people).
    pub node: NodeName,
    /// That node's peer id: where the answer goes.
    pub peer: NodeId,
    /// A holder: when it was granted; a waiter: when it asked. Ms since the epoch.
    pub since_ms: u64,
    /// A holder whose node is suspected or gone: when its hold ends, and why (left out while
    /// it stands, so an entry stored before it loads unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
    /// A waiter behind its own activity's superseded earlier round: its class's `maxWait`
    /// counts from when that round ends at the latest, not from its request (left out
    /// otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_counts_from_ms: Option<u64>,
}

impl SyncEntry {
    /// True when it is a request of activity `activity` of partition `partition` of
    /// `instance`, whatever its round.
    fn of_activity(&self, instance: InstanceId, partition: PartitionId, a: ActivityId) -> bool {
        let t = &self.ticket;
        t.instance == instance && t.partition == partition && t.activity == a
    }

    /// True when it is the request `ticket` of `peer`.
    fn is(&self, ticket: &SyncTicket, peer: &NodeId) -> bool {
        self.ticket == *ticket && self.peer == *peer
    }

    /// A waiter: when its class's `maxWait` runs out.
    pub(crate) fn refused_at_ms(&self, classes: &ClassDocument) -> u64 {
        self.wait_counts_from_ms
            .unwrap_or(self.since_ms)
            .saturating_add(max_wait_ms(classes, &self.class))
    }
}

/// The manager's state as the store keeps it (one value, `meta/sync`): the holders, and the
/// waiters in arrival order; since orderings between definitions, the requests that wait for
/// their instance's relative order and the ordering tickets given (both left out while empty,
/// so a state stored before them loads unchanged).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRecord {
    /// The requests that hold their class.
    pub holders: Vec<SyncEntry>,
    /// The requests that wait, the oldest first.
    pub waiters: Vec<SyncEntry>,
    /// The requests that wait for their instance's relative order, the oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ordered: Vec<OrderWaiter>,
    /// The ordering tickets given.
    #[serde(default, skip_serializing_if = "no_tickets")]
    pub tickets: crate::ordering::Tickets,
}

fn no_tickets(t: &crate::ordering::Tickets) -> bool {
    *t == crate::ordering::Tickets::default()
}

/// What a request became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Begun {
    /// Granted now.
    Granted,
    /// It held already (a repeated request): answered with the grant again.
    AlreadyHeld,
    /// It waits behind these (holders first, then earlier waiters).
    Waiting(Vec<Blocker>),
    /// It waited already: nothing new.
    AlreadyWaiting,
    /// A later round of the same activity holds or waits: this one is stale.
    Stale,
}

/// What a waiting request waits behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocker {
    /// The request in the way.
    pub ticket: SyncTicket,
    /// Its class.
    pub class: ClassName,
    /// True when it holds its class; false when it is an earlier waiter.
    pub holds: bool,
}

/// A hold or a wait that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ended {
    /// The request.
    pub entry: SyncEntry,
    /// True when it held; false when it waited.
    pub held: bool,
}

/// The holders and waiters, with whether they changed since the book last handed them over.
#[derive(Debug, Default)]
pub(crate) struct Manager {
    state: SyncRecord,
    dirty: bool,
}

/// How long a request for `class` may wait, in ms.
pub(crate) fn max_wait_ms(classes: &ClassDocument, class: &ClassName) -> u64 {
    let secs = classes
        .class(class)
        .map_or(DEFAULT_MAX_WAIT_SECS, |c| c.max_wait_secs);
    u64::from(secs).saturating_mul(1000)
}

impl Manager {
    /// The manager as stored.
    pub(crate) fn restore(state: SyncRecord) -> Manager {
        Manager {
            state,
            dirty: false,
        }
    }

    /// The state, as stored and shown.
    pub(crate) fn state(&self) -> &SyncRecord {
        &self.state
    }

    /// The state when it changed since the last call (for the store).
    pub(crate) fn take_dirty(&mut self) -> Option<SyncRecord> {
        std::mem::take(&mut self.dirty).then(|| self.state.clone())
    }

    /// True when nobody holds or waits (for a class or for the relative order).
    pub(crate) fn is_empty(&self) -> bool {
        let s = &self.state;
        s.holders.is_empty() && s.waiters.is_empty() && s.ordered.is_empty()
    }

    /// A request: granted at once, or waiting (see the module's rule). A node asks again for
    /// an activity only once the earlier request's activity was final there, so an earlier
    /// round of the same activity asked by the same peer that still waits ends now
    /// (`superseded`); one that still holds may be a killed try whose kill has not taken
    /// effect yet (its node releases it once it has): it holds on, ending at
    /// `earlier_hold_ends_at` at the latest (by when its lease, no longer kept up since the
    /// kill, has ended it). A request is its ticket and its peer: another peer's request for
    /// the same ticket is another request (the module's doc).
    pub(crate) fn begin(
        &mut self,
        classes: &ClassDocument,
        entry: SyncEntry,
        earlier_hold_ends_at: u64,
        superseded: &mut Vec<Ended>,
    ) -> Begun {
        let (t, peer) = (entry.ticket, entry.peer.clone());
        let same =
            |e: &SyncEntry| e.peer == peer && e.of_activity(t.instance, t.partition, t.activity);
        let rounds = self.state.holders.iter().chain(&self.state.waiters);
        if rounds.filter(|e| same(e)).any(|e| e.ticket.round > t.round) {
            return Begun::Stale;
        }
        if self.state.holders.iter().any(|e| e.is(&t, &peer)) {
            return Begun::AlreadyHeld;
        }
        if self.state.waiters.iter().any(|e| e.is(&t, &peer)) {
            return Begun::AlreadyWaiting;
        }
        let earlier_holds: Vec<SyncTicket> = self
            .state
            .holders
            .iter()
            .filter(|e| same(e))
            .map(|e| e.ticket)
            .collect();
        let mut entry = entry;
        for earlier in &earlier_holds {
            let ends = self.mark_superseded(earlier, &peer, earlier_hold_ends_at, t.round);
            entry.wait_counts_from_ms = entry.wait_counts_from_ms.max(ends);
        }
        let waiters = std::mem::take(&mut self.state.waiters);
        let (gone, kept): (Vec<SyncEntry>, Vec<SyncEntry>) = waiters.into_iter().partition(same);
        self.state.waiters = kept;
        superseded.extend(gone.into_iter().map(|entry| Ended { entry, held: false }));
        self.dirty = true;
        let blockers = self.blockers(classes, &entry.class, self.state.waiters.len());
        if blockers.is_empty() {
            self.state.holders.push(entry);
            Begun::Granted
        } else {
            self.state.waiters.push(entry);
            Begun::Waiting(blockers)
        }
    }

    /// What a request of `class` that came after the first `earlier` waiters waits behind:
    /// the holders of a conflicting class, then those earlier waiters of one.
    pub(crate) fn blockers(
        &self,
        classes: &ClassDocument,
        class: &ClassName,
        earlier: usize,
    ) -> Vec<Blocker> {
        let holders = self.state.holders.iter().map(|e| (e, true));
        let waiters = self.state.waiters.iter().take(earlier).map(|e| (e, false));
        holders
            .chain(waiters)
            .filter(|(e, _)| classes.conflict(&e.class, class))
            .map(|(e, holds)| Blocker {
                ticket: e.ticket,
                class: e.class.clone(),
                holds,
            })
            .collect()
    }

    /// The hold or wait of exactly `ticket` asked by `peer` ends (a release of another round,
    /// or of another peer's request, frees nothing).
    pub(crate) fn end(&mut self, ticket: &SyncTicket, peer: &NodeId) -> Option<Ended> {
        self.remove_where(|e| e.is(ticket, peer)).pop()
    }

    /// Every hold and wait `pred` names ends.
    pub(crate) fn remove_where(&mut self, pred: impl Fn(&SyncEntry) -> bool) -> Vec<Ended> {
        let mut ended = Vec::new();
        for (list, held) in [
            (&mut self.state.holders, true),
            (&mut self.state.waiters, false),
        ] {
            let (gone, kept): (Vec<SyncEntry>, Vec<SyncEntry>) =
                std::mem::take(list).into_iter().partition(&pred);
            *list = kept;
            ended.extend(gone.into_iter().map(|entry| Ended { entry, held }));
        }
        if !ended.is_empty() {
            self.dirty = true;
        }
        ended
    }

    /// Grants, in arrival order, every waiter nothing blocks any more (the rule of the
    /// module's doc); what was granted, its `since_ms` now `now_ms`.
    pub(crate) fn grant_ready(&mut self, classes: &ClassDocument, now_ms: u64) -> Vec<SyncEntry> {
        let mut granted = Vec::new();
        let mut i = 0;
        while i < self.state.waiters.len() {
            let class = self.state.waiters[i].class.clone();
            if self.blockers(classes, &class, i).is_empty() {
                let mut entry = self.state.waiters.remove(i);
                entry.since_ms = now_ms;
                entry.wait_counts_from_ms = None;
                self.state.holders.push(entry.clone());
                granted.push(entry);
                self.dirty = true;
            } else {
                i += 1;
            }
        }
        granted
    }

    /// Removes and returns, in arrival order, every waiter whose class's `maxWait` ran out
    /// at `now_ms`, each with what it waited behind then.
    pub(crate) fn expire(
        &mut self,
        classes: &ClassDocument,
        now_ms: u64,
    ) -> Vec<(SyncEntry, Vec<Blocker>)> {
        let mut refused = Vec::new();
        let mut i = 0;
        while i < self.state.waiters.len() {
            let w = &self.state.waiters[i];
            if now_ms >= w.refused_at_ms(classes) {
                let blockers = self.blockers(classes, &w.class, i);
                refused.push((self.state.waiters.remove(i), blockers));
                self.dirty = true;
            } else {
                i += 1;
            }
        }
        refused
    }

    /// When the first waiter's `maxWait` runs out, ms since the epoch.
    pub(crate) fn next_expiry(&self, classes: &ClassDocument) -> Option<u64> {
        self.state
            .waiters
            .iter()
            .map(|w| w.refused_at_ms(classes))
            .min()
    }
}

#[cfg(test)]
mod tests;
