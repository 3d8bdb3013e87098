//! Proves semi-automatic activities on the real binaries: a controller, the host H that runs
//! every activity, and alice's device D1, as separate processes. When alice selects an item
//! whose activity names an application, D1 runs it (under its wrapper, in its own run
//! directory) with the item's inputs in `MOBIWF_DATA_DIR`; its exit 0 completes the item with
//! the value it wrote, which the next activity reads. An application that fails leaves the item
//! selected and tells alice, who completes it by hand; one for another operating system is
//! refused at select.
//!
//! Nothing waits for luck: every expectation that takes a moment is polled with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use documents::workflow;
use mesh::{Mesh, SOON};
use mobiwf_tests::harness::{assert_all_succeeded, wait_for};

/// alice on D1 in role tech.
const ALICE: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>"#;

/// Activity 1 is semi-automatic for role tech and starts `form`, which reads `site` and
/// writes `reading`; activity 2 succeeds only when the reading it reads is 42.
fn survey(application: &str) -> String {
    let semi = "<kind>semiAutomatic</kind><application>form</application>\
                <reads>site</reads><writes>reading</writes><role>tech</role>";
    let check = "<command>test \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" = 42</command>\
                 <reads>reading</reads>";
    workflow(&[(1, semi, &[]), (2, check, &[1])]).replace(
        "</partners>\n</workflow>",
        &format!(
            "</partners>\n<data><value name=\"site\" type=\"string\" default=\"north\"/>\
             <value name=\"reading\" type=\"number\"/></data>\
             <applications>{application}</applications>\n</workflow>"
        ),
    )
}

#[test]
fn an_application_runs_on_the_device_of_the_user_who_selects_the_item() {
    let mesh = Mesh::start("applications", ALICE);
    let d1 = mesh.d1.spec.dir.clone();
    let seen = d1.join("seen-by-form");
    // What it read and who it ran for, on the device; then the reading.
    let form = format!(
        "<application id=\"form\"><command>echo \"$MOBIWF_USER $(cat \"$MOBIWF_DATA_DIR/site\")\" \
         &gt; '{}'; echo 42 &gt; \"$MOBIWF_DATA_DIR/reading\"</command><size>10</size>\
         <os>linux</os></application>",
        seen.display()
    );
    let id = mesh
        .controller
        .submit(&mesh.write("survey.xml", &survey(&form)));
    let offered = mesh.wait_item("alice", id, 1, "offered");
    assert_eq!(offered["kind"], "semiAutomatic", "{offered:#}");
    assert!(!seen.exists(), "nothing runs before alice selects the item");

    mesh.ok("alice", "select", id, 1, &[]);
    mesh.succeeded(id);
    assert_all_succeeded(&mesh.controller.status(id), &[(1, "H"), (2, "H")]);
    // It ran on D1, for alice, with the instance's input, once.
    let run = d1.join(format!("runs/{id}-1-1.application"));
    assert_eq!(
        std::fs::read_to_string(run.join("exit")).unwrap().trim(),
        "0"
    );
    assert_eq!(
        std::fs::read_to_string(&seen).unwrap().trim(),
        "alice north"
    );
    let host_runs = mesh.h.spec.dir.join(format!("runs/{id}-1-1.application"));
    assert!(!host_runs.exists(), "the host runs no application");
    mesh.wait_history(id, "completed by alice");
    mesh.wait_gone("alice", id, 1);
}

#[test]
fn a_failed_application_leaves_the_item_to_its_user_and_another_os_is_refused() {
    let mesh = Mesh::start("applications-failed", ALICE);
    let failing = "<application id=\"form\"><command>exit 3</command></application>";
    let id = mesh
        .controller
        .submit(&mesh.write("fails.xml", &survey(failing)));
    mesh.wait_item("alice", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);
    let told = mesh.wait_notice("alice", id, "application_failed");
    let text = told["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("application form") && text.contains("exited with status 3"),
        "{told:#}"
    );
    let held = mesh.wait_item("alice", id, 1, "selected");
    assert_eq!(held["holder"], "alice", "{held:#}");
    // She does the work by hand; the next activity reads her value.
    mesh.ok("alice", "complete", id, 1, &["--set", "reading=42"]);
    mesh.succeeded(id);

    let elsewhere = "<application id=\"form\"><command>true</command><os>plan9</os></application>";
    let other = mesh
        .controller
        .submit(&mesh.write("plan9.xml", &survey(elsewhere)));
    mesh.wait_item("alice", other, 1, "offered");
    let refused = mesh.act("alice", "select", other, 1, &[]);
    refused.expect_code(
        1,
        "a select of an item whose application is for plan9, on linux",
    );
    assert!(
        refused
            .stderr
            .contains("runs on plan9, and this device runs linux"),
        "{}",
        refused.stderr
    );
    // Still offered: nothing went to the host.
    wait_for("the item to stay offered", SOON, || {
        mesh.item("alice", other, 1)
            .filter(|i| i["state"] == "offered")
    });
}
