//! Proves dependency rules and task states with the real binaries: a rule across
//! partners runs its activity when one of its terms holds (`or(1→FAILED, 2→SUCCEEDED)` once
//! 1 fails, while 2 still runs), cancels it when it can no longer hold (`and(...)` once 1
//! succeeded), a term on another partner's `RUNNING` releases its activity while that one
//! still runs, and a manual activity waits `ready` on its node's worklist, as `status` and
//! `history` show. Commands append `instance what` to a shared log, so order and counts are
//! read from what ran, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{
    Controller, Node, gated, log_line, paper_mesh, ran, status_activity, wait_for, xml_text,
};
use mobiwf_tests::scratch;

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 60;

/// 1 (P1) runs `first`; 2 (P2) logs `2 start`, waits for the file `go`, logs `2`; 3 (P2)
/// depends on `rule` and logs `3`; 4 (P1) depends on 2→RUNNING and logs `4`; 5 (P1) is
/// manual and depends on 1→FAILED.
fn rules_workflow(dir: &Path, log: &Path, first: &str, rule: &str) -> PathBuf {
    let go = dir.join("go");
    let act = |id: u64, ty: u64, depends: &str, body: &str| {
        let depends = if depends.is_empty() {
            String::new()
        } else {
            format!("<depends>{depends}</depends>")
        };
        format!(
            "<activity id=\"{id}\"><nameActivity>A{id}</nameActivity>\
             <activityTypeId>{ty}</activityTypeId><contingencyActivityId>0</contingencyActivityId>\
             <preconditions/>{depends}{body}</activity>"
        )
    };
    let command = |c: &str| format!("<command>{}</command>", xml_text(c));
    let survey = gated(log, "2", &go);
    let xml = format!(
        "<workflow id=\"70\"><description>rules</description><activities>{}{}{}{}{}</activities>\
         <activityTypes><activityType id=\"1\"/><activityType id=\"2\"/></activityTypes>\
         <partitions>\
           <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId><activityId>4</activityId><activityId>5</activityId></partition>\
           <partition id=\"2\"><partnerId>2</partnerId><activityId>2</activityId><activityId>3</activityId></partition>\
         </partitions>\
         <partners>\
           <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
           <partner id=\"2\"><name>P2</name><skills><activityTypeId>2</activityTypeId></skills></partner>\
         </partners></workflow>",
        act(
            1,
            1,
            "",
            &command(&format!("{}; {first}", log_line(log, "1")))
        ),
        act(2, 2, "", &command(&survey)),
        act(3, 2, rule, &command(&log_line(log, "3"))),
        act(
            4,
            1,
            r#"<term activity="2" state="RUNNING"/>"#,
            &command(&log_line(log, "4"))
        ),
        act(
            5,
            1,
            r#"<term activity="1" state="failed"/>"#,
            "<kind>manual</kind>"
        ),
    );
    let file = dir.join("rules.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

fn state_of(controller: &Controller, id: u64, activity_id: u64) -> String {
    status_activity(&controller.status(id), activity_id)["state"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The texts of the history's events about `activity`.
fn history_of(controller: &Controller, id: u64, activity_id: u64) -> Vec<String> {
    controller
        .history(id)
        .iter()
        .filter(|e| e["activity"].as_u64() == Some(activity_id))
        .map(|e| e["what"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn mesh(dir: &Path) -> (Controller, Node, Node) {
    paper_mesh(dir)
}

#[test]
fn an_or_rule_runs_on_a_failure_and_a_running_term_releases_its_activity_early() {
    let dir = scratch("rules-or").unwrap();
    let log = dir.join("ran.log");
    let (controller, p1, _p2) = mesh(&dir);
    let rule =
        r#"<or><term activity="1" state="FAILED"/><term activity="2" state="SUCCEEDED"/></or>"#;
    let file = rules_workflow(&dir, &log, "exit 1", rule);
    let id = controller.submit(&file);

    // 1 fails: 3 (on the other partner) runs although 2 is still running; 4 runs because 2
    // is running; 5 waits on P1's worklist, ready.
    wait_for("3 and 4 ran while 2 runs", Duration::from_secs(30), || {
        let lines = ran(&log, id);
        (lines.contains(&"3".to_owned()) && lines.contains(&"4".to_owned())).then_some(())
    });
    let lines = ran(&log, id);
    assert!(
        !lines.contains(&"2".to_owned()),
        "2 ended too early: {lines:?}"
    );
    wait_for("5 ready at the controller", Duration::from_secs(30), || {
        (state_of(&controller, id, 5) == "ready").then_some(())
    });
    assert!(
        history_of(&controller, id, 5)
            .iter()
            .any(|t| t.contains("A5 (5) ready")),
        "{:?}",
        history_of(&controller, id, 5)
    );
    let worklist = p1.worklist();
    assert!(
        worklist.to_string().contains("\"activity\":5"),
        "5 is on P1's worklist: {worklist}"
    );
    p1.cli(&["complete", &id.to_string(), "5"])
        .expect_code(0, "complete 5");
    std::fs::write(dir.join("go"), "").unwrap();
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    for (a, state) in [
        (1, "failed"),
        (2, "succeeded"),
        (3, "succeeded"),
        (4, "succeeded"),
        (5, "succeeded"),
    ] {
        assert_eq!(
            status_activity(&status, a)["state"],
            state,
            "activity {a}: {status:#}"
        );
    }
    // Each ran once.
    let mut lines = ran(&log, id);
    lines.sort();
    assert_eq!(lines, ["1", "2", "2 start", "3", "4"]);
}

#[test]
fn an_and_rule_that_can_no_longer_hold_cancels_its_activity() {
    let dir = scratch("rules-and").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = mesh(&dir);
    let rule =
        r#"<and><term activity="1" state="FAILED"/><term activity="2" state="SUCCEEDED"/></and>"#;
    let file = rules_workflow(&dir, &log, "true", rule);
    let id = controller.submit(&file);
    // 1 succeeded: 3 and 5 (waiting for 1's failure) can never run.
    std::fs::write(dir.join("go"), "").unwrap();
    controller
        .wait(id, WAIT_SECS)
        .expect_code(0, "a cancelled activity does not fail the instance");
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    let three = status_activity(&status, 3);
    assert_eq!(three["state"], "cancelled", "{status:#}");
    assert!(
        three["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("and(1→FAILED, 2→SUCCEEDED) can no longer hold"),
        "{three:#}"
    );
    assert_eq!(
        status_activity(&status, 5)["state"],
        "cancelled",
        "{status:#}"
    );
    assert!(!ran(&log, id).contains(&"3".to_owned()));
    assert!(
        history_of(&controller, id, 3)
            .iter()
            .any(|t| t.contains("can no longer hold")),
        "{:?}",
        history_of(&controller, id, 3)
    );
}
