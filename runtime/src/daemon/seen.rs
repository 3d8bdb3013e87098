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
//! A message numbered [`MAX_SEEN_ABOVE_FLOOR`] or more above the floor is left unanswered
//! (the sender tries it again later, while its older messages get through and raise the
//! floor): so at most that many keys are kept per sender and incarnation.

use std::collections::{BTreeSet, HashMap};

use mobiwf_proto::{MessageId, NodeId};

use crate::store::{Batch, Store, StoreError, read_number};

/// How far above a sender's floor a message may be numbered and still be taken; the keys kept
/// per sender and incarnation are fewer. The numbers count all the sender's messages (to every
/// receiver), so this is large; reaching it means one message of the sender's to this daemon
/// stayed unanswered while it sent a million others.
pub const MAX_SEEN_ABOVE_FLOOR: u64 = 1_000_000;

/// What one group knows of the applied ids beyond the store: the ids it applied and the floors
/// it raised, both written with it.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    applied: BTreeSet<MessageId>,
    floors: HashMap<(NodeId, u64), u64>,
}

/// What to make of an inbound message.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Not applied before: apply it.
    New,
    /// Applied (or answered) before: acknowledge it without applying it.
    Duplicate,
    /// Too far above the floor: leave it unanswered, the sender tries again.
    TooFarAhead,
}

/// How many `seen/` keys one read of a raise takes at most.
const DELETE_PAGE: usize = 1024;

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
        let floor = self.raise(store, batch, id, answered_below.min(id.seq))?;
        if id.seq < floor {
            return Ok(Verdict::Duplicate);
        }
        if self.applied.contains(id) || store.get(id.seen_key().as_bytes())?.is_some() {
            return Ok(Verdict::Duplicate);
        }
        if id.seq - floor >= MAX_SEEN_ABOVE_FLOOR {
            return Ok(Verdict::TooFarAhead);
        }
        Ok(Verdict::New)
    }

    /// Records `id` as applied, in `batch`.
    pub(crate) fn applied(&mut self, batch: &mut Batch, id: MessageId) {
        batch.put(id.seen_key(), Vec::new());
        self.applied.insert(id);
    }

    /// The sender's floor after raising it to `wanted`, with the keys below it deleted.
    fn raise(
        &mut self,
        store: &dyn Store,
        batch: &mut Batch,
        id: &MessageId,
        wanted: u64,
    ) -> Result<u64, StoreError> {
        let sender = (id.origin.clone(), id.incarnation);
        let floor = match self.floors.get(&sender) {
            Some(floor) => *floor,
            None => read_number(store, &id.floor_key())?,
        };
        if wanted <= floor {
            self.floors.insert(sender, floor);
            return Ok(floor);
        }
        batch.put(id.floor_key(), wanted.to_string());
        // Every key below the old floor is gone already: only [floor, wanted) is read, a page
        // at a time (a scan of the whole prefix per raise made each message cost what the
        // sender ever sent).
        let prefix = id.seen_prefix();
        let mut from = floor;
        'pages: loop {
            let start = MessageId {
                seq: from,
                ..id.clone()
            }
            .seen_key();
            let page = store.scan_from(prefix.as_bytes(), start.as_bytes(), DELETE_PAGE)?;
            let full = page.len() == DELETE_PAGE;
            for (key, _) in page {
                match number_after(&key, &prefix) {
                    Some(seq) if seq < wanted => {
                        batch.delete(key);
                        from = seq + 1;
                    }
                    _ => break 'pages,
                }
            }
            if !full {
                break;
            }
        }
        let lowest = MessageId {
            seq: 0,
            ..id.clone()
        };
        let below: Vec<MessageId> = self
            .applied
            .range(
                lowest..MessageId {
                    seq: wanted,
                    ..id.clone()
                },
            )
            .cloned()
            .collect();
        for gone in below {
            batch.delete(gone.seen_key());
            self.applied.remove(&gone);
        }
        self.floors.insert(sender, wanted);
        Ok(wanted)
    }
}

fn number_after(key: &[u8], prefix: &str) -> Option<u64> {
    std::str::from_utf8(key.strip_prefix(prefix.as_bytes())?)
        .ok()?
        .parse()
        .ok()
}
