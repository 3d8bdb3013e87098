//! A link break (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §5.3): when
//! this device fails to reach an item's host `UNREACHABLE_AFTER_FAILURES` times in a row, that
//! host's items are disabled here, except those a user holds with what they read copied onto the
//! device (locked for offline work, or selected and copied): those go on offline, their claims
//! waiting in the outbox. The others show in the worklist with why, and a claim on one is refused
//! at once rather than left waiting. They are enabled again as soon as the host answers.
//! Not stored (a restart finds out again), so left out of the desk's equality.

use std::collections::BTreeSet;

use mobiwf_proto::{NodeId, Verdict};

use super::offline::Offline;
use super::{Applied, Desk, DeskItem};

/// The hosts this device cannot reach now: what a restart forgets (found again on the next
/// failed deliveries), so not part of the desk's durable state, and left out of its equality
/// (a restored desk equals the live one).
#[derive(Debug, Clone, Default)]
pub(super) struct Unreachable(BTreeSet<NodeId>);

impl PartialEq for Unreachable {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Unreachable {}

impl Desk {
    /// Deliveries to `host` (a peer id) failed, or it answered again.
    pub(super) fn host_link(&mut self, host: NodeId, reachable: bool) -> Applied {
        if reachable {
            self.unreachable_hosts.0.remove(&host);
        } else {
            self.unreachable_hosts.0.insert(host);
        }
        Applied::default()
    }

    /// Why `user` cannot work on `item` now (its host cannot be reached and what it reads is
    /// not on this device in their hands); `None` when they can.
    pub fn disabled(&self, item: &DeskItem, user: &str) -> Option<String> {
        // Links are told of by peer id: a host whose address names none is never among them.
        let host = item.info.host.peer()?;
        if !self.unreachable_hosts.0.contains(host) {
            return None;
        }
        let goes_on = item.holder(user).is_some()
            && item.info.disconnected
            && item.offline() == Offline::Ready;
        (!goes_on).then(|| {
            format!(
                "disabled: its host {host} cannot be reached from this device; it comes back \
                 when the host answers (only items you hold with their data copied here can be \
                 worked on meanwhile)"
            )
        })
    }

    /// The verdict on a claim on a disabled item.
    pub(super) fn refused_disabled(&self, item: &DeskItem, user: &str) -> Option<Verdict> {
        self.disabled(item, user)
            .map(|reason| Verdict::Invalid { reason })
    }
}
