//! Deployed definitions: versions (a changed document is the next one, the same model again
//! changes nothing), starts by name that parse nothing and share the registry's definition,
//! removal refused while instances run and versions kept while stored instances name them,
//! the creator role, and a registry restored from its changes.

use std::sync::Arc;

use super::*;
use crate::definitions::{VersionRecord, VersionRole};

/// The paper's workflow named `name`, with `creator` as its creator role and `description`,
/// written as an operator would keep it.
fn named(name: Option<&str>, creator: Option<&str>, description: &str) -> String {
    let mut def = mobiwf_xml_schema::load_definition(PAPER.as_bytes())
        .expect("paper")
        .value;
    def.name = name.map(mobiwf_xml_schema::DefinitionName::new);
    def.creator_role = creator.map(Into::into);
    def.description = description.to_owned();
    mobiwf_xml_schema::write_definition(&def)
}

fn deploy(b: &mut Book, document: &str, name: Option<&str>) -> Result<Deployment, BookError> {
    b.deploy_definition(
        T0,
        Deploy {
            document: document.as_bytes().to_vec(),
            source: "maintenance.xml".to_owned(),
            name: name.map(str::to_owned),
        },
    )
}

fn start_as(
    b: &mut Book,
    name: &str,
    version: Option<u64>,
    starter: Starter,
) -> Result<Applied, BookError> {
    b.apply(
        T0 + 10,
        Input::Start(Start {
            name: name.into(),
            version: version.map(DefinitionVersion),
            responsible: None,
            starter,
            inputs: Default::default(),
        }),
    )
}

fn start(b: &mut Book, name: &str, version: Option<u64>) -> Result<Applied, BookError> {
    start_as(b, name, version, Starter::Anyone)
}

fn at(name: &str, version: u64) -> DefinitionRef {
    DefinitionRef {
        name: name.into(),
        version: DefinitionVersion(version),
    }
}

fn paper_nodes() -> Book {
    book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ])
}

/// The book's registry changes as the store keeps them: records through their JSON, each
/// with the document written for it.
fn stored(changes: &RegistryChanges, documents: &mut BTreeMap<DefinitionRef, Vec<u8>>) {
    for (at, document) in &changes.documents {
        documents.insert(at.clone(), document.to_vec());
    }
    for at in &changes.deleted {
        documents.remove(at);
    }
}

scenarios! {
    fn a_changed_document_is_the_next_version_and_the_same_model_again_changes_nothing() {
        let mut b = paper_nodes();
        let v1 = deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v1");
        assert_eq!((v1.definition.clone(), v1.new_version), (at("maintenance", 1), true));
        // The same model, laid out otherwise (the paper as published: its own spelling,
        // comments, encoding): nothing changes.
        let mut paper = mobiwf_xml_schema::load_definition(PAPER.as_bytes()).expect("paper").value;
        paper.name = Some("maintenance".into());
        paper.description = "one".to_owned();
        let again = PAPER
            .replace("<description>Workflow Exemplo</description>", "<description>one</description>  <name>maintenance</name>\n");
        let read = mobiwf_xml_schema::load_definition(again.as_bytes()).expect("again").value;
        assert_eq!(read, paper, "the test's second layout reads as the first");
        b.take_changes();
        let same = deploy(&mut b, &again, None).expect("same");
        assert_eq!((same.definition, same.new_version), (at("maintenance", 1), false));
        assert!(b.take_changes().registry.is_empty(), "a no-op writes nothing");

        // The same definition in PDL, without a <name> of its own: nothing changes either.
        let mut pdl = mobiwf_xml_schema::load_definition(PAPER.as_bytes()).expect("paper").value;
        pdl.description = "one".to_owned();
        let pdl = mobiwf_xml_schema::write_pdl(&pdl);
        let request = Deploy {
            document: pdl.into_bytes(),
            source: "maintenance.pdl".to_owned(),
            name: Some("maintenance".to_owned()),
        };
        let same = b.deploy_definition(T0, request).expect("pdl");
        assert_eq!((same.definition, same.new_version), (at("maintenance", 1), false));

        let v2 = deploy(&mut b, &named(Some("maintenance"), None, "two"), None).expect("v2");
        assert_eq!((v2.definition, v2.new_version), (at("maintenance", 2), true));
        // Going back to v1's document is a change from the latest: the next version.
        let v3 = deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v3");
        assert_eq!(v3.definition, at("maintenance", 3));
        // --name wins over the document's own name.
        let other = deploy(&mut b, &named(Some("maintenance"), None, "one"), Some("other"));
        assert_eq!(other.expect("other").definition, at("other", 1));

        let listed = b.definitions();
        let names: Vec<&str> = listed.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["maintenance", "other"]);
        assert_eq!(listed[0].latest, DefinitionVersion(3));
        assert_eq!(listed[0].versions.len(), 3);
        let (_, shown, deployed) = b.definition(&"maintenance".into(), Some(DefinitionVersion(2))).expect("v2");
        assert_eq!(shown, at("maintenance", 2));
        assert_eq!(deployed.definition.description, "two");
    }

    fn a_deployment_needs_a_good_name_and_a_good_document() {
        let mut b = paper_nodes();
        let unnamed = deploy(&mut b, PAPER, None).unwrap_err();
        assert!(
            matches!(&unnamed, BookError::Invalid(m) if m.contains("no <name>") && m.contains("--name")),
            "{unnamed}"
        );
        let bad = deploy(&mut b, PAPER, Some("no/slash")).unwrap_err();
        assert!(matches!(&bad, BookError::Invalid(m) if m.contains("holds '/'")), "{bad}");
        let dots = deploy(&mut b, PAPER, Some("..")).unwrap_err();
        assert!(matches!(&dots, BookError::Invalid(m) if m.contains("dots only")), "{dots}");
        let broken = deploy(&mut b, "<workflow id=\"1\">", Some("x")).unwrap_err();
        assert!(matches!(&broken, BookError::Invalid(m) if m.contains("maintenance.xml:")), "{broken}");
        assert!(b.definitions().is_empty());
        assert!(b.take_changes().registry.is_empty());
    }

    fn a_start_by_name_shares_the_deployed_definition_and_stores_only_its_name() {
        let mut b = paper_nodes();
        deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v1");
        deploy(&mut b, &named(Some("maintenance"), None, "two"), None).expect("v2");
        b.take_changes();
        let latest = start(&mut b, "maintenance", None).expect("start");
        assert_eq!(latest.instance, Some(InstanceId(1)));
        assert_eq!(deploys(&latest).len(), 2, "both partitions deployed");
        let first = start(&mut b, "maintenance", Some(1)).expect("start v1");
        assert_eq!(first.instance, Some(InstanceId(2)));
        let inst = |b: &Book, id| b.instance(InstanceId(id)).expect("instance").clone();
        assert_eq!(inst(&b, 1).definition, Some(at("maintenance", 2)));
        assert_eq!(inst(&b, 1).description, "two");
        assert_eq!(inst(&b, 2).definition, Some(at("maintenance", 1)));
        assert_eq!(inst(&b, 2).summary().definition, Some(at("maintenance", 1)));
        let registry = b.registry().get(&at("maintenance", 2)).expect("v2").definition.clone();
        assert!(Arc::ptr_eq(&b.definitions[&InstanceId(1)], &registry), "one parsed copy");
        assert!(matches!(
            &story(&b)[0],
            Event::Submitted { definition: Some(d), source, .. }
                if *d == at("maintenance", 2) && source == "maintenance"
        ));
        let changes = b.take_changes();
        assert!(changes.definitions.is_empty(), "no document stored per instance");
        let counts: Vec<(u64, u64)> = changes.registry.records.iter()
            .map(|r| (r.at.version.0, r.instances))
            .collect();
        assert_eq!(counts, [(1, 1), (2, 1)]);
        assert_eq!(b.definitions()[0].running, 2);

        let none = start(&mut b, "maintenance", Some(7)).unwrap_err();
        assert!(matches!(&none, BookError::UnknownDefinition(m) if m.contains("versions are 1 to 2")), "{none}");
        let unknown = start(&mut b, "nothing", None).unwrap_err();
        assert!(matches!(&unknown, BookError::UnknownDefinition(m) if m.contains("no definition is deployed as nothing")), "{unknown}");
    }

    fn a_definition_is_removed_only_when_no_instance_of_it_runs_and_kept_while_one_is_stored() {
        let mut b = paper_nodes();
        deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v1");
        deploy(&mut b, &named(Some("maintenance"), None, "two"), None).expect("v2");
        start(&mut b, "maintenance", Some(1)).expect("start");
        let mut documents = BTreeMap::new();
        stored(&b.take_changes().registry, &mut documents);
        let refused = b.remove_definition(&"maintenance".into()).unwrap_err();
        assert_eq!(
            refused,
            BookError::DefinitionRunning { name: "maintenance".into(), instances: vec![InstanceId(1)] }
        );
        assert!(refused.to_string().contains("instances running: 1"), "{refused}");
        let cancel = Input::Control { instance: InstanceId(1), action: Control::Cancel };
        b.apply(T0 + 20, cancel).expect("cancel");
        let removal = b.remove_definition(&"maintenance".into()).expect("remove");
        assert_eq!(removal.dropped, [DefinitionVersion(2)]);
        assert_eq!(removal.kept, [DefinitionVersion(1)], "its finished instance names it");
        let changes = b.take_changes().registry;
        assert_eq!(changes.deleted, [at("maintenance", 2)]);
        assert!(changes.records.iter().all(|r| r.retired && r.at == at("maintenance", 1)));
        stored(&changes, &mut documents);
        assert!(b.definitions().is_empty(), "a removed definition is not listed");
        assert!(start(&mut b, "maintenance", Some(1)).is_err(), "nor started");
        assert!(b.registry().get(&at("maintenance", 1)).is_some(), "but kept for its instance");

        // Deployed again, it numbers on from the version kept.
        let again = deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("again");
        assert_eq!(again.definition, at("maintenance", 2));
        assert_eq!(b.definitions()[0].versions, [DefinitionVersion(2)]);

        // The retention sweep deletes the finished instance: the retired version goes.
        b.released(&[at("maintenance", 1)]);
        assert!(b.registry().get(&at("maintenance", 1)).is_none());
        let changes = b.take_changes().registry;
        assert!(changes.deleted.contains(&at("maintenance", 1)), "{changes:?}");
        stored(&changes, &mut documents);
        assert_eq!(documents.keys().cloned().collect::<Vec<_>>(), [at("maintenance", 2)]);

        let unknown = b.remove_definition(&"nothing".into()).unwrap_err();
        assert!(matches!(unknown, BookError::UnknownDefinition(_)));
    }

    fn only_members_of_the_creator_role_start_it_and_the_starter_is_responsible_by_default() {
        let mut b = paper_nodes();
        apply_org(&mut b, T0, &staff()).expect("org");
        deploy(&mut b, &named(Some("inspect"), Some("tech"), "one"), None).expect("deploy");
        let token = |user: Option<&str>| Starter::Token { user: user.map(Into::into) };
        let anon = start_as(&mut b, "inspect", None, token(None)).unwrap_err();
        assert!(
            matches!(&anon, BookError::NotCreator(m) if m.contains("role tech") && m.contains("speaks for no user")),
            "{anon}"
        );
        let adm = start_as(&mut b, "inspect", None, token(Some("adm"))).unwrap_err();
        assert!(
            matches!(&adm, BookError::NotCreator(m) if m.contains("user adm may not start") && m.contains("role tech")),
            "{adm}"
        );
        let stranger = start_as(&mut b, "inspect", None, token(Some("zed"))).unwrap_err();
        assert!(
            matches!(&stranger, BookError::NotCreator(m) if m.contains("zed is not in the organisation directory")),
            "{stranger}"
        );
        assert!(b.instance(InstanceId(1)).is_none(), "nothing started");

        let ann = start_as(&mut b, "inspect", None, token(Some("ann"))).expect("ann holds tech");
        let id = ann.instance.expect("instance");
        assert_eq!(b.instance(id).expect("instance").responsible, Some("ann".into()));
        // An API without tokens checks nobody; nobody is responsible unless named.
        let anyone = start(&mut b, "inspect", None).expect("anyone");
        let id = anyone.instance.expect("instance");
        assert_eq!(b.instance(id).expect("instance").responsible, None);
        // A definition without a creator role: any token; its user is responsible when the
        // directory has them, and an operator's choice wins.
        deploy(&mut b, &named(Some("open"), None, "one"), None).expect("deploy");
        let open = start_as(&mut b, "open", None, token(Some("adm"))).expect("open");
        let id = open.instance.expect("instance");
        assert_eq!(b.instance(id).expect("instance").responsible, Some("adm".into()));
        let unknown = start_as(&mut b, "open", None, token(Some("zed"))).expect("open");
        let id = unknown.instance.expect("instance");
        assert_eq!(b.instance(id).expect("instance").responsible, None);
        let chosen = b.apply(T0, Input::Start(Start {
            name: "open".into(),
            version: None,
            responsible: Some("bob".into()),
            starter: token(Some("ann")),
            inputs: Default::default(),
        })).expect("chosen");
        let id = chosen.instance.expect("instance");
        assert_eq!(b.instance(id).expect("instance").responsible, Some("bob".into()));
    }

    fn the_registry_restored_from_its_changes_is_the_same_and_its_instances_come_back() {
        let mut b = paper_nodes();
        deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v1");
        start(&mut b, "maintenance", None).expect("start");
        let changes = b.take_changes();
        let mut documents = BTreeMap::new();
        stored(&changes.registry, &mut documents);
        let records: Vec<(VersionRecord, Option<Vec<u8>>)> = changes
            .registry
            .records
            .iter()
            .map(|r| {
                let json = serde_json::to_string(r).expect("ser");
                let record: VersionRecord = serde_json::from_str(&json).expect("de");
                (record, Some(documents[&r.at].clone()))
            })
            .collect();
        let registry = Registry::restore(records);
        assert_eq!(&registry, b.registry());
        let json = serde_json::to_string(&changes.registry.records[0]).expect("ser");
        assert_eq!(json, r#"{"name":"maintenance","version":1,"deployed_ms":1173543574000,"instances":1}"#);

        // The instance, let go once cancelled, comes back with the registry's definition.
        b.apply(T0 + 20, Input::Control { instance: InstanceId(1), action: Control::Cancel }).expect("cancel");
        let changes = b.take_changes();
        let inst = changes.instances.iter().find(|i| i.id == InstanceId(1)).expect("changed").clone();
        assert_eq!(b.evict_settled([InstanceId(1)]), [InstanceId(1)]);
        let recall = Recalled { instance: inst.clone(), definition: None, history: Vec::new() };
        b.apply(T0 + 30, Input::Recall(Box::new(recall))).expect("recall");
        let shared = b.registry().get(&at("maintenance", 1)).expect("v1").definition.clone();
        assert!(Arc::ptr_eq(&b.definitions[&InstanceId(1)], &shared));

        // One that names a version the registry lacks is refused with the reason.
        let mut lost = Book::new();
        let recall = Recalled { instance: inst, definition: None, history: Vec::new() };
        let refused = lost.apply(T0, Input::Recall(Box::new(recall))).unwrap_err();
        assert!(refused.to_string().contains("names definition maintenance version 1"), "{refused}");
    }
}

/// A registry as the store holds it after `changes`: each record through its JSON, with its
/// document, or with `bad` bytes (or none) for the versions named there.
fn restored(
    changes: &RegistryChanges,
    documents: &BTreeMap<DefinitionRef, Vec<u8>>,
    bad: &[(DefinitionRef, Option<&[u8]>)],
) -> Registry {
    let records = changes
        .records
        .iter()
        .map(|r| {
            let json = serde_json::to_string(r).expect("ser");
            let record: VersionRecord = serde_json::from_str(&json).expect("de");
            let document = match bad.iter().find(|(at, _)| at == &r.at) {
                Some((_, bytes)) => bytes.map(<[u8]>::to_vec),
                None => Some(documents[&r.at].clone()),
            };
            (record, document)
        })
        .collect();
    Registry::restore(records)
}

#[test]
#[rustfmt::skip]
fn a_stored_version_that_does_not_read_back_is_kept_aside_reported_and_never_started() {
    let mut b = paper_nodes();
    deploy(&mut b, &named(Some("maintenance"), None, "one"), None).expect("v1");
    deploy(&mut b, &named(Some("maintenance"), None, "two"), None).expect("v2");
    deploy(&mut b, &named(Some("other"), None, "one"), None).expect("other");
    start(&mut b, "maintenance", Some(2)).expect("start v2");
    let changes = b.take_changes();
    let mut documents = BTreeMap::new();
    stored(&changes.registry, &mut documents);
    let bad = [
        (at("maintenance", 2), Some(&b"<workflow><activities>"[..])),
        (at("other", 1), None),
    ];
    let registry = restored(&changes.registry, &documents, &bad);
    let unreadable: Vec<&DefinitionRef> = registry.unreadable().map(|(at, _)| at).collect();
    assert_eq!(unreadable, [&at("maintenance", 2), &at("other", 1)]);
    let mut b = paper_nodes().with_registry(registry);

    // Listed with the reason; the newest being unreadable, no version of the name starts
    // (its creator role, which every start needs, is unknown).
    let listed = b.definitions();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert_eq!((listed[0].latest, listed[0].versions.clone()), (DefinitionVersion(2), vec![]));
    assert_eq!(listed[0].unreadable[0].version, DefinitionVersion(2));
    assert!(listed[1].unreadable[0].problem.contains("missing"), "{listed:?}");
    for version in [None, Some(1), Some(2)] {
        let refused = start(&mut b, "maintenance", version).unwrap_err();
        assert!(matches!(&refused, BookError::Unreadable(m) if m.contains("version 2")), "{refused}");
    }
    let shown = b.definition(&"maintenance".into(), Some(DefinitionVersion(2))).unwrap_err();
    assert!(matches!(shown, BookError::Unreadable(_)), "{shown}");

    // Deployed again: a new version past the unreadable one, which starts; the unreadable one
    // is still listed and still never started.
    let again = deploy(&mut b, &named(Some("maintenance"), None, "two"), None).expect("again");
    assert_eq!((again.definition, again.new_version), (at("maintenance", 3), true));
    start(&mut b, "maintenance", None).expect("v3 starts");
    start(&mut b, "maintenance", Some(1)).expect("v1 starts");
    assert!(matches!(start(&mut b, "maintenance", Some(2)), Err(BookError::Unreadable(_))));
    assert_eq!(b.definitions()[0].unreadable.len(), 1);

    // Retention forgets the instance that named it: its count follows, it is never dropped.
    b.take_changes();
    b.released(&[at("maintenance", 2)]);
    let changes = b.take_changes().registry;
    assert!(changes.deleted.is_empty(), "{changes:?}");
    assert_eq!(changes.records.len(), 1);
    assert_eq!((changes.records[0].instances, changes.records[0].retired), (0, false));

    // A name whose only version is unreadable can be removed: retired, kept as stored.
    let removed = b.remove_definition(&"other".into()).expect("remove");
    assert_eq!((removed.dropped, removed.kept), (vec![], vec![DefinitionVersion(1)]));
    let changes = b.take_changes().registry;
    assert!(changes.deleted.is_empty() && changes.records[0].retired, "{changes:?}");
    assert_eq!(b.definitions().len(), 1);
}

#[test]
fn a_stored_definition_is_recalled_as_mobiwfms_xml_whatever_its_comments_say() {
    let mut b = paper_nodes();
    let xml = PAPER.replacen(
        "<!--",
        "<!-- a comment that mentions <definitions xmlns=\"bpmn\"> first -->\n<!--",
        1,
    );
    let id = submit(&mut b, &xml)
        .expect("submitted")
        .instance
        .expect("instance");
    let control = Input::Control {
        instance: id,
        action: Control::Cancel,
    };
    b.apply(T0 + 20, control).expect("cancel");
    let changes = b.take_changes();
    let inst = changes
        .instances
        .iter()
        .find(|i| i.id == id)
        .expect("changed");
    let stored = changes
        .definitions
        .iter()
        .find(|(i, _)| *i == id)
        .expect("stored");
    // A book that never parsed it (no recent parse to find).
    let mut fresh = paper_nodes();
    let recall = Recalled {
        instance: inst.clone(),
        definition: Some(stored.1.clone()),
        history: Vec::new(),
    };
    fresh
        .apply(T0 + 30, Input::Recall(Box::new(recall)))
        .expect("recalled");
    assert!(fresh.instance(id).is_some());
}

#[test]
#[rustfmt::skip]
fn the_latest_versions_creator_role_governs_every_start_and_each_versions_own_too() {
    let mut b = paper_nodes();
    apply_org(&mut b, T0, &staff()).expect("org");
    let token = |user: &str| Starter::Token { user: Some(user.into()) };
    deploy(&mut b, &named(Some("inspect"), None, "one"), None).expect("v1 without a role");
    start_as(&mut b, "inspect", Some(1), token("adm")).expect("open while no version has one");
    deploy(&mut b, &named(Some("inspect"), Some("tech"), "two"), None).expect("v2 with one");
    // The role added in v2 closes v1 too.
    let old = start_as(&mut b, "inspect", Some(1), token("adm")).unwrap_err();
    assert!(
        matches!(&old, BookError::NotCreator(m) if m.contains("role tech") && m.contains("latest version 2")),
        "{old}"
    );
    start_as(&mut b, "inspect", Some(1), token("ann")).expect("ann holds tech");
    let listed = &b.definitions()[0];
    assert_eq!((listed.creator_role.clone(), listed.version_roles.clone()), (Some("tech".into()), vec![]));

    // A version with a role of its own needs both.
    deploy(&mut b, &named(Some("two"), Some("administrator"), "one"), None).expect("v1");
    deploy(&mut b, &named(Some("two"), Some("tech"), "two"), None).expect("v2");
    let ann = start_as(&mut b, "two", Some(1), token("ann")).unwrap_err();
    assert!(matches!(&ann, BookError::NotCreator(m) if m.contains("role administrator")), "{ann}");
    let adm = start_as(&mut b, "two", Some(1), token("adm")).unwrap_err();
    assert!(matches!(&adm, BookError::NotCreator(m) if m.contains("role tech")), "{adm}");
    let listed = b.definitions().into_iter().find(|d| d.name.as_str() == "two").expect("two");
    assert_eq!(listed.creator_role, Some("tech".into()));
    assert_eq!(
        listed.version_roles,
        [VersionRole { version: DefinitionVersion(1), role: "administrator".into() }]
    );
}

#[test]
#[rustfmt::skip]
fn a_submitted_document_with_a_creator_role_is_submitted_only_by_a_member() {
    let mut b = paper_nodes();
    apply_org(&mut b, T0, &staff()).expect("org");
    let xml = named(None, Some("tech"), "one");
    let submit_as = |b: &mut Book, starter: Starter| {
        b.apply(T0, Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: None,
            inputs: Default::default(),
            starter,
        })
    };
    let token = |user: Option<&str>| Starter::Token { user: user.map(Into::into) };
    let adm = submit_as(&mut b, token(Some("adm"))).unwrap_err();
    assert!(matches!(&adm, BookError::NotCreator(m) if m.contains("user adm may not start") && m.contains("wf.xml")), "{adm}");
    let nobody = submit_as(&mut b, token(None)).unwrap_err();
    assert!(matches!(&nobody, BookError::NotCreator(m) if m.contains("speaks for no user")), "{nobody}");
    let zed = submit_as(&mut b, token(Some("zed"))).unwrap_err();
    assert!(matches!(&zed, BookError::NotCreator(m) if m.contains("zed is not in the organisation directory")), "{zed}");
    assert!(b.instance(InstanceId(1)).is_none(), "nothing submitted");
    submit_as(&mut b, token(Some("ann"))).expect("ann holds tech");
    submit_as(&mut b, Starter::Anyone).expect("no token check");
}

#[test]
fn a_document_over_the_largest_taken_is_refused_as_given_or_as_stored() {
    let xml = named(Some("maintenance"), None, "one");
    let mut def = mobiwf_xml_schema::load_definition(xml.as_bytes())
        .expect("paper")
        .value;
    def.description = "one".to_owned();
    let pdl = mobiwf_xml_schema::write_pdl(&def);
    let stored = mobiwf_xml_schema::write_definition(&def);
    assert!(pdl.len() < stored.len(), "PDL is the terser");
    let pdl_request = |b: &mut Book| {
        b.deploy_definition(
            T0,
            Deploy {
                document: pdl.clone().into_bytes(),
                source: "maintenance.pdl".to_owned(),
                name: None,
            },
        )
    };
    // Between the two: the PDL as given fits, as stored it does not.
    let mut b = Book::new().with_largest_document(pdl.len() + 1);
    let refused = pdl_request(&mut b).expect_err("over as stored");
    assert!(matches!(refused, BookError::TooLarge(_)), "{refused:?}");
    assert!(
        refused
            .to_string()
            .contains("as the MobiWfMS XML it is stored as"),
        "{refused}"
    );
    assert!(b.definitions().is_empty(), "nothing deployed");
    let refused = deploy(&mut b, &xml, None).expect_err("over as given");
    assert!(
        refused
            .to_string()
            .contains(&format!("is {} bytes", xml.len())),
        "{refused}"
    );
    let mut b = Book::new().with_largest_document(stored.len().max(xml.len()));
    pdl_request(&mut b).expect("fits");
    deploy(&mut b, &xml, None).expect("fits");
}
