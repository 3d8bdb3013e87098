//! Proves a loop whose body holds a person's activity with the real binaries (a controller,
//! the host H and the devices D1 and D2 as separate processes): the manual activity of role
//! `tech` is offered to alice on her device D1 in each pass; her worklist (`mobiwf-node
//! worklist --user alice`, the table and `--json`) shows the second pass as `2#2`, she selects
//! and completes it there, and the loop's end, which asks for one more pass after the first,
//! then lets the instance succeed. The controller's status and history name the pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use documents::{TECH, workflow};
use mesh::{Mesh, SOON};
use mobiwf_tests::harness::{status_activity, wait_for, xml_text};
use serde_json::Value;

/// alice (D1) of role tech.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>"#;

/// The loop's end: counts its passes in `counter` (one file per instance) and asks for
/// another pass (flag `again`) until the `passes`th, then ends the loop (flag `done`).
fn end_of_loop(counter: &std::path::Path, passes: u32) -> String {
    let f = format!("'{}'-$MOBIWF_INSTANCE", counter.display());
    let command = format!(
        "r=$(cat {f} 2>/dev/null || echo 0); r=$((r+1)); echo $r > {f}; \
         if [ $r -lt {passes} ]; then echo again; else echo done; fi > \"$MOBIWF_FLAG_FILE\""
    );
    format!(
        "<loop to=\"2\" while=\"again\" max=\"3\"/><command>{}</command>",
        xml_text(&command)
    )
}

/// Waits until alice's worklist shows activity 2 of instance `id` offered in `pass` (`None`:
/// the first, which the worklist leaves out).
fn offered_in(mesh: &Mesh, id: u64, pass: Option<u64>) -> Value {
    wait_for(
        format!("alice's worklist to offer activity 2 of instance {id} in pass {pass:?}"),
        SOON,
        || {
            mesh.item("alice", id, 2)
                .filter(|i| i["state"] == "offered" && i["pass"].as_u64() == pass)
        },
    )
}

#[test]
fn a_person_s_activity_in_a_loop_is_offered_again_as_its_next_pass_and_completed_there() {
    let mesh = Mesh::start("loops-people", USERS);
    let counter = mesh.write("passes", "");
    let end = end_of_loop(&counter, 2);
    let file = mesh.write(
        "loop.xml",
        &workflow(&[
            (1, "", &[]),
            (2, TECH, &[1]),
            (3, &end, &[2]),
            (4, "", &[3]),
        ]),
    );
    let id = mesh.controller.submit(&file);

    offered_in(&mesh, id, None);
    mesh.ok("alice", "select", id, 2, &[]);
    mesh.ok("alice", "complete", id, 2, &[]);

    let item = offered_in(&mesh, id, Some(2));
    assert_eq!(item["activity"], 2, "{item:#}");
    let table = mesh.d1.cli(&["worklist", "--user", "alice"]);
    table.expect_code(0, "worklist --user alice");
    assert!(
        table.stdout.lines().any(|l| l.contains("2#2")),
        "the table names the pass:\n{}",
        table.stdout
    );
    mesh.ok("alice", "select", id, 2, &[]);
    mesh.ok("alice", "complete", id, 2, &[]);
    mesh.wait_gone("alice", id, 2);
    mesh.succeeded(id);

    let status = mesh.controller.status(id);
    let done = status_activity(&status, 2);
    assert_eq!(done["state"], "succeeded", "{status:#}");
    assert_eq!(done["pass"], 2, "completed in its second pass: {status:#}");
    assert_eq!(status_activity(&status, 4)["state"], "succeeded");
    mesh.wait_history(id, "A2 (2#2)");
}
