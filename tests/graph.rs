//! Proves `mobiwf-controller graph` with the real binaries: an instance of the paper's
//! workflow over P1 and P2 (A2 a manual activity, so the instance holds still while it is on
//! P1's worklist) is drawn as SVG, read back with an XML reader: each activity's `data-state`
//! is the state `status` shows for it, in the lane of the partner that runs it
//! (`data-partner`); once A2 is completed and the instance has succeeded, every activity is
//! drawn succeeded, with its edges from the definition stored with it, and the DOT has a
//! cluster per partner; an instance started by name is drawn from its deployed version. An
//! unknown instance and an unknown format are refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, Node, api_token_of, http_request, paper_mesh, paper_workflow_with,
    status_activity, wait_deployed_and_offered, wait_for,
};
use mobiwf_tests::scratch;
use quick_xml::events::Event;
use serde_json::Value;

/// Each activity the SVG draws: its id → (`data-state`, the `data-partner` of its lane).
fn drawn(svg: &str) -> BTreeMap<u64, (String, Option<String>)> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut open: Vec<BTreeMap<String, String>> = Vec::new();
    let mut out = BTreeMap::new();
    loop {
        let event = reader.read_event().expect("well-formed SVG");
        let (start, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                open.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let attributes: BTreeMap<String, String> = start
            .attributes()
            .map(|a| {
                let a = a.expect("an attribute");
                let value = a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .expect("an attribute value");
                (a.key.as_ref().to_owned(), value.into_owned())
            })
            .collect();
        if let Some(id) = attributes.get("data-activity") {
            let lane = open
                .iter()
                .rev()
                .find_map(|a| a.get("data-partner"))
                .cloned();
            let state = attributes.get("data-state").cloned().unwrap_or_default();
            assert_eq!(
                attributes.get("class"),
                Some(&format!("state-{state}")),
                "{attributes:?}"
            );
            out.insert(id.parse().expect("an activity id"), (state, lane));
        }
        if !empty {
            open.push(attributes);
        }
    }
    out
}

/// What `status --json` says of each activity: its id → (state, node).
fn shown(status: &Value) -> BTreeMap<u64, (String, Option<String>)> {
    status["activities"]
        .as_array()
        .expect("activities")
        .iter()
        .map(|a| {
            (
                a["id"].as_u64().expect("an id"),
                (
                    a["state"].as_str().expect("a state").to_owned(),
                    a["node"].as_str().map(str::to_owned),
                ),
            )
        })
        .collect()
}

fn graph(controller: &Controller, id: u64, format: &str) -> String {
    let out = controller.cli(&["graph", &id.to_string(), format], CLI_TIMEOUT);
    out.expect_code(0, &format!("graph {format}"));
    out.stdout
}

/// Instance of the paper's workflow whose A2 (17) is manual, submitted and held still: A2
/// ready on P1's worklist, the controller told, nothing else to move until it is completed
/// (A5's emergency start by `timeToWait` would move it by the clock: none).
fn held_still(dir: &std::path::Path, controller: &Controller, p1: &Node) -> u64 {
    let xml = paper_workflow_with(|id| {
        if id == 17 {
            "<kind>manual</kind>".to_owned()
        } else {
            String::new()
        }
    })
    .replace("<timeToWait>20</timeToWait>", "<timeToWait>0</timeToWait>");
    let file = dir.join("workflow.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    wait_deployed_and_offered(controller, p1, id);
    wait_for(
        "A2 (17) ready at the controller",
        Duration::from_secs(30),
        || (status_activity(&controller.status(id), 17)["state"] == "ready").then_some(()),
    );
    id
}

/// The SVG of held instance `id` says what `status` says: each activity's state, in the lane
/// of the node that runs it.
fn assert_drawn_as_status(controller: &Controller, id: u64) {
    let svg = graph(controller, id, "--svg");
    let status = controller.status(id);
    let on = |name: &str| Some(name.to_owned());
    let lanes: Vec<(u64, Option<String>)> = drawn(&svg)
        .iter()
        .map(|(a, (_, lane))| (*a, lane.clone()))
        .collect();
    let p1 = [16, 17, 18].map(|a| (a, on("P1")));
    let p2 = [19, 20].map(|a| (a, on("P2")));
    assert_eq!(lanes, [p1.as_slice(), p2.as_slice()].concat(), "{svg}");
    for (a, (state, lane)) in drawn(&svg) {
        let (shown_state, node) = &shown(&status)[&a];
        assert_eq!(&state, shown_state, "activity {a}: {svg}\n{status:#}");
        assert_eq!(&lane, node, "activity {a}: {svg}\n{status:#}");
    }
    assert_eq!(drawn(&svg)[&17].0, "ready");
    assert_eq!(drawn(&svg)[&20].0, "not_ready");
    assert!(
        svg.contains("data-lane=\"partner\" data-partner=\"P2\""),
        "{svg}"
    );
    // Without --svg or --dot, SVG too.
    let default = controller.cli(&["graph", &id.to_string()], CLI_TIMEOUT);
    default.expect_code(0, "graph");
    assert_eq!(drawn(&default.stdout), drawn(&svg));
}

/// Settled instance `id` of the paper's workflow is drawn succeeded, each activity in its
/// partner's lane, with the edges of its definition, in SVG and in DOT.
fn assert_drawn_succeeded(controller: &Controller, id: u64) {
    let svg = graph(controller, id, "--svg");
    for (a, (state, lane)) in drawn(&svg) {
        assert_eq!(state, "succeeded", "activity {a}: {svg}");
        let partner = if [16, 17, 18].contains(&a) {
            "P1"
        } else {
            "P2"
        };
        assert_eq!(lane.as_deref(), Some(partner), "activity {a}: {svg}");
    }
    for (from, to) in [(16, 17), (17, 19), (19, 18), (18, 20)] {
        let edge = format!("data-from=\"{from}\" data-to=\"{to}\"");
        assert!(svg.contains(&edge), "{edge}: {svg}");
    }
    let dot = graph(controller, id, "--dot");
    assert!(dot.starts_with("digraph"), "{dot}");
    for (i, partner) in ["P1", "P2"].iter().enumerate() {
        let cluster = format!("subgraph \"cluster_lane_{i}\" {{\n    label=\"{partner}\";");
        assert!(dot.contains(&cluster), "{cluster}: {dot}");
    }
    assert_eq!(dot.matches("class=\"state-succeeded\"").count(), 5, "{dot}");
}

#[test]
fn the_graph_shows_each_activitys_state_in_its_partners_lane() {
    let dir = scratch("graph-states").unwrap();
    let (controller, p1, _p2) = paper_mesh(&dir);
    let id = held_still(&dir, &controller, &p1);
    // Nothing moves until A2 is completed: the graph and the status agree.
    assert_drawn_as_status(&controller, id);

    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2");
    controller.wait(id, 60).expect_code(0, "wait");
    // Settled, the instance has left the controller's memory: its graph is drawn from the
    // definition stored with it.
    assert_drawn_succeeded(&controller, id);

    // One started by name is drawn from the deployed version it names.
    let paper = mobiwf_tests::repo_root().join("examples/paper/workflow.xml");
    let paper = paper.to_str().unwrap();
    controller
        .cli(&["deploy", paper, "--name", "paper"], CLI_TIMEOUT)
        .expect_code(0, "deploy");
    let started = controller.cli(&["start", "paper"], CLI_TIMEOUT);
    started.expect_code(0, "start paper");
    let by_name: u64 = started.stdout.trim().parse().expect("an instance id");
    controller.wait(by_name, 60).expect_code(0, "wait");
    assert_drawn_succeeded(&controller, by_name);
}

#[test]
fn an_unknown_instance_or_format_is_refused() {
    let dir = scratch("graph-refused").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let out = controller.cli(&["graph", "999", "--dot"], CLI_TIMEOUT);
    out.expect_code(1, "graph of an unknown instance");
    assert!(out.stderr.contains("no instance 999"), "{}", out.stderr);
    let both = controller.cli(&["graph", "1", "--svg", "--dot"], CLI_TIMEOUT);
    assert_eq!(both.code, Some(2), "--svg and --dot together: {both:?}");
    let token = api_token_of(&controller.api);
    let answer = http_request(
        &controller.api,
        "GET",
        "/instances/1/graph?format=png",
        token.as_deref(),
        None,
    )
    .unwrap();
    assert_eq!(answer.status, 400, "{answer:?}");
    assert!(answer.body.contains("svg or dot"), "{}", answer.body);
}
