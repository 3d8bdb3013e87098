//! The paper's example (*MobiWfMS*, "Linguagem de workflow do MobiWfMS", §4.3): the definition is
//! valid, and deriving its partitions gives exactly the published partition documents (as XML
//! trees, ignoring whitespace, comments and `startTime`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{example, read_text, shared_fixture, tree};
use mobiwf_xml_schema::{
    ActivityId, DeriveOptions, DocumentKind, PartnerId, check, derive_partitions, detect_kind,
    load_definition, load_partition, write_definition, write_partition,
};

fn paper() -> mobiwf_xml_schema::WorkflowDefinition {
    load_definition(&std::fs::read(example("workflow.xml")).unwrap())
        .unwrap_or_else(|d| {
            panic!(
                "the paper example must be valid:\n{}",
                d.render("workflow.xml")
            )
        })
        .value
}

#[test]
fn example_is_the_published_fixture() {
    if let Some(shared) = shared_fixture("workflow.xml") {
        assert_eq!(
            std::fs::read(shared).unwrap(),
            std::fs::read(example("workflow.xml")).unwrap()
        );
    }
}

#[test]
fn paper_workflow_is_valid_and_read_completely() {
    let def = paper();
    assert_eq!(def.id.0, 18);
    assert_eq!(def.activities.len(), 5);
    assert_eq!(
        def.activity_types.len(),
        3,
        "the actitivityType spelling is accepted"
    );
    assert_eq!(def.partitions.len(), 2);
    assert_eq!(def.partners[1].skills.len(), 2);
    let a3 = def.activity(ActivityId(18)).unwrap();
    assert_eq!(a3.name, "A3");
    assert_eq!(a3.preconditions, vec![ActivityId(17), ActivityId(19)]);
    assert_eq!(def.activity(ActivityId(20)).unwrap().time_to_wait_secs, 20);
}

#[test]
fn derived_partitions_equal_the_published_ones() {
    let derived = derive_partitions(&paper(), &DeriveOptions::default());
    assert_eq!(derived.len(), 2);
    for (i, part) in derived.iter().enumerate() {
        let name = format!("partition-{}.xml", i + 1);
        let fixture = shared_fixture(&name)
            .map(|p| read_text(&p))
            .unwrap_or_else(|| read_text(&example(&name)));
        let written = write_partition(&part.document);
        assert_eq!(
            tree(&written, &["startTime"]),
            tree(&fixture, &["startTime"]),
            "derived {name} differs from the fixture; derived:\n{written}"
        );
    }
}

#[test]
fn published_partitions_are_valid_partition_documents() {
    for name in ["partition-1.xml", "partition-2.xml"] {
        let bytes = std::fs::read(example(name)).unwrap();
        assert_eq!(detect_kind(&bytes).unwrap(), DocumentKind::Partition);
        let doc = load_partition(&bytes).unwrap_or_else(|d| panic!("{}", d.render(name)));
        assert_eq!(doc.value.start_time.as_deref(), Some("2007/3/10 16:19:34"));
        assert!(check(&bytes).is_empty());
    }
}

#[test]
fn locations_can_be_overridden_with_node_addresses() {
    let mut opts = DeriveOptions::default();
    opts.locations.insert(
        PartnerId(2),
        "/ip4/127.0.0.1/tcp/4002/p2p/12D3KooWtest".into(),
    );
    let derived = derive_partitions(&paper(), &opts);
    let a2 = &derived[0].document.activities[1];
    assert_eq!(a2.adjacents[1].id, ActivityId(19));
    assert_eq!(
        a2.adjacents[1].location,
        "/ip4/127.0.0.1/tcp/4002/p2p/12D3KooWtest"
    );
    assert_eq!(
        a2.adjacents[0].location, "139.82.2.149",
        "partner 1 keeps its ip"
    );
}

#[test]
fn quadro_2_shape_is_accepted() {
    // The published Quadro 2: activities directly under workflow, connectDelay, startTime.
    let src = br#"<?xml version="1.0" encoding="iso-8859-1"?>
<workflow id="18">
  <startTime>2007/3/10 16:19:34</startTime>
  <activity id="17">
    <nameActivity>A2</nameActivity>
    <status>0</status>
    <responseImmediate>1</responseImmediate>
    <timeToWait>0</timeToWait>
    <preconditions>
      <precondition Id="16"><status>0</status><local>0</local><connectDelay>7</connectDelay></precondition>
    </preconditions>
  </activity>
</workflow>"#;
    let doc = load_partition(src).unwrap().value;
    assert_eq!(doc.activities[0].preconditions[0].time_out_secs, 7);
    assert!(doc.activities[0].response_immediate);
}

#[test]
fn latin1_text_is_decoded() {
    let mut src =
        b"<?xml version=\"1.0\" encoding=\"iso-8859-1\"?><workflow id=\"1\"><description>".to_vec();
    src.extend_from_slice(b"Conten\xe7\xe3o");
    src.extend_from_slice(b"</description><activities><activity id=\"1\"><activityTypeId>1</activityTypeId></activity></activities><activityTypes><activityType id=\"1\"/></activityTypes></workflow>");
    assert_eq!(
        load_definition(&src).unwrap().value.description,
        "Contenção"
    );
}

#[test]
fn written_definition_reads_back_equal() {
    let def = paper();
    let again = load_definition(write_definition(&def).as_bytes())
        .unwrap()
        .value;
    assert_eq!(again, def);
}

#[test]
fn tree_comparison_notices_a_changed_value() {
    let fixture = read_text(&example("partition-1.xml"));
    let changed = fixture.replacen(
        "<responseImmediate>0</responseImmediate>",
        "<responseImmediate>1</responseImmediate>",
        1,
    );
    assert_ne!(
        tree(&fixture, &["startTime"]),
        tree(&changed, &["startTime"])
    );
    let reordered = fixture.replacen("<adjacent id=\"18\">", "<adjacent id=\"99\">", 1);
    assert_ne!(
        tree(&fixture, &["startTime"]),
        tree(&reordered, &["startTime"])
    );
    let restamped = fixture.replace("2007/3/10 16:19:34", "2030/1/1 00:00:00");
    assert_eq!(
        tree(&fixture, &["startTime"]),
        tree(&restamped, &["startTime"])
    );
}
