//! Deployed definitions in the controller's store, written as the daemon writes the book's
//! changes (`state::stage`) and read back as it starts (`state::load`) or recalls a settled
//! instance (`state::recall`): a version and its document under `deployed/`, an instance
//! started by name without a document of its own and sharing the registry's definition after
//! a restart, an instance submitted whole (as every instance was before there were deployed
//! definitions) still loading from its own bytes, and the retention sweep letting a removed
//! version go with its last instance.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use mobiwf_book::{
    Book, DefinitionRef, DefinitionVersion, Deploy, Input, NodeInfo, Start, Starter,
};
use mobiwf_controller::{retention, state};
use mobiwf_proto::{ActivityTypeId, Control, InstanceId, NodeId, NodeName};
use mobiwf_runtime::store::{Batch, Durability, MemoryStore, Store};

const PAPER: &str = include_str!("../../examples/paper/workflow.xml");
const T0: u64 = 1_767_225_600_000;

fn node(peer: &str, name: &str, skills: &[u64]) -> NodeInfo {
    NodeInfo {
        peer: NodeId::new(peer),
        name: NodeName::new(name),
        skills: skills.iter().map(|s| ActivityTypeId(*s)).collect(),
        addrs: vec![format!("/ip4/127.0.0.1/tcp/1/p2p/{peer}")],
        registered_ms: 0,
        seq: 1,
        suspected: None,
    }
}

/// Writes what the book changed, as the daemon does after each group.
fn commit(store: &MemoryStore, book: &mut Book) {
    let mut batch = Batch::default();
    state::stage(&mut batch, &book.take_changes()).unwrap();
    store.write(batch, Durability::Synced).unwrap();
}

fn maintenance(version: u64) -> DefinitionRef {
    DefinitionRef {
        name: "maintenance".into(),
        version: DefinitionVersion(version),
    }
}

fn keys(store: &MemoryStore, prefix: &str) -> Vec<String> {
    let all = store.scan_prefix(prefix.as_bytes()).unwrap();
    all.iter()
        .map(|(k, _)| String::from_utf8(k.clone()).unwrap())
        .collect()
}

/// A store, and a book with the paper's partners that deployed the paper's workflow as
/// `maintenance` and started an instance of it by name (not written yet).
fn started_by_name() -> (MemoryStore, Book, InstanceId) {
    let mut book = Book::new();
    for n in [
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ] {
        book.apply(T0, Input::Register(n)).unwrap();
    }
    let deploy = Deploy {
        document: PAPER.as_bytes().to_vec(),
        source: "paper.xml".to_owned(),
        name: Some("maintenance".to_owned()),
    };
    book.deploy_definition(T0, deploy).unwrap();
    let start = Start {
        name: "maintenance".into(),
        version: None,
        responsible: None,
        starter: Starter::Anyone,
        inputs: Default::default(),
    };
    let applied = book.apply(T0 + 1, Input::Start(start)).unwrap();
    (MemoryStore::new(), book, applied.instance.unwrap())
}

/// The paper's workflow submitted whole (its document stored with the instance): its id.
fn submit_paper(book: &mut Book) -> InstanceId {
    let submit = Input::Submit {
        definition: PAPER.as_bytes().to_vec(),
        source: "paper.xml".to_owned(),
        responsible: None,
        inputs: Default::default(),
        starter: mobiwf_book::Starter::Anyone,
    };
    book.apply(T0 + 2, submit).unwrap().instance.unwrap()
}

#[test]
fn instances_started_by_name_name_their_version_and_come_back_with_it() {
    let (store, mut book, started) = started_by_name();
    let submitted = submit_paper(&mut book);
    commit(&store, &mut book);

    assert_eq!(
        keys(&store, "deployed"),
        [
            format!("deployed-doc/maintenance/{:020}", 1),
            format!("deployed/maintenance/{:020}", 1),
        ]
    );
    let doc = store
        .get(state::deployed_document_key(&maintenance(1)).as_bytes())
        .unwrap();
    assert_eq!(doc.as_deref(), Some(PAPER.as_bytes()), "stored as deployed");
    assert!(
        store
            .get(state::definition_key(started).as_bytes())
            .unwrap()
            .is_none(),
        "no document per instance started by name"
    );
    assert!(
        store
            .get(state::definition_key(submitted).as_bytes())
            .unwrap()
            .is_some()
    );

    // A restart: both instances are back, the started one on the registry's definition.
    let mut loaded = state::load(&store).unwrap();
    let inst = loaded.instance(started).unwrap();
    assert_eq!(inst.definition, Some(maintenance(1)));
    assert_eq!(inst.summary().definition, Some(maintenance(1)));
    assert!(loaded.instance(submitted).unwrap().definition.is_none());
    assert_eq!(loaded.definitions()[0].running, 1);
    let registry_def = loaded
        .registry()
        .get(&maintenance(1))
        .unwrap()
        .definition
        .clone();
    assert_eq!(registry_def.activities.len(), 5);

    // Settled, let go, and recalled: without a document of its own.
    let cancel = |id| Input::Control {
        instance: id,
        action: Control::Cancel,
    };
    loaded.apply(T0 + 3, cancel(started)).unwrap();
    loaded.apply(T0 + 3, cancel(submitted)).unwrap();
    commit(&store, &mut loaded);
    assert_eq!(
        loaded.evict_settled([started, submitted]),
        [started, submitted]
    );
    let recalled = state::recall(&store, started).unwrap().unwrap();
    assert!(recalled.definition.is_none());
    loaded
        .apply(T0 + 4, Input::Recall(Box::new(recalled)))
        .unwrap();
    let old = state::recall(&store, submitted).unwrap().unwrap();
    assert!(
        old.definition.is_some(),
        "one submitted whole has its bytes"
    );
    loaded.apply(T0 + 4, Input::Recall(Box::new(old))).unwrap();
    assert!(loaded.holds(started) && loaded.holds(submitted));
    assert!(Arc::strong_count(&registry_def) >= 2);
}

#[test]
fn a_removed_version_stays_while_a_stored_instance_names_it_and_goes_with_the_last() {
    let (store, mut book, id) = started_by_name();
    let cancel = Input::Control {
        instance: id,
        action: Control::Cancel,
    };
    book.apply(T0 + 2, cancel).unwrap();
    book.remove_definition(&"maintenance".into()).unwrap();
    commit(&store, &mut book);
    assert_eq!(keys(&store, "deployed/").len(), 1, "kept for instance {id}");
    let loaded = state::load(&store).unwrap();
    assert!(loaded.definitions().is_empty(), "removed: not listed");
    assert!(loaded.registry().get(&maintenance(1)).unwrap().retired);

    // The sweep deletes the finished instance, and the book lets the version go with it.
    let mut batch = Batch::default();
    let swept = retention::sweep(&store, &mut batch, u64::MAX, &|_| false).unwrap();
    assert_eq!(swept.deleted, [id]);
    assert_eq!(swept.released, [maintenance(1)]);
    book.released(&swept.released);
    state::stage(&mut batch, &book.take_changes()).unwrap();
    store.write(batch, Durability::Synced).unwrap();
    assert!(
        keys(&store, "deployed").is_empty(),
        "{:?}",
        keys(&store, "")
    );
    assert!(
        state::load(&store)
            .unwrap()
            .registry()
            .get(&maintenance(1))
            .is_none()
    );
    assert_eq!(InstanceId(1), id);
}

#[test]
fn a_stored_document_that_does_not_read_back_does_not_stop_the_controller() {
    let (store, mut book, started) = started_by_name();
    let submitted = submit_paper(&mut book);
    commit(&store, &mut book);
    // The deployed version's document and the submitted instance's own one, damaged.
    let mut batch = Batch::default();
    let damaged = b"<workflow><activities>".to_vec();
    batch.put(
        state::deployed_document_key(&maintenance(1)),
        damaged.clone(),
    );
    batch.put(state::definition_key(submitted), damaged);
    store.write(batch, Durability::Synced).unwrap();

    let mut loaded = state::load(&store).unwrap();
    assert!(loaded.holds(started) && loaded.holds(submitted));
    let listed = loaded.definitions();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].unreadable[0].version, DefinitionVersion(1));
    assert!(listed[0].versions.is_empty());
    let start = Start {
        name: "maintenance".into(),
        version: None,
        responsible: None,
        starter: Starter::Anyone,
        inputs: Default::default(),
    };
    let refused = loaded.apply(T0 + 3, Input::Start(start)).unwrap_err();
    assert!(
        refused.to_string().contains("does not read back"),
        "{refused}"
    );
    // Nothing was deleted or rewritten.
    commit(&store, &mut loaded);
    let doc = store
        .get(state::deployed_document_key(&maintenance(1)).as_bytes())
        .unwrap();
    assert_eq!(doc.as_deref(), Some(&b"<workflow><activities>"[..]));
    assert_eq!(keys(&store, "deployed/").len(), 1);
}
