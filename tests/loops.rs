//! Proves loops with the real binaries: a loop across two partners runs its body three
//! times on a flag its end's command writes from a round counter kept as instance data (each
//! pass reads the round the last one wrote, carried peer to peer by the new pass), then exits
//! and what follows runs once; a loop that asks for more passes than its `max` fails its end
//! and its contingency activity takes over; a manual activity's second pass shows as `#2` on
//! the node's worklist; the data keeps each pass's writes apart. Commands append `instance
//! what` to a shared log, so what ran is read, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{log_line, paper_mesh, ran, wait_for, xml_text};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 60;

/// The round the last pass wrote, plus one, written back; the flag `again` below `rounds`,
/// else `done`.
fn review(log: &Path, rounds: u32) -> String {
    format!(
        "r=$(cat \"$MOBIWF_DATA_DIR/round\"); r=$((r+1)); printf %s $r > \"$MOBIWF_DATA_DIR/round\"; \
         {}; if [ $r -lt {rounds} ]; then echo again; else echo done; fi > \"$MOBIWF_FLAG_FILE\"",
        log_line(log, "3 $r")
    )
}

/// 1 and 2 (the loop's head) on P1; 3 (its end: back to 2 while `again`, at most `max`
/// passes, contingency `contingency`) and 4 on P2; with contingency 5, 5 is in no partition.
/// `head` is what 2 is (its command, or manual); `end` 3's command.
fn looping(dir: &Path, log: &Path, head: &str, end: &str, max: u32, contingency: i64) -> PathBuf {
    let act = |id: u64, ty: u64, contingency: i64, pre: &str, extra: &str| {
        format!(
            "<activity id=\"{id}\"><nameActivity>A{id}</nameActivity>\
             <activityTypeId>{ty}</activityTypeId>\
             <contingencyActivityId>{contingency}</contingencyActivityId>\
             <preconditions>{pre}</preconditions>{extra}</activity>"
        )
    };
    let command = |c: &str| format!("<command>{}</command>", xml_text(c));
    let pre = |p: u64| format!("<preconditionId>{p}</preconditionId>");
    let xml = format!(
        "<workflow id=\"81\"><description>loop</description><activities>{}{}{}{}{}</activities>\
         <activityTypes><activityType id=\"1\"/><activityType id=\"2\"/></activityTypes>\
         <partitions>\
           <partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId></partition>\
           <partition id=\"2\"><partnerId>2</partnerId><activityId>3</activityId><activityId>4</activityId></partition>\
         </partitions>\
         <partners>\
           <partner id=\"1\"><name>P1</name><skills><activityTypeId>1</activityTypeId></skills></partner>\
           <partner id=\"2\"><name>P2</name><skills><activityTypeId>2</activityTypeId></skills></partner>\
         </partners>\
         <data><value name=\"round\" type=\"number\" default=\"0\"/></data></workflow>",
        act(1, 1, 0, "", &command(&log_line(log, "1"))),
        act(2, 1, 0, &pre(1), &format!("{head}<reads>round</reads>")),
        act(
            3,
            2,
            contingency,
            &pre(2),
            &format!(
                "<loop to=\"2\" while=\"again\" max=\"{max}\"/>{}<reads>round</reads><writes>round</writes>",
                command(end)
            ),
        ),
        act(4, 2, 0, &pre(3), &command(&log_line(log, "4"))),
        if contingency == 5 {
            act(5, 1, 0, "", &command(&log_line(log, "5")))
        } else {
            String::new()
        },
    );
    let file = dir.join("loop.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

fn activity(status: &Value, id: u64) -> Value {
    status["activities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no activity {id}: {status:#}"))
}

fn history_texts(controller: &mobiwf_tests::harness::Controller, id: u64) -> Vec<String> {
    controller
        .history(id)
        .iter()
        .map(|e| e["what"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_loop_across_two_partners_runs_three_passes_then_exits() {
    let dir = scratch("loops-three").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let head = format!(
        "<command>{}</command>",
        xml_text(&log_line(&log, "2 $(cat \"$MOBIWF_DATA_DIR/round\")"))
    );
    let file = looping(&dir, &log, &head, &review(&log, 3), 5, -1);
    let id = controller.submit(&file);
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    // Each pass read the round the one before wrote, on the other partner.
    assert_eq!(
        ran(&log, id),
        ["1", "2 0", "3 1", "2 1", "3 2", "2 2", "3 3", "4"]
    );
    let status = controller.status(id);
    assert_eq!(status["state"], "succeeded", "{status:#}");
    for (a, pass) in [(1, None), (2, Some(3)), (3, Some(3)), (4, None)] {
        let view = activity(&status, a);
        assert_eq!(view["state"], "succeeded", "{status:#}");
        assert_eq!(view["pass"].as_u64(), pass, "activity {a}: {status:#}");
    }
    assert_eq!(activity(&status, 3)["flag"], "done");
    let history = history_texts(&controller, id);
    for seen in [
        "A2 (2#2) waits again: its loop runs pass 2",
        "A3 (3#3) succeeded with flag done",
    ] {
        assert!(
            history.iter().any(|t| t.contains(seen)),
            "{seen}: {history:#?}"
        );
    }
    let table = controller.cli(&["status", &id.to_string()], Duration::from_secs(30));
    assert!(table.stdout.contains("3#3"), "{}", table.stdout);
    data_kept_by_pass(&controller, id);
}

/// The data of the three-pass loop: the last pass's write of `round` as its value, and each
/// earlier pass's write kept apart, in JSON and in the table.
fn data_kept_by_pass(controller: &mobiwf_tests::harness::Controller, id: u64) {
    let out = controller.cli(
        &["status", &id.to_string(), "--data", "--json"],
        Duration::from_secs(30),
    );
    out.expect_code(0, "status --data --json");
    let data: Value = serde_json::from_str(&out.stdout).unwrap();
    let rounds = |list: &str| -> Vec<(String, Option<u64>, u64)> {
        data[list]
            .as_array()
            .unwrap_or_else(|| panic!("no {list} in {data:#}"))
            .iter()
            .filter(|d| d["name"] == "round")
            .map(|d| {
                let value = d["value"]["number"].as_str().unwrap_or_default().to_owned();
                (
                    value,
                    d["pass"].as_u64(),
                    d["by"].as_u64().unwrap_or_default(),
                )
            })
            .collect()
    };
    assert_eq!(rounds("data"), [("3".to_owned(), Some(3), 3)], "{data:#}");
    // The first pass is left out of the bytes, as before loops.
    assert_eq!(
        rounds("earlier"),
        [("1".to_owned(), None, 3), ("2".to_owned(), Some(2), 3)],
        "{data:#}"
    );
    let table = controller.cli(
        &["status", &id.to_string(), "--data"],
        Duration::from_secs(30),
    );
    table.expect_code(0, "status --data");
    let lines: Vec<&str> = table.stdout.lines().collect();
    let at = |text: &str| {
        lines
            .iter()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text}: {}", table.stdout))
    };
    let apart = at("written by earlier passes of loops: 2 value(s)");
    assert!(at("A3 (3#3)") < apart, "{}", table.stdout);
    assert!(apart < at("A3 (3#2)"), "{}", table.stdout);
    assert!(
        lines[apart..].iter().any(|l| l.contains("A3 (3) ")),
        "{}",
        table.stdout
    );
}

#[test]
fn a_loop_past_its_max_fails_its_end_and_the_contingency_takes_over() {
    let dir = scratch("loops-max").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let head = format!("<command>{}</command>", xml_text(&log_line(&log, "2")));
    let always = format!(
        "{}; echo again > \"$MOBIWF_FLAG_FILE\"",
        log_line(&log, "3")
    );
    let id = controller.submit(&looping(&dir, &log, &head, &always, 2, 5));
    let _ = controller.wait(id, WAIT_SECS);
    let status = controller.status(id);
    let end = activity(&status, 3);
    assert_eq!(end["state"], "failed", "{status:#}");
    assert_eq!(end["detail"], "loop ran its 2 passes", "{status:#}");
    assert_eq!(end["replaced_by"], 5, "{status:#}");
    assert_eq!(activity(&status, 5)["state"], "succeeded", "{status:#}");
    assert_eq!(activity(&status, 4)["state"], "succeeded", "{status:#}");
    assert_eq!(status["state"], "succeeded", "{status:#}");
    assert_eq!(ran(&log, id), ["1", "2", "3", "2", "3", "5", "4"]);
}

#[test]
fn a_manual_activity_s_second_pass_shows_on_the_worklist() {
    let dir = scratch("loops-manual").unwrap();
    let log = dir.join("ran.log");
    let (controller, p1, _p2) = paper_mesh(&dir);
    let id = controller.submit(&looping(
        &dir,
        &log,
        "<kind>manual</kind>",
        &review(&log, 2),
        3,
        -1,
    ));
    let ready = |pass: Option<u64>| {
        wait_for("2 on P1's worklist", Duration::from_secs(30), || {
            let list = p1.worklist();
            list.as_array()?
                .iter()
                .any(|i| i["instance"] == id && i["activity"] == 2 && i["pass"].as_u64() == pass)
                .then_some(())
        })
    };
    ready(None);
    p1.cli(&["complete", &id.to_string(), "2"])
        .expect_code(0, "complete the first pass");
    ready(Some(2));
    let table = p1.cli(&["worklist"]);
    assert!(table.stdout.contains("2#2"), "{}", table.stdout);
    p1.cli(&["complete", &id.to_string(), "2"])
        .expect_code(0, "complete the second pass");
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    assert_eq!(ran(&log, id), ["1", "3 1", "3 2", "4"]);
}
