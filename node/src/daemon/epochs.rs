//! The shell of the node core's epoch rule (`mobiwf_node_core::NodeCore::admit`): every
//! message goes through it first, before a probe is noted or a file it carries is kept. A
//! refused one is answered `Refused` (its sender, an owner of the controllers' book that was
//! fenced, stops trying it), logged and counted, never applied. A newer epoch is written
//! under `epoch/<shard>` in the batch of the group that applies the message, so that the
//! node knows it after a restart whenever something it allowed is on disk.

use mobiwf_node_core::{Heard, NotTaken};
use mobiwf_proto::{Epoch, Reply, ShardEpoch, ShardId};
use mobiwf_runtime::daemon::Group;
use mobiwf_runtime::mesh::Inbound;
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::store::{Batch, Store, StoreError, unreadable};

use super::actor::NodeActor;

/// The prefix of the epochs known per shard: `epoch/<shard>`, the epoch as decimal text.
const EPOCH_PREFIX: &str = "epoch/";

fn epoch_key(shard: ShardId) -> String {
    format!("{EPOCH_PREFIX}{:010}", shard.0)
}

/// Stages `known` (the epoch now known for its shard) in `batch`.
pub(super) fn stage(batch: &mut Batch, known: ShardEpoch) {
    batch.put(epoch_key(known.shard), known.epoch.0.to_string());
}

/// The epochs the store holds, one per shard (none in a store that never heard one, as
/// every store written before epochs were).
pub(super) fn load(store: &dyn Store) -> Result<Vec<ShardEpoch>, StoreError> {
    let mut known = Vec::new();
    for (key, value) in store.scan_prefix(EPOCH_PREFIX.as_bytes())? {
        let shard = std::str::from_utf8(&key[EPOCH_PREFIX.len()..])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| unreadable(&key, &"not a shard's epoch"))?;
        let epoch = std::str::from_utf8(&value)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| unreadable(&key, &"not an epoch"))?;
        known.push(ShardEpoch {
            shard: ShardId(shard),
            epoch: Epoch(epoch),
        });
    }
    Ok(known)
}

/// Tells the metrics the epochs known at a start.
pub(super) fn show(metrics: &Metrics, known: &[ShardEpoch]) {
    for stamp in known {
        metrics.set_controller_epoch(stamp.shard.0, stamp.epoch.0);
    }
}

impl NodeActor {
    /// Judges `inbound`'s epoch: the message to go on with, or `None` when it was refused
    /// (its answer staged in `group`, given after the group's write as every answer is).
    pub(super) fn admit_epoch(&mut self, inbound: Inbound, group: &mut Group) -> Option<Inbound> {
        let from = mobiwf_runtime::peer_text::node_id(&inbound.from);
        match self.core.admit(&from, inbound.envelope.epoch) {
            Ok(Heard::Unstamped | Heard::Current) => Some(inbound),
            Ok(Heard::Newer { now, was }) => {
                match was {
                    Some(was) => tracing::info!(
                        "shard {} of the controllers' book has a new owner: epoch {} (was {was}); \
                         messages of older epochs are refused from now on",
                        now.shard,
                        now.epoch
                    ),
                    None => tracing::info!(
                        "the controller owns shard {} of its book at epoch {}",
                        now.shard,
                        now.epoch
                    ),
                }
                stage(&mut group.batch, now);
                self.metrics.set_controller_epoch(now.shard.0, now.epoch.0);
                Some(inbound)
            }
            Err(NotTaken::Refused(reason) | NotTaken::Later(reason)) => {
                let kind = inbound.envelope.message.kind();
                let role = if inbound.from == self.controller.0 {
                    self.metrics.stale_epoch_refused();
                    Peer::Controller
                } else {
                    Peer::Partner
                };
                self.metrics.refused(kind, role);
                tracing::warn!(
                    peer = %inbound.from,
                    id = %inbound.envelope.id,
                    "refused a {kind} message: {reason}"
                );
                group.reply(inbound.reply, Reply::Refused { reason });
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_runtime::store::{Durability, MemoryStore};

    #[test]
    fn a_store_from_before_epochs_knows_none_and_the_epochs_staged_load_back() {
        let store = MemoryStore::default();
        // A node's store as it was before epochs: other keys, no `epoch/`.
        let mut old = Batch::default();
        old.put("meta/seq", "41");
        old.put("seen-floor/peer/0000000000000005", "3");
        store.write(old, Durability::Synced).unwrap();
        assert_eq!(load(&store).unwrap(), Vec::new());

        let at = |shard, epoch| ShardEpoch {
            shard: ShardId(shard),
            epoch: Epoch(epoch),
        };
        let mut batch = Batch::default();
        stage(&mut batch, at(0, 7));
        stage(&mut batch, at(0, 12));
        stage(&mut batch, at(3, 4));
        store.write(batch, Durability::Synced).unwrap();
        assert_eq!(load(&store).unwrap(), vec![at(0, 12), at(3, 4)]);
        assert_eq!(
            store.get(b"epoch/0000000000").unwrap(),
            Some(b"12".to_vec()),
            "the stored form: decimal text under the shard"
        );
    }

    #[test]
    fn an_epoch_that_cannot_be_read_is_an_error_not_forgotten() {
        let store = MemoryStore::default();
        let mut batch = Batch::default();
        batch.put("epoch/0000000000", "twelve");
        store.write(batch, Durability::Synced).unwrap();
        let e = load(&store).unwrap_err().to_string();
        assert!(e.contains("epoch/0000000000"), "{e}");
    }
}
