//! How a node's engine state lives in the store: keys, encoding, loading.
//!
//! Keys: `run/<instance>/<partition>` (a partition run, JSON), `heard/<instance>` (remote
//! outcomes heard, JSON), `seen/<origin>/<seq>` (a message already applied), `meta/seq` (the
//! last sequence number given to an outgoing message), and the outbox's `out/...`.
//! Numbers are zero-padded to 20 digits so that key order is numeric order.

use std::collections::BTreeMap;

use mobiwf_runtime::store::{Batch, Store, StoreError, read_number, unreadable};
use mobiwf_runtime::wire::Outcome;

use crate::engine::{Changes, Engine, Run};

const SEQ_KEY: &str = "meta/seq";

fn run_key(instance: u64, partition: u64) -> String {
    format!("run/{instance:020}/{partition:020}")
}

fn heard_key(instance: u64) -> String {
    format!("heard/{instance:020}")
}

/// Adds the engine's changes to `batch`.
pub fn stage_changes(batch: &mut Batch, changes: &Changes) {
    for run in &changes.runs {
        // Serializing plain data to JSON cannot fail.
        let value = serde_json::to_vec(run).unwrap_or_default();
        batch.put(run_key(run.key.instance, run.key.partition), value);
    }
    for (instance, heard) in &changes.heard {
        let value = serde_json::to_vec(heard).unwrap_or_default();
        batch.put(heard_key(*instance), value);
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
        let run: Run = serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        runs.push(run.reload().map_err(|e| corrupt(&k, &e))?);
    }
    let mut heard = Vec::new();
    for (k, v) in store.scan_prefix(b"heard/")? {
        let map: BTreeMap<u64, Outcome> =
            serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        let instance = std::str::from_utf8(&k[b"heard/".len()..])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| corrupt(&k, &"bad key"))?;
        heard.push((instance, map));
    }
    let seq = read_number(store, SEQ_KEY)?;
    Ok((Engine::restore(runs, heard), seq))
}
