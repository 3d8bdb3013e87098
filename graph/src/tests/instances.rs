//! Graphs of instances the book ran, as the controller has them: the paper's workflow part
//! way through (its SVG and DOT pinned as snapshots in `snapshots/`, so any change in the
//! drawing shows in review), and the loop example on a later pass with its contingency
//! activity.

use mobiwf_book::{Book, Input, Instance, NodeInfo, Starter};
use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, ActivityTypeId, InstanceId, Message, NodeId,
    NodeName, PartitionId, Pass, Report,
};
use mobiwf_xml_schema::WorkflowDefinition;

use super::*;

const PAPER: &str = include_str!("../../../examples/paper/workflow.xml");
const LOOPS: &str = include_str!("../../../examples/loops/review.xml");

/// When the instance is submitted, ms since the epoch.
const T0: u64 = 1_173_543_574_000;

/// A book with nodes P1 and P2 (each of the examples' skills) and `xml` submitted and
/// deployed: instance 1.
fn running(xml: &str) -> Book {
    let mut book = Book::new();
    for (peer, name) in [("peerA", "P1"), ("peerB", "P2")] {
        let node = NodeInfo {
            peer: NodeId::new(peer),
            name: NodeName::new(name),
            skills: [1, 2, 3].map(ActivityTypeId).to_vec(),
            addrs: vec![format!("/ip4/127.0.0.1/tcp/1/p2p/{peer}")],
            registered_ms: 0,
            seq: 1,
            suspected: None,
        };
        book.apply(1, Input::Register(node)).expect("register");
    }
    book.apply(
        T0,
        Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "workflow.xml".to_owned(),
            responsible: None,
            inputs: Default::default(),
            starter: Starter::Anyone,
        },
    )
    .expect("submit");
    for p in [1, 2] {
        book.apply(
            T0 + 1,
            Input::Delivered {
                instance: InstanceId(1),
                partition: PartitionId(p),
                refused: None,
            },
        )
        .expect("delivered");
    }
    book
}

/// `peer` reports `activity` of `partition` in `state`, in `pass`.
fn report(
    book: &mut Book,
    (peer, partition): (&str, u64),
    activity: u64,
    state: ActivityState,
    pass: Pass,
) {
    let ended = state.is_final().then_some(T0 + 20);
    let record = ActivityRecord {
        activity: ActivityId(activity),
        state,
        synchronized_ms: None,
        ready_ms: None,
        started_ms: Some(T0 + 10),
        finished_ms: ended,
        started_us: None,
        finished_us: None,
        detail: None,
        emergency: false,
        retried: 0,
        flag: None,
        pass,
    };
    let message = Message::Report(Report {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        record,
    });
    book.apply(
        T0 + 30,
        Input::FromNode {
            peer: NodeId::new(peer),
            message,
        },
    )
    .expect("report");
}

fn definition(xml: &str) -> WorkflowDefinition {
    mobiwf_xml_schema::load_definition(xml.as_bytes())
        .expect("a valid example")
        .value
}

fn instance(book: &Book) -> &Instance {
    book.instance(InstanceId(1)).expect("instance 1")
}

/// The paper's workflow with A1 and A2 done on P1, A4 running on P2, A3 and A5 waiting.
fn paper() -> Graph {
    let mut book = running(PAPER);
    let first = Pass::FIRST;
    report(&mut book, ("peerA", 1), 16, ActivityState::Succeeded, first);
    report(&mut book, ("peerA", 1), 17, ActivityState::Succeeded, first);
    report(&mut book, ("peerB", 2), 19, ActivityState::Running, first);
    Graph::of_instance(instance(&book), Some(&definition(PAPER)))
}

#[test]
fn the_papers_workflow_has_its_partners_lanes_and_its_states() {
    let g = paper();
    let shown: Vec<(u64, &str, &str)> = g
        .activities
        .iter()
        .map(|a| (a.id.0, a.state.word(), a.lane.label()))
        .collect();
    assert_eq!(
        shown,
        vec![
            (16, "succeeded", "P1"),
            (17, "succeeded", "P1"),
            (18, "not_ready", "P1"),
            (19, "running", "P2"),
            (20, "not_ready", "P2"),
        ]
    );
    let edges: Vec<(u64, u64, EdgeKind)> =
        g.edges.iter().map(|e| (e.from.0, e.to.0, e.kind)).collect();
    let p = EdgeKind::Precondition;
    assert_eq!(
        edges,
        vec![
            (16, 17, p),
            (17, 18, p),
            (19, 18, p),
            (17, 19, p),
            (18, 20, p)
        ]
    );
    assert_eq!(
        g.title,
        "instance 1: workflow 18 (Workflow Exemplo), running"
    );
    let layout = crate::Layout::of(&g);
    let columns: Vec<usize> = layout.boxes.iter().map(|b| b.column).collect();
    // A1, A2, A4 (after A2), A3 (after A2 and A4), A5.
    assert_eq!(columns, vec![0, 1, 3, 2, 4]);
}

#[test]
fn the_papers_workflow_as_svg() {
    insta::assert_snapshot!("paper_svg", crate::svg(&paper()));
}

#[test]
fn the_papers_workflow_as_dot() {
    insta::assert_snapshot!("paper_dot", crate::dot(&paper()));
}

#[test]
fn a_loop_on_its_second_pass_and_its_contingency_activity() {
    let mut book = running(LOOPS);
    report(
        &mut book,
        ("peerA", 1),
        1,
        ActivityState::Succeeded,
        Pass::FIRST,
    );
    // Review asked for another round: Edit runs its second pass.
    report(&mut book, ("peerA", 1), 2, ActivityState::Running, Pass(2));
    let g = Graph::of_instance(instance(&book), Some(&definition(LOOPS)));
    let edit = g
        .activities
        .iter()
        .find(|a| a.id == ActivityId(2))
        .expect("Edit");
    assert_eq!((edit.pass, edit.state), (Pass(2), Shown::Running));
    // Escalate, Review's contingency activity, is in no partition: the controller's lane.
    let escalate = g
        .activities
        .iter()
        .find(|a| a.id == ActivityId(5))
        .expect("Escalate");
    assert_eq!(
        (&escalate.lane, &escalate.node),
        (&LaneKey::Controller, &None)
    );
    let looped = g
        .edges
        .iter()
        .find(|e| e.kind == EdgeKind::Loop)
        .expect("the loop's edge");
    assert_eq!(
        (looped.from, looped.to, looped.label.as_deref()),
        (ActivityId(3), ActivityId(2), Some("while again, max 4"))
    );
    assert!(g.edges.iter().any(
        |e| e.kind == EdgeKind::Contingency && (e.from, e.to) == (ActivityId(3), ActivityId(5))
    ));
    let svg = crate::svg(&g);
    assert!(texts(&svg).contains(&"id 2#2 · running".to_owned()));
    let escalate = elements(&svg)
        .into_iter()
        .find(|e| e.get("data-activity") == Some("5"))
        .expect("Escalate's box");
    assert_eq!(escalate.within("data-lane"), Some("controller"));
    assert_eq!(escalate.get("data-pass"), Some("1"));
}

#[test]
fn without_its_definition_an_instance_shows_its_activities_alone() {
    let book = running(PAPER);
    let g = Graph::of_instance(instance(&book), None);
    assert_eq!(g.activities.len(), 5);
    assert!(g.edges.is_empty());
    assert!(crate::svg(&g).contains("data-activity=\"20\""));
}
