//! The controller's command line, run as a user runs it: exit codes, diagnostics on stdout,
//! and partition documents written to disk.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

fn controller(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mobiwf-controller"))
        .args(args)
        .output()
        .expect("run mobiwf-controller")
}

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/paper")
        .join(name)
        .display()
        .to_string()
}

/// A directory of its own for one test, removed when the test ends.
fn scratch(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("mobiwf-cli-{name}-"))
        .tempdir()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn validate_accepts_the_paper_documents() {
    let out = controller(&[
        "validate",
        &example("workflow.xml"),
        &example("partition-1.xml"),
        &example("partition-2.xml"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("workflow.xml: ok (workflow definition)"));
    assert!(stdout(&out).contains("partition-2.xml: ok (partition document)"));
}

#[test]
fn validate_reports_every_problem_with_position_and_exits_1() {
    let dir = scratch("bad");
    let file = dir.path().join("bad.xml");
    let paper = std::fs::read_to_string(example("workflow.xml")).unwrap();
    let broken = paper
        .replacen(
            "<preconditionId>16</preconditionId>",
            "<preconditionId>99</preconditionId>",
            1,
        )
        .replacen("<status>0</status>", "<status>7</status>", 1);
    std::fs::write(&file, broken).unwrap();
    let out = controller(&["validate", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let name = file.display().to_string();
    // Both problems in one run, in document order: a bad number and an unknown reference.
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with(&format!(
            "{name}:13:15: error: <status> of activity 16 is 7"
        )),
        "{text}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "{name}:28:25: error: activity 17 lists precondition 99, which is not an activity"
        )),
        "{text}"
    );
}

#[test]
fn validate_of_a_missing_file_exits_2() {
    let out = controller(&["validate", "/nonexistent/workflow.xml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/workflow.xml"));
}

#[test]
fn partition_writes_documents_equal_to_the_published_ones() {
    let dir = scratch("partition");
    let out = controller(&[
        "partition",
        &example("workflow.xml"),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for id in [1, 2] {
        let written = mobiwf_xml_schema::load_partition(
            &std::fs::read(dir.path().join(format!("partition-{id}.xml"))).unwrap(),
        )
        .unwrap()
        .value;
        let mut published = mobiwf_xml_schema::load_partition(
            &std::fs::read(example(&format!("partition-{id}.xml"))).unwrap(),
        )
        .unwrap()
        .value;
        published.start_time = None;
        assert_eq!(written, published);
    }
}

#[test]
fn partition_refuses_an_invalid_definition_and_writes_nothing() {
    let dir = scratch("refused");
    let file = dir.path().join("cycle.xml");
    let paper = std::fs::read_to_string(example("workflow.xml")).unwrap();
    std::fs::write(
        &file,
        paper.replacen(
            "<preconditions/>",
            "<preconditions><preconditionId>20</preconditionId></preconditions>",
            1,
        ),
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = controller(&[
        "partition",
        file.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("precondition cycle: activity 16 waits for 20 waits for 18"),
        "{stderr}"
    );
    assert!(!out_dir.exists());
}
