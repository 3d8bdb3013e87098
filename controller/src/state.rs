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
    for (id, xml) in &changes.definitions {
        batch.put(format!("def/{id:020}"), xml.clone());
    }
    for (id, n, event) in &changes.history {
        batch.put(
            format!("hist/{id:020}/{n:010}"),
            serde_json::to_vec(event).unwrap_or_default(),
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
        definitions.push((id, def));
    }
    let mut events = Vec::new();
    for (k, v) in store.scan_prefix(b"hist/")? {
        let id = number_after(&k, b"hist/").ok_or_else(|| corrupt(&k, &"bad key"))?;
        let event: HistoryEvent = serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        events.push((id, event));
    }
    let last_instance = read_number(store, LAST_INSTANCE_KEY)?;
    let seq = read_number(store, SEQ_KEY)?;
    let book = Book::restore(
        nodes,
        instances,
        definitions,
        History::restore(events),
        last_instance,
    );
    Ok((book, seq))
}

/// The zero-padded instance number right after `prefix` in a key.
fn number_after(key: &[u8], prefix: &[u8]) -> Option<u64> {
    let rest = key.get(prefix.len()..)?;
    std::str::from_utf8(rest.get(..20)?).ok()?.parse().ok()
}
