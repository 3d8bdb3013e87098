//! The tables as operators read them: instances, activities and their details, history.

use mobiwf_book::PartitionView;
use mobiwf_proto::{ActivityTypeId, InstanceId, NodeId, NodeName};
use mobiwf_xml_schema::WorkflowId;

use super::*;

/// An activity as the store has it: on P1, started at 1 s and ended at 2 s, in `state`
/// (its state is the book's to change: `more` sets stored fields, as `replaced_by`).
fn view(
    id: u64,
    name: &str,
    state: ActivityState,
    more: &[(&str, serde_json::Value)],
) -> ActivityView {
    let mut v = serde_json::json!({
        "id": id, "name": name, "partition": 1, "node": "P1", "state": state,
        "started_ms": 1_000, "finished_ms": 2_000, "detail": null, "contingency": -1,
    });
    for (field, value) in more {
        v[*field] = value.clone();
    }
    serde_json::from_value(v).expect("an activity view")
}

#[test]
fn status_says_why_and_what_the_contingency_did() {
    let mut a2 = view(
        17,
        "A2",
        ActivityState::Failed,
        &[("replaced_by", 21.into())],
    );
    a2.detail = Some("exit status 3".to_owned());
    a2.retried = 2;
    a2.contingency = Contingency::Run(ActivityId(21));
    let mut a2b = view(21, "A2b", ActivityState::Succeeded, &[]);
    a2b.node = Some(NodeName::new("P2"));
    a2b.stands_for = Some(ActivityId(17));
    a2b.emergency = true;
    let mut a4 = view(19, "A4", ActivityState::Failed, &[]);
    a4.contingency = Contingency::Release;
    a4.detail = Some("partner P2 stopped answering".to_owned());
    let unplaced = [
        ("partition", serde_json::Value::Null),
        ("node", serde_json::Value::Null),
    ];
    let mut spare = view(22, "A9", ActivityState::NotReady, &unplaced);
    (spare.started_ms, spare.finished_ms) = (None, None);
    let given_up: PartitionView = serde_json::from_value(serde_json::json!({
        "id": 2, "node": "P2", "peer": "peer", "deployed": true, "finished": false,
        "abandoned": "partner P2 stopped answering (no answer for 10 s)",
    }))
    .expect("a partition view");
    // Its state is the book's to change: the instance is read as the store has it.
    let inst: Instance = serde_json::from_value(serde_json::json!({
        "id": InstanceId(3), "workflow": WorkflowId(18), "description": "",
        "state": InstanceState::Interrupted, "detail": null, "submitted_ms": 0,
        "finished_ms": null, "partitions": [given_up], "activities": [a2, a2b, a4, spare],
    }))
    .expect("an instance");
    let text = instance(&inst);
    let line = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("no line {id} in\n{text}"))
            .to_owned()
    };
    assert!(
        text.starts_with("instance 3 (workflow 18): interrupted"),
        "{text}"
    );
    assert!(
        line("17").ends_with("tried 2 more times; exit status 3; replaced by A2b (21)"),
        "{text}"
    );
    assert!(
        line("21").contains("P2")
            && line("21").ends_with("in place of A2 (17); emergency start (timeToWait)"),
        "{text}"
    );
    assert!(
        line("19").ends_with("partner P2 stopped answering; successors released (contingency 0)"),
        "{text}"
    );
    assert!(
        line("22").ends_with("contingency activity (not placed)"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "partition 2 on P2 given up: partner P2 stopped answering (no answer for 10 s)\n"
        ),
        "{text}"
    );
}

#[test]
fn status_and_its_data_show_the_inputs() {
    let inst: Instance = serde_json::from_value(serde_json::json!({
        "id": 4, "workflow": 2, "description": "", "state": "running", "detail": null,
        "submitted_ms": 5_000, "finished_ms": null, "partitions": [],
        "activities": [view(1, "Check", ActivityState::Succeeded, &[])],
        "inputs": { "note": { "string": "north \"gate\"" }, "reading": { "number": "5" } },
    }))
    .expect("an instance");
    let text = instance(&inst);
    assert!(
        text.lines()
            .any(|l| l == r#"inputs: note=north \"gate\", reading=5"#),
        "{text}"
    );
    let mut written = inst.inputs.data();
    written[1] = mobiwf_proto::Datum {
        by: Writer::Activity(ActivityId(1)),
        at_us: 7_000_000,
        ..written[1].clone()
    };
    let view = crate::data::DataView {
        data: written,
        earlier: Vec::new(),
        unanswered: Default::default(),
    };
    let text = data(&inst, &view);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("note"), r#"note string input +0.000s north \"gate\""#);
    assert_eq!(line("reading"), "reading number Check (1) +2.000s 5");
}

#[test]
fn nodes_show_suspicion() {
    let node = |name: &str, suspected: Option<&str>| NodeInfo {
        peer: NodeId::new(name),
        name: NodeName::new(name),
        skills: vec![ActivityTypeId(1), ActivityTypeId(3)],
        addrs: vec![format!("/ip4/127.0.0.1/tcp/1/p2p/{name}")],
        registered_ms: 0,
        seq: 0,
        suspected: suspected.map(str::to_owned),
    };
    let text = nodes(&[node("P1", None), node("P2", Some("no answer for 10 s"))]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("SUSPECTED"), "{text}");
    assert!(
        lines[1].starts_with("P1") && lines[1].contains(" no "),
        "{text}"
    );
    assert!(
        lines[2].starts_with("P2") && lines[2].contains(" yes "),
        "{text}"
    );
    assert_eq!(lines[3], "P2 is suspected: no answer for 10 s", "{text}");
}

#[test]
fn work_items_say_who_has_them() {
    let mut summary = mobiwf_book::ItemSummary {
        offered: vec!["bob".into(), "carol".into()],
        ..Default::default()
    };
    assert_eq!(item_notes(&summary), ["offered to bob, carol"]);
    summary.offered.clear();
    summary.holders.push(mobiwf_proto::Holder {
        user: "carol".into(),
        hold: mobiwf_proto::Hold::Locked,
        since_ms: 5,
        grantor: Some("alice".into()),
    });
    assert_eq!(
        item_notes(&summary),
        ["locked by carol, delegated by alice"]
    );
    summary.holders.clear();
    summary.done_by.push("carol".into());
    assert_eq!(item_notes(&summary), ["done by carol"]);
}

#[test]
fn definitions_show_their_versions_as_ranges() {
    let v = |n| mobiwf_book::DefinitionVersion(n);
    let d = mobiwf_book::DefinitionSummary {
        name: "maintenance".into(),
        latest: v(5),
        versions: vec![v(1), v(2), v(3), v(5)],
        deployed_ms: 1_795_362_832_007,
        creator_role: Some("tech".into()),
        version_roles: Vec::new(),
        running: 2,
        unreadable: Vec::new(),
    };
    let text = definitions(&[d]);
    let line = text.lines().nth(1).expect("a line");
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        [
            "maintenance",
            "5",
            "1-3,5",
            "2026/11/22",
            "15:53:52",
            "2",
            "tech"
        ],
        "{text}"
    );
    assert_eq!(version_ranges(&[v(1)]), "1");
    assert_eq!(version_ranges(&[]), "");
}

#[test]
fn clock_is_utc_time_of_day() {
    // 2026-11-22 15:53:52.007 UTC
    assert_eq!(clock(1_795_362_832_007), "15:53:52.007");
}
