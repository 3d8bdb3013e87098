//! How the controller's bookkeeping lives in the store.
//!
//! Keys: `node/<peer id>` (a registered node, JSON), `instance/<id>` (an instance, JSON),
//! `def/<id>` (the instance's workflow definition as submitted), `hist/<id>/<n>` (the n-th
//! event of its history, JSON),
//! `meta/last_instance`, `meta/people` (the organisation directory and the last claim number,
//! JSON), `meta/seq` (the last outgoing message's sequence number; the daemon
//! shell's),
//! `seen/<origin>/<seq>` (a message already applied), and the outbox's `out/...`. Numbers are
//! zero-padded to 20 digits so that key order is numeric order.

use std::collections::HashMap;
use std::sync::Arc;

use mobiwf_runtime::store::{Batch, Store, StoreError, encode, read_number, unreadable};
use mobiwf_xml_schema::WorkflowDefinition;

use mobiwf_book::{Book, Changes, History, HistoryEvent, Instance, NodeInfo, PeopleRecord};
use mobiwf_proto::InstanceId;

const LAST_INSTANCE_KEY: &str = "meta/last_instance";
const PEOPLE_KEY: &str = "meta/people";

/// Adds the book's changes to `batch`. On `Err` (a value that cannot be encoded), the batch
/// is incomplete and must not be written.
pub fn stage(batch: &mut Batch, changes: &Changes) -> Result<(), StoreError> {
    for node in &changes.nodes {
        let key = format!("node/{}", node.peer);
        let value = encode(&key, node)?;
        batch.put(key, value);
    }
    for peer in &changes.removed_nodes {
        batch.delete(format!("node/{peer}"));
    }
    for inst in &changes.instances {
        let key = format!("instance/{:020}", inst.id.0);
        let value = encode(&key, inst)?;
        batch.put(key, value);
    }
    for (id, xml) in &changes.definitions {
        batch.put(format!("def/{:020}", id.0), xml.clone());
    }
    for (id, n, event) in &changes.history {
        let key = format!("hist/{:020}/{n:010}", id.0);
        let value = encode(&key, event)?;
        batch.put(key, value);
    }
    if let Some(people) = &changes.people {
        let value = encode(PEOPLE_KEY, people)?;
        batch.put(PEOPLE_KEY, value);
    }
    batch.put(LAST_INSTANCE_KEY, changes.last_instance.to_string());
    Ok(())
}

/// The book, as the store holds it.
pub fn load(store: &dyn Store) -> Result<Book, StoreError> {
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
    let book = Book::restore(
        nodes,
        instances,
        definitions,
        History::restore(events),
        InstanceId(last_instance),
    );
    let Some(people) = store.get(PEOPLE_KEY.as_bytes())? else {
        return Ok(book);
    };
    let key = PEOPLE_KEY.as_bytes();
    let record: PeopleRecord = serde_json::from_slice(&people).map_err(|e| corrupt(key, &e))?;
    let directory = record.directory().map_err(|e| corrupt(key, &e))?;
    Ok(book.with_people(directory, record.last_request))
}

/// The zero-padded instance number right after `prefix` in a key.
fn number_after(key: &[u8], prefix: &[u8]) -> Option<u64> {
    let rest = key.get(prefix.len()..)?;
    std::str::from_utf8(rest.get(..20)?).ok()?.parse().ok()
}
