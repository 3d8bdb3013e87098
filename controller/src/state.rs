//! How the controller's bookkeeping lives in the store.
//!
//! Keys: `node/<peer id>` (a registered node, JSON), `instance/<id>` (an instance, JSON),
//! `sum/<id>` (its summary for the instance list, JSON), `live/<id>` (empty: the instance is
//! not settled, so the book holds it; startup reads only these), `fin/<finished ms>/<id>`
//! (empty: it settled then; the retention sweep's index, checked against `sum/<id>` because a
//! rerun leaves a stale one), `def/<id>` (the instance's workflow definition as submitted),
//! `hist/<id>/<n>` (the n-th event of its history, JSON), `deployed/<name>/<version>` (a
//! deployed definition's version: when, how many stored instances name it, whether it was
//! removed; JSON) and `deployed-doc/<name>/<version>` (its document, MobiWfMS XML; an instance
//! started by name has no `def/<id>`: it names its version),
//! `meta/last_instance`, `meta/format` (2 once the `sum/`, `live/` and `fin/` indexes exist; a
//! data directory of an earlier version is indexed once at startup), `meta/people` (the
//! organisation directory and the last claim number, JSON), `meta/classes` (the class document
//! an operator applied last and when, JSON), `meta/sync` (the synchronization manager's
//! holders and waiters, the requests waiting for their relative order and the ordering
//! tickets, JSON; both written in the batch of the change), `meta/orderings` (the ordering
//! document an operator applied last, its name and when, JSON), `meta/seq` (the last outgoing
//! message's sequence number; the daemon shell's),
//! `seen/<origin>/<seq>` (a message already applied), and the outbox's `out/...`. Numbers are
//! zero-padded to 20 digits so that key order is numeric order.
//!
//! Invariant: `sum/<id>` and the `live/` or `fin/` key of an instance are written in the same
//! batch as `instance/<id>`; the book holds exactly the instances with a `live/` key, and a
//! settled one only while an input about it is applied (recalled with [`recall`]).

use std::collections::HashMap;
use std::sync::Arc;

use mobiwf_runtime::store::{
    Batch, Durability, Store, StoreError, encode, read_number, unreadable,
};
use mobiwf_xml_schema::WorkflowDefinition;

use mobiwf_book::{
    Book, Changes, ClassesRecord, DefinitionRef, History, HistoryEvent, Instance, InstanceSummary,
    NodeInfo, OrderingsRecord, PeopleRecord, Recalled, Registry, RegistryChanges, SyncRecord,
    VersionRecord,
};
use mobiwf_proto::InstanceId;

const LAST_INSTANCE_KEY: &str = "meta/last_instance";
const PEOPLE_KEY: &str = "meta/people";
const CLASSES_KEY: &str = "meta/classes";
const SYNC_KEY: &str = "meta/sync";
const ORDERINGS_KEY: &str = "meta/orderings";
const FORMAT_KEY: &str = "meta/format";
const DEPLOYED_PREFIX: &str = "deployed/";
/// The store format with the `sum/`, `live/` and `fin/` indexes.
const FORMAT_INDEXED: u64 = 2;
/// Instances indexed per synced batch when an earlier data directory is indexed.
const MIGRATION_BATCH: usize = 1000;

/// `instance/<id>`.
pub fn instance_key(id: InstanceId) -> String {
    format!("instance/{:020}", id.0)
}

/// `sum/<id>`.
pub fn summary_key(id: InstanceId) -> String {
    format!("sum/{:020}", id.0)
}

/// `live/<id>`.
fn live_key(id: InstanceId) -> String {
    format!("live/{:020}", id.0)
}

/// `def/<id>`.
pub fn definition_key(id: InstanceId) -> String {
    format!("def/{:020}", id.0)
}

/// `deployed/<name>/<version>`.
pub fn deployed_key(at: &DefinitionRef) -> String {
    format!("{DEPLOYED_PREFIX}{}/{:020}", at.name, at.version.0)
}

/// `deployed-doc/<name>/<version>`.
pub fn deployed_document_key(at: &DefinitionRef) -> String {
    format!("deployed-doc/{}/{:020}", at.name, at.version.0)
}

/// `hist/<id>/`, the prefix of an instance's history.
pub fn history_prefix(id: InstanceId) -> String {
    format!("hist/{:020}/", id.0)
}

/// `fin/<ms>/<id>`.
pub fn finished_key(ms: u64, id: InstanceId) -> String {
    format!("fin/{ms:020}/{:020}", id.0)
}

/// When a settled instance counts as finished for retention: its end (its submission when it
/// has none recorded).
pub fn finished_at(summary: &InstanceSummary) -> u64 {
    summary.finished_ms.unwrap_or(summary.submitted_ms)
}

/// Adds one instance, its summary and its index key to `batch`.
fn stage_instance(batch: &mut Batch, inst: &Instance) -> Result<(), StoreError> {
    let key = instance_key(inst.id);
    let value = encode(&key, inst)?;
    batch.put(key, value);
    let summary = inst.summary();
    let key = summary_key(inst.id);
    let value = encode(&key, &summary)?;
    batch.put(key, value);
    if summary.settled {
        batch.delete(live_key(inst.id));
        batch.put(finished_key(finished_at(&summary), inst.id), Vec::new());
    } else {
        batch.put(live_key(inst.id), Vec::new());
    }
    Ok(())
}

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
        stage_instance(batch, inst)?;
    }
    for (id, xml) in &changes.definitions {
        batch.put(definition_key(*id), xml.clone());
    }
    for (id, n, event) in &changes.history {
        let key = format!("{}{n:010}", history_prefix(*id));
        let value = encode(&key, event)?;
        batch.put(key, value);
    }
    stage_registry(batch, &changes.registry)?;
    if let Some(classes) = &changes.classes {
        let value = encode(CLASSES_KEY, classes)?;
        batch.put(CLASSES_KEY, value);
    }
    if let Some(sync) = &changes.sync {
        let value = encode(SYNC_KEY, sync)?;
        batch.put(SYNC_KEY, value);
    }
    if let Some(orderings) = &changes.orderings {
        let value = encode(ORDERINGS_KEY, orderings)?;
        batch.put(ORDERINGS_KEY, value);
    }
    if let Some(people) = &changes.people {
        let value = encode(PEOPLE_KEY, people)?;
        batch.put(PEOPLE_KEY, value);
    }
    batch.put(LAST_INSTANCE_KEY, changes.last_instance.to_string());
    Ok(())
}

/// Adds the deployed definitions' changes to `batch`.
fn stage_registry(batch: &mut Batch, changes: &RegistryChanges) -> Result<(), StoreError> {
    for record in &changes.records {
        let key = deployed_key(&record.at);
        let value = encode(&key, record)?;
        batch.put(key, value);
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

/// The deployed definitions as the store holds them, each version parsed once. A version
/// whose document does not read back is kept aside and logged, not fatal: the controller
/// starts, `definitions` lists it as unreadable, and it is never started.
fn load_registry(store: &dyn Store) -> Result<Registry, StoreError> {
    let mut stored = Vec::new();
    for (k, v) in store.scan_prefix(DEPLOYED_PREFIX.as_bytes())? {
        let record: VersionRecord = decode(&k, &v)?;
        let key = deployed_document_key(&record.at);
        let document = store.get(key.as_bytes())?;
        stored.push((record, document));
    }
    let registry = Registry::restore(stored);
    for (at, u) in registry.unreadable() {
        tracing::error!(
            definition = %at,
            problem = %u.problem,
            "a stored definition version does not read back: kept as stored, never started"
        );
    }
    Ok(registry)
}

/// Marks the store as indexed (`sum/`, `live/`, `fin/`): for a store written only through
/// [`stage`] from the start (the benchmark builds one so).
pub fn stage_indexed(batch: &mut Batch) {
    batch.put(FORMAT_KEY, FORMAT_INDEXED.to_string());
}

/// Decodes a stored JSON value.
fn decode<T: serde::de::DeserializeOwned>(key: &[u8], value: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(value).map_err(|e| unreadable(key, &e))
}

/// Indexes a data directory of an earlier version once (`sum/`, `live/`, `fin/`), in
/// batches; a directory indexed already is left as it is.
fn migrate(store: &dyn Store) -> Result<(), StoreError> {
    if read_number(store, FORMAT_KEY)? >= FORMAT_INDEXED {
        return Ok(());
    }
    let mut from = b"instance/".to_vec();
    loop {
        let page = store.scan_from(b"instance/", &from, MIGRATION_BATCH)?;
        let Some((last, _)) = page.last() else {
            break;
        };
        from = last.clone();
        from.push(0);
        let mut batch = Batch::default();
        for (k, v) in &page {
            stage_instance(&mut batch, &decode::<Instance>(k, v)?)?;
        }
        store.write(batch, Durability::Synced)?;
    }
    let mut batch = Batch::default();
    batch.put(FORMAT_KEY, FORMAT_INDEXED.to_string());
    store.write(batch, Durability::Synced)
}

/// The book, as the store holds it: the nodes and the instances not settled (read through
/// the `live/` index, so a store of many finished instances starts as fast as one without).
pub fn load(store: &dyn Store) -> Result<Book, StoreError> {
    migrate(store)?;
    let mut nodes = Vec::new();
    for (k, v) in store.scan_prefix(b"node/")? {
        nodes.push(decode::<NodeInfo>(&k, &v)?);
    }
    let mut live = LiveDefinitions {
        registry: load_registry(store)?,
        parsed: HashMap::new(),
    };
    let mut instances = Vec::new();
    let mut definitions = Vec::new();
    let mut events = Vec::new();
    for (k, _) in store.scan_prefix(b"live/")? {
        let id = InstanceId(number_after(&k, b"live/").ok_or_else(|| unreadable(&k, &"bad key"))?);
        let Some(inst) = read_instance(store, id)? else {
            continue;
        };
        if let Some(def) = live.of(store, &inst)? {
            definitions.push((id, def));
        }
        instances.push(inst);
        events.extend(read_events(store, id)?.into_iter().map(|e| (id, e)));
    }
    let last_instance = read_number(store, LAST_INSTANCE_KEY)?;
    let book = Book::restore(
        nodes,
        instances,
        definitions,
        History::restore(events),
        InstanceId(last_instance),
    )
    .with_registry(live.registry);
    let book = with_sync(store, book)?;
    let Some(people) = store.get(PEOPLE_KEY.as_bytes())? else {
        return Ok(book);
    };
    let key = PEOPLE_KEY.as_bytes();
    let record: PeopleRecord = decode(key, &people)?;
    let directory = record.directory().map_err(|e| unreadable(key, &e))?;
    Ok(book.with_people(directory, record.last_request))
}

/// The book with its stored class document, synchronization manager and ordering document
/// (none stored: no classes, nobody holding or waiting, no orderings).
fn with_sync(store: &dyn Store, book: Book) -> Result<Book, StoreError> {
    let classes: ClassesRecord = match store.get(CLASSES_KEY.as_bytes())? {
        Some(v) => decode(CLASSES_KEY.as_bytes(), &v)?,
        None => ClassesRecord::default(),
    };
    let parsed = classes
        .classes()
        .map_err(|d| unreadable(CLASSES_KEY.as_bytes(), &d.render("stored class document")))?;
    let sync: SyncRecord = match store.get(SYNC_KEY.as_bytes())? {
        Some(v) => decode(SYNC_KEY.as_bytes(), &v)?,
        None => SyncRecord::default(),
    };
    let orderings: OrderingsRecord = match store.get(ORDERINGS_KEY.as_bytes())? {
        Some(v) => decode(ORDERINGS_KEY.as_bytes(), &v)?,
        None => OrderingsRecord::default(),
    };
    let ordered = orderings.orderings().map_err(|d| {
        unreadable(
            ORDERINGS_KEY.as_bytes(),
            &d.render("stored ordering document"),
        )
    })?;
    Ok(book
        .with_sync(classes, parsed, sync)
        .with_orderings(orderings, ordered))
}

/// The definitions of the instances `load` reads: the deployed ones, and those stored with
/// their instances, parsed once per document (instances of one workflow were submitted with
/// the same bytes), shared.
struct LiveDefinitions {
    registry: Registry,
    parsed: HashMap<Vec<u8>, Arc<WorkflowDefinition>>,
}

impl LiveDefinitions {
    /// The definition of stored instance `inst`: the registry's version it names, or the
    /// document stored with it (none when there is none, or when it does not read back: the
    /// instance is kept without it, as one stored before definitions were, and logged).
    fn of(
        &mut self,
        store: &dyn Store,
        inst: &Instance,
    ) -> Result<Option<Arc<WorkflowDefinition>>, StoreError> {
        if let Some(at) = &inst.definition {
            if let Some(u) = self.registry.unreadable_version(&at.name, at.version) {
                tracing::error!(
                    instance = %inst.id, definition = %at, problem = %u.problem,
                    "a live instance's definition does not read back: kept without it"
                );
                return Ok(None);
            }
            let deployed = self.registry.get(at).ok_or_else(|| {
                let key = instance_key(inst.id);
                unreadable(
                    key.as_bytes(),
                    &format!("it names {at}, which is not stored"),
                )
            })?;
            return Ok(Some(deployed.definition.clone()));
        }
        let key = definition_key(inst.id);
        let Some(xml) = store.get(key.as_bytes())? else {
            return Ok(None);
        };
        if let Some(def) = self.parsed.get(&xml) {
            return Ok(Some(def.clone()));
        }
        let read =
            mobiwf_xml_schema::load_definition_in(mobiwf_xml_schema::Language::MobiWfMs, &xml);
        let def = match read {
            Ok(read) => Arc::new(read.value),
            Err(d) => {
                tracing::error!(
                    instance = %inst.id,
                    problem = %d.render("stored definition"),
                    "a live instance's stored definition does not read back: kept without it"
                );
                return Ok(None);
            }
        };
        self.parsed.insert(xml, def.clone());
        Ok(Some(def))
    }
}

/// One instance as stored.
pub fn read_instance(store: &dyn Store, id: InstanceId) -> Result<Option<Instance>, StoreError> {
    let key = instance_key(id);
    store
        .get(key.as_bytes())?
        .map(|v| decode(key.as_bytes(), &v))
        .transpose()
}

/// One instance's stored history, in the order the controller learnt it.
fn read_events(store: &dyn Store, id: InstanceId) -> Result<Vec<HistoryEvent>, StoreError> {
    store
        .scan_prefix(history_prefix(id).as_bytes())?
        .iter()
        .map(|(k, v)| decode(k, v))
        .collect()
}

/// One instance's stored history; `None` when there is no such instance.
pub fn read_history(
    store: &dyn Store,
    id: InstanceId,
) -> Result<Option<Vec<HistoryEvent>>, StoreError> {
    if store.get(instance_key(id).as_bytes())?.is_none() {
        return Ok(None);
    }
    read_events(store, id).map(Some)
}

/// A settled instance read back for the book (`Input::Recall`); `None` when the store does
/// not have it.
pub fn recall(store: &dyn Store, id: InstanceId) -> Result<Option<Recalled>, StoreError> {
    let Some(instance) = read_instance(store, id)? else {
        return Ok(None);
    };
    // One started by name names its definition, which the book's registry holds.
    let definition = match instance.definition {
        Some(_) => None,
        None => Some(
            store
                .get(definition_key(id).as_bytes())?
                .ok_or_else(|| unreadable(definition_key(id).as_bytes(), &"missing"))?,
        ),
    };
    Ok(Some(Recalled {
        instance,
        definition,
        history: read_events(store, id)?,
    }))
}

/// The zero-padded instance number right after `prefix` in a key.
pub fn number_after(key: &[u8], prefix: &[u8]) -> Option<u64> {
    let rest = key.get(prefix.len()..)?;
    std::str::from_utf8(rest.get(..20)?).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use mobiwf_book::{Input, NodeInfo};
    use mobiwf_proto::{ActivityTypeId, DataValue, GivenInputs, NodeId, NodeName};
    use mobiwf_runtime::store::MemoryStore;

    /// One activity on P1 that reads `reading`, an input.
    const WORKFLOW: &str = r#"<workflow id="5"><activities>
        <activity id="1"><activityTypeId>1</activityTypeId><reads>reading</reads></activity>
        </activities><activityTypes><activityType id="1"/></activityTypes>
        <partitions><partition id="1"><partnerId>1</partnerId><activityId>1</activityId></partition></partitions>
        <partners><partner id="1"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner></partners>
        <data><value name="reading" type="number" input="true"/></data></workflow>"#;

    fn submit(book: &mut Book, xml: &str, given: &[(&str, &str)]) {
        let mut inputs = GivenInputs::new();
        for (name, text) in given {
            inputs.give(*name, *text).unwrap();
        }
        let input = Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: None,
            inputs,
            starter: mobiwf_book::Starter::Anyone,
        };
        book.apply(1_000, input).expect("submitted");
    }

    /// Registers node P1 (peer `peerA`, skill 1).
    fn register_p1(book: &mut Book) {
        let node = NodeInfo {
            peer: NodeId::new("peerA"),
            name: NodeName::new("P1"),
            skills: vec![ActivityTypeId(1)],
            addrs: vec!["/ip4/127.0.0.1/tcp/1/p2p/peerA".to_owned()],
            registered_ms: 0,
            seq: 1,
            suspected: None,
        };
        book.apply(0, Input::Register(node)).unwrap();
    }

    fn write(store: &MemoryStore, book: &mut Book) {
        let mut batch = Batch::default();
        stage(&mut batch, &book.take_changes()).unwrap();
        store.write(batch, Durability::Synced).unwrap();
    }

    #[test]
    fn an_instances_inputs_survive_a_restart_and_one_without_stores_none() {
        let store = MemoryStore::new();
        let mut book = Book::new();
        register_p1(&mut book);
        submit(&mut book, WORKFLOW, &[("reading", "5")]);
        let plain = WORKFLOW
            .replace(r#" input="true""#, "")
            .replace("<reads>reading</reads>", "");
        submit(&mut book, &plain, &[]);
        write(&store, &mut book);

        let loaded = load(&store).unwrap();
        let with = loaded.instance(InstanceId(1)).expect("instance 1");
        assert_eq!(
            with.inputs.get("reading"),
            Some(&DataValue::Number("5".into()))
        );
        let without = loaded.instance(InstanceId(2)).expect("instance 2");
        assert!(without.inputs.is_empty());
        let stored = store
            .get(instance_key(InstanceId(2)).as_bytes())
            .unwrap()
            .unwrap();
        assert!(
            !String::from_utf8(stored).unwrap().contains("inputs"),
            "an instance without inputs is stored as before"
        );
    }

    #[test]
    fn the_class_document_and_the_managers_holders_and_waiters_survive_a_restart() {
        use mobiwf_proto::{BeginSync, ClassName, Message, PartitionId, SyncTicket};
        let store = MemoryStore::new();
        let mut book = Book::new();
        register_p1(&mut book);
        let text = r#"<classes><class id="press"><conflicts>press</conflicts></class></classes>"#;
        let classes = mobiwf_xml_schema::load_classes(text.as_bytes())
            .unwrap()
            .value;
        let input = Input::Classes {
            document: text.to_owned(),
            classes,
        };
        book.apply(0, input).unwrap();
        let pressing = WORKFLOW.replace(
            "<activityTypeId>1</activityTypeId><reads>",
            "<activityTypeId>1</activityTypeId><class>press</class><reads>",
        );
        submit(&mut book, &pressing, &[("reading", "5")]);
        submit(&mut book, &pressing, &[("reading", "6")]);
        for instance in [1, 2] {
            let ticket = SyncTicket {
                instance: InstanceId(instance),
                partition: PartitionId(1),
                activity: mobiwf_proto::ActivityId(1),
                round: 0,
            };
            let message = Message::BeginSync(BeginSync {
                ticket,
                class: Some(ClassName::from("press")),
                pass: mobiwf_proto::Pass::FIRST,
            });
            let peer = NodeId::new("peerA");
            book.apply(2_000, Input::FromNode { peer, message })
                .unwrap();
        }
        write(&store, &mut book);

        let loaded = load(&store).unwrap();
        assert_eq!(loaded.classes_record().document, text);
        assert_eq!(loaded.classes().classes.len(), 1);
        let state = loaded.sync_state();
        let held: Vec<u64> = state.holders.iter().map(|e| e.ticket.instance.0).collect();
        let waiting: Vec<u64> = state.waiters.iter().map(|e| e.ticket.instance.0).collect();
        assert_eq!((held, waiting), (vec![1], vec![2]));
    }
}
