//! The node's command line: `inspect` explains a partition document or reports its problems.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn inspect(path: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mobiwf-node"))
        .args(["inspect", path])
        .output()
        .unwrap()
}

#[test]
fn inspect_explains_the_paper_partition() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/paper/partition-1.xml"
    );
    let out = inspect(path);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("instance 18: 3 activities"), "{text}");
    assert!(
        text.contains("waits for activity 19 (a notification from its partner)"),
        "{text}"
    );
    assert!(
        text.contains("then notifies activity 19 at 139.82.3.146"),
        "{text}"
    );
}

#[test]
fn inspect_reports_problems_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.xml");
    std::fs::write(
        &file,
        "<workflow id=\"1\">\n  <activity id=\"1\"><local>1</local></activity>\n</workflow>\n",
    )
    .unwrap();
    let out = inspect(file.to_str().unwrap());
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("p.xml:2:20: error: <local> is not an element of <activity> (activity 1)"),
        "{text}"
    );
}
