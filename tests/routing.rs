//! Proves activity kinds and routing with the real binaries: a command's
//! completion flag (`$MOBIWF_FLAG_FILE`) takes one route and the branch not taken is skipped
//! on the other partner while an or-merge goes on; a person's `complete --flag` does the same;
//! a 2-of-3 vote merge starts on the second success while the third still runs; a completion
//! activity ends the instance and cancels what still runs elsewhere. Commands append
//! `instance what` to a shared log, so what ran is read, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{
    Controller, GATE_LIMIT_TICKS, gated, log_line, paper_mesh, ran, wait_for, wait_gated_killed,
    xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 60;

/// An activity: id, on P1 (type 1) or P2 (type 2), preconditions, more XML.
struct Act {
    id: u64,
    on_p2: bool,
    pre: &'static [u64],
    extra: String,
}

fn act(id: u64, on_p2: bool, pre: &'static [u64], extra: impl Into<String>) -> Act {
    Act {
        id,
        on_p2,
        pre,
        extra: extra.into(),
    }
}

fn command(c: &str) -> String {
    format!("<command>{}</command>", xml_text(c))
}

/// A workflow of `acts` on the paper mesh's P1 and P2, written to `dir/name.xml`.
fn workflow(dir: &Path, name: &str, acts: &[Act]) -> PathBuf {
    let mut activities = String::new();
    for a in acts {
        let pre: String = a
            .pre
            .iter()
            .map(|p| format!("<preconditionId>{p}</preconditionId>"))
            .collect();
        activities += &format!(
            "<activity id=\"{}\"><nameActivity>A{}</nameActivity>\
             <activityTypeId>{}</activityTypeId><contingencyActivityId>0</contingencyActivityId>\
             <preconditions>{pre}</preconditions>{}</activity>",
            a.id,
            a.id,
            if a.on_p2 { 2 } else { 1 },
            a.extra
        );
    }
    let on = |p2: bool| -> String {
        acts.iter()
            .filter(|a| a.on_p2 == p2)
            .map(|a| format!("<activityId>{}</activityId>", a.id))
            .collect()
    };
    let xml = format!(
        "<workflow id=\"80\"><description>{name}</description><activities>{activities}</activities>\
         <activityTypes><activityType id=\"1\"/><activityType id=\"2\"/></activityTypes>\
         <partitions>\
           <partition id=\"1\"><partnerId>1</partnerId>{}</partition>\
           <partition id=\"2\"><partnerId>2</partnerId>{}</partition>\
         </partitions>\
         <partners>\
           <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
           <partner id=\"2\"><name>P2</name><skills><activityTypeId>2</activityTypeId></skills></partner>\
         </partners></workflow>",
        on(false),
        on(true)
    );
    let file = dir.join(format!("{name}.xml"));
    std::fs::write(&file, xml).unwrap();
    file
}

fn states(status: &Value) -> Vec<(u64, String)> {
    status["activities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["id"].as_u64().unwrap(),
                a["state"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn expect_states(controller: &Controller, id: u64, expected: &[(u64, &str)]) {
    let status = controller.status(id);
    let got = states(&status);
    let want: Vec<(u64, String)> = expected
        .iter()
        .map(|(a, s)| (*a, (*s).to_owned()))
        .collect();
    assert_eq!(got, want, "{status:#}");
}

fn history_texts(controller: &Controller, id: u64) -> Vec<String> {
    controller
        .history(id)
        .iter()
        .map(|e| e["what"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// 1 on P1 decides (`decide` is its extra: a command writing a flag, or manual); routes
/// `left` → 2 (P1) and `right` → 3 (P2); 4 (P2) is an or-merge of 2 and 3; 5 (P2) follows 3.
fn branches(dir: &Path, log: &Path, decide: &str) -> PathBuf {
    let routes = r#"<routes><route flag="left"><to>2</to></route><route flag="right"><to>3</to></route></routes>"#;
    workflow(
        dir,
        "branches",
        &[
            act(1, false, &[], format!("{decide}{routes}")),
            act(2, false, &[1], command(&log_line(log, "2"))),
            act(3, true, &[1], command(&log_line(log, "3"))),
            act(
                4,
                true,
                &[2, 3],
                format!("<merge>or</merge>{}", command(&log_line(log, "4"))),
            ),
            act(5, true, &[3], command(&log_line(log, "5"))),
        ],
    )
}

#[test]
fn a_command_s_flag_takes_one_branch_and_skips_the_other_across_partners() {
    let dir = scratch("routing-flag").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let decide = command("echo left > \"$MOBIWF_FLAG_FILE\"");
    let id = controller.submit(&branches(&dir, &log, &decide));
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    expect_states(
        &controller,
        id,
        &[
            (1, "succeeded"),
            (2, "succeeded"),
            (3, "skipped"),
            (4, "succeeded"),
            (5, "skipped"),
        ],
    );
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded");
    assert_eq!(status["activities"][0]["flag"], "left", "{status:#}");
    let table = controller.cli(&["status", &id.to_string()], Duration::from_secs(30));
    assert!(table.stdout.contains("flag left"), "{}", table.stdout);
    assert!(
        table.stdout.contains("routed its flag elsewhere"),
        "{}",
        table.stdout
    );
    let mut lines = ran(&log, id);
    lines.sort();
    assert_eq!(lines, ["2", "4"]);
    let history = history_texts(&controller, id);
    assert!(
        history
            .iter()
            .any(|t| t.contains("A1 (1) succeeded with flag left")),
        "{history:#?}"
    );
    assert!(
        history.iter().any(|t| t.contains("A3 (3) skipped")),
        "{history:#?}"
    );
}

#[test]
fn a_person_s_flag_routes_the_work() {
    let dir = scratch("routing-person").unwrap();
    let log = dir.join("ran.log");
    let (controller, p1, _p2) = paper_mesh(&dir);
    let id = controller.submit(&branches(&dir, &log, "<kind>manual</kind>"));
    wait_for("1 ready on P1's worklist", Duration::from_secs(30), || {
        p1.worklist()
            .to_string()
            .contains("\"activity\":1")
            .then_some(())
    });
    // Not a flag: refused, nothing changes.
    let bad = p1.cli(&["complete", &id.to_string(), "1", "--flag", "to the right"]);
    bad.expect_code(1, "a flag that is not one");
    assert!(
        bad.stderr.contains("flag") && bad.stderr.contains("400 Bad Request"),
        "{bad:?}"
    );
    p1.cli(&["complete", &id.to_string(), "1", "--flag", "right"])
        .expect_code(0, "complete --flag right");
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    expect_states(
        &controller,
        id,
        &[
            (1, "succeeded"),
            (2, "skipped"),
            (3, "succeeded"),
            (4, "succeeded"),
            (5, "succeeded"),
        ],
    );
    let mut lines = ran(&log, id);
    lines.sort();
    assert_eq!(lines, ["3", "4", "5"]);
}

#[test]
fn a_vote_merge_starts_on_two_successes_of_three() {
    let dir = scratch("routing-vote").unwrap();
    let log = dir.join("ran.log");
    let gate = dir.join("gate");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let file = workflow(
        &dir,
        "vote",
        &[
            act(1, false, &[], command(&log_line(&log, "1"))),
            act(2, true, &[], command(&log_line(&log, "2"))),
            act(3, true, &[], command(&gated(&log, "3", &gate))),
            act(
                4,
                true,
                &[1, 2, 3],
                format!(
                    "<merge votes=\"2\">vote</merge>{}",
                    command(&log_line(&log, "4"))
                ),
            ),
        ],
    );
    let id = controller.submit(&file);
    wait_for("4 ran on two votes", Duration::from_secs(30), || {
        ran(&log, id).contains(&"4".to_owned()).then_some(())
    });
    assert!(
        !ran(&log, id).contains(&"3".to_owned()),
        "3 still runs: {:?}",
        ran(&log, id)
    );
    std::fs::write(&gate, "").unwrap();
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    expect_states(
        &controller,
        id,
        &[
            (1, "succeeded"),
            (2, "succeeded"),
            (3, "succeeded"),
            (4, "succeeded"),
        ],
    );
    assert_eq!(
        ran(&log, id).iter().filter(|l| *l == "4").count(),
        1,
        "4 ran once"
    );
}

#[test]
fn a_completion_activity_ends_the_instance_and_cancels_what_still_runs() {
    let dir = scratch("routing-completion").unwrap();
    let log = dir.join("ran.log");
    let gate = dir.join("gate-1");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let file = workflow(
        &dir,
        "completion",
        &[
            act(1, false, &[], command(&gated(&log, "1", &gate))),
            act(2, false, &[1], command(&log_line(&log, "2"))),
            act(
                3,
                true,
                &[],
                format!(
                    "<completion>true</completion>{}",
                    command(&format!(
                        "{}; {}",
                        started_first(&log, "1"),
                        log_line(&log, "3")
                    ))
                ),
            ),
            act(4, true, &[], "<kind>dummy</kind>"),
        ],
    );
    let id = controller.submit(&file);
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    let got = states(&status);
    assert_eq!(got[2], (3, "succeeded".to_owned()));
    assert_eq!(got[0], (1, "cancelled".to_owned()), "{status:#}");
    assert_eq!(got[1], (2, "cancelled".to_owned()), "{status:#}");
    let history = history_texts(&controller, id);
    assert!(
        history
            .iter()
            .any(|t| t.contains("instance complete: completion activity A3 (3) succeeded")),
        "{history:#?}"
    );
    // 1 was running when 3 ended the instance (3 waited for its start): its command was
    // killed (its gate never opens: only the kill ends it); 2, which waited for it, never ran.
    wait_gated_killed(&log, id, "1", &gate, Duration::from_secs(30));
    let lines = ran(&log, id);
    assert_eq!(
        lines.iter().filter(|l| *l == "1 start").count(),
        1,
        "{lines:?}"
    );
    assert!(!lines.contains(&"2".to_owned()), "{lines:?}");
    let status = controller.status(id);
    let two = status["activities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == 2)
        .unwrap();
    assert!(two["started_ms"].is_null(), "2 never started: {status:#}");
}

/// A command line that waits until `what` of the same instance logged its start (at most
/// [`GATE_LIMIT_TICKS`]).
fn started_first(log: &Path, what: &str) -> String {
    format!(
        "i=0; until grep -qx \"$MOBIWF_INSTANCE {what} start\" '{}' 2>/dev/null \
         || [ $i -ge {GATE_LIMIT_TICKS} ]; do sleep 0.05; i=$((i+1)); done",
        log.display()
    )
}
