//! The numbers of the messages each receiver has not answered yet: the lowest is what every
//! try tells it as `answered_below` (`mobiwf_delivery::answered_below`), so it can forget the
//! ids below. Apart because three
//! paths change it (dispatch, an answer taken, an owner's group written) and delivery reads it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use mobiwf_proto::NodeId;

/// The numbers of the messages not answered yet, per receiver.
#[derive(Default)]
pub(super) struct Unanswered(Mutex<HashMap<NodeId, BTreeSet<u64>>>);

impl Unanswered {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<NodeId, BTreeSet<u64>>) -> T) -> T {
        // A panic elsewhere while holding it leaves the sets whole (inserts and removes).
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut map)
    }

    pub(super) fn add(&self, to: &NodeId, seq: u64) {
        self.with(|map| map.entry(to.clone()).or_default().insert(seq));
    }

    pub(super) fn remove(&self, to: &NodeId, seq: u64) {
        self.with(|map| {
            if let Some(set) = map.get_mut(to) {
                set.remove(&seq);
                if set.is_empty() {
                    map.remove(to);
                }
            }
        });
    }

    pub(super) fn lowest(&self, to: &NodeId) -> Option<u64> {
        self.with(|map| map.get(to).and_then(|set| set.first().copied()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_is_per_receiver_and_moves_as_numbers_are_answered() {
        let (a, b) = (NodeId::new("a"), NodeId::new("b"));
        let unanswered = Unanswered::default();
        for seq in [5, 2, 9] {
            unanswered.add(&a, seq);
        }
        unanswered.add(&b, 4);
        assert_eq!(
            (unanswered.lowest(&a), unanswered.lowest(&b)),
            (Some(2), Some(4))
        );
        unanswered.remove(&a, 2);
        unanswered.remove(&b, 4);
        assert_eq!(
            (unanswered.lowest(&a), unanswered.lowest(&b)),
            (Some(5), None)
        );
        // A number answered twice, or never counted, changes nothing.
        unanswered.remove(&a, 2);
        unanswered.remove(&b, 1);
        assert_eq!(unanswered.lowest(&a), Some(5));
    }
}
