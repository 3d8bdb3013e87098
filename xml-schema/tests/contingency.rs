//! Contingency documents: the one-activity partition the controller deploys for a contingency
//! activity is derived by the same rules as every partition document (`derive_contingency`),
//! so its preconditions fall back to their partition's `timeOut` like the others.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::example;
use mobiwf_xml_schema::{
    ActivityId, Adjacent, Contingency, DeriveOptions, WorkflowDefinition, WorkflowId,
    derive_contingency, derive_partitions, load_definition, write_partition,
};

/// The paper's workflow, with A4 (19) replaced on failure by a new activity 21 of its type,
/// placed in no partition (the controller places it when A4 fails); A2 (17), which A4 waits
/// for, has no `timeOut` of its own but its partition (1) has one of 30 s.
fn paper_with_a_contingency() -> WorkflowDefinition {
    let mut def = load_definition(&std::fs::read(example("workflow.xml")).unwrap())
        .unwrap()
        .value;
    let a4 = def
        .activities
        .iter()
        .position(|a| a.id == ActivityId(19))
        .unwrap();
    let mut stand_in = def.activities[a4].clone();
    stand_in.id = ActivityId(21);
    stand_in.name = "A4b".to_owned();
    stand_in.time_out_secs = 12;
    def.activities[a4].contingency = Contingency::Run(ActivityId(21));
    def.activities.push(stand_in);
    def.partitions[0].time_out_secs = 30;
    def
}

#[test]
fn a_contingency_document_follows_the_rules_of_every_partition_document() {
    let def = paper_with_a_contingency();
    let a4 = def
        .activities
        .iter()
        .find(|a| a.id == ActivityId(19))
        .unwrap();
    let opts = DeriveOptions {
        workflow_id: Some(WorkflowId(7)),
        start_time: Some("2026-11-23T12:00:00".to_owned()),
        ..DeriveOptions::default()
    };
    let successor = Adjacent {
        id: ActivityId(20),
        location:
            "/ip4/127.0.0.1/tcp/7712/p2p/12D3KooWPNk8KMD51C6CPmDkcotb5s4rKmSxWm6Qiey9fVtEGhj7"
                .to_owned(),
        states: Vec::new(),
        carries: Vec::new(),
    };
    let doc = derive_contingency(
        &def,
        ActivityId(21),
        &a4.preconditions,
        vec![successor.clone()],
        &opts,
    )
    .expect("activity 21 is in the definition");

    assert_eq!(doc.workflow_id, WorkflowId(7));
    assert_eq!(doc.start_time.as_deref(), Some("2026-11-23T12:00:00"));
    let [act] = doc.activities.as_slice() else {
        panic!("one activity: {doc:?}");
    };
    assert_eq!((act.id, act.name.as_str()), (ActivityId(21), "A4b"));
    assert_eq!(act.time_out_secs, 12, "its own longest run");
    assert!(
        act.response_immediate,
        "the controller hears of its end at once"
    );
    assert_eq!(act.adjacents, vec![successor]);

    // The same precondition, as A4's own partition document derives it.
    let derived = derive_partitions(&def, &opts);
    let a4_doc = derived
        .iter()
        .flat_map(|p| &p.document.activities)
        .find(|a| a.id == ActivityId(19))
        .unwrap();
    let remote: Vec<_> = a4_doc.preconditions.iter().filter(|p| !p.local).collect();
    assert!(!remote.is_empty(), "A4 waits for another partition");
    for pre in remote {
        let same = act.preconditions.iter().find(|p| p.id == pre.id).unwrap();
        assert!(
            !same.local,
            "a contingency activity runs alone: nothing is local"
        );
        assert_eq!(
            same.time_out_secs, pre.time_out_secs,
            "precondition {}",
            pre.id
        );
    }
    let from_a2 = act
        .preconditions
        .iter()
        .find(|p| p.id == ActivityId(17))
        .unwrap();
    assert_eq!(
        from_a2.time_out_secs, 30,
        "A2 has no timeOut: its partition's applies"
    );
    // And it is a document a node takes.
    let xml = write_partition(&doc);
    mobiwf_xml_schema::load_partition(xml.as_bytes()).expect("a valid partition document");
}

#[test]
fn no_document_for_an_activity_the_definition_lacks() {
    let def = paper_with_a_contingency();
    assert!(
        derive_contingency(
            &def,
            ActivityId(99),
            &[],
            Vec::new(),
            &DeriveOptions::default()
        )
        .is_none()
    );
}
