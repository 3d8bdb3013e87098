//! Proves instance data with the real binaries: A on P1 writes `reading=42`,
//! B on P2 reads it and writes a file, C on P1 reads the file, for 20 instances at once, each
//! seeing only its own values; a file over the inline limit travels by reference and is
//! fetched from its holder; a person sets values and files with `complete --set/--file`
//! (refused, with the reason, when a value is not of its declared type); `status --data` shows
//! each name's latest value and who wrote it. Commands check what they read and append `instance
//! what` to a shared log, so what they saw is read back, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{
    A_B_C_PLACEMENT, Controller, log_line, paper_mesh, ran, wait_for, xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 90;

/// One activity on partition `partition` (1: P1, 2: P2), of kind `kind`, with `body` (command,
/// reads, writes) and preconditions.
fn act(id: u64, pre: &[u64], body: &str) -> String {
    let pre: String = pre
        .iter()
        .map(|p| format!("<preconditionId>{p}</preconditionId>"))
        .collect();
    format!(
        "<activity id=\"{id}\"><nameActivity>{}</nameActivity><activityTypeId>1</activityTypeId>\
         <preconditions>{pre}</preconditions>{body}</activity>",
        ["A", "B", "C"][(id - 1) as usize]
    )
}

/// A (P1) → B (P2) → C (P1), the data declared as `reading` (number) and `report` (file).
fn workflow(dir: &Path, a: &str, b: &str, c: &str) -> PathBuf {
    let xml = format!(
        "<workflow id=\"80\"><description>data</description><activities>{}{}{}</activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         {A_B_C_PLACEMENT}\
         <data><value name=\"reading\" type=\"number\"/><value name=\"tag\" type=\"string\"/>\
         <file name=\"report\"/></data></workflow>",
        act(1, &[], a),
        act(2, &[1], b),
        act(3, &[2], c),
    );
    let file = dir.join("data.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

fn command(c: &str) -> String {
    format!("<command>{}</command>", xml_text(c))
}

/// `status ID --data --json`, parsed.
fn data_of(controller: &Controller, id: u64) -> Value {
    let out = controller.cli(
        &["status", &id.to_string(), "--data", "--json"],
        Duration::from_secs(30),
    );
    out.expect_code(0, "status --data --json");
    serde_json::from_str(&out.stdout).unwrap()
}

/// The datum of `name` in `status --data --json`.
fn datum<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {data:#}"))
}

#[test]
fn values_and_files_travel_partner_to_partner_each_instance_its_own() {
    let dir = scratch("data-chain").unwrap();
    let log = dir.join("ran.log");
    let (controller, _p1, _p2) = paper_mesh(&dir);
    let a = format!(
        "{}<writes>reading tag</writes>",
        command(
            "echo 42 > \"$MOBIWF_DATA_DIR/reading\" && \
             echo \"tag of $MOBIWF_INSTANCE\" > \"$MOBIWF_DATA_DIR/tag\""
        )
    );
    let b = format!(
        "{}<reads>reading</reads><writes>report</writes>",
        command(
            "test \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" = 42 && \
             printf 'reading %s instance %s' \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" \
             \"$MOBIWF_INSTANCE\" > \"$MOBIWF_DATA_DIR/report\""
        )
    );
    let c = format!(
        "{}<reads>report tag</reads>",
        command(&format!(
            "grep -qx \"reading 42 instance $MOBIWF_INSTANCE\" \"$MOBIWF_DATA_DIR/report\" && \
             test \"$(cat \"$MOBIWF_DATA_DIR/tag\")\" = \"tag of $MOBIWF_INSTANCE\" && {}",
            log_line(&log, "C saw its report")
        ))
    );
    let file = workflow(&dir, &a, &b, &c);
    let ids: Vec<u64> = (0..20).map(|_| controller.submit(&file)).collect();
    for id in &ids {
        controller.wait(*id, WAIT_SECS).expect_code(0, "wait");
        assert_eq!(controller.status(*id)["state"], "succeeded");
        assert_eq!(ran(&log, *id), ["C saw its report"], "instance {id}");
    }
    let id = ids[7];
    let data = data_of(&controller, id);
    let reading = datum(&data, "reading");
    assert_eq!(reading["value"], serde_json::json!({ "number": "42" }));
    assert_eq!(reading["by"], 1);
    let report = datum(&data, "report");
    assert_eq!(report["by"], 2);
    let expected = format!("reading 42 instance {id}");
    assert_eq!(report["value"]["file"]["size"], expected.len());
    assert!(
        data["unanswered"].as_object().unwrap().is_empty(),
        "{data:#}"
    );
    // The table names the writers.
    let out = controller.cli(
        &["status", &id.to_string(), "--data"],
        Duration::from_secs(30),
    );
    out.expect_code(0, "status --data");
    assert!(
        out.stdout.contains("reading") && out.stdout.contains("A (1)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("B (2)"), "{}", out.stdout);
}

#[test]
fn a_file_over_the_inline_limit_is_fetched_from_its_holder() {
    let dir = scratch("data-fetch").unwrap();
    let log = dir.join("ran.log");
    let (controller, p1, _p2) = paper_mesh(&dir);
    // 3 MB: over MAX_INLINE_FILE_BYTES (256 KiB) and over one fetch chunk (1 MiB).
    let size = 3_000_000;
    let b = format!(
        "{}<writes>report</writes>",
        command(&format!(
            "yes \"line $MOBIWF_INSTANCE\" | head -c {size} > \"$MOBIWF_DATA_DIR/report\""
        ))
    );
    let c = format!(
        "{}<reads>report</reads>",
        command(&format!(
            "test $(wc -c < \"$MOBIWF_DATA_DIR/report\") = {size} && \
             test \"$(head -n 1 \"$MOBIWF_DATA_DIR/report\")\" = \"line $MOBIWF_INSTANCE\" && {}",
            log_line(&log, "C read the whole report")
        ))
    );
    let file = workflow(&dir, "", &b, &c);
    let id = controller.submit(&file);
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    assert_eq!(ran(&log, id), ["C read the whole report"]);
    let data = data_of(&controller, id);
    let sha = datum(&data, "report")["value"]["file"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    // P1 holds the content whole, under its hash, and no partial fetch is left.
    let held = p1.spec.dir.join("files").join(&sha);
    assert_eq!(std::fs::metadata(&held).unwrap().len(), size);
    assert!(!p1.spec.dir.join("files/partial").join(&sha).exists());
    assert!(
        p1.log_tail(400).contains("file fetched"),
        "{}",
        p1.log_tail(50)
    );
}

#[test]
fn a_person_sets_values_and_files_and_a_wrong_type_is_refused() {
    let dir = scratch("data-person").unwrap();
    let log = dir.join("ran.log");
    let (controller, p1, p2) = paper_mesh(&dir);
    let a = "<kind>manual</kind><writes>reading report</writes>";
    let b = format!(
        "{}<reads>reading report</reads>",
        command(&format!(
            "test \"$(cat \"$MOBIWF_DATA_DIR/reading\")\" = 7.5 && \
             test \"$(cat \"$MOBIWF_DATA_DIR/report\")\" = 'pump ok' && {}",
            log_line(&log, "B read what the person set")
        ))
    );
    let file = workflow(&dir, a, &b, "");
    let id = controller.submit(&file);
    wait_for("A on P1's worklist", Duration::from_secs(30), || {
        p1.worklist()
            .to_string()
            .contains("\"activity\":1")
            .then_some(())
    });
    let (instance, photo) = (id.to_string(), dir.join("report.txt"));
    std::fs::write(&photo, "pump ok").unwrap();
    let bad = p1.cli(&["complete", &instance, "1", "--set", "reading=lots"]);
    bad.expect_code(1, "a value of the wrong type");
    assert!(bad.stderr.contains("400 Bad Request"), "{}", bad.stderr);
    assert!(
        bad.stderr.contains("`reading` is a number"),
        "{}",
        bad.stderr
    );
    let undeclared = p1.cli(&["complete", &instance, "1", "--set", "photo=x"]);
    undeclared.expect_code(1, "a value the activity does not write");
    assert!(
        undeclared.stderr.contains("400 Bad Request"),
        "{}",
        undeclared.stderr
    );
    assert!(
        undeclared.stderr.contains("does not write `photo`"),
        "{}",
        undeclared.stderr
    );
    let file_arg = format!("report={}", photo.display());
    p1.cli(&[
        "complete",
        &instance,
        "1",
        "--set",
        "reading=7.5",
        "--file",
        &file_arg,
    ])
    .expect_code(0, "complete --set --file");
    controller.wait(id, WAIT_SECS).expect_code(0, "wait");
    assert_eq!(ran(&log, id), ["B read what the person set"]);
    let data = data_of(&controller, id);
    assert_eq!(
        datum(&data, "reading")["value"],
        serde_json::json!({ "number": "7.5" })
    );
    // A person on P2 reads what B read: the values shown, the file saved under its name.
    let saved = dir.join("saved");
    let out = p2.cli(&["data", &instance, "--save", &saved.display().to_string()]);
    out.expect_code(0, "data --save");
    assert!(out.stdout.contains("7.5"), "{}", out.stdout);
    assert_eq!(
        std::fs::read_to_string(saved.join("report")).unwrap(),
        "pump ok"
    );
    assert_eq!(
        std::fs::read_to_string(saved.join("reading")).unwrap(),
        "7.5"
    );
}
