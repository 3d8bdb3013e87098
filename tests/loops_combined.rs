//! Proves loops combined with task classes and with pausing, on the real binaries (a
//! controller and partners P1 and P2 as processes). The loop: 1 then 2 on P1, 3 (its end, back
//! to 2 while its command's flag says `again`) and 4 on P2.
//!
//! - Task classes: 2 presses (`press` excludes itself). Each pass of 2 asks for the class
//!   again, as a new round, and releases it at its end: across four instances of three passes
//!   each, no two presses ever run at once (read from the commands' own clocks); `sync show`
//!   and the history name the pass that holds or waits (`A2 (2#2)`).
//! - Pausing: an operator pauses 2 in its second pass and resumes it; a loop's end paused in
//!   its first pass, its command's end (flag `again`) held, starts no new pass until it is
//!   resumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "loops_combined/mesh.rs"]
mod mesh;

use mesh::{LoopMesh, PRESS, Span, WAIT};
use mobiwf_tests::harness::{CLI_TIMEOUT, status_activity, wait_for};
use serde_json::Value;

/// The holders and waiters of `sync show --json` whose instance is `id`.
fn requests_of(mesh: &LoopMesh, id: u64) -> Vec<Value> {
    let out = mesh
        .controller
        .cli(&["sync", "show", "--json"], CLI_TIMEOUT);
    out.expect_code(0, "sync show --json");
    let body: Value = serde_json::from_str(&out.stdout).unwrap();
    ["holders", "waiters"]
        .iter()
        .flat_map(|k| body[k].as_array().cloned().unwrap_or_default())
        .filter(|r| r["instance"] == id)
        .collect()
}

/// While instance `first` holds the press in its second pass (its command held at a gate),
/// `sync show` names that pass (`A2 (2#2)`, round 1 of its requests), and instance `second`'s
/// first pass waits behind it.
fn second_pass_holds(mesh: &LoopMesh, first: u64, second: u64) {
    mesh.wait_started(first, 2, 2);
    let held = wait_for("the second pass to hold the press", WAIT, || {
        requests_of(mesh, first)
            .into_iter()
            .find(|r| r["pass"] == 2)
    });
    assert_eq!(held["round"], 1, "its second request: {held:#}");
    let waiting = wait_for("the other instance to wait behind it", WAIT, || {
        let out = mesh.controller.cli(&["sync", "show"], CLI_TIMEOUT);
        out.expect_code(0, "sync show");
        let behind = format!("held by instance {first}'s A2 (2#2) (class press)");
        out.stdout
            .lines()
            .any(|l| l.starts_with("waits") && l.contains(&behind))
            .then_some(out.stdout)
    });
    let holds = waiting
        .lines()
        .find(|l| l.starts_with("holds"))
        .unwrap_or_else(|| panic!("no holder shown:\n{waiting}"));
    assert!(
        holds.contains(&format!(" {first} ")) && holds.contains("A2 (2#2)"),
        "the holder is named with its pass:\n{waiting}"
    );
    assert!(
        requests_of(mesh, second)
            .iter()
            .all(|r| r["pass"].is_null() && r["round"] == 0),
        "the other waits in its first pass"
    );
}

#[test]
fn each_pass_of_a_classed_activity_takes_a_new_round_and_no_two_presses_overlap() {
    let mesh = LoopMesh::start("loops-classes", PRESS);
    let file = mesh.definition(PRESS, 3, false);
    // The first instance's second press waits at its gate; the others' pass at once.
    let first = mesh.controller.submit(&file);
    mesh.open(first, 2, 1);
    mesh.open(first, 2, 3);
    mesh.wait_started(first, 2, 2);
    let others: Vec<u64> = (0..3).map(|_| mesh.controller.submit(&file)).collect();
    for &id in &others {
        for pass in 1..=3 {
            mesh.open(id, 2, pass);
        }
    }
    second_pass_holds(&mesh, first, others[0]);
    mesh.open(first, 2, 2);

    let mut ids = vec![first];
    ids.extend(&others);
    for &id in &ids {
        mesh.controller
            .wait(id, 120)
            .expect_code(0, &format!("instance {id} succeeds"));
        let status = mesh.controller.status(id);
        assert_eq!(status_activity(&status, 2)["pass"], 3, "{status:#}");
    }
    let spans = mesh.spans();
    assert_eq!(spans.len(), 12, "three presses an instance: {spans:#?}");
    Span::assert_apart(&spans);

    let history = mesh.history(first);
    for pass in ["2", "2#2", "2#3"] {
        for what in ["granted class press", "released class press"] {
            let line = format!("A2 ({pass}) {what}");
            assert!(
                history.iter().any(|t| t.starts_with(&line)),
                "{line}: {history:#?}"
            );
        }
    }
    let out = mesh.controller.cli(&["sync", "show"], CLI_TIMEOUT);
    assert!(
        out.stdout
            .contains("no activity holds or waits for a class"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_operator_pauses_an_activity_in_its_second_pass_and_resumes_it() {
    let mesh = LoopMesh::start("loops-pause-pass", "");
    let file = mesh.definition("", 2, true);
    let id = mesh.controller.submit(&file);
    for (activity, pass) in [(2, 1), (3, 1), (3, 2)] {
        mesh.open(id, activity, pass);
    }
    mesh.wait_started(id, 2, 2);
    let asked = mesh.operator(&["pause", &id.to_string(), "2"], 0);
    assert!(asked.contains("pause asked of its node"), "{asked}");
    let paused = mesh.wait_paused(id, 2, true);
    assert_eq!(paused["pass"], 2, "paused in its second pass: {paused:#}");
    mesh.wait_history(id, "paused by ");
    // Its command ends meanwhile: its end is held, the loop's end does not run.
    mesh.open(id, 2, 2);
    mesh.wait_done(id, 2, 2);
    let table = mesh.operator(&["status", &id.to_string()], 0);
    assert!(
        table
            .lines()
            .any(|l| l.contains("2#2") && l.contains("paused")),
        "{table}"
    );
    mesh.operator(&["resume", &id.to_string(), "2"], 0);
    mesh.controller
        .wait(id, 120)
        .expect_code(0, "the instance succeeds");
    mesh.wait_history(id, "resumed by ");
    assert_eq!(mesh.starts(id, 2), 2, "2 ran once a pass");
    assert_eq!(mesh.starts(id, 3), 2, "3 ran once a pass");
}

#[test]
fn a_loop_s_end_paused_in_its_first_pass_starts_no_new_pass_until_it_is_resumed() {
    let mut mesh = LoopMesh::start("loops-pause-end", "");
    let file = mesh.definition("", 2, true);
    let id = mesh.controller.submit(&file);
    for (activity, pass) in [(2, 1), (2, 2), (3, 2)] {
        mesh.open(id, activity, pass);
    }
    mesh.wait_started(id, 3, 1);
    mesh.operator(&["pause", &id.to_string(), "3"], 0);
    mesh.wait_paused(id, 3, true);
    // Its command ends with the flag `again` while it is paused: its end is held (its node
    // restarted, so that it has certainly taken the command's end), and nothing of the
    // second pass starts.
    mesh.open(id, 3, 1);
    mesh.wait_done(id, 3, 1);
    mesh.p2.restart();
    let end = mesh.wait_paused(id, 3, true);
    assert_eq!(end["state"], "running", "its end is held: {end:#}");
    assert!(end["pass"].is_null(), "still the first pass: {end:#}");
    let end_here = mesh.p2.run_record(id, 3).unwrap();
    assert!(end_here["pass"].is_null(), "its node: {end_here:#}");
    assert_eq!(mesh.starts(id, 2), 1, "2 did not run again");

    mesh.operator(&["resume", &id.to_string(), "3"], 0);
    mesh.controller
        .wait(id, 120)
        .expect_code(0, "the instance succeeds");
    assert_eq!(mesh.starts(id, 2), 2, "the second pass ran once resumed");
    // The second pass began only once it was resumed (both times of the nodes' clocks,
    // which are this machine's).
    let resumed = mesh.event_at(id, "resumed by ");
    let again = mesh.event_at(id, "A2 (2#2) waits again");
    assert!(
        resumed <= again,
        "resumed at {resumed}, the next pass began at {again}: {:#?}",
        mesh.history(id)
    );
    let status = mesh.controller.status(id);
    assert_eq!(status_activity(&status, 3)["pass"], 2, "{status:#}");
}
