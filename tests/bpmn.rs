//! Proves the BPMN import on the real binaries: the controller's `submit` takes a `.bpmn` file
//! through the same door as MobiWfMS XML. The paper's workflow drawn with two lanes runs to
//! success, each lane's tasks on the node registered under the lane's name, their commands
//! (`<mobiwf:command>`) run in the order the flows say; a user task for a group
//! (`camunda:candidateGroups`) is offered to that group's members only, and the flag its user
//! completes it with takes the exclusive gateway's branch, the other being skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use mesh::{Mesh, WAIT_SECS};
use mobiwf_tests::harness::{
    assert_all_succeeded, log_line, paper_mesh, ran, status_activity, xml_text,
};
use mobiwf_tests::{repo_root, scratch};

/// The paper's workflow in BPMN (`examples/bpmn/paper.bpmn`): A1, A2 and A3 in lane P1, A4
/// and A5 in lane P2; activity ids by appearance: A1 1, A2 2, A4 3, A3 4, A5 5.
#[test]
fn a_bpmn_process_with_two_lanes_runs_on_the_partners_its_lanes_name() {
    let dir = scratch("bpmn-lanes").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let example = repo_root().join("examples/bpmn/paper.bpmn");
    let mut text = std::fs::read_to_string(&example).unwrap();
    for name in ["A1", "A2", "A3", "A4", "A5"] {
        let command = format!("<mobiwf:command>echo {name}</mobiwf:command>");
        assert!(text.contains(&command), "the example runs `echo {name}`");
        let logged = format!(
            "<mobiwf:command>{}</mobiwf:command>",
            xml_text(&log_line(&log, name))
        );
        text = text.replace(&command, &logged);
    }
    let file = dir.join("paper.bpmn");
    std::fs::write(&file, text).unwrap();

    let id = controller.submit(&file);
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    let status = controller.status(id);
    assert_all_succeeded(
        &status,
        &[(1, "P1"), (2, "P1"), (3, "P2"), (4, "P1"), (5, "P2")],
    );
    assert_eq!(status_activity(&status, 4)["name"], "A3", "{status:#}");
    let lines = ran(&log, id);
    let at = |what: &str| lines.iter().position(|l| l == what).unwrap();
    assert_eq!(lines.len(), 5, "each task ran once: {lines:?}");
    assert!(
        at("A1") < at("A2") && at("A2") < at("A4") && at("A4") < at("A3") && at("A3") < at("A5"),
        "A3 waits for A2 and A4 (the parallel join), A5 for A3: {lines:?}"
    );

    // The example as it is, by its own name.
    let id = controller.submit(&example);
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "wait for the example");
}

/// alice (tech) on D1, bob (clerk) on D2.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D2"><role id="clerk"/></user>"#;

/// A process without lanes (every activity on H, the node with skill 1): Report, then the user
/// task Inspect for the group tech, whose flag decides: `approved` to Close, else to Redo.
const INSPECTION: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
             xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d">
  <process id="inspection" name="inspection" isExecutable="true">
    <startEvent id="start"/>
    <serviceTask id="report" name="Report"/>
    <userTask id="inspect" name="Inspect" camunda:candidateGroups="tech"/>
    <exclusiveGateway id="ok" default="to-redo"/>
    <task id="close" name="Close"/>
    <task id="redo" name="Redo"/>
    <endEvent id="end"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="report"/>
    <sequenceFlow id="f2" sourceRef="report" targetRef="inspect"/>
    <sequenceFlow id="f3" sourceRef="inspect" targetRef="ok"/>
    <sequenceFlow id="to-close" sourceRef="ok" targetRef="close">
      <conditionExpression>${flag == 'approved'}</conditionExpression>
    </sequenceFlow>
    <sequenceFlow id="to-redo" sourceRef="ok" targetRef="redo"/>
    <sequenceFlow id="f4" sourceRef="close" targetRef="end"/>
    <sequenceFlow id="f5" sourceRef="redo" targetRef="end"/>
  </process>
</definitions>
"#;

#[test]
fn a_user_task_for_a_group_is_offered_to_its_members_and_their_flag_routes() {
    let mesh = Mesh::start("bpmn-people", USERS);
    let file = mesh.write("inspection.bpmn", INSPECTION);
    let id = mesh.controller.submit(&file);

    let item = mesh.wait_item("alice", id, 2, "offered");
    assert_eq!(item["name"], "Inspect", "{item:#}");
    assert_eq!(item["host"], "H", "{item:#}");
    assert_eq!(mesh.offered_to(id), ["alice"], "only tech's members");
    mesh.assert_empty("bob", "he is a clerk, not in group tech");

    mesh.ok("alice", "select", id, 2, &[]);
    mesh.ok("alice", "complete", id, 2, &["--flag", "approved"]);
    mesh.succeeded(id);
    let status = mesh.controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    assert_eq!(status_activity(&status, 3)["name"], "Close");
    assert_eq!(
        status_activity(&status, 3)["state"],
        "succeeded",
        "{status:#}"
    );
    assert_eq!(
        status_activity(&status, 4)["state"],
        "skipped",
        "{status:#}"
    );
}
