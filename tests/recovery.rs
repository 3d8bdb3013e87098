//! Proves the failure rules with the real binaries and short timeouts:
//! a partner killed for good is replaced by the contingency activity on another partner with
//! the skill; a stalled partner that comes back after the contingency took over completes
//! nothing twice; an activity with contingency 0 that runs past its `timeOut` releases its
//! successors; a remote precondition that does not come in time is decided by the controller;
//! a failing command is tried again as its `<retries>` say, and when they run out its
//! contingency activity takes over. Each command appends `instance activity` to a shared log, so
//! "ran once" is counted, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_node::executor::Wrapper;
use mobiwf_tests::harness::{
    Controller, Node, gated, log_line, paper_mesh, paper_workflow_with, start_nodes,
    status_activity, wait_for, wait_gated_killed, xml_text,
};
use mobiwf_tests::scratch;

/// The failure detector's settings for these tests: a partner is suspected after 1.5 s
/// without an answer.
const FAST_DETECTOR: &[&str] = &["--probe-every", "0.25", "--suspect-after", "1.5"];

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 60;

/// Counts the lines of the log.
fn lines(log: &Path) -> BTreeMap<String, usize> {
    let mut seen = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        *seen.entry(line.to_owned()).or_insert(0) += 1;
    }
    seen
}

/// A1 (P1) → A2 (P2, contingency: A2b) → A3 (P1). A2b (activity 4, type 2) is in no
/// partition: the controller places it when A2 fails. A2 logs `2 start`, then takes
/// `a2_secs` before logging `2`.
fn contingency_workflow(dir: &Path, log: &Path, a2_secs: u32) -> PathBuf {
    let act = |id: u64, name: &str, ty: u64, contingency: i64, pre: &[u64], command: &str| {
        let pre: String = pre
            .iter()
            .map(|p| format!("<preconditionId>{p}</preconditionId>"))
            .collect();
        format!(
            "<activity id=\"{id}\"><nameActivity>{name}</nameActivity>\
             <activityTypeId>{ty}</activityTypeId>\
             <contingencyActivityId>{contingency}</contingencyActivityId>\
             <preconditions>{pre}</preconditions><command>{}</command></activity>",
            xml_text(command)
        )
    };
    let a2 = format!(
        "{}; sleep {a2_secs}; {}",
        log_line(log, "2 start"),
        log_line(log, "2")
    );
    let xml = format!(
        "<workflow id=\"90\"><description>contingency</description><activities>{}{}{}{}</activities>\
         <activityTypes><activityType id=\"1\"/><activityType id=\"2\"/></activityTypes>\
         <partitions>\
           <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId><activityId>3</activityId></partition>\
           <partition id=\"2\"><partnerId>2</partnerId><activityId>2</activityId></partition>\
         </partitions>\
         <partners>\
           <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
           <partner id=\"2\"><name>P2</name><skills><activityTypeId>2</activityTypeId></skills></partner>\
         </partners></workflow>",
        act(1, "A1", 1, -1, &[], &log_line(log, "1")),
        act(2, "A2", 2, 4, &[1], &a2),
        act(3, "A3", 1, -1, &[2], &log_line(log, "3")),
        act(4, "A2b", 2, -1, &[], &log_line(log, "4")),
    );
    let file = dir.join("contingency.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

/// A controller with the fast failure detector and nodes P1 (skill 1), P2 and P3 (skill 2).
fn three_partners(dir: &Path) -> (Controller, Node, Node, Node) {
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        FAST_DETECTOR,
    );
    let mut nodes =
        start_nodes(dir, &controller, &[("P1", "1"), ("P2", "2"), ("P3", "2")]).into_iter();
    let (Some(p1), Some(p2), Some(p3)) = (nodes.next(), nodes.next(), nodes.next()) else {
        unreachable!("three nodes were started")
    };
    (controller, p1, p2, p3)
}

/// Kills the commands a killed node left running (their wrappers lead their own process
/// groups, recorded in `runs/*/claim/pid`), so that nothing outlives the test.
fn kill_orphans(runs: &Path) {
    for entry in std::fs::read_dir(runs).into_iter().flatten().flatten() {
        let dir = entry.path();
        if dir.join("exit").exists() {
            continue;
        }
        // The claim records the wrapper's pid and start time: a pid another process got since
        // is not taken for it, and its group is left alone.
        let claim = std::fs::read_to_string(dir.join("claim").join("pid")).unwrap_or_default();
        if let Some(wrapper) = Wrapper::parse(&claim).filter(Wrapper::alive) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", wrapper.pid)])
                .status();
        }
    }
}

fn history(controller: &Controller, id: u64) -> String {
    let out = controller.cli(&["history", &id.to_string()], Duration::from_secs(10));
    out.expect_code(0, "history");
    out.stdout
}

/// Checks what both contingency tests expect once the instance ended: A2 failed for the
/// given reason and was replaced by A2b on P3; A3 ran after A2b; each ran exactly once.
fn assert_replaced(controller: &Controller, id: u64, log: &Path, reason: &str) {
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    let a2 = status_activity(&status, 2);
    assert_eq!(a2["state"], "failed", "{status:#}");
    assert!(
        a2["detail"].as_str().unwrap_or("").contains(reason),
        "A2's reason should say {reason:?}:\n{status:#}"
    );
    assert_eq!(a2["replaced_by"], 4, "{status:#}");
    let a2b = status_activity(&status, 4);
    assert_eq!(a2b["state"], "succeeded", "{status:#}");
    assert_eq!(
        a2b["node"], "P3",
        "A2b runs on the other partner with the skill"
    );
    assert_eq!(a2b["stands_for"], 2, "{status:#}");
    assert_eq!(
        status_activity(&status, 3)["state"],
        "succeeded",
        "{status:#}"
    );
    let seen = lines(log);
    for line in [format!("{id} 1"), format!("{id} 3"), format!("{id} 4")] {
        assert_eq!(seen.get(&line), Some(&1), "{line:?} once in {seen:?}");
    }
    let history = history(controller, id);
    eprintln!("history of instance {id}:\n{history}");
    assert!(
        history.contains("contingency activity A2b (4) runs on P3 in place of A2 (2)"),
        "history:\n{history}"
    );
}

#[test]
fn a_partner_killed_for_good_is_replaced_by_the_contingency_on_another_partner() {
    let dir = scratch("recovery-killed").unwrap();
    let log = dir.join("log");
    let (controller, _p1, mut p2, _p3) = three_partners(&dir);
    let id = controller.submit(&contingency_workflow(&dir, &log, 20));
    wait_for("A2 to start on P2", Duration::from_secs(30), || {
        lines(&log)
            .contains_key(&format!("{id} 2 start"))
            .then_some(())
    });
    p2.kill();
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "wait for the instance");
    assert_replaced(&controller, id, &log, "P2 stopped answering");
    let status = controller.status(id);
    let given_up = status["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == 2)
        .cloned()
        .unwrap();
    assert!(
        given_up["abandoned"].as_str().is_some(),
        "P2's partition is given up:\n{status:#}"
    );
    kill_orphans(&dir.join("p2").join("runs"));
}

#[test]
fn a_stalled_partner_that_comes_back_after_the_contingency_took_over_completes_nothing_twice() {
    let dir = scratch("recovery-stalled").unwrap();
    let log = dir.join("log");
    let (controller, p1, p2, _p3) = three_partners(&dir);
    // A2 takes 3 s: it finishes while P2 is stopped, so P2 has a (late) success to tell.
    let id = controller.submit(&contingency_workflow(&dir, &log, 3));
    wait_for("A2 to start on P2", Duration::from_secs(30), || {
        lines(&log)
            .contains_key(&format!("{id} 2 start"))
            .then_some(())
    });
    p2.signal("STOP");
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "wait for the instance");
    assert_replaced(&controller, id, &log, "P2 stopped answering");
    wait_for("A2's own command to end", Duration::from_secs(30), || {
        lines(&log).contains_key(&format!("{id} 2")).then_some(())
    });
    p2.signal("CONT");
    // P2 wakes up with A2 finished (or withdrawn): its partition result reaches the
    // controller, which keeps it for the record only.
    wait_for(
        "P2's late partition result",
        Duration::from_secs(30),
        || {
            history(&controller, id)
                .contains("came after it was given up")
                .then_some(())
        },
    );
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    assert_eq!(status_activity(&status, 2)["state"], "failed", "{status:#}");
    // Nothing ran twice: A3 ran once, after A2b; P2's late word about A2 changed nothing.
    let seen = lines(&log);
    assert_eq!(seen.get(&format!("{id} 3")), Some(&1), "{seen:?}");
    assert_eq!(seen.get(&format!("{id} 4")), Some(&1), "{seen:?}");
    drop(p1);
}

#[test]
fn an_activity_with_contingency_zero_that_runs_past_its_time_out_releases_its_successors() {
    let dir = scratch("recovery-release").unwrap();
    let log = dir.join("log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    // A2 (17, on P1, contingency 0) waits for a gate that never opens, far past its timeOut
    // of 1 s.
    let never = dir.join("never");
    let xml = paper_workflow_with(|id| {
        let command = if id == 17 {
            gated(&log, "17", &never)
        } else {
            log_line(&log, &id.to_string())
        };
        format!("<command>{}</command>", xml_text(&command))
    })
    .replacen(
        "<contingencyActivityId>0</contingencyActivityId>\n      <timeOut>0</timeOut>",
        "<contingencyActivityId>0</contingencyActivityId>\n      <timeOut>1</timeOut>",
        1,
    );
    assert!(xml.contains("<timeOut>1</timeOut>"), "A2 got its timeOut");
    let file = dir.join("release.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "a released failure does not fail the instance");
    let status = controller.status(id);
    let a2 = status_activity(&status, 17);
    assert_eq!(a2["state"], "failed", "{status:#}");
    assert!(
        a2["detail"]
            .as_str()
            .unwrap_or("")
            .contains("ran longer than its timeOut of 1 s"),
        "{status:#}"
    );
    for succ in [18, 19, 20] {
        assert_eq!(
            status_activity(&status, succ)["state"],
            "succeeded",
            "{status:#}"
        );
    }
    // A2's command was killed: its process is gone (it would wait for its gate forever).
    wait_gated_killed(&log, id, "17", &never, Duration::from_secs(30));
    let seen = lines(&log);
    assert_eq!(seen.get(&format!("{id} 17 start")), Some(&1), "{seen:?}");
}

#[test]
fn a_remote_precondition_that_does_not_come_in_time_is_decided_by_the_controller() {
    let dir = scratch("recovery-overdue").unwrap();
    let (controller, p1, _p2) = paper_mesh(&dir);
    // A2 (17, on P1, contingency 0) is manual with a timeOut of 3 s: A4 (19, on P2) waits at
    // most 3 s for it. P1 is stalled before that, so only P2's word reaches the controller.
    let xml = paper_workflow_with(|id| {
        if id == 17 {
            "<kind>manual</kind>".to_owned()
        } else {
            String::new()
        }
    })
    .replacen(
        "<contingencyActivityId>0</contingencyActivityId>\n      <timeOut>0</timeOut>",
        "<contingencyActivityId>0</contingencyActivityId>\n      <timeOut>3</timeOut>",
        1,
    );
    let file = dir.join("overdue.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    wait_for("A2 on P1's worklist", Duration::from_secs(30), || {
        let list = p1.worklist();
        list.as_array()
            .is_some_and(|items| items.iter().any(|i| i["activity"] == 17))
            .then_some(())
    });
    p1.signal("STOP");
    wait_for(
        "the controller to decide A2 failed",
        Duration::from_secs(30),
        || {
            let a2 = status_activity(&controller.status(id), 17).clone();
            (a2["state"] == "failed").then_some(a2)
        },
    );
    p1.signal("CONT");
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "A2's release lets the rest run");
    let status = controller.status(id);
    let a2 = status_activity(&status, 17);
    assert!(
        a2["detail"]
            .as_str()
            .unwrap_or("")
            .contains("waited more than 3 s (its precondition timeOut) for A2 (17)"),
        "{status:#}"
    );
    for succ in [18, 19, 20] {
        assert_eq!(
            status_activity(&status, succ)["state"],
            "succeeded",
            "{status:#}"
        );
    }
}

#[test]
fn a_failing_command_is_tried_again_as_its_retries_say() {
    let dir = scratch("recovery-retries").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    // A1 (16) fails on its first two tries and succeeds on the third; it may try 3 more times.
    let tries = dir.join("tries");
    let command = format!(
        "echo try >> '{0}'; [ $(wc -l < '{0}') -ge 3 ]",
        tries.display()
    );
    let xml = paper_workflow_with(|id| {
        if id == 16 {
            format!(
                "<command>{}</command><retries><count>3</count><wait>1</wait></retries>",
                xml_text(&command)
            )
        } else {
            String::new()
        }
    });
    let file = dir.join("retries.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "the third try succeeds");
    let status = controller.status(id);
    let a1 = status_activity(&status, 16);
    assert_eq!(a1["state"], "succeeded", "{status:#}");
    assert_eq!(a1["retried"], 2, "{status:#}");
    assert_eq!(
        std::fs::read_to_string(&tries).unwrap().lines().count(),
        3,
        "three tries, no more"
    );
}

#[test]
fn retries_that_run_out_leave_the_failure_to_the_contingency_activity() {
    let dir = scratch("recovery-retries-out").unwrap();
    let log = dir.join("log");
    let (controller, _p1, _p2, _p3) = three_partners(&dir);
    // A2 fails on every try: its two retries run out, then its contingency A2b takes over.
    let file = contingency_workflow(&dir, &log, 0);
    let a2 = format!(
        "{}; sleep 0; {}",
        log_line(&log, "2 start"),
        log_line(&log, "2")
    );
    let failing = format!("{}; exit 3", log_line(&log, "2 try"));
    let xml = std::fs::read_to_string(&file).unwrap().replace(
        &format!("<command>{}</command>", xml_text(&a2)),
        &format!(
            "<command>{}</command><retries><count>2</count><wait>1</wait></retries>",
            xml_text(&failing)
        ),
    );
    assert!(xml.contains("<retries>"), "A2 got its retries:\n{xml}");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "the contingency activity completes the instance");
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    let a2 = status_activity(&status, 2);
    assert_eq!(a2["state"], "failed", "{status:#}");
    assert_eq!(a2["retried"], 2, "both retries were used: {status:#}");
    assert_eq!(a2["replaced_by"], 4, "{status:#}");
    assert_eq!(
        status_activity(&status, 4)["state"],
        "succeeded",
        "{status:#}"
    );
    assert_eq!(
        status_activity(&status, 3)["state"],
        "succeeded",
        "{status:#}"
    );
    let seen = lines(&log);
    assert_eq!(
        seen.get(&format!("{id} 2 try")),
        Some(&3),
        "three tries: {seen:?}"
    );
    for line in [format!("{id} 1"), format!("{id} 3"), format!("{id} 4")] {
        assert_eq!(seen.get(&line), Some(&1), "{line:?} once in {seen:?}");
    }
}
