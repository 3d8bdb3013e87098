//! The numbering of outgoing messages: every message id is this daemon's peer id, the store's
//! incarnation and the next sequence number, kept in the store with the messages that used it.
//! Apart from the group because it outlives every group and is made once, from the store.

use std::collections::HashMap;

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Location, MessageId, NodeId};

use crate::outbox;
use crate::store::{Batch, Durability, Store, StoreError};

/// The store key of the last sequence number given to an outgoing message.
pub const SEQ_KEY: &str = "meta/seq";

/// The store key of this store's incarnation: a random number made once, when the store is
/// first opened, and put in every message id. A data directory wiped with its key kept is a
/// new incarnation, so its messages (numbered from 1 again) are new to every receiver.
pub const INCARNATION_KEY: &str = "meta/incarnation";

/// Most parsed partner addresses a [`Sequencer`] keeps; it forgets them all when full (the
/// documents of one node name few partners, so this is never reached in practice).
pub const MAX_CACHED_ADDRESSES: usize = 4096;

/// Gives every outgoing message its id: this daemon's peer id and the next sequence number
/// (kept in the store under [`SEQ_KEY`], written with the messages that used it). Also keeps
/// the partner addresses it parsed, so that a document's `ip` is parsed once, not once per
/// message.
#[derive(Debug)]
pub struct Sequencer {
    me: NodeId,
    incarnation: u64,
    seq: u64,
    written: u64,
    addresses: HashMap<String, (PeerId, Multiaddr)>,
}

impl Sequencer {
    /// Reads the last sequence number `me` used from the store, and the store's incarnation
    /// (made and written, synced, the first time).
    pub fn load(store: &dyn Store, me: PeerId) -> Result<Sequencer, StoreError> {
        let seq = crate::store::read_number(store, SEQ_KEY)?;
        Ok(Sequencer {
            me: NodeId::new(me.to_string()),
            incarnation: incarnation(store)?,
            seq,
            written: seq,
            addresses: HashMap::new(),
        })
    }

    /// This daemon's peer id: the origin of every message id it gives.
    pub fn me(&self) -> &NodeId {
        &self.me
    }

    /// This store's incarnation, in every message id it gives.
    pub fn incarnation(&self) -> u64 {
        self.incarnation
    }

    /// The last sequence number given.
    pub fn last(&self) -> u64 {
        self.seq
    }

    pub(super) fn next(&mut self) -> MessageId {
        self.seq += 1;
        MessageId {
            origin: self.me.clone(),
            incarnation: self.incarnation,
            seq: self.seq,
        }
    }

    /// The peer and dial address of a partner's full libp2p address (`.../p2p/<peer id>`).
    pub fn address(&mut self, location: &Location) -> Result<(PeerId, Multiaddr), String> {
        if let Some(found) = self.addresses.get(location.as_str()) {
            return Ok(found.clone());
        }
        let parsed = outbox::peer_of(location)?;
        if self.addresses.len() >= MAX_CACHED_ADDRESSES {
            self.addresses.clear();
        }
        self.addresses
            .insert(location.as_str().to_owned(), parsed.clone());
        Ok(parsed)
    }

    /// Stages the sequence number in `batch` when messages used new ones since the last
    /// time.
    pub(super) fn stage(&mut self, batch: &mut Batch) {
        if self.seq != self.written {
            batch.put(SEQ_KEY, self.seq.to_string());
            self.written = self.seq;
        }
    }
}

/// The store's incarnation, made (random, never 0) and written the first time. A store without
/// one was written before message ids carried incarnations (protocol 3): its `seen/` keys,
/// `seen/<origin>/<seq>`, move in the batch that writes the incarnation to where ids of
/// incarnation 0 are looked up, `seen/<origin>/0000000000000000/<seq>`: the messages its
/// senders stored before they were upgraded come again with incarnation 0 (a lost answer, a
/// delivery not yet written), and must still be known as applied. Their senders' floors
/// (`answered_below`) compact them as those messages drain.
fn incarnation(store: &dyn Store) -> Result<u64, StoreError> {
    let kept = crate::store::read_number(store, INCARNATION_KEY)?;
    if kept != 0 {
        return Ok(kept);
    }
    let mut bytes = [0u8; 8];
    let made = match getrandom::fill(&mut bytes) {
        Ok(()) => u64::from_le_bytes(bytes),
        // No randomness: the clock, to the nanosecond, tells incarnations apart as well.
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    }
    .max(1);
    let mut batch = Batch::default();
    batch.put(INCARNATION_KEY, made.to_string());
    for (key, _) in store.scan_prefix(b"seen/")? {
        if let Some(moved) = seen_key_of_incarnation_0(&key) {
            batch.put(moved, Vec::new());
            batch.delete(key);
        }
    }
    store.write(batch, Durability::Synced)?;
    Ok(made)
}

/// Where the `seen/` key of protocol 2, `seen/<origin>/<seq>`, is looked up now: the same id
/// with incarnation 0. `None` for any other key.
fn seen_key_of_incarnation_0(key: &[u8]) -> Option<String> {
    let rest = std::str::from_utf8(key).ok()?.strip_prefix("seen/")?;
    let (origin, seq) = rest.split_once('/')?;
    let seq: u64 = seq.parse().ok().filter(|_| !origin.is_empty())?;
    let id = mobiwf_proto::MessageId {
        origin: origin.to_owned().into(),
        incarnation: 0,
        seq,
    };
    Some(id.seen_key())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    #[test]
    fn ids_carry_the_incarnation_of_the_store_made_once() {
        let me = PeerId::random();
        let store = MemoryStore::default();
        let mut first = Sequencer::load(&store, me).unwrap();
        assert_ne!(first.incarnation(), 0);
        assert_eq!(first.next().incarnation, first.incarnation());
        let again = Sequencer::load(&store, me).unwrap();
        assert_eq!(
            again.incarnation(),
            first.incarnation(),
            "kept in the store"
        );
        // A new store (a wiped data directory, the key kept): another incarnation.
        let wiped = Sequencer::load(&MemoryStore::default(), me).unwrap();
        assert_ne!(wiped.incarnation(), first.incarnation());
    }
}
