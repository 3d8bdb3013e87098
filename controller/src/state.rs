//! How the controller's bookkeeping lives in the store.
//!
//! Keys: `node/<peer id>` (a registered node, JSON), `instance/<id>` (an instance, JSON),
//! `def/<id>` (the instance's workflow definition as submitted), `hist/<id>/<n>` (the n-th
//! event of its history, JSON),
//! `meta/last_instance`, `meta/seq` (the last outgoing message's sequence number),
//! `seen/<origin>/<seq>` (a message already applied), and the outbox's `out/...`. Numbers are
//! zero-padded to 20 digits so that key order is numeric order.

use std::collections::HashMap;
use std::sync::Arc;

use mobiwf_runtime::store::{Batch, Store, StoreError, read_number, unreadable};
use mobiwf_xml_schema::WorkflowDefinition;

use mobiwf_book::{Book, Changes, History, HistoryEvent, Instance, NodeInfo};
use mobiwf_proto::InstanceId;

const SEQ_KEY: &str = "meta/seq";
const LAST_INSTANCE_KEY: &str = "meta/last_instance";

/// A change of the book that could not be written: nothing of the batch may be committed.
#[derive(Debug, thiserror::Error)]
#[error("cannot serialize {what} for the store: {source}")]
pub struct StageError {
    /// What it was (its store key).
    pub what: String,
    /// Why.
    #[source]
    pub source: serde_json::Error,
}

/// `value` as JSON, or why not.
fn json<T: serde::Serialize>(key: &str, value: &T) -> Result<Vec<u8>, StageError> {
    serde_json::to_vec(value).map_err(|source| StageError {
        what: key.to_owned(),
        source,
    })
}

/// Adds the book's changes and the sequence number to `batch`. On `Err`, the batch is
/// incomplete and must not be written.
pub fn stage(batch: &mut Batch, changes: &Changes, seq: u64) -> Result<(), StageError> {
    for node in &changes.nodes {
        let key = format!("node/{}", node.peer);
        let value = json(&key, node)?;
        batch.put(key, value);
    }
    for inst in &changes.instances {
        let key = format!("instance/{:020}", inst.id.0);
        let value = json(&key, inst)?;
        batch.put(key, value);
    }
    for (id, xml) in &changes.definitions {
        batch.put(format!("def/{:020}", id.0), xml.clone());
    }
    for (id, n, event) in &changes.history {
        let key = format!("hist/{:020}/{n:010}", id.0);
        let value = json(&key, event)?;
        batch.put(key, value);
    }
    batch.put(LAST_INSTANCE_KEY, changes.last_instance.to_string());
    batch.put(SEQ_KEY, seq.to_string());
    Ok(())
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
    let mut definitions = Vec::new();
    // Instances of one workflow were submitted with the same bytes: parsed once, shared.
    let mut parsed: HashMap<Vec<u8>, Arc<WorkflowDefinition>> = HashMap::new();
    for (k, v) in store.scan_prefix(b"def/")? {
        let id = number_after(&k, b"def/").ok_or_else(|| corrupt(&k, &"bad key"))?;
        let def = match parsed.get(&v) {
            Some(def) => def.clone(),
            None => {
                let def = mobiwf_xml_schema::load_definition(&v)
                    .map_err(|d| corrupt(&k, &d.render("stored definition")))?
                    .value;
                let def = Arc::new(def);
                parsed.insert(v, def.clone());
                def
            }
        };
        definitions.push((InstanceId(id), def));
    }
    let mut events = Vec::new();
    for (k, v) in store.scan_prefix(b"hist/")? {
        let id = number_after(&k, b"hist/").ok_or_else(|| corrupt(&k, &"bad key"))?;
        let event: HistoryEvent = serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        events.push((InstanceId(id), event));
    }
    let last_instance = read_number(store, LAST_INSTANCE_KEY)?;
    let seq = read_number(store, SEQ_KEY)?;
    let book = Book::restore(
        nodes,
        instances,
        definitions,
        History::restore(events),
        InstanceId(last_instance),
    );
    Ok((book, seq))
}

/// The zero-padded instance number right after `prefix` in a key.
fn number_after(key: &[u8], prefix: &[u8]) -> Option<u64> {
    let rest = key.get(prefix.len()..)?;
    std::str::from_utf8(rest.get(..20)?).ok()?.parse().ok()
}
