//! Proves pausing one activity on the real binaries (a controller, the host H and the devices
//! D1 and D2 as separate processes; an hour of 100 ms, `--hour-ms 100`, as the other people
//! tests): alice pauses the item she selected with `mobiwf-node pause` (it stays hers, its
//! `<deadline>` stops, as its `<pauseStopsDeadline>` says), which stays paused across restarts
//! of the host, her device and the controller; what does not apply is refused with what to
//! do; `resume` moves her deadline by exactly the time it was paused. An operator pauses an
//! automatic activity with `mobiwf-controller pause`: without `--kill` its command runs on and
//! its end is held until `resume`; with `--kill` the command is killed and runs again, as a
//! new try, when resumed.
//!
//! Nothing is asserted of timings: states, the history, the commands' log and the deadline
//! moved by the paused time (the host's own two clock readings) are; every wait polls.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "people/documents.rs"]
mod documents;
#[path = "people/mesh.rs"]
mod mesh;

use std::path::{Path, PathBuf};

use documents::{TECH, single, workflow};
use mesh::{Mesh, SOON};
use mobiwf_tests::harness::{CLI_TIMEOUT, GATE_LIMIT_TICKS, status_activity, wait_for, xml_text};
use serde_json::Value;

/// alice (D1) of role tech; ron (D2), responsible for the instances.
const USERS: &str = r#"    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="ron" name="Ron" device="D2"><role id="clerk"/></user>"#;

/// An hour, for the controller and the nodes.
const HOUR_MS: &[&str] = &["--hour-ms", "100"];

/// The controller's view of activity `activity` of instance `id`.
fn activity(mesh: &Mesh, id: u64, activity: u64) -> Value {
    status_activity(&mesh.controller.status(id), activity).clone()
}

/// Waits until the controller shows the activity paused (`true`) or not.
fn wait_paused(mesh: &Mesh, id: u64, act: u64, paused: bool) -> Value {
    wait_for(
        format!("the controller to show activity {act} of instance {id} paused: {paused}"),
        SOON,
        || {
            let a = activity(mesh, id, act);
            (a["paused"].is_object() == paused).then_some(a)
        },
    )
}

/// The `at_ms` of the first history event of instance `id` saying `text`.
fn event_at(mesh: &Mesh, id: u64, text: &str) -> u64 {
    mesh.wait_history(id, text)["at_ms"].as_u64().unwrap()
}

/// `mobiwf-controller ARGS`, with its exit code checked.
fn controller(mesh: &Mesh, args: &[&str], code: i32) -> String {
    let out = mesh.controller.cli(args, CLI_TIMEOUT);
    out.expect_code(code, &format!("mobiwf-controller {args:?}"));
    format!("{}{}", out.stdout, out.stderr)
}

/// alice selects the item of instance `id` and pauses it: it stays hers, shown paused on her
/// device and at the controller. Her deadline before, and when the pause began (ms).
fn select_and_pause(mesh: &Mesh, id: u64) -> (u64, u64) {
    mesh.wait_item("alice", id, 1, "offered");
    let pause = mesh.act("ron", "pause", id, 1, &[]);
    assert_ne!(pause.code, Some(0), "ron does not hold it:\n{pause:?}");
    mesh.ok("alice", "select", id, 1, &[]);
    let before = mesh.item("alice", id, 1).unwrap()["due"]["at_ms"]
        .as_u64()
        .unwrap();

    mesh.ok("alice", "pause", id, 1, &[]);
    let item = mesh.wait_item("alice", id, 1, "selected");
    assert!(
        item["paused_ms"].is_u64(),
        "her device shows it paused: {item:#}"
    );
    let shown = wait_paused(mesh, id, 1, true);
    assert_eq!(shown["paused"]["by"], "alice", "{shown:#}");
    let table = controller(mesh, &["status", &id.to_string()], 0);
    assert!(table.contains("paused by alice"), "{table}");
    let paused_at = event_at(mesh, id, "paused by alice (its deadline stops)");
    (before, paused_at)
}

/// Durable: the host, her device and the controller start again; still paused. What does
/// not apply now is refused, with what to do.
fn stays_paused(mesh: &mut Mesh, id: u64) {
    mesh.h.restart();
    mesh.d1.restart();
    mesh.controller.restart();
    wait_paused(mesh, id, 1, true);
    let item = mesh.wait_item("alice", id, 1, "selected");
    assert!(item["paused_ms"].is_u64(), "{item:#}");

    let again = mesh.act("alice", "pause", id, 1, &[]);
    assert_eq!(again.code, Some(4), "{again:?}");
    assert!(again.stderr.contains("paused already"), "{again:?}");
    let done = mesh.act("alice", "complete", id, 1, &[]);
    assert_ne!(done.code, Some(0), "{done:?}");
    assert!(done.stderr.contains("resume it first"), "{done:?}");
}

/// She resumes it: her deadline moved by exactly the time it was paused (`before` and
/// `paused_at` from [`select_and_pause`]); a second resumption is refused.
fn resumed_later(mesh: &Mesh, id: u64, (before, paused_at): (u64, u64)) {
    mesh.ok("alice", "resume", id, 1, &[]);
    let item = wait_for("her device to show it going on", SOON, || {
        mesh.item("alice", id, 1)
            .filter(|i| i["paused_ms"].is_null())
    });
    let resumed_at = event_at(mesh, id, "resumed by alice: running (its deadline moved");
    let after = item["due"]["at_ms"].as_u64().unwrap();
    assert!(resumed_at > paused_at);
    assert_eq!(
        after - before,
        resumed_at - paused_at,
        "the deadline moved by the time it was paused"
    );
    wait_paused(mesh, id, 1, false);
    let again = mesh.act("alice", "resume", id, 1, &[]);
    assert_eq!(again.code, Some(4), "not paused: {again:?}");
    assert!(again.stderr.contains("not paused"), "{again:?}");
}

/// A deadline of 96 "hours" that stops while paused: alice selects and pauses the item (it
/// stays hers, shown paused on her device and at the controller); it stays paused across
/// restarts; a second pause and a completion meanwhile are refused with what to do; her
/// resumption moves the deadline by exactly the time it was paused; then she completes it.
#[test]
fn a_person_pauses_a_selected_item_and_its_deadline_stops_until_she_resumes_it() {
    let mut mesh = Mesh::start_with("pause-person", USERS, HOUR_MS);
    let extra = format!(
        "{TECH}\n      <deadline>96</deadline>\n      \
         <pauseStopsDeadline>true</pauseStopsDeadline>"
    );
    let file = mesh.write("due.xml", &single(&extra));
    let id = mesh
        .controller
        .submit_with(&file, &["--responsible", "ron"]);
    let paused = select_and_pause(&mesh, id);
    stays_paused(&mut mesh, id);
    resumed_later(&mesh, id, paused);
    mesh.ok("alice", "complete", id, 1, &[]);
    mesh.succeeded(id);
}

/// Two automatic activities whose commands log `start|done INSTANCE ACTIVITY` to `log` and
/// wait for a gate (`gates/INSTANCE-ACTIVITY`) before ending.
fn gated(mesh: &Mesh, log: &Path) -> (PathBuf, PathBuf) {
    let gates = mesh.write("gates", "").with_extension("d");
    std::fs::create_dir_all(&gates).unwrap();
    let (g, l) = (gates.display(), log.display());
    let command = format!(
        "echo \"start $MOBIWF_INSTANCE $MOBIWF_ACTIVITY\" >> '{l}'; i=0; \
         while [ ! -e \"{g}/$MOBIWF_INSTANCE-$MOBIWF_ACTIVITY\" ] \
         && [ $i -lt {GATE_LIMIT_TICKS} ]; do sleep 0.05; i=$((i+1)); done; \
         echo \"done $MOBIWF_INSTANCE $MOBIWF_ACTIVITY\" >> '{l}'"
    );
    let extra = format!("<command>{}</command>", xml_text(&command));
    let file = mesh.write("gated.xml", &workflow(&[(1, &extra, &[]), (2, "", &[1])]));
    (file, gates)
}

/// The lines of the commands' log.
fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until the log holds `n` lines equal to `line`.
fn wait_log(log: &Path, line: &str, n: usize) {
    wait_for(
        format!("{n} lines {line:?} in the commands' log"),
        SOON,
        || (log_lines(log).iter().filter(|l| *l == line).count() >= n).then_some(()),
    );
}

/// Without `--kill`: the command runs on; its end, held while the activity is paused
/// (across restarts of the host and the controller), is taken when it is resumed, and the
/// command ran once. What does not apply is refused.
fn paused_without_kill(mesh: &mut Mesh, file: &Path, log: &Path, gates: &Path) {
    let id = mesh.controller.submit(file);
    let sid = id.to_string();
    wait_log(log, &format!("start {id} 1"), 1);
    let asked = controller(mesh, &["pause", &sid, "1"], 0);
    assert!(asked.contains("pause asked of its node"), "{asked}");
    wait_paused(mesh, id, 1, true);
    mesh.wait_history(id, "asked to pause it");
    mesh.wait_history(id, "paused by ");
    open(gates, id);
    wait_log(log, &format!("done {id} 1"), 1);
    mesh.h.restart();
    mesh.controller.restart();
    let shown = wait_paused(mesh, id, 1, true);
    assert_eq!(
        shown["state"], "running",
        "its command's end is held: {shown:#}"
    );
    assert_eq!(
        activity(mesh, id, 2)["state"],
        "not_ready",
        "nothing went on"
    );
    let refused = controller(mesh, &["pause", &sid, "1"], 1);
    assert!(refused.contains("paused already"), "{refused}");
    let table = controller(mesh, &["status", &sid], 0);
    assert!(table.lines().any(|l| l.contains(" paused ")), "{table}");
    controller(mesh, &["resume", &sid, "1"], 0);
    mesh.wait_history(id, ": running");
    mesh.succeeded(id);
    assert_eq!(
        log_lines(log)
            .iter()
            .filter(|l| **l == format!("start {id} 1"))
            .count(),
        1,
        "it ran once"
    );
    let refused = controller(mesh, &["pause", &sid, "1"], 1);
    assert!(refused.contains("the instance is succeeded"), "{refused}");
    let refused = controller(mesh, &["resume", &sid, "2"], 1);
    assert!(
        refused.contains("not paused") || refused.contains("succeeded"),
        "{refused}"
    );
}

/// With `--kill`: the command is killed, and runs again as a new try when resumed; the
/// killed try never ends.
fn paused_with_kill(mesh: &Mesh, file: &Path, log: &Path, gates: &Path) {
    let id = mesh.controller.submit(file);
    let sid = id.to_string();
    wait_log(log, &format!("start {id} 1"), 1);
    controller(mesh, &["pause", &sid, "1", "--kill"], 0);
    mesh.wait_history(id, ", its command killed");
    wait_paused(mesh, id, 1, true);
    // Activity 2 waits for it: not paused, nothing to resume.
    let refused = controller(mesh, &["resume", &sid, "2"], 1);
    assert!(refused.contains("not paused"), "{refused}");
    controller(mesh, &["resume", &sid, "1"], 0);
    wait_log(log, &format!("start {id} 1"), 2);
    // Opened once the new try runs: the killed one was killed before the resumption was
    // taken.
    open(gates, id);
    mesh.succeeded(id);
    let lines = log_lines(log);
    assert_eq!(
        lines
            .iter()
            .filter(|l| **l == format!("done {id} 1"))
            .count(),
        1,
        "the killed try never ended: {lines:#?}"
    );
}

/// Opens the gate of activity 1 of instance `id`.
fn open(gates: &Path, id: u64) {
    std::fs::write(gates.join(format!("{id}-1")), "").unwrap();
}

/// Without `--kill` the command runs on; its end, held while the activity is paused (across
/// restarts of the host and the controller), is taken when it is resumed. With `--kill` the
/// command is killed and runs again as a new try when resumed. What does not apply is refused.
#[test]
fn an_operator_pauses_an_automatic_activity_with_and_without_killing_its_command() {
    let mut mesh = Mesh::start("pause-operator", USERS);
    let log = mesh.write("commands.log", "");
    let (file, gates) = gated(&mesh, &log);
    paused_without_kill(&mut mesh, &file, &log, &gates);
    paused_with_kill(&mesh, &file, &log, &gates);
}
