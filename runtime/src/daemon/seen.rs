//! Which messages a daemon applied already, kept bounded: per sender (origin and
//! incarnation) a *floor* below which every message is known answered, and one `seen/` key
//! for each message applied at or above it.
//!
//! The rule rests on what the sender's outbox guarantees (`outbox`): it delivers a message
//! until it is answered, never after, and with every try says `answered_below`, the lowest
//! number still unanswered among its messages to this receiver. So a message numbered below
//! the highest `answered_below` heard was answered (applied, or refused with its removal
//! synced at the sender) and can only come again as a stale duplicate: it is acknowledged
//! without being applied. A message at or above the floor is judged by its own key. Raising
//! the floor deletes the keys below it, in the batch that records the new floor. Nothing is
//! assumed about order: deliveries to one receiver run concurrently and arrive in any order.
//!
//! One group deletes at most [`MAX_FORGOTTEN_PER_GROUP`] keys (a floor may jump over many:
//! a group commit must stay small enough for any store, etcd's transactions included). The
//! floor still rises at once, as far as the rule says (keeping it lower would let a stale
//! duplicate of a message refused then be judged again); the keys left below it are only
//! garbage, never looked at again, and the floor's key says from which number on they may
//! remain (`<floor> <swept>`, or `<floor>` alone when none do). The sender's next raises, in
//! later groups, delete them first, up to the same bound each.
//!
//! A message numbered [`MAX_SEEN_ABOVE_FLOOR`] or more above the floor is left unanswered
//! (the sender tries it again later, while its older messages get through and raise the
//! floor): so at most that many keys are kept per sender and incarnation.
//!
//! The decisions are the rule of `mobiwf_delivery::seen` (pure, which the simulator drives
//! too); this is their shell: it reads the floors and keys the rule asks about and writes what
//! it decided.

pub use mobiwf_delivery::MAX_SEEN_ABOVE_FLOOR;
pub(crate) use mobiwf_delivery::{Verdict, foreign_id};

use std::collections::HashMap;

use mobiwf_proto::{MessageId, NodeId};

use crate::store::{Batch, Store, StoreError, unreadable};
use mobiwf_delivery::{Ledger, Look, Raise};

/// The most `seen/` keys below a floor one group deletes; the rest goes in later groups.
pub const MAX_FORGOTTEN_PER_GROUP: usize = 512;

/// The apply-once rule of one group ([`Ledger`]), on the store.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    ledger: Ledger,
    /// Per sender whose floor this group read or raised: the lowest number whose key may
    /// still be stored below its floor (none below it is, or this group deletes it).
    swept: HashMap<(NodeId, u64), u64>,
    /// Keys below a floor this group deletes.
    forgotten: usize,
}

/// A sender's floor as stored: the floor, and from which number on keys below it may remain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Floor {
    floor: u64,
    swept: u64,
}

impl Floor {
    /// The stored text: the floor alone when no key below it remains (as it always was).
    fn text(self) -> String {
        if self.swept >= self.floor {
            self.floor.to_string()
        } else {
            format!("{} {}", self.floor, self.swept)
        }
    }

    fn parse(text: &str) -> Option<Floor> {
        let mut numbers = text.split(' ').map(str::parse::<u64>);
        let floor = numbers.next()?.ok()?;
        let swept = match numbers.next() {
            None => floor,
            Some(swept) => swept.ok()?.min(floor),
        };
        numbers.next().is_none().then_some(Floor { floor, swept })
    }
}

/// The floor of `id`'s sender as stored (0 when absent).
fn read_floor(store: &dyn Store, id: &MessageId) -> Result<Floor, StoreError> {
    let key = id.floor_key();
    match store.get(key.as_bytes())? {
        Some(v) => std::str::from_utf8(&v)
            .ok()
            .and_then(Floor::parse)
            .ok_or_else(|| unreadable(key.as_bytes(), &"not a floor")),
        None => Ok(Floor { floor: 0, swept: 0 }),
    }
}

fn sender(id: &MessageId) -> (NodeId, u64) {
    (id.origin.clone(), id.incarnation)
}

impl Seen {
    /// Judges `id`, first raising its sender's floor to what the sender says was answered
    /// (`answered_below`, at most the message's own number).
    pub(crate) fn judge(
        &mut self,
        store: &dyn Store,
        batch: &mut Batch,
        id: &MessageId,
        answered_below: u64,
    ) -> Result<Verdict, StoreError> {
        let floor = match self.ledger.floor(id) {
            Some(floor) => floor,
            None => {
                let stored = read_floor(store, id)?;
                self.swept.insert(sender(id), stored.swept);
                stored.floor
            }
        };
        let judgement = self.ledger.judge(id, floor, answered_below);
        if let Some(raise) = judgement.raise {
            self.forget_below(store, batch, id, raise)?;
        }
        Ok(match judgement.look {
            Look::Decided(verdict) => verdict,
            Look::ByRecord(look) => look.verdict(store.get(id.seen_key().as_bytes())?.is_some()),
        })
    }

    /// Records `id` as applied, in `batch`.
    pub(crate) fn applied(&mut self, batch: &mut Batch, id: MessageId) {
        batch.put(id.seen_key(), Vec::new());
        self.ledger.applied(id);
    }

    /// Stages the new floor of `id`'s sender and the deletion of its keys below it, as many
    /// as this group may still delete: first those an earlier raise left, from the lowest.
    fn forget_below(
        &mut self,
        store: &dyn Store,
        batch: &mut Batch,
        id: &MessageId,
        Raise {
            from,
            to,
            forgotten,
        }: Raise,
    ) -> Result<(), StoreError> {
        // Below `swept` every key is gone already (or deleted in this group): only
        // [swept, to) is read, a page at a time (a scan of the whole prefix per raise made
        // each message cost what the sender ever sent).
        let start = self.swept.get(&sender(id)).map_or(from, |s| (*s).min(from));
        let prefix = id.seen_prefix();
        let mut next = start;
        let swept = 'pages: loop {
            let room = MAX_FORGOTTEN_PER_GROUP - self.forgotten;
            if room == 0 {
                break next;
            }
            let key = MessageId {
                seq: next,
                ..id.clone()
            }
            .seen_key();
            let page = store.scan_from(prefix.as_bytes(), key.as_bytes(), room)?;
            let full = page.len() == room;
            for (key, _) in page {
                match number_after(&key, &prefix) {
                    Some(seq) if seq < to => {
                        batch.delete(key);
                        self.forgotten += 1;
                        next = seq + 1;
                    }
                    _ => break 'pages to,
                }
            }
            if !full {
                break to;
            }
        };
        batch.put(id.floor_key(), Floor { floor: to, swept }.text());
        self.swept.insert(sender(id), swept);
        // Staged in this group's batch, not in the store: not counted.
        for gone in forgotten {
            batch.delete(gone.seen_key());
        }
        Ok(())
    }
}

fn number_after(key: &[u8], prefix: &str) -> Option<u64> {
    std::str::from_utf8(key.strip_prefix(prefix.as_bytes())?)
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::Floor;

    #[test]
    fn a_floor_reads_back_and_an_old_one_still_reads() {
        for floor in [
            Floor { floor: 0, swept: 0 },
            Floor {
                floor: 1201,
                swept: 513,
            },
        ] {
            assert_eq!(Floor::parse(&floor.text()), Some(floor));
        }
        // As written before keys could remain below a floor.
        assert_eq!(
            Floor::parse("42"),
            Some(Floor {
                floor: 42,
                swept: 42
            })
        );
        assert_eq!(
            Floor {
                floor: 42,
                swept: 42
            }
            .text(),
            "42"
        );
        for bad in ["", "x", "1 x", "1 2 3", "-1"] {
            assert_eq!(Floor::parse(bad), None, "{bad:?}");
        }
    }
}
