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
//!
//! The decisions are the rule of `mobiwf_delivery::seen` (pure, which the simulator drives
//! too); this is their shell: it reads the floors and keys the rule asks about and writes what
//! it decided.

pub use mobiwf_delivery::MAX_SEEN_ABOVE_FLOOR;
pub(crate) use mobiwf_delivery::{Verdict, foreign_id};

use mobiwf_proto::MessageId;

use crate::store::{Batch, Store, StoreError, read_number};
use mobiwf_delivery::{Ledger, Look, Raise};

/// The apply-once rule of one group ([`Ledger`]), on the store.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    ledger: Ledger,
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
        let floor = match self.ledger.floor(id) {
            Some(floor) => floor,
            None => read_number(store, &id.floor_key())?,
        };
        let judgement = self.ledger.judge(id, floor, answered_below);
        if let Some(raise) = judgement.raise {
            forget_below(store, batch, id, raise)?;
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
}

/// Stages the new floor of `id`'s sender and the deletion of its keys below it.
fn forget_below(
    store: &dyn Store,
    batch: &mut Batch,
    id: &MessageId,
    Raise {
        from,
        to,
        forgotten,
    }: Raise,
) -> Result<(), StoreError> {
    batch.put(id.floor_key(), to.to_string());
    // Every key below the old floor is gone already: only [from, to) is read, a page at a
    // time (a scan of the whole prefix per raise made each message cost what the sender ever
    // sent).
    let prefix = id.seen_prefix();
    let mut next = from;
    'pages: loop {
        let start = MessageId {
            seq: next,
            ..id.clone()
        }
        .seen_key();
        let page = store.scan_from(prefix.as_bytes(), start.as_bytes(), DELETE_PAGE)?;
        let full = page.len() == DELETE_PAGE;
        for (key, _) in page {
            match number_after(&key, &prefix) {
                Some(seq) if seq < to => {
                    batch.delete(key);
                    next = seq + 1;
                }
                _ => break 'pages,
            }
        }
        if !full {
            break;
        }
    }
    for gone in forgotten {
        batch.delete(gone.seen_key());
    }
    Ok(())
}

fn number_after(key: &[u8], prefix: &str) -> Option<u64> {
    std::str::from_utf8(key.strip_prefix(prefix.as_bytes())?)
        .ok()?
        .parse()
        .ok()
}
