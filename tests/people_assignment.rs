//! Proves on the real binaries (a controller, a host node H and two field devices D1 and D2,
//! as in `people.rs`) that the assignment methods and policies choose the users they should
//! (round-robin across a host restart), that on-leave users get nothing, and that bad
//! organisation documents and bad activity extensions are refused with every problem's
//! position.
//!
//! Nothing waits for luck: every expectation that takes a moment is polled with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use std::path::Path;
use std::process::Command;

use documents::{TECH, activity_lines, diagnostics, expect_problem, lines_with, single, workflow};
use mesh::Mesh;
use mobiwf_tests::harness::{CLI_TIMEOUT, Controller, run};
use mobiwf_tests::{binary, scratch};
use serde_json::Value;

/// Users of role tech: alice (priority 2, department field), bob (1, field), carol (5, field,
/// on leave), erin (0, department ops); dave is an administrator.
const METHOD_USERS: &str = r#"    <user id="alice" name="Alice" department="field" team="north" device="D1"><role id="tech" priority="2"/></user>
    <user id="bob" name="Bob" department="field" device="D2"><role id="tech" priority="1"/></user>
    <user id="carol" name="Carol" department="field" device="D2" onLeave="true"><role id="tech" priority="5"/></user>
    <user id="dave" name="Dave" device="D1"><role id="administrator"/></user>
    <user id="erin" name="Erin" department="ops" device="D2"><role id="tech" priority="0"/></user>"#;

/// Each assignment method and policy chooses the users it should; round-robin's token survives
/// a restart of the host; on-leave carol is never offered anything.
#[test]
fn assignment_methods_and_policies_choose_the_right_users() {
    let mut mesh = Mesh::start("people-methods", METHOD_USERS);
    let mut instances = Vec::new();

    // priority: the highest role priority among those on duty (carol's 5 does not count).
    let file = mesh.write(
        "priority.xml",
        &single(&format!("{TECH}\n      <assignment method=\"priority\"/>")),
    );
    let id = mesh.controller.submit(&file);
    instances.push(id);
    assert_eq!(mesh.offered_to(id), ["alice"], "method priority");
    mesh.wait_item("alice", id, 1, "offered");
    assert!(
        mesh.item("bob", id, 1).is_none() && mesh.item("erin", id, 1).is_none(),
        "method priority offers the item to alice alone"
    );
    mesh.work("alice", id, 1);

    // round-robin: alice, bob, then (after the host's restart) erin, then alice again.
    let rr = mesh.write(
        "round-robin.xml",
        &single(&format!(
            "{TECH}\n      <assignment method=\"round-robin\"/>"
        )),
    );
    let mut turns = Vec::new();
    for (turn, expected) in ["alice", "bob", "erin", "alice"].into_iter().enumerate() {
        if turn == 2 {
            mesh.h.kill();
            mesh.h.restart();
        }
        let id = mesh.controller.submit(&rr);
        instances.push(id);
        assert_eq!(
            mesh.offered_to(id),
            [expected],
            "round-robin turn {} (instance {id}); the host restarted before turn 3",
            turn + 1
        );
        mesh.wait_item(expected, id, 1, "offered");
        turns.push((expected, id));
    }
    mesh.assert_empty("carol", "after round-robin");

    // Open items on H now: alice 2, bob 1, erin 1. Erin finishes hers: erin 0.
    let (_, erin_rr) = turns[2];
    mesh.work("erin", erin_rr, 1);
    // least-working: the user with the fewest open items, erin.
    let file = mesh.write(
        "least-working.xml",
        &single(&format!(
            "{TECH}\n      <assignment method=\"least-working\"/>"
        )),
    );
    let lw = mesh.controller.submit(&file);
    instances.push(lw);
    assert_eq!(
        mesh.offered_to(lw),
        ["erin"],
        "least-working with open items alice 2, bob 1, erin 0"
    );
    mesh.wait_item("erin", lw, 1, "offered");

    // Bob finishes his: open items alice 2, bob 0, erin 1.
    let (_, bob_rr) = turns[1];
    mesh.work("bob", bob_rr, 1);
    // fcfa with policy fewest-assigned 1: only the least loaded, bob, is offered it.
    let file = mesh.write(
        "fewest-assigned.xml",
        &single(&format!("{TECH}\n      <policy>fewest-assigned 1</policy>")),
    );
    let fa = mesh.controller.submit(&file);
    instances.push(fa);
    assert_eq!(
        mesh.offered_to(fa),
        ["bob"],
        "policy fewest-assigned 1 with open items alice 2, bob 0, erin 1"
    );
    mesh.wait_item("bob", fa, 1, "offered");
    assert!(
        mesh.item("alice", fa, 1).is_none() && mesh.item("erin", fa, 1).is_none(),
        "policy fewest-assigned 1 offers the item to bob alone"
    );

    // Everything left is done by its user.
    for (user, id) in [
        ("alice", turns[0].1),
        ("alice", turns[3].1),
        ("erin", lw),
        ("bob", fa),
    ] {
        mesh.work(user, id, 1);
    }

    // all, basis department field: alice and bob each get a copy (erin is in ops, above
    // field; carol is on leave); the activity ends only when both copies are done.
    let file = mesh.write(
        "all.xml",
        &single(&format!(
            "{TECH}\n      <department>field</department>\n      \
             <assignment basis=\"department\" method=\"all\"/>"
        )),
    );
    let all = mesh.controller.submit(&file);
    instances.push(all);
    mesh.wait_item("alice", all, 1, "offered");
    mesh.wait_item("bob", all, 1, "offered");
    assert!(
        mesh.item("erin", all, 1).is_none(),
        "erin is not in department field"
    );
    mesh.ok("alice", "select", all, 1, &[]);
    mesh.ok("alice", "complete", all, 1, &[]);
    // The host answered alice's completion: it has applied it, and one copy is still open.
    let state = mesh.h.state_of(all, 1);
    assert_eq!(
        state.as_deref(),
        Some("running"),
        "with method all the activity waits for bob's copy too"
    );
    assert_eq!(
        mesh.controller.status(all)["state"],
        "running",
        "the instance cannot be over before bob's copy is done"
    );
    assert!(
        mesh.item("bob", all, 1).is_some(),
        "bob's copy stays on his worklist after alice completed hers"
    );
    mesh.work("bob", all, 1);
    mesh.wait_history(all, "completed by alice");
    mesh.wait_history(all, "completed by bob");

    // Carol, on leave, was never offered anything.
    mesh.assert_empty("carol", "at the end");
    for id in instances {
        let offered = mesh.ever_offered(id);
        assert!(
            !offered.contains("carol"),
            "carol is on leave, yet instance {id} was offered to {offered:?}"
        );
    }
    let told = mesh.notices("carol");
    assert!(
        !told.iter().any(|n| n["kind"] == "offered"),
        "carol is on leave and should have no offers: {told:#?}"
    );
}

/// A bad organisation document is refused with every problem at its `file:line:col`, and the
/// directory stays as it was; bad activity extensions are refused by `validate` likewise.
#[test]
fn bad_organisations_and_extensions_are_refused_with_positions() {
    let dir = scratch("people-bad-documents").unwrap();
    let mut controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    // The directory version `org show --json` reports; `None` while there is no directory
    // to show (exit 1).
    let version = |c: &Controller| {
        let out = c.cli(&["org", "show", "--json"], CLI_TIMEOUT);
        if out.code == Some(1) {
            return None;
        }
        out.expect_code(0, "org show --json");
        let shown = serde_json::from_str::<Value>(&out.stdout).unwrap()["version"].as_u64();
        assert!(
            shown.is_some(),
            "org show --json has no version:\n{}",
            out.stdout
        );
        shown
    };
    let before = version(&controller);

    let org = r#"<organisation>
  <roles><role id="tech"/></roles>
  <departments>
    <department id="loop-a" parent="loop-b"/>
    <department id="loop-b" parent="loop-a"/>
  </departments>
  <teams><team id="north"/></teams>
  <users>
    <user id="twin" device="D1"><role id="tech"/></user>
    <user id="twin" device="D2"><role id="tech"/></user>
    <user id="mallory" device="D1"><role id="ghost-role"/></user>
    <user id="oscar" department="no-such-dept" device="D1"><role id="tech"/></user>
    <user id="trudy" team="no-such-team" device="D2"><role id="tech"/></user>
  </users>
</organisation>
"#;
    let file = dir.join("bad-organisation.xml");
    std::fs::write(&file, org).unwrap();
    let out = controller.cli(&["org", "apply", &file.display().to_string()], CLI_TIMEOUT);
    out.expect_code(1, "org apply of a document with five problems");
    let found = diagnostics(&out.stderr, &file);
    let cycle = lines_with(org, "parent=\"loop-");
    expect_problem(&found, &cycle, "loop-", "the department cycle", &out);
    expect_problem(
        &found,
        &lines_with(org, "id=\"twin\""),
        "twin",
        "the duplicate user id",
        &out,
    );
    expect_problem(
        &found,
        &lines_with(org, "ghost-role"),
        "ghost-role",
        "the unknown role",
        &out,
    );
    expect_problem(
        &found,
        &lines_with(org, "no-such-dept"),
        "no-such-dept",
        "the unknown department",
        &out,
    );
    expect_problem(
        &found,
        &lines_with(org, "no-such-team"),
        "no-such-team",
        "the unknown team",
        &out,
    );
    assert_eq!(
        version(&controller),
        before,
        "a refused organisation document leaves the directory as it was"
    );

    // The same document with its problems fixed is applied.
    let good = org
        .replace(r#" parent="loop-a""#, "")
        .replacen(
            r#"<user id="twin" device="D2">"#,
            r#"<user id="twin2" device="D2">"#,
            1,
        )
        .replace("ghost-role", "tech")
        .replace(r#" department="no-such-dept""#, "")
        .replace(r#" team="no-such-team""#, r#" team="north""#);
    let good_file = dir.join("organisation.xml");
    std::fs::write(&good_file, &good).unwrap();
    let out = controller.cli(
        &["org", "apply", &good_file.display().to_string()],
        CLI_TIMEOUT,
    );
    out.expect_code(0, "org apply of the fixed document");
    let after = version(&controller).expect("a directory once a document was applied");
    assert!(
        Some(after) > before,
        "applying a document makes a new directory version"
    );
    assert!(
        out.stdout
            .contains(&format!("organisation applied: directory version {after}")),
        "org apply names the version it made ({after}):\n{}",
        out.stdout
    );

    // Bad activity extensions, one problem per activity; activity 9 is right.
    let good_extensions = "<kind>manual</kind>\n      <role>tech</role>\n      \
         <team>north</team>\n      <assignment basis=\"team\" method=\"fcfa\"/>\n      \
         <policy>fewest-selected 2</policy>\n      <priority>3</priority>\n      \
         <disconnected>true</disconnected>";
    let wf = workflow(&[
        (1, "<role>tech</role>", &[]),
        (
            2,
            "<kind>manual</kind>\n      <department>field</department>\n      \
             <assignment basis=\"department\" method=\"priority\"/>",
            &[],
        ),
        (
            3,
            "<kind>manual</kind>\n      <role>tech</role>\n      \
             <assignment method=\"all\"/>\n      <policy>fewest-assigned 1</policy>",
            &[],
        ),
        (
            4,
            "<kind>manual</kind>\n      <role>tech</role>\n      \
             <assignment method=\"first-come\"/>",
            &[],
        ),
        (
            5,
            "<kind>manual</kind>\n      <role>tech</role>\n      <priority>high</priority>",
            &[],
        ),
        (
            6,
            "<kind>manual</kind>\n      <role>tech</role>\n      \
             <disconnected>maybe</disconnected>",
            &[],
        ),
        (
            7,
            "<kind>manual</kind>\n      <role>tech</role>\n      \
             <policy>most-loved 2</policy>",
            &[],
        ),
        (9, good_extensions, &[]),
    ]);
    let wf_file = dir.join("bad-extensions.xml");
    std::fs::write(&wf_file, &wf).unwrap();
    let validate = |file: &Path| {
        run(
            Command::new(binary("mobiwf-controller").unwrap())
                .arg("validate")
                .arg(file),
            CLI_TIMEOUT,
        )
    };
    let out = validate(&wf_file);
    out.expect_code(1, "validate a workflow with bad people extensions");
    let found = diagnostics(&format!("{}{}", out.stdout, out.stderr), &wf_file);
    for (activity, word, what) in [
        (1, "role", "<role> on an automatic activity"),
        (2, "priority", "method priority with basis department"),
        (3, "policy", "<policy> with method all"),
        (4, "first-come", "an unknown assignment method"),
        (5, "high", "a <priority> that is not an integer"),
        (
            6,
            "maybe",
            "a <disconnected> that is neither true nor false",
        ),
        (7, "most-loved", "an unknown policy"),
    ] {
        expect_problem(&found, &activity_lines(&wf, activity), word, what, &out);
    }
    let right = activity_lines(&wf, 9);
    assert!(
        !found.iter().any(|(l, _, _)| right.contains(l)),
        "activity 9's extensions are all valid, yet: {found:#?}"
    );

    // The right activity alone validates.
    let ok_file = dir.join("good-extensions.xml");
    std::fs::write(&ok_file, workflow(&[(9, good_extensions, &[])])).unwrap();
    let out = validate(&ok_file);
    out.expect_code(
        0,
        "validate a workflow whose people extensions are all valid",
    );
    controller.check_alive();
}
