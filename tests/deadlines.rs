//! Proves on the real binaries, with an hour of 100 ms (`--hour-ms 100` on the controller
//! and every node), that work items' `<deadline>`s are kept: a connected device's users are
//! told at 48 and 24 hours left, the item passes to the instance's responsible user at 24
//! hours left (gone from the holder's worklist, held by the responsible, in the history) and
//! the former holder's late result is refused and recorded, the responsible user extends the
//! deadline and is told again what is ahead; and a device whose host is gone
//! still tells its user at 24, 12, 6 and 0 hours left, on its own clock.
//!
//! Timings are not asserted beyond the order of the notices and that they came: every wait
//! polls with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use documents::{TECH, single};
use mesh::Mesh;
use mobiwf_tests::harness::{CLI_TIMEOUT, wait_for};
use serde_json::Value;

/// alice (D1) and bob (D2) of role tech; ron (D2), responsible for the instances.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D2"><role id="tech"/></user>
    <user id="ron" name="Ron" device="D2"><role id="clerk"/></user>"#;

/// An hour, for the controller and the nodes.
const HOUR_MS: &[&str] = &["--hour-ms", "100"];

/// Long enough for the last threshold of the longest deadline here, and then some.
const LATE: Duration = Duration::from_secs(60);

/// The texts of `user`'s notices of `kind` about instance `id`, oldest first.
fn texts(mesh: &Mesh, user: &str, id: u64, kind: &str) -> Vec<String> {
    mesh.notices(user)
        .iter()
        .filter(|n| n["instance"].as_u64() == Some(id) && n["kind"].as_str() == Some(kind))
        .filter_map(|n| n["text"].as_str().map(str::to_owned))
        .collect()
}

/// Waits until `user` has a notice of `kind` about instance `id` containing `text`.
fn wait_text(mesh: &Mesh, user: &str, id: u64, kind: &str, text: &str) -> Value {
    wait_for(
        format!("a {kind} notice about instance {id} to {user} saying {text:?}"),
        LATE,
        || {
            mesh.notices(user).into_iter().find(|n| {
                n["instance"].as_u64() == Some(id)
                    && n["kind"].as_str() == Some(kind)
                    && n["text"].as_str().is_some_and(|t| t.contains(text))
            })
        },
    )
}

/// The position of the first text containing `needle`.
fn at(texts: &[String], needle: &str) -> usize {
    texts
        .iter()
        .position(|t| t.contains(needle))
        .unwrap_or_else(|| panic!("no notice saying {needle:?} in {texts:#?}"))
}

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    u64::try_from(since.as_millis()).unwrap()
}

/// A deadline of 96 "hours" (9.6 s): alice selects the item; at 48 hours left she is told;
/// at 24 it passes to ron, responsible for the instance (off her worklist, on his, selected;
/// the history says so), her late completion is refused ("recorded and ignored", in the
/// history); ron is told of 12, 6 and 0 hours left as its holder, then completes it.
#[test]
fn a_selected_item_passes_to_the_responsible_user_24_hours_before_its_deadline() {
    let mesh = Mesh::start_with("deadlines-hand-over", USERS, HOUR_MS);
    let file = mesh.write(
        "due.xml",
        &single(&format!("{TECH}\n      <deadline>96</deadline>")),
    );
    let id = mesh
        .controller
        .submit_with(&file, &["--responsible", "ron"]);
    mesh.wait_item("alice", id, 1, "offered");
    mesh.ok("alice", "select", id, 1, &[]);

    let told = wait_text(&mesh, "alice", id, "deadline", "48 hours are left");
    assert!(told["text"].as_str().unwrap().contains("A1"), "{told:#}");
    wait_text(&mesh, "ron", id, "deadline", "48 hours are left");
    assert!(
        texts(&mesh, "bob", id, "deadline").is_empty(),
        "bob is neither holder nor responsible"
    );

    // 24 hours left: the hand-over.
    mesh.wait_history(
        id,
        "handed over to the responsible user ron, taken from alice",
    );
    mesh.wait_gone("alice", id, 1);
    mesh.wait_item("ron", id, 1, "selected");
    wait_text(&mesh, "ron", id, "handed_over", "passed to you");
    let alice = wait_text(&mesh, "alice", id, "deadline", "24 hours are left");
    assert!(
        alice["text"].as_str().unwrap().contains("responsible"),
        "{alice:#}"
    );

    // Her result, late: refused, recorded, ignored.
    let late = mesh.act("alice", "complete", id, 1, &[]);
    assert_eq!(late.code, Some(4), "no longer available:\n{late:?}");
    mesh.wait_history(id, "recorded and ignored");
    assert!(mesh.item("ron", id, 1).is_some(), "still ron's");

    // ron, its holder now, is told by his own device at 12, 6 and 0 hours left.
    wait_text(&mesh, "ron", id, "deadline", "is reached");
    let ron = texts(&mesh, "ron", id, "deadline");
    assert!(at(&ron, "48 hours") < at(&ron, "12 hours"), "{ron:#?}");
    assert!(at(&ron, "12 hours") < at(&ron, "6 hours"), "{ron:#?}");
    assert!(at(&ron, "6 hours") < at(&ron, "is reached"), "{ron:#?}");
    assert_eq!(
        ron.iter().filter(|t| t.contains("12 hours")).count(),
        1,
        "told once: {ron:#?}"
    );
    mesh.wait_history(id, "deadline reached");
    wait_text(&mesh, "ron", id, "deadline_reached", "you decide");
    let alice = texts(&mesh, "alice", id, "deadline");
    assert_eq!(alice.len(), 2, "alice only until it left her: {alice:#?}");

    // ron decides: 60 hours more (6 s). 6 and 0 hours left come again.
    let (instance, activity) = (id.to_string(), "1");
    let extend = [
        "worklist", "extend", &instance, activity, "--user", "ron", "--hours", "60",
    ];
    mesh.controller
        .cli(&extend, CLI_TIMEOUT)
        .expect_code(0, "worklist extend");
    mesh.wait_history(id, "deadline extended by 60 hours for ron");
    wait_for("ron to be told the deadline is reached again", LATE, || {
        let ron = texts(&mesh, "ron", id, "deadline");
        (ron.iter().filter(|t| t.contains("is reached")).count() == 2).then_some(())
    });
    let ron = texts(&mesh, "ron", id, "deadline");
    assert_eq!(
        ron.iter().filter(|t| t.contains("6 hours")).count(),
        2,
        "6 hours left again after the extension: {ron:#?}"
    );

    mesh.ok("ron", "complete", id, 1, &[]);
    mesh.succeeded(id);
    let status = mesh.controller.status(id);
    assert!(
        status.to_string().contains("ron"),
        "status names ron: {status:#}"
    );
}

/// A deadline of 40 "hours" (4 s), no responsible user: as soon as alice's device D1 holds
/// the item, its host H is killed; D1 still tells her at 24 (if H did not), 12, 6 and 0 hours
/// left, on its own clock, in order and each once.
#[test]
fn a_device_cut_off_from_its_host_still_raises_the_deadline_notices() {
    let mut mesh = Mesh::start_with("deadlines-offline", USERS, HOUR_MS);
    let file = mesh.write(
        "due.xml",
        &single(&format!("{TECH}\n      <deadline>40</deadline>")),
    );
    let id = mesh.controller.submit(&file);
    mesh.wait_item("alice", id, 1, "offered");
    // Both devices hold the offer before the host goes: what follows is theirs alone.
    mesh.wait_item("bob", id, 1, "offered");
    mesh.h.kill();
    let cut_ms = now_ms();

    let reached = wait_text(&mesh, "alice", id, "deadline", "is reached");
    assert!(
        reached["at_ms"].as_u64().unwrap() >= cut_ms,
        "told after the host was gone: {reached:#}"
    );
    let alice = texts(&mesh, "alice", id, "deadline");
    assert!(at(&alice, "12 hours") < at(&alice, "6 hours"), "{alice:#?}");
    assert!(
        at(&alice, "6 hours") < at(&alice, "is reached"),
        "{alice:#?}"
    );
    for t in ["24 hours", "12 hours", "6 hours", "is reached"] {
        assert_eq!(
            alice.iter().filter(|x| x.contains(t)).count(),
            1,
            "{t} told once: {alice:#?}"
        );
    }
    assert!(
        alice.iter().all(|t| !t.contains("48 hours")),
        "48 hours left does not apply to a deadline of 40: {alice:#?}"
    );
    // bob (on D2, also offered it) is told too, by his own device.
    wait_text(&mesh, "bob", id, "deadline", "is reached");
}
