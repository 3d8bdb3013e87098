//! What a node will run (`mobiwf-node run --commands`), through the real binaries: a command
//! an allow file does not name, and any command on a node that runs none, never starts; its
//! activity fails with the reason and its contingency applies (0 releases the successors,
//! -1 blocks them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use mobiwf_tests::harness::{
    Controller, Node, NodeSpec, paper_workflow_with, status_activity, xml_text,
};
use mobiwf_tests::scratch;

fn node(dir: &Path, name: &str, skills: &str, controller: &Controller, commands: &[&str]) -> Node {
    let mut spec = NodeSpec::loopback(
        &dir.join(name.to_lowercase()),
        name,
        skills,
        &controller.address,
    );
    spec.commands = commands.iter().map(|s| (*s).to_owned()).collect();
    Node::start(spec)
}

#[test]
fn refused_commands_never_start_and_their_activities_fail_with_the_reason() {
    let dir = scratch("commands-refused").unwrap();
    let ran = dir.join("ran");
    std::fs::create_dir_all(&ran).unwrap();
    let allow = dir.join("allow.txt");
    std::fs::write(
        &allow,
        "# P1 runs touch with plain arguments, nothing else\ntouch *\n",
    )
    .unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    // The paper: A1 (16), A2 (17, contingency 0) and A3 (18) on P1; A4 (19, contingency -1,
    // after A2) and A5 (20) on P2.
    let _p1 = node(
        &dir,
        "P1",
        "1,2,3",
        &controller,
        &["allow", allow.to_str().unwrap()],
    );
    let _p2 = node(&dir, "P2", "1,3", &controller, &["none"]);
    controller.wait_registered(&["P1", "P2"]);
    let workflow = dir.join("workflow.xml");
    let touch = |id: u64| format!("touch {}", ran.join(format!("ran-{id}")).display());
    std::fs::write(
        &workflow,
        paper_workflow_with(|id| {
            // A2's command chains a second one: an allowed prefix cannot be extended so.
            let command = if id == 17 {
                format!("{}; echo sneaky", touch(id))
            } else {
                touch(id)
            };
            format!("<command>{}</command>", xml_text(&command))
        }),
    )
    .unwrap();
    let id = controller.submit(&workflow);
    controller
        .wait(id, 60)
        .expect_code(1, "the instance fails: A4's contingency -1 blocks A3");
    let status = controller.status(id);

    assert_eq!(
        status_activity(&status, 16)["state"],
        "succeeded",
        "{status:#}"
    );
    assert!(
        ran.join("ran-16").exists(),
        "A1's allowed command did not run"
    );

    let a2 = status_activity(&status, 17);
    assert_eq!(a2["state"], "failed", "{status:#}");
    let why = a2["detail"].as_str().unwrap_or_default();
    assert!(why.contains("not in this node's allow file"), "{why}");
    assert!(!ran.join("ran-17").exists(), "A2's refused command ran");

    // A2's contingency 0 released A4, which P2 refused to run: nothing runs there.
    let a4 = status_activity(&status, 19);
    assert_eq!(a4["state"], "failed", "{status:#}");
    let why = a4["detail"].as_str().unwrap_or_default();
    assert!(
        why.contains("runs no commands") && why.contains("--commands none"),
        "{why}"
    );
    assert!(!ran.join("ran-19").exists(), "A4's refused command ran");
    assert_eq!(status["state"], "failed", "{status:#}");
    assert!(!ran.join("ran-18").exists() && !ran.join("ran-20").exists());
}

#[test]
fn a_node_refuses_to_start_with_an_unreadable_allow_file() {
    let dir = scratch("commands-bad-file").unwrap();
    let out = mobiwf_tests::harness::run(
        std::process::Command::new(mobiwf_tests::binary("mobiwf-node").unwrap()).args([
            "run",
            "--data-dir",
            dir.join("n").to_str().unwrap(),
            "--name",
            "N",
            "--controller",
            "/ip4/127.0.0.1/tcp/1/p2p/12D3KooWDpJ7As7BWAwRMfu1VU2WCqNjvq387JEYKDBj4kx6nXTN",
            "--commands",
            "allow",
            dir.join("missing.txt").to_str().unwrap(),
        ]),
        std::time::Duration::from_secs(30),
    );
    out.expect_code(1, "a missing allow file stops the node");
    assert!(out.stderr.contains("missing.txt"), "{}", out.stderr);
}
