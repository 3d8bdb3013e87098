//! How the controller's bookkeeping lives in the store.
//!
//! Keys: `node/<peer id>` (a registered node, JSON), `instance/<id>` (an instance, JSON),
//! `meta/last_instance`, `meta/seq` (the last outgoing message's sequence number),
//! `seen/<origin>/<seq>` (a message already applied), and the outbox's `out/...`. Numbers are
//! zero-padded to 20 digits so that key order is numeric order.

use mobiwf_runtime::store::{Batch, Store, StoreError, read_number, unreadable};

use crate::book::{Book, Changes, Instance, NodeInfo};

const SEQ_KEY: &str = "meta/seq";
const LAST_INSTANCE_KEY: &str = "meta/last_instance";

/// Adds the book's changes and the sequence number to `batch`.
pub fn stage(batch: &mut Batch, changes: &Changes, seq: u64) {
    for node in &changes.nodes {
        // Serializing plain data to JSON cannot fail.
        batch.put(
            format!("node/{}", node.peer),
            serde_json::to_vec(node).unwrap_or_default(),
        );
    }
    for inst in &changes.instances {
        batch.put(
            format!("instance/{:020}", inst.id),
            serde_json::to_vec(inst).unwrap_or_default(),
        );
    }
    batch.put(LAST_INSTANCE_KEY, changes.last_instance.to_string());
    batch.put(SEQ_KEY, seq.to_string());
}

/// The book and the last sequence number, as the store holds them.
pub fn load(store: &dyn Store) -> Result<(Book, u64), StoreError> {
    let corrupt = |k: &[u8], e: &dyn std::fmt::Display| unreadable(k, e);
    let mut nodes = Vec::new();
    for (k, v) in store.scan_prefix(b"node/")? {
        nodes.push(serde_json::from_slice::<NodeInfo>(&v).map_err(|e| corrupt(&k, &e))?);
    }
    let mut instances = Vec::new();
    for (k, v) in store.scan_prefix(b"instance/")? {
        instances.push(serde_json::from_slice::<Instance>(&v).map_err(|e| corrupt(&k, &e))?);
    }
    let last_instance = read_number(store, LAST_INSTANCE_KEY)?;
    let seq = read_number(store, SEQ_KEY)?;
    Ok((Book::restore(nodes, instances, last_instance), seq))
}
