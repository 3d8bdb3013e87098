//! The two binaries together, as an operator uses them: the controller cuts the paper's
//! workflow into partition documents, and each node reads its own and knows whom to notify.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use mobiwf_tests::{binary, repo_root, scratch};

#[test]
fn controller_partitions_are_understood_by_nodes() {
    let dir = scratch("pipeline").unwrap();
    let workflow = repo_root().join("examples/paper/workflow.xml");
    let out = Command::new(binary("mobiwf-controller").unwrap())
        .arg("partition")
        .arg(&workflow)
        .arg("--out")
        .arg(&dir)
        .args(["--start-time", "2026/11/22 10:00:00"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(written.len(), 2);

    let inspect = |path: &str| {
        let out = Command::new(binary("mobiwf-node").unwrap())
            .args(["inspect", path])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let p1 = inspect(&written[0]);
    let p2 = inspect(&written[1]);
    // A2 -> A4, A4 -> A3 and A3 -> A5 cross partners; the nodes notify each other directly.
    assert!(
        p1.contains("activity 17 \"A2\"")
            && p1.contains("then notifies activity 19 at 139.82.3.146"),
        "{p1}"
    );
    assert!(
        p2.contains("activity 19 \"A4\"")
            && p2.contains("then notifies activity 18 at 139.82.2.149"),
        "{p2}"
    );
    assert!(
        p1.contains("then notifies activity 20 at 139.82.3.146"),
        "{p1}"
    );
    let text = std::fs::read_to_string(&written[0]).unwrap();
    assert!(
        text.contains("<startTime>2026/11/22 10:00:00</startTime>"),
        "{text}"
    );
}
