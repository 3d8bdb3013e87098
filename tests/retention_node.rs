//! Bounded memory and ids over a node's lifetime: finished instances leave the node's memory
//! (`mobiwf_runs_in_memory`) yet `GET /runs` and `GET /instances/{id}/data` still show them,
//! before and after a restart; a late word for a finished instance (an operator's rerun of
//! its failed activity) still reaches it once it left memory, and carries it on; and a node
//! whose data directory is wiped with its key kept (a reinstalled device, a lost disk) comes
//! back as the same peer with a new store: its messages, numbered from 1 again, carry a new
//! incarnation, so the controller and its partners take them as new rather than drop them as
//! duplicates of the earlier store's. Instances still complete through it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Node, PAPER_PLACEMENT, assert_all_succeeded, http_get, paper_mesh,
    paper_workflow_with, xml_text,
};
use mobiwf_tests::{repo_root, scratch};

/// The paper's workflow, A1 (16, on P1) writing the number `4200 + instance` as `reading`.
fn paper_with_a_reading(dir: &std::path::Path) -> std::path::PathBuf {
    let command = r#"echo $((4200 + MOBIWF_INSTANCE)) > "$MOBIWF_DATA_DIR/reading""#;
    let xml = paper_workflow_with(|id| {
        if id == 16 {
            format!(
                "<command>{}</command><writes>reading</writes>",
                xml_text(command)
            )
        } else {
            String::new()
        }
    })
    .replace(
        "</partners>",
        r#"</partners><data><value name="reading" type="number"/></data>"#,
    );
    let file = dir.join("reading.xml");
    std::fs::write(&file, xml).unwrap();
    file
}

/// The node's `mobiwf_runs_in_memory`.
fn runs_in_memory(node: &Node) -> Option<u64> {
    let page = node.metrics().ok()?;
    page.lines()
        .find_map(|l| l.strip_prefix("mobiwf_runs_in_memory "))
        .and_then(|v| v.trim().parse().ok())
}

/// Polls until the node holds no run in memory (retiring happens with the commit that ends
/// the run); panics after 10 s.
fn wait_none_in_memory(node: &Node) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = runs_in_memory(node);
        if now == Some(0) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} still holds {now:?} runs in memory",
            node.spec.name
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every run of the node, page after page (a page of one run, so that paging is proven).
fn runs(node: &Node) -> Vec<serde_json::Value> {
    let mut runs = Vec::new();
    let mut path = "/runs?limit=1".to_owned();
    loop {
        let body = http_get(&node.api, &path).unwrap();
        let page: serde_json::Value = serde_json::from_str(&body).unwrap();
        let got = page["runs"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("GET {path}: {body}"));
        assert!(got.len() <= 1, "a page of one: {body}");
        runs.extend(got);
        match page["next"].as_u64() {
            Some(next) => path = format!("/runs?limit=1&after={next}"),
            None => return runs,
        }
    }
}

#[test]
fn finished_instances_leave_memory_and_are_still_shown_from_the_store() {
    let dir = scratch("retention").unwrap();
    let (controller, mut p1, p2) = paper_mesh(&dir);
    let workflow = paper_with_a_reading(&dir);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let id = controller.submit(&workflow);
        controller.wait(id, 60).expect_code(0, "an instance");
        ids.push(id);
    }
    for node in [&p1, &p2] {
        wait_none_in_memory(node);
        let listed = runs(node);
        assert_eq!(listed.len(), 3, "{listed:#?}");
        assert!(listed.iter().all(|r| r["done"] == true), "{listed:#?}");
    }
    // The instance's data is read back from the store.
    let data = http_get(&p1.api, &format!("/instances/{}/data", ids[0])).unwrap();
    let data: serde_json::Value = serde_json::from_str(&data).unwrap();
    let reading = data
        .as_array()
        .and_then(|values| values.iter().find(|d| d["name"] == "reading"))
        .unwrap_or_else(|| panic!("no reading in {data:#}"));
    let expected = (4200 + ids[0]).to_string();
    assert!(
        reading["value"].to_string().contains(&expected),
        "the reading of instance {} is {expected}: {data:#}",
        ids[0]
    );
    // After a restart only the live runs are loaded: none; the finished are still shown.
    p1.restart();
    assert_eq!(runs_in_memory(&p1), Some(0));
    assert_eq!(runs(&p1).len(), 3);
    // The controller still reads a finished instance's data from its nodes.
    let out = controller.cli(
        &["status", &ids[1].to_string(), "--data"],
        mobiwf_tests::harness::CLI_TIMEOUT,
    );
    out.expect_code(0, "status --data of a finished instance");
    // And new instances run through the restarted node as before.
    let id = controller.submit(&workflow);
    controller
        .wait(id, 60)
        .expect_code(0, "an instance after the restart");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    wait_none_in_memory(&p1);
    assert_eq!(runs(&p1).len(), 4);
}

#[test]
fn a_late_word_reaches_a_finished_instance_that_left_memory() {
    let dir = scratch("retention-late").unwrap();
    let (controller, p1, p2) = paper_mesh(&dir);
    // A4 (19, on P2, contingency -1) fails until the file `ok` exists: the instance fails.
    let ok = dir.join("ok");
    let xml = paper_workflow_with(|id| {
        if id == 19 {
            format!(
                "<command>{}</command>",
                xml_text(&format!("test -f '{}'", ok.display()))
            )
        } else {
            String::new()
        }
    });
    let file = dir.join("failing.xml");
    std::fs::write(&file, xml).unwrap();
    let id = controller.submit(&file);
    controller.wait(id, 60).expect_code(1, "the instance fails");
    // Both nodes ended their runs and let them go.
    wait_none_in_memory(&p1);
    wait_none_in_memory(&p2);

    // The operator's rerun reaches P2 (and then P1) for an instance neither holds any more.
    std::fs::write(&ok, "").unwrap();
    controller
        .cli(&["rerun", &id.to_string(), "19"], CLI_TIMEOUT)
        .expect_code(0, "rerun of the failed A4");
    controller
        .wait(id, 60)
        .expect_code(0, "the instance succeeds after the rerun");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    assert!(p2.spec.dir.join(format!("runs/{id}-2-19.1/exit")).exists());
    wait_none_in_memory(&p1);
    wait_none_in_memory(&p2);
}

#[test]
fn a_node_wiped_but_its_key_kept_is_new_to_everyone_and_instances_complete_through_it() {
    let dir = scratch("wiped").unwrap();
    let (controller, _p1, mut p2) = paper_mesh(&dir);
    let workflow = repo_root().join("examples/paper/workflow.xml");
    // Enough traffic that P2's sequence numbers used so far cover what it sends next.
    for _ in 0..3 {
        let id = controller.submit(&workflow);
        controller
            .wait(id, 60)
            .expect_code(0, "an instance before the wipe");
    }

    p2.kill();
    let key = runtime_key_file();
    let mut wiped = 0;
    for entry in std::fs::read_dir(&p2.spec.dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == key) {
            continue;
        }
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
        wiped += 1;
    }
    assert!(
        wiped > 0,
        "nothing but the key to wipe: the test proves nothing"
    );
    p2.restart();

    for round in 0..3 {
        let id = controller.submit(&workflow);
        controller
            .wait(id, 60)
            .expect_code(0, &format!("instance {round} after the wipe"));
        assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    }
}

fn runtime_key_file() -> &'static str {
    mobiwf_runtime::identity::KEY_FILE
}
