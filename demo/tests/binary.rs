//! The demo binary as the README runs it: it deploys a workflow written in any of the three
//! languages and starts an instance of it by name, which runs to success on the partner nodes
//! it started. (The default run, with the people part, is the README's first command.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

/// Runs `mobiwf-demo FILE` (a path under the repository) and returns its standard output,
/// having checked it exited 0.
fn demo(file: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(env!("CARGO_BIN_EXE_mobiwf-demo"))
        .arg(root.join(file))
        .args(["--timeout", "120"])
        .output()
        .expect("the demo runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{file}: exit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_paper_in_pdl_and_in_bpmn_is_deployed_started_by_name_and_succeeds() {
    for (file, name) in [
        ("examples/paper/workflow.pdl", "workflow"),
        ("examples/bpmn/paper.bpmn", "paper"),
    ] {
        let out = demo(file);
        assert!(
            out.contains(&format!("deployed as {name} version 1; instance 1 started by name")),
            "{file}:\n{out}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with("instance 1") && l.contains("succeeded")),
            "{file}:\n{out}"
        );
    }
}
