//! How a node's engine state lives in the store: keys, encoding, loading.
//!
//! Keys: `run/<instance>/<partition>` (a partition run's state, JSON),
//! `doc/<instance>/<partition>` (its partition document, written once), `known/<instance>` (what the
//! partners and the controller told about the instance, JSON), `seen/<origin>/<seq>` (a message already applied), `meta/seq` (the
//! last sequence number given to an outgoing message), and the outbox's `out/...`.
//! Numbers are zero-padded to 20 digits so that key order is numeric order.

use mobiwf_runtime::store::{Batch, Store, StoreError, read_number, unreadable};

use crate::engine::{Changes, Engine, Known, Run};

const SEQ_KEY: &str = "meta/seq";

fn run_key(instance: u64, partition: u64) -> String {
    format!("run/{instance:020}/{partition:020}")
}

fn doc_key(instance: u64, partition: u64) -> String {
    format!("doc/{instance:020}/{partition:020}")
}

fn known_key(instance: u64) -> String {
    format!("known/{instance:020}")
}

/// Adds the engine's changes to `batch`.
pub fn stage_changes(batch: &mut Batch, changes: &Changes) {
    for run in &changes.runs {
        let (instance, partition) = (run.key.instance, run.key.partition);
        if let Some(document) = &run.document {
            batch.put(doc_key(instance, partition), document.as_bytes());
        }
        batch.put(run_key(instance, partition), run.state.as_slice());
    }
    for (instance, known) in &changes.known {
        let value = serde_json::to_vec(known).unwrap_or_default();
        batch.put(known_key(*instance), value);
    }
}

/// Records the last sequence number used.
pub fn stage_seq(batch: &mut Batch, seq: u64) {
    batch.put(SEQ_KEY, seq.to_string());
}

/// The engine and the last sequence number, as the store holds them.
pub fn load(store: &dyn Store) -> Result<(Engine, u64), StoreError> {
    let corrupt = |k: &[u8], e: &dyn std::fmt::Display| unreadable(k, e);
    let mut runs = Vec::new();
    for (k, v) in store.scan_prefix(b"run/")? {
        let doc_key = [b"doc/", &k[b"run/".len()..]].concat();
        let document = store
            .get(&doc_key)?
            .map(|d| String::from_utf8_lossy(&d).into_owned());
        runs.push(Run::from_stored(&v, document).map_err(|e| corrupt(&k, &e))?);
    }
    let mut known = Vec::new();
    for (k, v) in store.scan_prefix(b"known/")? {
        let value: Known = serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        let instance = std::str::from_utf8(&k[b"known/".len()..])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| corrupt(&k, &"bad key"))?;
        known.push((instance, value));
    }
    let seq = read_number(store, SEQ_KEY)?;
    Ok((Engine::restore(runs, known), seq))
}
