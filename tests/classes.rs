//! Task classes on the real controller binary (no node: what happens between nodes and the
//! controller's synchronization manager is the cross-node suites'):
//!
//! - `classes show` and `sync show` on a new controller say there is nothing, and `sync show`
//!   gives the lease as half the failure detector's suspicion time (`--suspect-after`);
//! - a definition naming a class the controller does not have is refused at `submit`, saying
//!   which activity, which class and `classes apply FILE`;
//! - `classes apply` refuses a broken document with every problem at `file:line:col` (exit 1),
//!   takes the example (`examples/classes/plant.classes.xml`), and `classes show` (and
//!   `--json`) shows each class with the classes it may not run beside, as a restart keeps it;
//! - `validate` knows a class document.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use mobiwf_tests::harness::{CLI_TIMEOUT, Controller};
use mobiwf_tests::scratch;
use serde_json::Value;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/classes")
        .join(name)
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// A new controller has no classes, and nothing holds or waits; the lease is half its
/// suspicion time.
fn nothing_yet(controller: &Controller) {
    let out = controller.cli(&["classes", "show"], CLI_TIMEOUT);
    out.expect_code(0, "classes show");
    assert!(out.stdout.contains("no classes"), "{}", out.stdout);
    let out = controller.cli(&["sync", "show"], CLI_TIMEOUT);
    out.expect_code(0, "sync show");
    assert_eq!(
        out.stdout,
        "lease 2000 ms\nno activity holds or waits for a class\n"
    );
}

/// A definition naming press and drill is refused while the controller has no classes.
fn unknown_classes_refused(controller: &Controller) {
    let workflow = example("press.workflow.xml");
    let out = controller.cli(&["submit", path(&workflow)], CLI_TIMEOUT);
    assert_ne!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("activity 1 names class press")
            && out.stderr.contains("activity 3 names class drill")
            && out.stderr.contains("mobiwf-controller classes apply FILE"),
        "{}",
        out.stderr
    );
}

/// A broken class document is refused with every problem where it is written.
fn broken_document_refused(controller: &Controller, dir: &Path) {
    let broken = dir.join("broken.classes.xml");
    std::fs::write(
        &broken,
        "<classes>\n  <class id=\"press\"><conflicts>dril</conflicts></class>\n  <class/>\n</classes>\n",
    )
    .unwrap();
    let out = controller.cli(&["classes", "apply", path(&broken)], CLI_TIMEOUT);
    out.expect_code(1, "classes apply (broken)");
    let at = format!(
        "{}:2:32: error: <conflicts> of class press names dril",
        path(&broken)
    );
    assert!(out.stderr.contains(&at), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(&format!("{}:3:3: error: <class> has no id", path(&broken))),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("the class document was not applied"));
}

/// The example is applied, and shown as a restart of the controller keeps it.
fn example_applied_and_kept(controller: &mut Controller, plant: &Path) {
    let out = controller.cli(&["classes", "apply", path(plant)], CLI_TIMEOUT);
    out.expect_code(0, "classes apply");
    assert!(
        out.stdout.contains("class document applied: 3 classes"),
        "{}",
        out.stdout
    );

    let expected = "\
CLASS            MAX WAIT  CONFLICTS WITH
press            30 s      press,drill
drill            60 s      press
paint            60 s      -
";
    controller.restart();
    let out = controller.cli(&["classes", "show"], CLI_TIMEOUT);
    out.expect_code(0, "classes show");
    assert_eq!(out.stdout, expected, "a restart keeps the document");
    let out = controller.cli(&["classes", "show", "--json"], CLI_TIMEOUT);
    out.expect_code(0, "classes show --json");
    let body: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(body["classes"][1]["id"], "drill");
    assert_eq!(body["classes"][1]["conflicts"], serde_json::json!([]));
    assert_eq!(
        body["classes"][1]["conflicts_with"],
        serde_json::json!(["press"])
    );
    assert!(
        body["document"]
            .as_str()
            .unwrap()
            .contains("<maxWait>30</maxWait>")
    );
}

/// `sync show --json` with classes and nothing holding or waiting.
fn nobody_holds(controller: &Controller) {
    let out = controller.cli(&["sync", "show", "--json"], CLI_TIMEOUT);
    out.expect_code(0, "sync show --json");
    let body: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"lease_ms": 2000, "holders": [], "waiters": []})
    );
}

/// `validate` tells a class document.
fn validated(plant: &Path) {
    let out = std::process::Command::new(mobiwf_tests::binary("mobiwf-controller").unwrap())
        .args(["validate", path(plant)])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("ok (class document)"), "{stdout}");
}

#[test]
fn classes_apply_show_and_sync_show_through_the_binary() {
    let dir = scratch("classes-cli").unwrap();
    let mut controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--probe-every", "0.5", "--suspect-after", "4"],
    );
    nothing_yet(&controller);
    unknown_classes_refused(&controller);
    broken_document_refused(&controller, &dir);
    let plant = example("plant.classes.xml");
    example_applied_and_kept(&mut controller, &plant);
    nobody_holds(&controller);
    validated(&plant);
}
