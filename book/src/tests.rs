//! Scenario tests of the controller's bookkeeping: inputs in, messages out, no I/O.

use super::*;
use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, ActivityTypeId, InstanceId, Message, NodeId,
    NodeName, Outcome, PartitionId,
};

const PAPER: &str = include_str!("../../examples/paper/workflow.xml");

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

fn book_with(nodes: &[NodeInfo]) -> Book {
    let mut b = Book::new();
    for n in nodes {
        b.apply(1, Input::Register(n.clone())).expect("register");
    }
    b
}

fn submit(b: &mut Book, xml: &str) -> Result<Applied, BookError> {
    b.apply(
        1_173_543_574_000,
        Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
        },
    )
}

fn deploys(applied: &Applied) -> Vec<(String, u64, String)> {
    applied
        .effects
        .iter()
        .map(|Effect::Send { to, message, .. }| match message {
            Message::Deploy {
                partition,
                document,
                ..
            } => (to.to_string(), partition.0, document.clone()),
            other => panic!("expected a deployment, got {other:?}"),
        })
        .collect()
}

fn record(activity: u64, state: ActivityState) -> ActivityRecord {
    ActivityRecord {
        activity: ActivityId(activity),
        state,
        started_ms: Some(5),
        started_us: None,
        finished_us: None,
        finished_ms: Some(6),
        detail: None,
        emergency: false,
        retried: 0,
    }
}

fn peer_of(b: &Book, instance: u64, partition: u64) -> String {
    let inst = b.instance(InstanceId(instance)).expect("instance");
    let p = inst
        .partitions
        .iter()
        .find(|p| p.id == PartitionId(partition))
        .expect("partition");
    p.peer.to_string()
}

fn result(b: &mut Book, instance: u64, partition: u64, records: Vec<ActivityRecord>) {
    let peer = peer_of(b, instance, partition);
    b.apply(
        9,
        Input::FromNode {
            peer: NodeId::new(peer),
            message: Message::PartitionResult {
                instance: InstanceId(instance),
                partition: PartitionId(partition),
                activities: records,
            },
        },
    )
    .expect("result");
}

#[test]
fn the_paper_goes_to_the_nodes_named_like_its_partners_and_completes() {
    let mut b = book_with(&[
        node("peerB", "P2", &[1, 3]),
        node("peerA", "P1", &[1, 2, 3]),
    ]);
    let applied = submit(&mut b, PAPER).expect("submit");
    assert_eq!(applied.instance, Some(InstanceId(1)));
    let d = deploys(&applied);
    assert_eq!(d.len(), 2);
    assert_eq!((d[0].0.as_str(), d[0].1), ("peerA", 1));
    assert_eq!((d[1].0.as_str(), d[1].1), ("peerB", 2));
    // The documents carry the instance id, the start time and the nodes' libp2p addresses.
    assert!(d[0].2.contains("<workflow id=\"1\">"), "{}", d[0].2);
    assert!(
        d[0].2.contains("<startTime>2007/3/10 16:19:34</startTime>"),
        "{}",
        d[0].2
    );
    assert!(
        d[0].2.contains("<ip>/ip4/127.0.0.1/tcp/1/p2p/peerB</ip>"),
        "{}",
        d[0].2
    );
    assert!(
        d[1].2.contains("<ip>/ip4/127.0.0.1/tcp/1/p2p/peerA</ip>"),
        "{}",
        d[1].2
    );

    for p in [1, 2] {
        b.apply(
            8,
            Input::Delivered {
                instance: InstanceId(1),
                partition: PartitionId(p),
                refused: None,
            },
        )
        .expect("delivered");
    }
    assert_eq!(
        b.instance(InstanceId(1)).expect("instance").state,
        InstanceState::Running
    );
    let report = Message::Report {
        instance: InstanceId(1),
        partition: PartitionId(1),
        record: record(17, ActivityState::Succeeded),
    };
    let err = b
        .apply(
            9,
            Input::FromNode {
                peer: NodeId::new("peerB"),
                message: report.clone(),
            },
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("does not run partition 1"),
        "{err}"
    );
    b.apply(
        9,
        Input::FromNode {
            peer: NodeId::new("peerA"),
            message: report,
        },
    )
    .expect("report");
    let a2 = &b.instance(InstanceId(1)).expect("instance").activities[1];
    assert_eq!(
        (a2.id, a2.state, a2.node.as_ref().map(NodeName::as_str)),
        (ActivityId(17), ActivityState::Succeeded, Some("P1"))
    );
    result(
        &mut b,
        1,
        1,
        [16, 17, 18]
            .map(|a| record(a, ActivityState::Succeeded))
            .to_vec(),
    );
    assert_eq!(
        b.instance(InstanceId(1)).expect("instance").state,
        InstanceState::Running
    );
    result(
        &mut b,
        1,
        2,
        [19, 20]
            .map(|a| record(a, ActivityState::Succeeded))
            .to_vec(),
    );
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert_eq!(inst.state, InstanceState::Succeeded);
    assert_eq!(inst.finished_ms, Some(9));
    assert!(
        inst.activities
            .iter()
            .all(|a| a.state == ActivityState::Succeeded)
    );
}

#[test]
fn changes_restore_the_same_book() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    submit(&mut b, PAPER).expect("submit");
    let changes = b.take_changes();
    let json = serde_json::to_string(&changes.instances).expect("ser");
    let instances: Vec<Instance> = serde_json::from_str(&json).expect("de");
    let definitions = changes
        .definitions
        .iter()
        .map(|(id, xml)| {
            let def = mobiwf_xml_schema::load_definition(xml).expect("definition");
            (*id, std::sync::Arc::new(def.value))
        })
        .collect();
    let events = changes
        .history
        .iter()
        .map(|(id, _, e)| (*id, e.clone()))
        .collect();
    let restored = Book::restore(
        changes.nodes,
        instances,
        definitions,
        History::restore(events),
        changes.last_instance,
    );
    assert_eq!(restored.history(InstanceId(1)), b.history(InstanceId(1)));
    assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
    let mut restored = restored;
    assert_eq!(
        submit(&mut restored, PAPER).expect("submit").instance,
        Some(InstanceId(2))
    );
    assert!(b.take_changes().instances.is_empty());
}

#[test]
fn a_failure_that_blocks_fails_the_instance_and_a_released_one_does_not() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    submit(&mut b, PAPER).expect("submit");
    submit(&mut b, PAPER).expect("submit");
    // A2 (17) has contingency 0: its failure releases its successors.
    result(
        &mut b,
        1,
        1,
        vec![
            record(16, ActivityState::Succeeded),
            record(17, ActivityState::Failed),
            record(18, ActivityState::Succeeded),
        ],
    );
    result(
        &mut b,
        1,
        2,
        [19, 20]
            .map(|a| record(a, ActivityState::Succeeded))
            .to_vec(),
    );
    assert_eq!(
        b.instance(InstanceId(1)).expect("instance").state,
        InstanceState::Succeeded
    );
    // A1 (16) has contingency -1.
    result(
        &mut b,
        2,
        1,
        vec![
            record(16, ActivityState::Failed),
            record(17, ActivityState::Cancelled),
            record(18, ActivityState::Cancelled),
        ],
    );
    result(
        &mut b,
        2,
        2,
        [19, 20]
            .map(|a| record(a, ActivityState::Cancelled))
            .to_vec(),
    );
    assert_eq!(
        b.instance(InstanceId(2)).expect("instance").state,
        InstanceState::Failed
    );
}

#[test]
fn a_refused_partition_fails_the_instance_with_the_reason() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    submit(&mut b, PAPER).expect("submit");
    b.apply(
        3,
        Input::Delivered {
            instance: InstanceId(1),
            partition: PartitionId(2),
            refused: Some("bad".to_owned()),
        },
    )
    .expect("delivered");
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert_eq!(inst.state, InstanceState::Failed);
    assert_eq!(inst.detail.as_deref(), Some("partition 2 was refused: bad"));
}

#[test]
fn partners_without_a_node_go_to_nodes_with_the_skills() {
    let mut b = book_with(&[
        node("peerX", "laptop", &[1, 3]),
        node("peerY", "gateway", &[1, 2, 3]),
    ]);
    let d = deploys(&submit(&mut b, PAPER).expect("submit"));
    // Partition 1 needs skills 1 (and its activities' types); partition 2 goes to the other,
    // least loaded node that has its skills.
    assert_eq!(d.len(), 2);
    assert_ne!(d[0].0, d[1].0, "two nodes share the work: {d:?}");
}

#[test]
fn submissions_that_cannot_run_are_refused_with_what_to_do() {
    let mut empty = Book::new();
    let err = submit(&mut empty, PAPER).unwrap_err();
    assert!(err.to_string().contains("no node is registered"), "{err}");

    let mut b = book_with(&[node("peerX", "laptop", &[2])]);
    let err = submit(&mut b, PAPER).unwrap_err();
    assert!(err.to_string().contains("needs skills [1]"), "{err}");
    assert!(
        err.to_string().contains("mobiwf-node run --name P1"),
        "{err}"
    );

    let err = submit(
        &mut b,
        "<workflow id=\"1\"><activities><activity id=\"x\"/></activities></workflow>",
    )
    .unwrap_err();
    assert!(err.to_string().starts_with("wf.xml:1:"), "{err}");
    assert_eq!(b.instances().count(), 0);
}

#[test]
fn a_workflow_without_partitions_is_partitioned_with_few_crossing_edges() {
    let start = PAPER.find("<partitions>").expect("partitions");
    let end = PAPER.find("</partners>").expect("partners") + "</partners>".len();
    let bare = format!("{}{}", &PAPER[..start], &PAPER[end..]);
    let mut b = book_with(&[
        node("peerA", "a", &[1, 2, 3]),
        node("peerB", "b", &[1, 2, 3]),
    ]);
    let d = deploys(&submit(&mut b, &bare).expect("submit"));
    // A chain whose nodes can all do everything stays on one node: no edge crosses.
    assert_eq!(d.len(), 1, "{d:?}");
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert!(
        inst.activities
            .iter()
            .all(|a| a.node.as_ref().map(NodeName::as_str) == Some("a"))
    );
}

#[test]
fn reports_about_unknown_instances_are_refused() {
    let mut b = Book::new();
    let err = b
        .apply(
            1,
            Input::FromNode {
                peer: NodeId::new("x"),
                message: Message::Report {
                    instance: InstanceId(7),
                    partition: PartitionId(1),
                    record: record(1, ActivityState::Succeeded),
                },
            },
        )
        .unwrap_err();
    assert_eq!(err, BookError::UnknownInstance(InstanceId(7)));
}

#[test]
fn times_are_written_as_the_paper_writes_them() {
    assert_eq!(format_time(0), "1970/1/1 00:00:00");
    assert_eq!(format_time(1_173_543_574_000), "2007/3/10 16:19:34");
    assert_eq!(format_time(951_782_400_000), "2000/2/29 00:00:00");
}

#[test]
fn a_late_old_registration_does_not_replace_a_newer_one() {
    let mut b = Book::new();
    let mut new = node("peerA", "P1", &[1]);
    new.seq = 5;
    b.apply(1, Input::Register(new)).expect("register");
    let mut old = node("peerA", "old-name", &[9]);
    old.seq = 2;
    b.apply(2, Input::Register(old)).expect("register");
    let n: Vec<&NodeInfo> = b.nodes().collect();
    assert_eq!((n[0].name.as_str(), n[0].seq), ("P1", 5));
}

// Failure handling (MISSION P5-P7, F1): scenarios on small definitions.

/// When `submit` submits, ms since the epoch; later inputs count from it.
const T0: u64 = 1_173_543_574_000;

/// An activity of a test definition: type 1 runs in partitions, type 2 is for contingency
/// activities (left out of every partition).
struct D {
    id: u64,
    ty: u64,
    contingency: i64,
    pre: &'static [u64],
}

/// An activity of type 1.
const fn act(id: u64, contingency: i64, pre: &'static [u64]) -> D {
    D {
        id,
        ty: 1,
        contingency,
        pre,
    }
}

/// A contingency activity (type 2).
const fn spare(id: u64, contingency: i64) -> D {
    D {
        id,
        ty: 2,
        contingency,
        pre: &[],
    }
}

/// A definition with partners P1 (id 1) and P2 (id 2), both with skills 1 and 2, and these
/// partitions: (id, partner, timeOut in seconds, activities).
fn wf(acts: &[D], partitions: &[(u64, u64, u32, &[u64])]) -> String {
    let mut s = "<workflow id=\"77\"><description>test</description><activities>".to_owned();
    for a in acts {
        s += &format!(
            "<activity id=\"{id}\"><nameActivity>N{id}</nameActivity>\
             <descriptionActivity>d</descriptionActivity><activityTypeId>{}</activityTypeId>\
             <status>0</status><timeToWait>0</timeToWait>\
             <contingencyActivityId>{}</contingencyActivityId><timeOut>0</timeOut><preconditions>",
            a.ty,
            a.contingency,
            id = a.id
        );
        for p in a.pre {
            s += &format!("<preconditionId>{p}</preconditionId>");
        }
        s += "</preconditions></activity>";
    }
    s += "</activities><activityTypes><activityType id=\"1\"><description>work</description>\
          </activityType><activityType id=\"2\"><description>rescue</description>\
          </activityType></activityTypes><partitions>";
    for (id, partner, time_out, acts) in partitions {
        s += &format!(
            "<partition id=\"{id}\"><name>p{id}</name><partnerId>{partner}</partnerId>\
             <timeOut>{time_out}</timeOut>"
        );
        for a in *acts {
            s += &format!("<activityId>{a}</activityId>");
        }
        s += "</partition>";
    }
    s += "</partitions><partners>";
    for p in [1, 2] {
        s += &format!(
            "<partner id=\"{p}\"><name>P{p}</name><description>d</description><ip>10.0.0.{p}</ip>\
             <skills><activityTypeId>1</activityTypeId><activityTypeId>2</activityTypeId>\
             </skills></partner>"
        );
    }
    s + "</partners></workflow>"
}

/// 1 on P1 (partition 1) → 2 on P2 (partition 2); activity 1 fails with `contingency`, and
/// when that is 9, contingency activity 9 (which blocks when it fails) stands by.
fn chain(contingency: i64) -> String {
    let mut acts = vec![act(1, contingency, &[]), act(2, -1, &[1])];
    if contingency == 9 {
        acts.push(spare(9, -1));
    }
    wf(&acts, &[(1, 1, 0, &[1]), (2, 2, 0, &[2])])
}

/// P1 (peerA) and P2 (peerB) can run everything; `spare` (peerC) only contingency activities.
fn three_nodes() -> Book {
    book_with(&[
        node("peerA", "P1", &[1, 2]),
        node("peerB", "P2", &[1, 2]),
        node("peerC", "spare", &[2]),
    ])
}

fn addr(peer: &str) -> String {
    format!("/ip4/127.0.0.1/tcp/1/p2p/{peer}")
}

/// Every message sent: (to, message).
fn sent(applied: &Applied) -> Vec<(String, Message)> {
    applied
        .effects
        .iter()
        .map(|Effect::Send { to, message, .. }| (to.to_string(), message.clone()))
        .collect()
}

/// The deployments among the messages: (to, partition, document).
fn deployed(applied: &Applied) -> Vec<(String, u64, String)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Deploy {
                partition,
                document,
                ..
            } => Some((to, partition.0, document)),
            _ => None,
        })
        .collect()
}

fn from_node(b: &mut Book, now_ms: u64, peer: &str, message: Message) -> Applied {
    let input = Input::FromNode {
        peer: NodeId::new(peer),
        message,
    };
    b.apply(now_ms, input).expect("from node")
}

fn suspect(b: &mut Book, now_ms: u64, peer: &str) -> Applied {
    let input = Input::Suspect {
        peer: NodeId::new(peer),
        reason: "no answer to 3 probes".to_owned(),
    };
    b.apply(now_ms, input).expect("suspect")
}

fn failed(activity: u64, detail: &str) -> ActivityRecord {
    ActivityRecord {
        detail: Some(detail.to_owned()),
        ..record(activity, ActivityState::Failed)
    }
}

/// A node reports that an activity of instance 1 failed.
fn report_failure(b: &mut Book, now_ms: u64, activity: u64, partition: u64, peer: &str) -> Applied {
    let message = Message::Report {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        record: failed(activity, "exit status 1"),
    };
    from_node(b, now_ms, peer, message)
}

fn partition_result(
    b: &mut Book,
    now_ms: u64,
    partition: u64,
    records: Vec<ActivityRecord>,
) -> Applied {
    let peer = peer_of(b, 1, partition);
    let message = Message::PartitionResult {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        activities: records,
    };
    from_node(b, now_ms, &peer, message)
}

fn activity(b: &Book, id: u64) -> ActivityView {
    let inst = b.instance(InstanceId(1)).expect("instance");
    let found = inst.activities.iter().find(|a| a.id == ActivityId(id));
    found.expect("activity").clone()
}

fn partition_view(b: &Book, id: u64) -> PartitionView {
    let inst = b.instance(InstanceId(1)).expect("instance");
    let found = inst.partitions.iter().find(|p| p.id == PartitionId(id));
    found.expect("partition").clone()
}

fn state_of(b: &Book) -> InstanceState {
    b.instance(InstanceId(1)).expect("instance").state
}

/// The history of instance 1, one line per event.
fn story(b: &Book) -> Vec<String> {
    let events = b.history(InstanceId(1)).expect("history");
    events.iter().map(|e| e.what.clone()).collect()
}

fn told(story: &[String], needle: &str) -> bool {
    story.iter().any(|line| line.contains(needle))
}

const WHY: &str = "partner P1 stopped answering (no answer to 3 probes)";

#[test]
fn a_suspected_nodes_unfinished_partitions_are_abandoned_and_withdrawn_from_it() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    let applied = suspect(&mut b, T0 + 1000, "peerA");
    assert_eq!(partition_view(&b, 1).abandoned.as_deref(), Some(WHY));
    assert_eq!(partition_view(&b, 2).abandoned, None);
    let a1 = activity(&b, 1);
    assert_eq!(
        (a1.state, a1.detail.as_deref()),
        (ActivityState::Failed, Some(WHY))
    );
    assert_eq!(
        sent(&applied),
        vec![
            (
                "peerA".to_owned(),
                Message::Withdraw {
                    instance: InstanceId(1),
                    partition: PartitionId(1),
                    activities: vec![ActivityId(1)],
                    reason: WHY.to_owned(),
                }
            ),
            // Contingency -1: the successor elsewhere is blocked.
            (
                "peerB".to_owned(),
                Message::Notify {
                    instance: InstanceId(1),
                    activity: ActivityId(1),
                    outcome: Outcome::Blocked,
                }
            ),
        ]
    );
    let story = story(&b);
    assert!(
        told(&story, &format!("partition 1 given up: {WHY}")),
        "{story:?}"
    );
    assert!(told(&story, &format!("N1 (1) failed: {WHY}")), "{story:?}");
    // Suspected twice: nothing more happens.
    assert!(sent(&suspect(&mut b, T0 + 2000, "peerA")).is_empty());
}

#[test]
fn a_suspected_nodes_activity_with_contingency_zero_releases_its_successors_elsewhere() {
    let mut b = three_nodes();
    submit(&mut b, &chain(0)).expect("submit");
    let applied = suspect(&mut b, T0 + 1000, "peerA");
    assert!(sent(&applied).contains(&(
        "peerB".to_owned(),
        Message::Notify {
            instance: InstanceId(1),
            activity: ActivityId(1),
            outcome: Outcome::Released,
        }
    )));
    partition_result(
        &mut b,
        T0 + 2000,
        2,
        vec![record(2, ActivityState::Succeeded)],
    );
    assert_eq!(state_of(&b), InstanceState::Succeeded);
}

#[test]
fn a_suspected_nodes_activity_with_a_contingency_runs_it_on_another_node_with_the_skill() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    let applied = suspect(&mut b, T0 + 1000, "peerA");
    // peerB has partition 2 to run; spare (peerC) has nothing: it gets partition 3.
    let d = deployed(&applied);
    assert_eq!(d.len(), 1, "{d:?}");
    let (to, partition, document) = &d[0];
    assert_eq!((to.as_str(), *partition), ("peerC", 3));
    let doc = mobiwf_xml_schema::load_partition(document.as_bytes())
        .expect("a valid partition document")
        .value;
    assert_eq!(doc.workflow_id.0, 1);
    assert_eq!(doc.activities.len(), 1);
    let x = &doc.activities[0];
    assert_eq!(x.id.0, 9);
    assert!(x.response_immediate);
    assert_eq!(
        x.adjacents
            .iter()
            .map(|a| (a.id.0, a.location.clone()))
            .collect::<Vec<_>>(),
        vec![(2, addr("peerB"))]
    );
    assert!(sent(&applied).contains(&(
        "peerB".to_owned(),
        Message::Substitute {
            instance: InstanceId(1),
            replaced: ActivityId(1),
            by: ActivityId(9),
            location: addr("peerC"),
        }
    )));
    assert!(
        !sent(&applied)
            .iter()
            .any(|(_, m)| matches!(m, Message::Notify { .. })),
        "the successors wait for activity 9"
    );
    let (a1, a9) = (activity(&b, 1), activity(&b, 9));
    assert_eq!(a1.replaced_by, Some(ActivityId(9)));
    assert_eq!(
        (
            a9.partition,
            a9.node.as_ref().map(NodeName::as_str),
            a9.stands_for
        ),
        (Some(PartitionId(3)), Some("spare"), Some(ActivityId(1)))
    );
    assert_eq!(partition_view(&b, 3).stands_for, Some(ActivityId(1)));

    partition_result(
        &mut b,
        T0 + 2000,
        2,
        vec![record(2, ActivityState::Succeeded)],
    );
    assert!(!state_of(&b).is_final(), "activity 9 runs");
    partition_result(
        &mut b,
        T0 + 3000,
        3,
        vec![record(9, ActivityState::Succeeded)],
    );
    assert_eq!(state_of(&b), InstanceState::Succeeded);
    let story = story(&b);
    for step in [
        "partition 1 given up",
        "N1 (1) failed",
        "contingency activity N9 (9) runs on spare in place of N1 (1)",
        "N2 (2) succeeded",
        "partition 2 finished",
        "N9 (9) succeeded",
        "partition 3 finished",
        "instance succeeded",
    ] {
        assert!(told(&story, step), "{step:?} not in {story:?}");
    }
}

#[test]
fn without_a_node_with_the_skill_the_contingency_activity_waits_for_one_to_register() {
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1])]);
    submit(&mut b, &chain(9)).expect("submit");
    let applied = suspect(&mut b, T0 + 1000, "peerA");
    assert!(deployed(&applied).is_empty());
    let waiting = "waiting for an available partner with skill 2 to run it in place of N1 (1)";
    assert_eq!(activity(&b, 9).detail.as_deref(), Some(waiting));
    assert!(told(&story(&b), waiting));
    // Its successor's result does not end the instance: activity 9 has yet to run.
    partition_result(
        &mut b,
        T0 + 2000,
        2,
        vec![record(2, ActivityState::Cancelled)],
    );
    assert!(!state_of(&b).is_final());
    // A node without the skill changes nothing; one with it gets activity 9.
    let applied = b
        .apply(T0 + 3000, Input::Register(node("peerD", "other", &[1])))
        .expect("register");
    assert!(deployed(&applied).is_empty());
    let applied = b
        .apply(T0 + 4000, Input::Register(node("peerC", "spare", &[2])))
        .expect("register");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].0.as_str(), d[0].1), ("peerC", 3));
    assert_eq!(activity(&b, 9).detail, None);
}

#[test]
fn a_reported_failure_with_a_contingency_places_it_on_another_node_than_the_failed_ones() {
    // Both nodes have one partition to run; by name P1 would come first, but activity 1
    // failed there.
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    submit(&mut b, &chain(9)).expect("submit");
    let applied = report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, "peerB");
    assert_eq!(activity(&b, 1).detail.as_deref(), Some("exit status 1"));
    assert!(sent(&applied).contains(&(
        "peerB".to_owned(),
        Message::Substitute {
            instance: InstanceId(1),
            replaced: ActivityId(1),
            by: ActivityId(9),
            location: addr("peerB"),
        }
    )));
    assert!(
        !sent(&applied).iter().any(|(to, _)| to == "peerA"),
        "the failed activity's node is left alone: {:?}",
        sent(&applied)
    );
}

#[test]
fn a_contingency_activity_that_fails_and_blocks_fails_the_instance_with_its_reason() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
    partition_result(&mut b, T0 + 1500, 1, vec![failed(1, "exit status 1")]);
    partition_result(&mut b, T0 + 2000, 3, vec![failed(9, "disk full")]);
    assert!(!state_of(&b).is_final(), "activity 2 is not over");
    partition_result(
        &mut b,
        T0 + 3000,
        2,
        vec![record(2, ActivityState::Cancelled)],
    );
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert_eq!(inst.state, InstanceState::Failed);
    assert_eq!(
        inst.detail.as_deref(),
        Some("N9 (9) on spare failed: disk full")
    );
}

/// Like `chain(9)`, but contingency activity 9 has its own contingency activity 8.
fn chain_of_contingencies() -> String {
    wf(
        &[act(1, 9, &[]), act(2, -1, &[1]), spare(9, 8), spare(8, -1)],
        &[(1, 1, 0, &[1]), (2, 2, 0, &[2])],
    )
}

#[test]
fn a_contingency_activity_that_fails_with_its_own_contingency_places_that_one_in_turn() {
    let mut b = three_nodes();
    submit(&mut b, &chain_of_contingencies()).expect("submit");
    report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
    assert_eq!(
        activity(&b, 9).node.as_ref().map(NodeName::as_str),
        Some("spare")
    );
    let applied = report_failure(&mut b, T0 + 2000, 9, 3, "peerC");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1, "{:?}", sent(&applied));
    assert_ne!(d[0].0, "peerC", "not where activity 9 failed");
    assert_eq!(d[0].1, 4);
    assert!(
        d[0].2.contains(&format!("<ip>{}</ip>", addr("peerB"))),
        "{}",
        d[0].2
    );
    let location = addr(&d[0].0);
    assert!(sent(&applied).contains(&(
        "peerB".to_owned(),
        Message::Substitute {
            instance: InstanceId(1),
            replaced: ActivityId(9),
            by: ActivityId(8),
            location,
        }
    )));
    let a8 = activity(&b, 8);
    assert_eq!(
        (a8.partition, a8.stands_for),
        (Some(PartitionId(4)), Some(ActivityId(9)))
    );
    partition_result(&mut b, T0 + 2500, 1, vec![failed(1, "exit status 1")]);
    partition_result(&mut b, T0 + 2600, 3, vec![failed(9, "exit status 1")]);
    partition_result(
        &mut b,
        T0 + 3000,
        4,
        vec![record(8, ActivityState::Succeeded)],
    );
    partition_result(
        &mut b,
        T0 + 4000,
        2,
        vec![record(2, ActivityState::Succeeded)],
    );
    assert_eq!(state_of(&b), InstanceState::Succeeded);
}

#[test]
fn a_chained_contingency_activity_waits_for_what_the_one_before_it_waited_for() {
    // 10 (P1) → 1 (P2, contingency 9, then 8) → 2 (P1).
    let def = wf(
        &[
            act(10, -1, &[]),
            act(1, 9, &[10]),
            act(2, -1, &[1]),
            spare(9, 8),
            spare(8, -1),
        ],
        &[(1, 1, 0, &[10, 2]), (2, 2, 0, &[1])],
    );
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2]),
        node("peerB", "P2", &[1, 2]),
        node("peerC", "spare", &[2]),
        node("peerD", "spare2", &[2]),
    ]);
    submit(&mut b, &def).expect("submit");
    // P2 goes silent before activity 1 could start: activity 9 waits for 10 in its place.
    suspect(&mut b, T0 + 1000, "peerB");
    let a9 = activity(&b, 9);
    assert_eq!(
        (a9.node.as_ref().map(NodeName::as_str), a9.awaits.clone()),
        (Some("spare"), vec![ActivityId(10)])
    );
    // Its node goes silent too, before 10 finished: activity 8 waits for 10 as well.
    let applied = suspect(&mut b, T0 + 2000, "peerC");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1, "{:?}", sent(&applied));
    assert_eq!(d[0].0, "peerD");
    assert!(d[0].2.contains("<precondition id=\"10\">"), "{}", d[0].2);
    assert_eq!(activity(&b, 8).awaits, vec![ActivityId(10)]);
    // When 10 is done, the controller relays it to activity 8's node.
    let applied = from_node(
        &mut b,
        T0 + 3000,
        "peerA",
        Message::Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(10, ActivityState::Succeeded),
        },
    );
    assert_eq!(
        sent(&applied),
        vec![(
            "peerD".to_owned(),
            Message::Notify {
                instance: InstanceId(1),
                activity: ActivityId(10),
                outcome: Outcome::Succeeded,
            }
        )]
    );
}

#[test]
fn a_late_success_from_an_abandoned_partition_is_recorded_and_ignored() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    suspect(&mut b, T0 + 1000, "peerA");
    let applied = partition_result(
        &mut b,
        T0 + 5000,
        1,
        vec![record(1, ActivityState::Succeeded)],
    );
    assert!(sent(&applied).is_empty());
    let a1 = activity(&b, 1);
    assert_eq!(
        (a1.state, a1.detail.as_deref()),
        (ActivityState::Failed, Some(WHY))
    );
    let story = story(&b);
    assert!(
        told(
            &story,
            &format!(
                "late word ignored: N1 (1) succeeded on P1, but the controller had decided it \
                 failed ({WHY})"
            )
        ),
        "{story:?}"
    );
    assert!(told(
        &story,
        "partition 1 result came after it was given up"
    ));
}

#[test]
fn a_partition_past_its_time_out_is_given_up_at_its_deadline_and_not_before() {
    let mut b = three_nodes();
    let def = wf(
        &[act(1, -1, &[]), act(2, -1, &[1])],
        &[(1, 1, 30, &[1]), (2, 2, 0, &[2])],
    );
    submit(&mut b, &def).expect("submit");
    assert_eq!(b.next_deadline(), Some(T0 + 30_000));
    let early = b.apply(T0 + 29_999, Input::Tick).expect("tick");
    assert!(early.effects.is_empty());
    assert_eq!(partition_view(&b, 1).abandoned, None);
    let applied = b.apply(T0 + 30_000, Input::Tick).expect("tick");
    let why = "partition 1 did not finish within its timeOut of 30 s";
    assert_eq!(partition_view(&b, 1).abandoned.as_deref(), Some(why));
    assert_eq!(activity(&b, 1).detail.as_deref(), Some(why));
    assert_eq!(
        sent(&applied)[0],
        (
            "peerA".to_owned(),
            Message::Withdraw {
                instance: InstanceId(1),
                partition: PartitionId(1),
                activities: vec![ActivityId(1)],
                reason: why.to_owned(),
            }
        )
    );
    assert_eq!(b.next_deadline(), None);
}

#[test]
fn an_overdue_precondition_whose_outcome_is_known_is_sent_again_to_the_waiting_node() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    from_node(
        &mut b,
        T0 + 1000,
        "peerA",
        Message::Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(1, ActivityState::Succeeded),
        },
    );
    let overdue = Message::Overdue {
        instance: InstanceId(1),
        waiting: ActivityId(2),
        precondition: ActivityId(1),
        time_out_secs: 10,
    };
    let applied = from_node(&mut b, T0 + 11_000, "peerB", overdue.clone());
    assert_eq!(
        sent(&applied),
        vec![(
            "peerB".to_owned(),
            Message::Notify {
                instance: InstanceId(1),
                activity: ActivityId(1),
                outcome: Outcome::Succeeded,
            }
        )]
    );
    assert!(told(&story(&b), "its outcome is known, sent again"));
    // Only the node of the waiting activity may say so.
    let err = b
        .apply(
            T0 + 11_000,
            Input::FromNode {
                peer: NodeId::new("peerA"),
                message: overdue,
            },
        )
        .unwrap_err();
    assert!(matches!(err, BookError::NotYours { .. }), "{err}");
}

/// Node P2 says that activity 2 waited longer than 10 s for activity 1.
fn overdue_1_for_2(b: &mut Book, now_ms: u64) -> Applied {
    let overdue = Message::Overdue {
        instance: InstanceId(1),
        waiting: ActivityId(2),
        precondition: ActivityId(1),
        time_out_secs: 10,
    };
    from_node(b, now_ms, "peerB", overdue)
}

#[test]
fn an_overdue_precondition_whose_outcome_is_unknown_is_withdrawn_after_a_grace_period() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    let applied = overdue_1_for_2(&mut b, T0 + 11_000);
    assert!(sent(&applied).is_empty(), "its partner may still report it");
    assert_eq!(b.next_deadline(), Some(T0 + 11_000 + OVERDUE_GRACE_MS));
    // Said again before the decision: the deadline stays.
    overdue_1_for_2(&mut b, T0 + 12_000);
    assert_eq!(b.next_deadline(), Some(T0 + 11_000 + OVERDUE_GRACE_MS));
    let early = b.apply(T0 + 12_999, Input::Tick).expect("tick");
    assert!(early.effects.is_empty());
    assert_eq!(activity(&b, 1).state, ActivityState::Waiting);

    let applied = b.apply(T0 + 13_000, Input::Tick).expect("tick");
    let why = "N2 (2) on P2 waited more than 10 s (its precondition timeOut) for N1 (1)";
    let msgs = sent(&applied);
    assert_eq!(
        msgs[0],
        (
            "peerA".to_owned(),
            Message::Withdraw {
                instance: InstanceId(1),
                partition: PartitionId(1),
                activities: vec![ActivityId(1)],
                reason: why.to_owned(),
            }
        )
    );
    let a1 = activity(&b, 1);
    assert_eq!(
        (a1.state, a1.detail.as_deref()),
        (ActivityState::Failed, Some(why))
    );
    // Its contingency applies: activity 9 runs elsewhere.
    assert_eq!(deployed(&applied).len(), 1, "{msgs:?}");
    assert_eq!(
        activity(&b, 9).node.as_ref().map(NodeName::as_str),
        Some("spare")
    );
    assert_eq!(
        partition_view(&b, 1).abandoned,
        None,
        "only the activity is withdrawn"
    );
    assert_eq!(b.next_deadline(), None);
}

#[test]
fn an_overdue_precondition_its_partner_reports_during_the_grace_period_is_not_withdrawn() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    overdue_1_for_2(&mut b, T0 + 11_000);
    from_node(
        &mut b,
        T0 + 12_000,
        "peerA",
        Message::Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(1, ActivityState::Succeeded),
        },
    );
    let applied = b.apply(T0 + 13_000, Input::Tick).expect("tick");
    assert!(sent(&applied).is_empty(), "{:?}", sent(&applied));
    assert_eq!(activity(&b, 1).state, ActivityState::Succeeded);
    assert_eq!(b.next_deadline(), None);
}

#[test]
fn operators_interrupt_and_resume_an_instance_and_every_partner_is_told() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    let applied = b
        .apply(
            T0 + 1000,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Interrupt,
            },
        )
        .expect("interrupt");
    assert_eq!(state_of(&b), InstanceState::Interrupted);
    let control = |action| Message::Control {
        instance: InstanceId(1),
        action,
    };
    assert_eq!(
        sent(&applied),
        vec![
            ("peerA".to_owned(), control(Control::Interrupt)),
            ("peerB".to_owned(), control(Control::Interrupt)),
        ]
    );
    let err = b
        .apply(
            T0 + 1500,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Interrupt,
            },
        )
        .unwrap_err();
    assert!(matches!(err, BookError::NotNow { .. }), "{err}");
    let applied = b
        .apply(
            T0 + 2000,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Resume,
            },
        )
        .expect("resume");
    assert_eq!(
        state_of(&b),
        InstanceState::Deploying,
        "nothing acknowledged yet"
    );
    assert_eq!(sent(&applied).len(), 2);
    assert!(told(&story(&b), "operator: interrupt (told 2 partners)"));
    assert!(told(&story(&b), "operator: resume (told 2 partners)"));
}

#[test]
fn an_operator_cancels_an_instance_its_activities_are_cancelled_and_it_is_over() {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    from_node(
        &mut b,
        T0 + 1000,
        "peerA",
        Message::Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(1, ActivityState::Succeeded),
        },
    );
    let applied = b
        .apply(
            T0 + 2000,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Cancel,
            },
        )
        .expect("cancel");
    assert_eq!(sent(&applied).len(), 2);
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert_eq!(inst.state, InstanceState::Cancelled);
    assert_eq!(inst.finished_ms, Some(T0 + 2000));
    assert_eq!(
        activity(&b, 1).state,
        ActivityState::Succeeded,
        "already over"
    );
    let a2 = activity(&b, 2);
    assert_eq!(
        (a2.state, a2.detail.as_deref()),
        (
            ActivityState::Cancelled,
            Some("the instance was cancelled by an operator")
        )
    );
    // A final instance takes no more control.
    for action in [Control::Interrupt, Control::Resume, Control::Cancel] {
        let err = b
            .apply(
                T0 + 3000,
                Input::Control {
                    instance: InstanceId(1),
                    action,
                },
            )
            .unwrap_err();
        assert_eq!(
            err,
            BookError::NotNow {
                instance: InstanceId(1),
                state: "cancelled",
                action: action.as_str(),
            }
        );
    }
    assert!(
        b.watched().is_empty(),
        "nothing to watch for a cancelled instance"
    );
}

#[test]
fn no_contingency_activity_is_placed_while_its_instance_is_interrupted() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    let interrupt = Input::Control {
        instance: InstanceId(1),
        action: Control::Interrupt,
    };
    b.apply(T0 + 1000, interrupt).expect("interrupt");
    let applied = report_failure(&mut b, T0 + 2000, 1, 1, "peerA");
    assert!(deployed(&applied).is_empty(), "{:?}", sent(&applied));
    assert_eq!(activity(&b, 9).partition, None);
    let resume = Input::Control {
        instance: InstanceId(1),
        action: Control::Resume,
    };
    let applied = b.apply(T0 + 3000, resume).expect("resume");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1, "{:?}", sent(&applied));
    assert_eq!(d[0].0, "peerC");
}

#[test]
fn a_book_restored_from_its_changes_is_the_same_and_still_places_contingency_activities() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    suspect(&mut b, T0 + 1000, "peerB");
    let changes = b.take_changes();
    let json = serde_json::to_string(&changes.instances).expect("ser");
    let instances: Vec<Instance> = serde_json::from_str(&json).expect("de");
    let definitions = changes
        .definitions
        .iter()
        .map(|(id, xml)| {
            let def = mobiwf_xml_schema::load_definition(xml).expect("definition");
            (*id, std::sync::Arc::new(def.value))
        })
        .collect();
    let events = changes
        .history
        .iter()
        .map(|(id, _, e)| (*id, e.clone()))
        .collect();
    let mut restored = Book::restore(
        changes.nodes,
        instances,
        definitions,
        History::restore(events),
        changes.last_instance,
    );
    assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
    assert_eq!(restored.history(InstanceId(1)), b.history(InstanceId(1)));
    assert_eq!(restored.watched(), b.watched());
    let applied = report_failure(&mut restored, T0 + 2000, 1, 1, "peerA");
    let d = deployed(&applied);
    assert_eq!(d.len(), 1, "{:?}", sent(&applied));
    assert_eq!(
        d[0].0, "peerC",
        "not on P1 where 1 failed, nor on suspected P2"
    );
}

#[test]
fn the_failure_detector_watches_nodes_with_unfinished_partitions_and_suspected_ones() {
    let mut b = three_nodes();
    let peers = |b: &Book| -> Vec<(String, bool)> {
        b.watched()
            .into_iter()
            .map(|w| (w.peer.to_string(), w.suspected))
            .collect()
    };
    assert!(peers(&b).is_empty());
    submit(&mut b, &chain(-1)).expect("submit");
    assert_eq!(
        peers(&b),
        vec![("peerA".to_owned(), false), ("peerB".to_owned(), false)]
    );
    partition_result(
        &mut b,
        T0 + 1000,
        2,
        vec![record(2, ActivityState::Succeeded)],
    );
    assert_eq!(peers(&b), vec![("peerA".to_owned(), false)]);
    suspect(&mut b, T0 + 2000, "peerC");
    assert_eq!(
        peers(&b),
        vec![("peerA".to_owned(), false), ("peerC".to_owned(), true)]
    );
    b.apply(
        T0 + 3000,
        Input::Answering {
            peer: NodeId::new("peerC"),
        },
    )
    .expect("answering");
    assert_eq!(peers(&b), vec![("peerA".to_owned(), false)]);
}

#[test]
fn a_partition_given_up_before_its_node_acknowledged_it_does_not_keep_the_instance_deploying() {
    let mut b = three_nodes();
    submit(&mut b, &chain(0)).expect("submit");
    let delivered = Input::Delivered {
        instance: InstanceId(1),
        partition: PartitionId(2),
        refused: None,
    };
    b.apply(T0 + 500, delivered).expect("delivered");
    assert_eq!(state_of(&b), InstanceState::Deploying);
    // P1 never acknowledged partition 1, and never will.
    suspect(&mut b, T0 + 1000, "peerA");
    assert_eq!(state_of(&b), InstanceState::Running);
}

#[test]
fn an_overdue_precondition_that_failed_is_waited_for_through_its_contingency_activity() {
    let mut b = book_with(&[node("peerA", "P1", &[1]), node("peerB", "P2", &[1])]);
    submit(&mut b, &chain(9)).expect("submit");
    report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
    let applied = overdue_1_for_2(&mut b, T0 + 11_000);
    assert!(sent(&applied).is_empty());
    assert!(told(
        &story(&b),
        "its contingency activity is not placed yet"
    ));
    let applied = b
        .apply(T0 + 12_000, Input::Register(node("peerC", "spare", &[2])))
        .expect("register");
    assert_eq!(deployed(&applied).len(), 1);
    let applied = overdue_1_for_2(&mut b, T0 + 20_000);
    assert!(sent(&applied).is_empty());
    assert!(
        told(
            &story(&b),
            "for N1 (1); it failed and N9 (9) runs in its place, not finished yet"
        ),
        "{:?}",
        story(&b)
    );
    assert_eq!(b.next_deadline(), None, "nothing to withdraw");
}

#[test]
fn a_contingency_activity_whose_node_is_suspected_fails_and_its_own_contingency_applies() {
    let mut b = three_nodes();
    submit(&mut b, &chain(9)).expect("submit");
    report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
    assert_eq!(
        activity(&b, 9).node.as_ref().map(NodeName::as_str),
        Some("spare")
    );
    let applied = suspect(&mut b, T0 + 2000, "peerC");
    let why = "partner spare stopped answering (no answer to 3 probes)";
    assert_eq!(activity(&b, 9).state, ActivityState::Failed);
    assert_eq!(partition_view(&b, 3).abandoned.as_deref(), Some(why));
    // Activity 9 blocks when it fails: activity 2, which waits for it, is told so.
    assert_eq!(
        sent(&applied),
        vec![
            (
                "peerC".to_owned(),
                Message::Withdraw {
                    instance: InstanceId(1),
                    partition: PartitionId(3),
                    activities: vec![ActivityId(9)],
                    reason: why.to_owned(),
                }
            ),
            (
                "peerB".to_owned(),
                Message::Notify {
                    instance: InstanceId(1),
                    activity: ActivityId(9),
                    outcome: Outcome::Blocked,
                }
            ),
        ]
    );
    partition_result(&mut b, T0 + 3000, 1, vec![failed(1, "exit status 1")]);
    partition_result(
        &mut b,
        T0 + 4000,
        2,
        vec![record(2, ActivityState::Cancelled)],
    );
    let inst = b.instance(InstanceId(1)).expect("instance");
    assert_eq!(inst.state, InstanceState::Failed);
    assert_eq!(
        inst.detail.as_deref(),
        Some(&*format!("N9 (9) on spare failed: {why}"))
    );
}

#[test]
fn a_given_up_partition_cancels_what_its_blocking_failure_blocks_there_transitively() {
    // P1 runs 1 (-1) → 2 (contingency 0, waits for 1); P2 runs 3 (waits for 2).
    let mut b = three_nodes();
    let xml = wf(
        &[act(1, -1, &[]), act(2, 0, &[1]), act(3, -1, &[2])],
        &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3])],
    );
    submit(&mut b, &xml).expect("submit");
    let applied = suspect(&mut b, T0 + 1000, "peerA");
    assert_eq!(activity(&b, 1).state, ActivityState::Failed);
    // 2 never started: its predecessor blocks it, so it is cancelled, not failed with its own
    // contingency 0 (which would release 3).
    assert_eq!(activity(&b, 2).state, ActivityState::Cancelled);
    assert!(sent(&applied).contains(&(
        "peerB".to_owned(),
        Message::Notify {
            instance: InstanceId(1),
            activity: ActivityId(2),
            outcome: Outcome::Blocked,
        }
    )));
    partition_result(
        &mut b,
        T0 + 2000,
        2,
        vec![record(3, ActivityState::Cancelled)],
    );
    assert_eq!(state_of(&b), InstanceState::Failed);
}

const HUB: &str = "/ip4/127.0.0.1/tcp/9/p2p/hub";

#[test]
fn under_hub_routing_every_adjacent_is_the_controller_and_it_relays_notifications() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ])
    .with_routing(Routing::Hub {
        address: HUB.to_owned(),
    });
    let applied = submit(&mut b, PAPER).expect("submit");
    for (_, _, document) in deployed(&applied) {
        let doc = mobiwf_xml_schema::load_partition(document.as_bytes())
            .expect("a valid partition document")
            .value;
        let remote: Vec<String> = doc
            .activities
            .iter()
            .flat_map(|a| a.adjacents.iter())
            .filter(|adj| !doc.activities.iter().any(|a| a.id == adj.id))
            .map(|adj| adj.location.clone())
            .collect();
        assert!(!remote.is_empty(), "{document}");
        assert!(remote.iter().all(|l| l == HUB), "{remote:?}");
    }
    // A2 (17, on P1) finished: its remote successor A4 (19) is on P2, and only P2 hears.
    let notify = |activity| Message::Notify {
        instance: InstanceId(1),
        activity: ActivityId(activity),
        outcome: Outcome::Succeeded,
    };
    let relayed = from_node(&mut b, T0, "peerA", notify(17));
    assert_eq!(sent(&relayed), vec![("peerB".to_owned(), notify(17))]);
    // A4 (19, on P2) finished: A3 (18) waits for it on P1.
    let relayed = from_node(&mut b, T0, "peerB", notify(19));
    assert_eq!(sent(&relayed), vec![("peerA".to_owned(), notify(19))]);
    // Only the node that runs an activity speaks for it.
    let refused = b.apply(
        T0,
        Input::FromNode {
            peer: NodeId::new("peerB"),
            message: notify(17),
        },
    );
    assert!(
        matches!(refused, Err(BookError::NotYours { .. })),
        "{refused:?}"
    );
}

#[test]
fn under_peer_to_peer_routing_adjacents_are_the_partners() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    let applied = submit(&mut b, PAPER).expect("submit");
    let documents: String = deployed(&applied).into_iter().map(|d| d.2).collect();
    assert!(!documents.contains(HUB));
    assert!(documents.contains(&addr("peerA")) && documents.contains(&addr("peerB")));
}

#[test]
fn a_definition_submitted_again_is_placed_as_the_first_time_and_bad_ones_still_say_why() {
    let mut b = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    let first = deploys(&submit(&mut b, PAPER).expect("first"));
    let again = deploys(&submit(&mut b, PAPER).expect("again"));
    assert_eq!(first.len(), again.len());
    for (f, a) in first.iter().zip(&again) {
        assert_eq!((&f.0, f.1), (&a.0, a.1));
        assert_eq!(
            f.2.replace("<workflow id=\"1\">", "<workflow id=\"2\">"),
            a.2
        );
    }
    let broken = PAPER.replace(
        "<preconditionId>16</preconditionId>",
        "<preconditionId>99</preconditionId>",
    );
    for _ in 0..2 {
        let err = submit(&mut b, &broken).expect_err("unknown precondition");
        assert!(err.to_string().contains("wf.xml:"), "{err}");
    }
}

#[test]
fn under_hub_routing_a_node_running_both_partitions_is_told_too_and_p2p_refuses_relays() {
    // One node with every skill: it runs P1's partition and P2's.
    let mut b = book_with(&[node("peerA", "P1", &[1, 2, 3])]).with_routing(Routing::Hub {
        address: HUB.to_owned(),
    });
    submit(&mut b, PAPER).expect("submit");
    let notify = Message::Notify {
        instance: InstanceId(1),
        activity: ActivityId(17),
        outcome: Outcome::Succeeded,
    };
    // A2 (17) is in partition 1; A4 (19), waiting for it, in partition 2 on the same node.
    let relayed = from_node(&mut b, T0, "peerA", notify.clone());
    assert_eq!(sent(&relayed), vec![("peerA".to_owned(), notify.clone())]);

    let mut p2p = book_with(&[
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 3]),
    ]);
    submit(&mut p2p, PAPER).expect("submit");
    let refused = p2p.apply(
        T0,
        Input::FromNode {
            peer: NodeId::new("peerA"),
            message: notify,
        },
    );
    assert!(
        matches!(refused, Err(BookError::Unexpected("notify"))),
        "{refused:?}"
    );
}
