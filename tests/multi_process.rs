//! Proves that the real binaries, as separate processes on loopback, run the paper's workflow
//! end to end: `submit` places partition 1 on P1 and partition 2 on P2, the nodes notify each
//! other across partitions, `wait` exits 0 and `status --json` shows every activity succeeded
//! on its partner; and that the CLI reports a bad file as `file:line:col` (exit 1) and an
//! unknown instance to `wait` with exit 3; and that a failing command fails the instance
//! (`wait` exits 1) with its successors cancelled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, PAPER_PLACEMENT, assert_all_succeeded, paper_mesh,
};
use mobiwf_tests::{repo_root, scratch};

#[test]
fn paper_workflow_runs_across_processes() {
    let started = Instant::now();
    let dir = scratch("multi-process").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);

    let id = controller.submit(&repo_root().join("examples/paper/workflow.xml"));
    let out = controller.wait(id, 60);
    out.expect_code(0, "wait for the paper's instance");
    assert!(out.stdout.contains("succeeded"), "{}", out.stdout);

    let status = controller.status(id);
    assert_eq!(status["id"].as_u64(), Some(id), "{status:#}");
    assert_all_succeeded(&status, &PAPER_PLACEMENT);
    let partitions = status["partitions"].as_array().expect("partitions");
    assert_eq!(partitions.len(), 2, "{status:#}");
    for p in partitions {
        let node = if p["id"] == 1 { "P1" } else { "P2" };
        assert_eq!(p["node"], node, "{status:#}");
        assert_eq!(p["deployed"], true, "{status:#}");
        assert_eq!(p["finished"], true, "{status:#}");
    }
    // The cross-partition order A2 (17) -> A4 (19) -> A3 (18) -> A5 (20) held.
    let at = |id: u64, field: &str| {
        status["activities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"].as_u64() == Some(id))
            .and_then(|a| a[field].as_u64())
            .unwrap_or_else(|| panic!("activity {id} has no {field}:\n{status:#}"))
    };
    for (before, after) in [(16, 17), (17, 19), (19, 18), (18, 20)] {
        assert!(
            at(before, "finished_ms") <= at(after, "started_ms"),
            "{after} started before {before} finished:\n{status:#}"
        );
    }
    eprintln!(
        "paper_workflow_runs_across_processes: {:?}",
        started.elapsed()
    );
}

#[test]
fn cli_reports_bad_files_and_unknown_instances() {
    let dir = scratch("multi-process-cli").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");

    // A definition with an unknown element: refused with file:line:col, exit 1.
    let bad = dir.join("bad-workflow.xml");
    let paper = std::fs::read_to_string(repo_root().join("examples/paper/workflow.xml")).unwrap();
    let broken = paper.replacen("<status>0</status>", "<statuss>0</statuss>", 1);
    assert_ne!(broken, paper);
    std::fs::write(&bad, broken).unwrap();
    let out = controller.cli(&["submit", &bad.display().to_string()], CLI_TIMEOUT);
    out.expect_code(1, "submit an invalid definition");
    let prefix = format!("{}:", bad.display());
    let located = out.stderr.lines().any(|line| {
        line.strip_prefix(&prefix).is_some_and(|rest| {
            let mut parts = rest.splitn(3, ':');
            let line_no = parts.next().unwrap_or("");
            let col = parts.next().unwrap_or("");
            !line_no.is_empty()
                && !col.is_empty()
                && line_no.chars().all(|c| c.is_ascii_digit())
                && col.chars().all(|c| c.is_ascii_digit())
        })
    });
    assert!(located, "no `{prefix}LINE:COL` message in:\n{}", out.stderr);

    // Not XML at all: the same.
    let garbage = dir.join("garbage.xml");
    std::fs::write(
        &garbage,
        "<workflow id=\"1\">\n  <activities>\n</workflow>\n",
    )
    .unwrap();
    let out = controller.cli(&["submit", &garbage.display().to_string()], CLI_TIMEOUT);
    out.expect_code(1, "submit malformed XML");
    assert!(
        out.stderr.contains(&format!("{}:", garbage.display())),
        "{}",
        out.stderr
    );

    // No such instance: wait cannot ask about it.
    controller
        .cli(&["wait", "424242", "--timeout", "5"], CLI_TIMEOUT)
        .expect_code(3, "wait on an unknown instance");
    // No controller at all: exit 3 as well.
    let nobody = mobiwf_tests::harness::run(
        std::process::Command::new(mobiwf_tests::binary("mobiwf-controller").unwrap()).args([
            "wait",
            "1",
            "--timeout",
            "5",
            "--api",
            "127.0.0.1:1",
        ]),
        CLI_TIMEOUT,
    );
    nobody.expect_code(3, "wait with no controller listening");
}

#[test]
fn failing_command_fails_the_instance() {
    let dir = scratch("multi-process-failing").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    // A4 (19, on P2, contingency -1) fails: A3 (18) and, after it, A5 (20) are cancelled.
    let file = dir.join("failing.xml");
    std::fs::write(
        &file,
        mobiwf_tests::harness::paper_workflow_with(|id| {
            if id == 19 {
                "<command>exit 3</command>".to_owned()
            } else {
                String::new()
            }
        }),
    )
    .unwrap();
    let id = controller.submit(&file);
    let out = controller.wait(id, 60);
    out.expect_code(1, "wait for an instance whose activity fails");
    let status = controller.status(id);
    assert_eq!(status["state"], "failed", "{status:#}");
    let why = status["detail"].as_str().unwrap_or("");
    assert!(
        why.contains("A4 (19) on P2 failed") && why.contains('3'),
        "the instance says which activity failed, where and why:\n{status:#}"
    );
    let state = |id: u64| {
        status["activities"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"].as_u64() == Some(id))
            .map(|a| a["state"].as_str().unwrap_or("").to_owned())
            .unwrap()
    };
    assert_eq!(state(16), "succeeded", "{status:#}");
    assert_eq!(state(17), "succeeded", "{status:#}");
    assert_eq!(state(19), "failed", "{status:#}");
    assert_eq!(state(18), "cancelled", "{status:#}");
    assert_eq!(state(20), "cancelled", "{status:#}");
    let a4 = status["activities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == 19)
        .unwrap();
    assert!(
        a4["detail"].as_str().is_some_and(|d| d.contains('3')),
        "A4's detail should give the exit status:\n{status:#}"
    );
}
