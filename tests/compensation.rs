//! Proves backward and forward recovery with the real binaries: a
//! controller and two partners P1 and P2 as separate processes.
//!
//! - A chain A1 (P1) → A2 (P2) → A3 (P1) → A4 (P2) whose activities undo their work with a
//!   `<compensation>` that appends the activity's name to a file: cancelled after three
//!   successes (A4 waits for a file that never comes), the file holds A3, A2, A1 in that order,
//!   each undone on the partner that did it, and the instance is `compensated`.
//! - The same chain failing at A3 (contingency -1): the instance fails, A2's compensation
//!   fails, and the instance is `compensation_failed`, naming it; A1's is never run.
//! - A2 failing unless a file exists (contingency -1): the instance fails; the operator makes
//!   the file and runs `mobiwf-controller rerun I 2`: A2 runs again in a new try and the
//!   instance succeeds.
//!
//! Each command appends to a shared log, so what ran, where and how often is read back, not
//! assumed; every wait is on a condition, with a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, paper_mesh, ran, status_activity, wait_for, xml_text,
};
use mobiwf_tests::scratch;

/// How long the tests wait for an instance to get somewhere.
const SOON: Duration = Duration::from_secs(60);

/// One activity of a test chain: its id (its name is `A<id>`), the partner that runs it (1 or
/// 2), its contingency, command and compensation.
struct Step {
    id: u64,
    partner: u64,
    contingency: i64,
    command: String,
    compensation: Option<String>,
}

/// A chain of `steps` (each waits for the one before), on partners P1 and P2.
fn chain(steps: &[Step]) -> String {
    let mut acts = String::new();
    let mut before: Option<u64> = None;
    for s in steps {
        let pre = before.map_or(String::new(), |b| {
            format!("<preconditionId>{b}</preconditionId>")
        });
        let undo = s.compensation.as_deref().map_or(String::new(), |c| {
            format!("<compensation>{}</compensation>", xml_text(c))
        });
        acts += &format!(
            "<activity id=\"{id}\"><nameActivity>A{id}</nameActivity>\
             <activityTypeId>1</activityTypeId>\
             <contingencyActivityId>{c}</contingencyActivityId>\
             <preconditions>{pre}</preconditions>\
             <command>{command}</command>{undo}</activity>",
            id = s.id,
            c = s.contingency,
            command = xml_text(&s.command),
        );
        before = Some(s.id);
    }
    let mut partitions = String::new();
    for partner in [1, 2] {
        partitions += &format!("<partition id=\"{partner}\"><partnerId>{partner}</partnerId>");
        for s in steps.iter().filter(|s| s.partner == partner) {
            partitions += &format!("<activityId>{}</activityId>", s.id);
        }
        partitions += "</partition>";
    }
    let partners: String = [1, 2]
        .iter()
        .map(|p| {
            format!(
                "<partner id=\"{p}\"><name>P{p}</name><skills><activityTypeId>1</activityTypeId>\
                 </skills></partner>"
            )
        })
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<workflow id=\"1\">\
         <description>recovery test</description><activities>{acts}</activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         <partitions>{partitions}</partitions><partners>{partners}</partners></workflow>"
    )
}

/// A command that logs `$MOBIWF_INSTANCE A<id>` and then does `then`.
fn logged(log: &Path, id: u64, then: &str) -> String {
    format!(
        "echo \"$MOBIWF_INSTANCE A{id}\" >> '{}'; {then}",
        log.display()
    )
}

/// A compensation that appends `A<id> <partner> <MOBIWF_COMPENSATION>` to `undone`, then
/// does `then`.
fn undo(undone: &Path, id: u64, then: &str) -> String {
    format!(
        "echo \"A{id} $MOBIWF_PARTNER $MOBIWF_COMPENSATION\" >> '{}'; {then}",
        undone.display()
    )
}

/// The four-step chain: A1 (P1), A2 (P2), A3 (P1), A4 (P2); A`fails` exits 1 (contingency
/// -1), A4 waits for the file `never` (at most a minute); each undoes with [`undo`], A2's
/// compensation then doing `a2_undo`.
fn four(dir: &Path, log: &Path, undone: &Path, fails: Option<u64>, a2_undo: &str) -> PathBuf {
    let never = dir.join("never");
    let steps: Vec<Step> = [(1, 1), (2, 2), (3, 1), (4, 2)]
        .into_iter()
        .map(|(id, partner)| {
            let then = if Some(id) == fails {
                "exit 1".to_owned()
            } else if id == 4 {
                format!(
                    "i=0; while [ ! -f '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done",
                    never.display()
                )
            } else {
                "true".to_owned()
            };
            let undo_then = if id == 2 { a2_undo } else { "true" };
            Step {
                id,
                partner,
                contingency: -1,
                command: logged(log, id, &then),
                compensation: Some(undo(undone, id, undo_then)),
            }
        })
        .collect();
    let file = dir.join("four.xml");
    std::fs::write(&file, chain(&steps)).unwrap();
    file
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The `what` of every history event, in order.
fn told(controller: &Controller, id: u64) -> Vec<String> {
    controller
        .history(id)
        .iter()
        .filter_map(|e| e["what"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_cancel_after_three_successes_compensates_them_in_reverse_on_their_partners() {
    let dir = scratch("compensation-cancel").unwrap();
    let (log, undone) = (dir.join("ran.log"), dir.join("undone"));
    let file = four(&dir, &log, &undone, None, "true");
    let (controller, mut p1, mut p2) = paper_mesh(&dir);
    let id = controller.submit(&file);
    wait_for("A4 to start on P2 after three successes", SOON, || {
        p1.check_alive();
        p2.check_alive();
        ran(&log, id).contains(&"A4".to_owned()).then_some(())
    });
    assert_eq!(ran(&log, id), ["A1", "A2", "A3", "A4"]);
    controller
        .cli(&["cancel", &id.to_string()], CLI_TIMEOUT)
        .expect_code(0, "cancel");

    // `wait` waits for the compensations too.
    let out = controller.wait(id, 60);
    out.expect_code(1, "wait for a cancelled, compensated instance");
    assert!(
        out.stdout.contains(&format!(
            "instance {id} compensated: cancelled by an operator"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(lines(&undone), ["A3 P1 1", "A2 P2 1", "A1 P1 1"]);
    let status = controller.status(id);
    assert_eq!(status["state"], "compensated", "{status:#}");
    assert_eq!(
        status_activity(&status, 4)["state"],
        "cancelled",
        "{status:#}"
    );
    let table = controller.cli(&["status", &id.to_string()], CLI_TIMEOUT);
    assert!(table.stdout.contains("compensated"), "{}", table.stdout);
    let events = told(&controller, id);
    let recovery: Vec<&String> = events
        .iter()
        .filter(|w| w.starts_with("compensat") || w.starts_with("instance"))
        .collect();
    assert_eq!(
        recovery,
        [
            "compensating A3 (3)",
            "compensated A3 (3)",
            "compensating A2 (2)",
            "compensated A2 (2)",
            "compensating A1 (1)",
            "compensated A1 (1)",
            "instance compensated: cancelled by an operator",
        ],
        "{events:#?}"
    );
    // Each compensation ran once, in a run directory of its own on its partner.
    assert!(
        p1.spec
            .dir
            .join(format!("runs/{id}-1-3.compensation/exit"))
            .exists()
    );
    assert!(
        p2.spec
            .dir
            .join(format!("runs/{id}-2-2.compensation/exit"))
            .exists()
    );
    // Nothing more happens: a rerun does not apply to a compensated instance.
    let out = controller.cli(&["rerun", &id.to_string(), "4"], CLI_TIMEOUT);
    out.expect_code(1, "rerun of a compensated instance");
    assert!(
        out.stderr.contains("its compensations have started"),
        "{}",
        out.stderr
    );
}

#[test]
fn controller_and_node_restarted_mid_compensation_run_none_twice() {
    let dir = scratch("compensation-restart").unwrap();
    let (log, undone, gate) = (dir.join("ran.log"), dir.join("undone"), dir.join("gate"));
    let wait_gate = format!(
        "i=0; while [ ! -f '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done",
        gate.display()
    );
    let file = four(&dir, &log, &undone, Some(4), &wait_gate);
    let (mut controller, mut p1, mut p2) = paper_mesh(&dir);
    let id = controller.submit(&file);
    wait_for("A2's compensation to start on P2", SOON, || {
        p1.check_alive();
        p2.check_alive();
        lines(&undone).contains(&"A2 P2 1".to_owned()).then_some(())
    });
    assert_eq!(controller.status(id)["state"], "compensating");
    // Both go down while A2's compensation runs (it goes on: its own process group), and
    // come back; then it ends.
    controller.kill();
    p2.kill();
    controller.restart();
    p2.restart();
    std::fs::write(&gate, "").unwrap();
    let out = controller.wait(id, 60);
    out.expect_code(1, "wait for the compensations after the restarts");
    assert_eq!(controller.status(id)["state"], "compensated");
    assert_eq!(lines(&undone), ["A3 P1 1", "A2 P2 1", "A1 P1 1"]);
    assert_eq!(ran(&log, id), ["A1", "A2", "A3", "A4"]);
}

#[test]
fn a_failure_compensates_and_a_failing_compensation_is_named() {
    let dir = scratch("compensation-fails").unwrap();
    let (log, undone) = (dir.join("ran.log"), dir.join("undone"));
    let file = four(&dir, &log, &undone, Some(3), "exit 3");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let id = controller.submit(&file);
    let out = controller.wait(id, 60);
    out.expect_code(1, "wait for a failed instance whose compensation fails");
    let status = controller.status(id);
    assert_eq!(status["state"], "compensation_failed", "{status:#}");
    let detail = status["detail"].as_str().unwrap_or_default();
    assert_eq!(
        detail,
        "the compensation of A2 (2) on P2 failed: command exited with status 3 \
         (compensating because A3 (3) on P1 failed: command exited with status 1)",
        "{status:#}"
    );
    // A2's ran (and failed); A1's never did.
    assert_eq!(lines(&undone), ["A2 P2 1"]);
    assert_eq!(ran(&log, id), ["A1", "A2", "A3"]);
    let events = told(&controller, id);
    assert!(
        events.contains(&"compensation of A2 (2) failed: command exited with status 3".into()),
        "{events:#?}"
    );
}

#[test]
fn a_rerun_of_the_failed_activity_carries_the_instance_on_to_success() {
    let dir = scratch("compensation-rerun").unwrap();
    let log = dir.join("ran.log");
    let ok = dir.join("ok");
    let steps = [
        Step {
            id: 1,
            partner: 1,
            contingency: -1,
            command: logged(&log, 1, "true"),
            compensation: None,
        },
        Step {
            id: 2,
            partner: 2,
            contingency: -1,
            command: logged(&log, 2, &format!("test -f '{}'", ok.display())),
            compensation: None,
        },
        Step {
            id: 3,
            partner: 1,
            contingency: -1,
            command: logged(&log, 3, "true"),
            compensation: None,
        },
    ];
    let file = dir.join("rerun.xml");
    std::fs::write(&file, chain(&steps)).unwrap();
    let (controller, _p1, p2) = paper_mesh(&dir);
    let id = controller.submit(&file);
    let ids = id.to_string();
    controller
        .wait(id, 60)
        .expect_code(1, "wait for the failure");
    let status = controller.status(id);
    assert_eq!(status["state"], "failed", "{status:#}");
    assert_eq!(
        status_activity(&status, 3)["state"],
        "cancelled",
        "{status:#}"
    );

    // Only the failed activity of a failed instance is rerun.
    let out = controller.cli(&["rerun", &ids, "3"], CLI_TIMEOUT);
    out.expect_code(1, "rerun of a cancelled activity");
    assert!(
        out.stderr.contains("A3 (3) of instance") && out.stderr.contains("is cancelled"),
        "{}",
        out.stderr
    );

    std::fs::write(&ok, "").unwrap();
    let out = controller.cli(&["rerun", &ids, "2"], CLI_TIMEOUT);
    out.expect_code(0, "rerun of the failed activity");
    assert!(out.stdout.contains("rerun (running)"), "{}", out.stdout);
    controller
        .wait(id, 60)
        .expect_code(0, "wait for the instance to succeed after the rerun");
    assert_eq!(ran(&log, id), ["A1", "A2", "A2", "A3"]);
    // The rerun's try had a run directory of its own (the first one's claim is kept).
    assert!(p2.spec.dir.join(format!("runs/{id}-2-2/exit")).exists());
    assert!(p2.spec.dir.join(format!("runs/{id}-2-2.1/exit")).exists());
    let events = told(&controller, id);
    assert!(
        events.contains(&"rerun of A2 (2) by an operator; waiting again with it: A3 (3)".into()),
        "{events:#?}"
    );
    assert!(events.contains(&"instance succeeded".into()), "{events:#?}");
    let out = controller.cli(&["rerun", &ids, "2"], CLI_TIMEOUT);
    out.expect_code(1, "rerun of a succeeded instance");
    assert!(
        out.stderr.contains(&format!(
            "instance {id} is succeeded: only a failed instance is rerun"
        )),
        "{}",
        out.stderr
    );
}
