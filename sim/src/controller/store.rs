//! The controller's book on its simulated disk, with the keys and the rules of the controller
//! daemon's store (`mobiwf-controller`, `src/state.rs`): `node/`, `instance/`, `sum/`, `live/`,
//! `fin/`, `def/`, `hist/`, `deployed/`, `meta/...`. The book's own stored types are encoded and
//! decoded as the daemon does (JSON), and a restart goes through the same load: the nodes, the
//! instances not settled (through `live/`) with their definitions and histories, the class
//! document, the synchronization manager, the orderings, the people side; a settled instance is
//! read back before any input about it ([`recall`]).

use std::collections::HashMap;
use std::sync::Arc;

use mobiwf_book::{
    Book, Changes, ClassesRecord, DefinitionRef, History, HistoryEvent, Instance, NodeInfo,
    OrderingsRecord, PeopleRecord, Recalled, Registry, RegistryChanges, SyncRecord, VersionRecord,
};
use mobiwf_proto::InstanceId;
use mobiwf_xml_schema::WorkflowDefinition;

use crate::disk::{Batch, Disk};

const LAST_INSTANCE_KEY: &str = "meta/last_instance";
const PEOPLE_KEY: &str = "meta/people";
const CLASSES_KEY: &str = "meta/classes";
const SYNC_KEY: &str = "meta/sync";
const ORDERINGS_KEY: &str = "meta/orderings";
const DEPLOYED_PREFIX: &str = "deployed/";

fn instance_key(id: InstanceId) -> String {
    format!("instance/{:020}", id.0)
}

fn definition_key(id: InstanceId) -> String {
    format!("def/{:020}", id.0)
}

fn history_prefix(id: InstanceId) -> String {
    format!("hist/{:020}/", id.0)
}

fn deployed_key(at: &DefinitionRef) -> String {
    format!("{DEPLOYED_PREFIX}{}/{:020}", at.name, at.version.0)
}

fn deployed_document_key(at: &DefinitionRef) -> String {
    format!("deployed-doc/{}/{:020}", at.name, at.version.0)
}

fn encode<T: serde::Serialize>(what: &str, value: &T) -> Result<Vec<u8>, String> {
    serde_json::to_vec(value).map_err(|e| format!("cannot encode {what}: {e}"))
}

fn decode<T: serde::de::DeserializeOwned>(key: &[u8], value: &[u8]) -> Result<T, String> {
    serde_json::from_slice(value).map_err(|e| format!("{}: {e}", String::from_utf8_lossy(key)))
}

fn stage_instance(batch: &mut Batch, inst: &Instance) -> Result<(), String> {
    let key = instance_key(inst.id);
    batch.put(key.clone(), encode(&key, inst)?);
    let summary = inst.summary();
    let key = format!("sum/{:020}", inst.id.0);
    batch.put(key.clone(), encode(&key, &summary)?);
    let live = format!("live/{:020}", inst.id.0);
    if summary.settled {
        batch.delete(live);
        let at = summary.finished_ms.unwrap_or(summary.submitted_ms);
        batch.put(format!("fin/{at:020}/{:020}", inst.id.0), Vec::new());
    } else {
        batch.put(live, Vec::new());
    }
    Ok(())
}

/// Adds the book's changes to `batch` (`state::stage`).
pub fn stage(batch: &mut Batch, changes: &Changes) -> Result<(), String> {
    for node in &changes.nodes {
        let key = format!("node/{}", node.peer);
        batch.put(key.clone(), encode(&key, node)?);
    }
    for peer in &changes.removed_nodes {
        batch.delete(format!("node/{peer}"));
    }
    for inst in &changes.instances {
        stage_instance(batch, inst)?;
    }
    for (id, xml) in &changes.definitions {
        batch.put(definition_key(*id), xml.clone());
    }
    for (id, n, event) in &changes.history {
        let key = format!("{}{n:010}", history_prefix(*id));
        batch.put(key.clone(), encode(&key, event)?);
    }
    stage_registry(batch, &changes.registry)?;
    if let Some(classes) = &changes.classes {
        batch.put(CLASSES_KEY, encode(CLASSES_KEY, classes)?);
    }
    if let Some(sync) = &changes.sync {
        batch.put(SYNC_KEY, encode(SYNC_KEY, sync)?);
    }
    if let Some(orderings) = &changes.orderings {
        batch.put(ORDERINGS_KEY, encode(ORDERINGS_KEY, orderings)?);
    }
    if let Some(people) = &changes.people {
        batch.put(PEOPLE_KEY, encode(PEOPLE_KEY, people)?);
    }
    batch.put(LAST_INSTANCE_KEY, changes.last_instance.to_string());
    Ok(())
}

fn stage_registry(batch: &mut Batch, changes: &RegistryChanges) -> Result<(), String> {
    for record in &changes.records {
        let key = deployed_key(&record.at);
        batch.put(key.clone(), encode(&key, record)?);
    }
    for (at, document) in &changes.documents {
        batch.put(deployed_document_key(at), document.to_vec());
    }
    for at in &changes.deleted {
        batch.delete(deployed_key(at));
        batch.delete(deployed_document_key(at));
    }
    Ok(())
}

/// The book as the disk holds it (`state::load`).
pub fn load(disk: &Disk) -> Result<Book, String> {
    let mut nodes = Vec::new();
    for (k, v) in disk.scan(b"node/") {
        nodes.push(decode::<NodeInfo>(&k, &v)?);
    }
    let mut stored = Vec::new();
    for (k, v) in disk.scan(DEPLOYED_PREFIX.as_bytes()) {
        let record: VersionRecord = decode(&k, &v)?;
        let document = disk
            .get(deployed_document_key(&record.at).as_bytes())
            .cloned();
        stored.push((record, document));
    }
    let registry = Registry::restore(stored);
    let mut parsed: HashMap<Vec<u8>, Arc<WorkflowDefinition>> = HashMap::new();
    let (mut instances, mut definitions, mut events) = (Vec::new(), Vec::new(), Vec::new());
    for k in disk.keys(b"live/").cloned().collect::<Vec<_>>() {
        let id = std::str::from_utf8(&k[5..])
            .ok()
            .and_then(|s| s.parse().ok())
            .map(InstanceId)
            .ok_or_else(|| format!("bad key {}", String::from_utf8_lossy(&k)))?;
        let Some(inst) = read_instance(disk, id)? else {
            continue;
        };
        if let Some(def) = definition_of(disk, &registry, &mut parsed, &inst)? {
            definitions.push((id, def));
        }
        instances.push(inst);
        events.extend(read_events(disk, id)?.into_iter().map(|e| (id, e)));
    }
    let book = Book::restore(
        nodes,
        instances,
        definitions,
        History::restore(events),
        InstanceId(disk.number(LAST_INSTANCE_KEY)),
    )
    .with_registry(registry);
    let book = with_sync(disk, book)?;
    let Some(people) = disk.get(PEOPLE_KEY.as_bytes()) else {
        return Ok(book);
    };
    let record: PeopleRecord = decode(PEOPLE_KEY.as_bytes(), people)?;
    let directory = record.directory().map_err(|e| e.to_string())?;
    Ok(book.with_people(directory, record.last_request))
}

fn with_sync(disk: &Disk, book: Book) -> Result<Book, String> {
    let classes: ClassesRecord = match disk.get(CLASSES_KEY.as_bytes()) {
        Some(v) => decode(CLASSES_KEY.as_bytes(), v)?,
        None => ClassesRecord::default(),
    };
    let parsed = classes
        .classes()
        .map_err(|d| d.render("stored class document"))?;
    let sync: SyncRecord = match disk.get(SYNC_KEY.as_bytes()) {
        Some(v) => decode(SYNC_KEY.as_bytes(), v)?,
        None => SyncRecord::default(),
    };
    let orderings: OrderingsRecord = match disk.get(ORDERINGS_KEY.as_bytes()) {
        Some(v) => decode(ORDERINGS_KEY.as_bytes(), v)?,
        None => OrderingsRecord::default(),
    };
    let ordered = orderings
        .orderings()
        .map_err(|d| d.render("stored ordering document"))?;
    Ok(book
        .with_sync(classes, parsed, sync)
        .with_orderings(orderings, ordered))
}

/// The definition of a stored instance (`LiveDefinitions::of`).
fn definition_of(
    disk: &Disk,
    registry: &Registry,
    parsed: &mut HashMap<Vec<u8>, Arc<WorkflowDefinition>>,
    inst: &Instance,
) -> Result<Option<Arc<WorkflowDefinition>>, String> {
    if let Some(at) = &inst.definition {
        let deployed = registry
            .get(at)
            .ok_or_else(|| format!("instance {} names {at}, which is not stored", inst.id))?;
        return Ok(Some(deployed.definition.clone()));
    }
    let Some(xml) = disk.get(definition_key(inst.id).as_bytes()) else {
        return Ok(None);
    };
    if let Some(def) = parsed.get(xml) {
        return Ok(Some(def.clone()));
    }
    let language = mobiwf_xml_schema::Language::MobiWfMs;
    let read = mobiwf_xml_schema::load_definition_in(language, xml)
        .map_err(|d| d.render("stored definition"))?;
    let def = Arc::new(read.value);
    parsed.insert(xml.clone(), def.clone());
    Ok(Some(def))
}

/// The instance `id` as last written, if it was (what `status` shows of a settled one).
pub fn read_instance(disk: &Disk, id: InstanceId) -> Result<Option<Instance>, String> {
    let key = instance_key(id);
    disk.get(key.as_bytes())
        .map(|v| decode(key.as_bytes(), v))
        .transpose()
}

fn read_events(disk: &Disk, id: InstanceId) -> Result<Vec<HistoryEvent>, String> {
    disk.scan(history_prefix(id).as_bytes())
        .iter()
        .map(|(k, v)| decode(k, v))
        .collect()
}

/// A settled instance read back (`state::recall`); `None` when the disk does not have it.
pub fn recall(disk: &Disk, id: InstanceId) -> Result<Option<Recalled>, String> {
    let Some(instance) = read_instance(disk, id)? else {
        return Ok(None);
    };
    let definition = match instance.definition {
        Some(_) => None,
        None => Some(
            disk.get(definition_key(id).as_bytes())
                .cloned()
                .ok_or_else(|| format!("{} is missing", definition_key(id)))?,
        ),
    };
    Ok(Some(Recalled {
        instance,
        definition,
        history: read_events(disk, id)?,
    }))
}
