//! Proves an instance's inputs with the real binaries: a workflow declares `reading` (a number
//! every start gives) and `note` (a string, `none` when not given); `submit --data reading=5`
//! starts an instance whose activity B on the other partner (P2) reads them and writes what
//! it read, which C on P1 checks; another instance started with `--data-file` (a JSON number
//! and a string) sees its own values, and so does one of the workflow deployed and started by
//! name (`start NAME --data`); a value that is not a number and a missing input are refused
//! with what the workflow expects; `status --data` and the node's `data` show them as inputs,
//! and the controller still has them after a restart. Commands append what they saw to a shared
//! log, so it is read back, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{A_B_C_PLACEMENT, Controller, log_line, paper_mesh, ran, xml_text};
use mobiwf_tests::scratch;
use serde_json::{Value, json};

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 90;

/// A (P1) → B (P2: reads reading and note, writes seen) → C (P1: reads seen, logs it).
fn workflow(dir: &Path, log: &Path) -> PathBuf {
    let b = xml_text(
        "printf '%s %s' \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" \"$(cat \"$MOBIWF_DATA_DIR/note\")\" \
         > \"$MOBIWF_DATA_DIR/seen\"",
    );
    let c = xml_text(&format!(
        "echo \"$MOBIWF_INSTANCE C saw $(cat \"$MOBIWF_DATA_DIR/seen\")\" >> '{}' && {}",
        log.display(),
        log_line(log, "C ran")
    ));
    let xml = format!(
        "<workflow id=\"81\"><description>inputs</description><activities>\
           <activity id=\"1\"><nameActivity>A</nameActivity><activityTypeId>1</activityTypeId>\
             <preconditions/><command>true</command></activity>\
           <activity id=\"2\"><nameActivity>B</nameActivity><activityTypeId>1</activityTypeId>\
             <preconditions><preconditionId>1</preconditionId></preconditions>\
             <command>{b}</command><reads>reading note</reads><writes>seen</writes></activity>\
           <activity id=\"3\"><nameActivity>C</nameActivity><activityTypeId>1</activityTypeId>\
             <preconditions><preconditionId>2</preconditionId></preconditions>\
             <command>{c}</command><reads>seen</reads></activity>\
         </activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         {A_B_C_PLACEMENT}\
         <data><value name=\"reading\" type=\"number\" input=\"true\"/>\
         <value name=\"note\" type=\"string\" default=\"none\"/>\
         <value name=\"seen\" type=\"string\"/></data></workflow>"
    );
    let file = dir.join("inputs.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

/// `status ID --data --json`: the datum of `name`.
fn datum(controller: &Controller, id: u64, name: &str) -> Value {
    let out = controller.cli(
        &["status", &id.to_string(), "--data", "--json"],
        Duration::from_secs(30),
    );
    out.expect_code(0, "status --data --json");
    let data: Value = serde_json::from_str(&out.stdout).unwrap();
    data["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} in {data:#}"))
}

/// The workflow in `file` deployed as `meter` and started by name with `reading` 9 and `note`
/// "by name" (its id); a start with a reading that is no number is refused with why.
fn started_by_name(controller: &Controller, file: &Path) -> u64 {
    let deployed = controller.cli(
        &["deploy", file.to_str().unwrap(), "--name", "meter"],
        Duration::from_secs(30),
    );
    deployed.expect_code(0, "deploy");
    let started = controller.cli(
        &[
            "start",
            "meter",
            "--data",
            "reading=9",
            "--data",
            "note=by name",
        ],
        Duration::from_secs(30),
    );
    started.expect_code(0, "start --data");
    let third: u64 = started.stdout.trim().parse().unwrap();
    let refused = controller.cli(
        &["start", "meter", "--data", "reading=abc"],
        Duration::from_secs(30),
    );
    refused.expect_code(1, "start with a bad input");
    assert!(
        refused.stderr.contains("`abc` is not a number"),
        "{}",
        refused.stderr
    );
    third
}

#[test]
fn inputs_given_at_start_reach_the_partner_that_reads_them_each_instance_its_own() {
    let dir = scratch("inputs").unwrap();
    let log = dir.join("ran.log");
    let (mut controller, _p1, p2) = paper_mesh(&dir);
    let file = workflow(&dir, &log);

    let first = controller.submit_with(&file, &["--data", "reading=5"]);
    let data_file = dir.join("inputs.json");
    std::fs::write(&data_file, r#"{"reading": 7, "note": "north gate"}"#).unwrap();
    let path = data_file.display().to_string();
    let second = controller.submit_with(&file, &["--data-file", &path]);
    let third = started_by_name(&controller, &file);
    for (id, saw) in [
        (first, "C saw 5 none"),
        (second, "C saw 7 north gate"),
        (third, "C saw 9 by name"),
    ] {
        controller.wait(id, WAIT_SECS).expect_code(0, "wait");
        assert_eq!(ran(&log, id), [saw, "C ran"], "instance {id}");
    }

    // Shown as inputs: by the controller (with what B wrote from them), and by P2's node.
    let reading = datum(&controller, first, "reading");
    assert_eq!(
        (&reading["value"], &reading["by"]),
        (&json!({ "number": "5" }), &json!("input"))
    );
    assert_eq!(
        datum(&controller, first, "note")["value"],
        json!({ "string": "none" })
    );
    assert_eq!(datum(&controller, second, "seen")["by"], 2);
    let table = controller.cli(
        &["status", &first.to_string(), "--data"],
        Duration::from_secs(30),
    );
    table.expect_code(0, "status --data");
    assert!(
        table
            .stdout
            .lines()
            .any(|l| l.starts_with("reading") && l.contains("input")),
        "{}",
        table.stdout
    );
    let on_p2 = p2.cli(&["data", &second.to_string()]);
    on_p2.expect_code(0, "data on P2");
    assert!(
        on_p2
            .stdout
            .lines()
            .any(|l| l.starts_with("reading") && l.contains("input") && l.ends_with('7')),
        "{}",
        on_p2.stdout
    );

    // Kept with the instance: there after the controller's restart.
    controller.restart();
    let status = controller.status(second);
    assert_eq!(
        status["inputs"],
        json!({ "note": { "string": "north gate" }, "reading": { "number": "7" } })
    );
}

#[test]
fn inputs_that_do_not_fit_are_refused_with_what_the_workflow_expects() {
    let dir = scratch("inputs-refused").unwrap();
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let file = workflow(&dir, &dir.join("ran.log"));
    let path = file.display().to_string();
    let expects =
        "the inputs of workflow 81: reading (number, required), note (string, default `none`)";
    for (args, says) in [
        (
            &["--data", "reading=abc"][..],
            "`reading` is a number: `abc` is not a number",
        ),
        (&[][..], "`reading` is a required input (number)"),
        (
            &["--data", "reading=1", "--data", "seen=x"][..],
            "`seen` is not an input",
        ),
    ] {
        let mut all = vec!["submit", path.as_str()];
        all.extend_from_slice(args);
        let out = controller.cli(&all, Duration::from_secs(30));
        out.expect_code(1, &format!("submit {args:?}"));
        for words in [says, expects, "the workflow was not started"] {
            assert!(out.stderr.contains(words), "{words} in {}", out.stderr);
        }
    }
    // Nothing was started.
    let list = controller.cli(&["list", "--json"], Duration::from_secs(30));
    list.expect_code(0, "list");
    let page: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(page["instances"], json!([]), "{}", list.stdout);
}
