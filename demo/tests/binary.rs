//! The demo binary as the README runs it: it deploys a workflow written in any of the three
//! languages and starts an instance of it by name, which runs to success on the partner nodes
//! it started, and the BPMN reference files inside the subset run to the end. (The default
//! run, with the people part, is the README's first command.)
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
            out.contains(&format!(
                "deployed as {name} version 1; instance 1 started by name"
            )),
            "{file}:\n{out}"
        );
        assert!(
            out.lines()
                .any(|l| l.starts_with("instance 1") && l.contains("succeeded")),
            "{file}:\n{out}"
        );
    }
}

/// The BPMN MIWG reference files inside the subset deploy and run to the end: A.1.0's three
/// tasks one after the other; A.2.0's exclusive split, whose flows carry no condition, routes
/// by a flag named after each flow (its name, else its id), which a task without a command
/// does not give, so its branches are skipped and the instance ends (docs/languages.md).
#[test]
fn the_miwg_reference_files_inside_the_subset_run_to_the_end() {
    let out = demo("xml-schema/tests/bpmn/A.1.0.bpmn");
    for task in ["Task 1", "Task 2", "Task 3"] {
        assert!(
            out.lines()
                .any(|l| l.contains(task) && l.contains("succeeded")),
            "{task}:\n{out}"
        );
    }
    let out = demo("xml-schema/tests/bpmn/A.2.0.bpmn");
    assert!(
        out.lines()
            .any(|l| l.starts_with("instance 1") && l.contains("succeeded")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.contains("Task 2") && l.contains("skipped")),
        "{out}"
    );
}
