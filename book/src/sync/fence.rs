//! When the hold of a node that is suspected or gone ends. A holder's command runs until its
//! lease ran out on its node, and its node renews that lease only up to the last time it sent
//! something the controller is known to have received (the request the grant answers, an
//! answer to a probe), plus the lease. So the controller ends such a hold only once
//! [`fence_ms`] (the lease, then the watchdog's look and kill) passed after the last time the
//! node's lease may count from:
//!
//! - a node an operator removed: its removal (from then on it is neither probed nor answered);
//! - a suspected node: its grant, when that is later than what the failure detector already
//!   waited (it suspects a node only after `--suspect-after`, twice the lease, without an
//!   answer to its probes; the node's request may be what its lease counts from);
//! - a node no longer known otherwise: when the controller noticed it;
//! - a hold a later request of the same activity superseded (its node killed the try, which
//!   may not be over yet, and its node releases it once it is): that request's arrival, later
//!   than the kill, from when the try's lease is no longer kept up. The node being known
//!   again does not let such a hold stand: it ends by its node's release or then.
//!
//! A hold whose node is known and not suspected again stands again. The end is stored with the
//! hold ([`SyncEntry::ending`]), so a restart keeps it; the book's tick acts on it
//! ([`Book::sync_deadline`]).

use mobiwf_proto::{NodeId, NodeName, SyncTicket, fence_ms};
use serde::{Deserialize, Serialize};

use super::{Ended, Manager, SyncEntry};
use crate::Book;

/// When a hold whose node is suspected or gone ends, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ending {
    /// When it ends, ms since the epoch: its command is dead by then.
    pub at_ms: u64,
    /// Why it ends (its node was removed, is suspected, is no longer known; a later request
    /// superseded it).
    pub why: String,
    /// What ends it (left out for its node, as stored before superseded holds ended so).
    #[serde(default, skip_serializing_if = "EndCause::is_node")]
    pub cause: EndCause,
}

/// What ends a hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndCause {
    /// Its node was removed, is suspected or is no longer known: it stands again once its
    /// node is back.
    #[default]
    Node,
    /// A later request of its activity superseded it: it ends by its node's release or at
    /// its end, whatever becomes of its node.
    Superseded,
}

impl EndCause {
    fn is_node(&self) -> bool {
        *self == EndCause::Node
    }
}

impl Manager {
    /// The hold `ticket` of `peer` ends at `at_ms` for `why`, its node suspected or gone,
    /// unless it is to end later already (a superseded hold stays superseded, its end moved
    /// to the later time).
    pub(crate) fn mark_ending(
        &mut self,
        ticket: &SyncTicket,
        peer: &NodeId,
        at_ms: u64,
        why: &str,
    ) {
        for e in self.state.holders.iter_mut().filter(|e| e.is(ticket, peer)) {
            match &mut e.ending {
                Some(end) if end.at_ms >= at_ms => continue,
                Some(end) if end.cause == EndCause::Superseded => end.at_ms = at_ms,
                slot => {
                    *slot = Some(Ending {
                        at_ms,
                        why: why.to_owned(),
                        cause: EndCause::Node,
                    })
                }
            }
            self.dirty = true;
        }
    }

    /// The hold `ticket` of `peer` was superseded by round `round` of its activity: it ends at
    /// `at_ms` at the latest, whatever becomes of its node. When it ends at the latest (none:
    /// no such hold).
    pub(crate) fn mark_superseded(
        &mut self,
        ticket: &SyncTicket,
        peer: &NodeId,
        at_ms: u64,
        round: u32,
    ) -> Option<u64> {
        let mut ends = None;
        for e in self.state.holders.iter_mut().filter(|e| e.is(ticket, peer)) {
            let superseded = |end: &Ending| end.cause == EndCause::Superseded;
            if !e.ending.as_ref().is_some_and(superseded) {
                let at_ms = e.ending.as_ref().map_or(at_ms, |end| end.at_ms.max(at_ms));
                e.ending = Some(Ending {
                    at_ms,
                    why: format!(
                        "superseded by round {round} of its activity: held until its node \
                         releases it or its killed try's lease has ended it"
                    ),
                    cause: EndCause::Superseded,
                });
                self.dirty = true;
            }
            ends = ends.max(e.ending.as_ref().map(|end| end.at_ms));
        }
        ends
    }

    /// The holds of `peer` its node's suspicion or absence was ending stand again: its node is
    /// back.
    pub(crate) fn stand(&mut self, peer: &NodeId) {
        for e in self.state.holders.iter_mut().filter(|e| &e.peer == peer) {
            if e.ending
                .as_ref()
                .is_some_and(|end| end.cause == EndCause::Node)
            {
                e.ending = None;
                self.dirty = true;
            }
        }
    }

    /// Removes and returns the holds whose end came at `now_ms`.
    pub(crate) fn due_endings(&mut self, now_ms: u64) -> Vec<Ended> {
        let due = |e: &SyncEntry| e.ending.as_ref().is_some_and(|end| end.at_ms <= now_ms);
        let (gone, kept): (Vec<SyncEntry>, Vec<SyncEntry>) =
            std::mem::take(&mut self.state.holders)
                .into_iter()
                .partition(due);
        self.state.holders = kept;
        if !gone.is_empty() {
            self.dirty = true;
        }
        gone.into_iter()
            .map(|entry| Ended { entry, held: true })
            .collect()
    }

    /// When the first marked hold ends.
    pub(crate) fn next_ending(&self) -> Option<u64> {
        let holders = self.state.holders.iter();
        holders
            .filter_map(|e| e.ending.as_ref())
            .map(|end| end.at_ms)
            .min()
    }
}

impl Book {
    /// An operator removes node `name` (`peer`) at `now_ms`: its holds end once its lease,
    /// counted from now at the latest, is over there.
    pub(crate) fn fence_removed(&mut self, now_ms: u64, peer: &NodeId, name: &NodeName) {
        let at = now_ms.saturating_add(fence_ms(self.lease_ms));
        let why = format!("node {name} was removed by an operator: its lease has run out there");
        let tickets: Vec<SyncTicket> = self.sync_of(peer).map(|e| e.ticket).collect();
        for t in tickets {
            self.sync.mark_ending(&t, peer, at, &why);
        }
    }

    /// Marks the holds whose node is suspected or no longer known to end (the module's doc),
    /// lets those whose node is back stand, and ends the holds whose end came at `now_ms`.
    pub(super) fn fenced_holds(&mut self, now_ms: u64) -> Vec<Ended> {
        let fence = fence_ms(self.lease_ms);
        let holders = self.sync.state().holders.clone();
        for e in &holders {
            match self.nodes.get(&e.peer) {
                Some(n) if n.suspected.is_none() => self.sync.stand(&e.peer),
                Some(_) => {
                    let why = format!(
                        "node {} is suspected: the grant's lease ran out there",
                        e.node
                    );
                    let at = e.since_ms.saturating_add(fence);
                    self.sync.mark_ending(&e.ticket, &e.peer, at, &why);
                }
                None if e.ending.is_none() => {
                    let why = format!("node {} is no longer known", e.node);
                    let at = now_ms.saturating_add(fence);
                    self.sync.mark_ending(&e.ticket, &e.peer, at, &why);
                }
                None => {}
            }
        }
        self.sync.due_endings(now_ms)
    }

    /// The holds of `peer`.
    fn sync_of<'a>(&'a self, peer: &'a NodeId) -> impl Iterator<Item = &'a SyncEntry> + 'a {
        self.sync
            .state()
            .holders
            .iter()
            .filter(move |e| &e.peer == peer)
    }
}
