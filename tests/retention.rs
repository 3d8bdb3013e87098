//! Proves the controller's bounded memory and retention on the real binaries (a controller and the
//! paper's partners P1 and P2 as processes):
//!
//! - instances that finished leave the controller's memory (`mobiwf_instances_in_memory` is
//!   0), and the API still shows each of them (`status`, `history`, `list`, a refused
//!   control with the instance's own reason), also after a restart, which reads only what is
//!   live; `list` pages and filters (`--state`, `--workflow`, `--limit`, `--after`, `--all`)
//!   and refuses an unknown state with the words to use;
//! - `serve --retain-finished 3s` deletes an old finished instance with its history (404
//!   through the API), while an instance still running is untouched and finishes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::path::Path;
use std::time::Duration;

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, http_get, metric, paper_mesh, paper_workflow_with, start_nodes,
    wait_for,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the test waits for something that should happen soon.
const SOON: Duration = Duration::from_secs(30);

/// The controller's `mobiwf_instances_in_memory`.
fn in_memory(controller: &Controller) -> f64 {
    let page = http_get(&controller.api, "/metrics").unwrap();
    metric(&page, "mobiwf_instances_in_memory", &[])
}

/// `list ARGS --json`, parsed (`{instances, next}`).
fn list(controller: &Controller, args: &[&str]) -> Value {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let out = controller.cli(&all, CLI_TIMEOUT);
    out.expect_code(0, &format!("list {args:?}"));
    serde_json::from_str(&out.stdout).unwrap()
}

/// The ids on a listed page.
fn ids(page: &Value) -> Vec<u64> {
    page["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect()
}

/// The paper's workflow, each activity's command `command` (none when empty).
fn workflow(dir: &Path, name: &str, command: &str) -> std::path::PathBuf {
    let xml = paper_workflow_with(|_| {
        if command.is_empty() {
            String::new()
        } else {
            format!("<command>{command}</command>")
        }
    });
    let path = dir.join(name);
    std::fs::write(&path, xml).unwrap();
    path
}

#[test]
fn finished_instances_leave_memory_and_the_api_still_shows_them() {
    let dir = scratch("retention-memory").unwrap();
    let (mut controller, _p1, _p2) = paper_mesh(&dir);
    let file = workflow(&dir, "paper.xml", "");
    let submitted: Vec<u64> = (0..5).map(|_| controller.submit(&file)).collect();
    for id in &submitted {
        controller.wait(*id, 60).expect_code(0, "wait");
    }
    wait_for("the finished instances to leave memory", SOON, || {
        (in_memory(&controller) == 0.0).then_some(())
    });
    let shown = |controller: &Controller| {
        for id in &submitted {
            assert_eq!(controller.status(*id)["state"], "succeeded");
            let history = controller.history(*id);
            assert!(
                history
                    .iter()
                    .any(|e| e["what"].as_str().is_some_and(|w| w.contains("submitted"))),
                "history of {id}: {history:?}"
            );
        }
        let page = list(controller, &[]);
        assert_eq!(ids(&page), submitted, "{page:#}");
        assert!(page["next"].is_null(), "{page:#}");
        assert_eq!(page["instances"][0]["state"], "succeeded");
    };
    shown(&controller);

    // Paging and filters.
    let first = list(&controller, &["--limit", "2"]);
    assert_eq!(ids(&first), submitted[..2]);
    let next = first["next"].as_u64().unwrap().to_string();
    let second = list(&controller, &["--limit", "2", "--after", &next]);
    assert_eq!(ids(&second), submitted[2..4]);
    let every = list(&controller, &["--limit", "2", "--all"]);
    assert_eq!(ids(&every), submitted);
    assert!(ids(&list(&controller, &["--state", "running"])).is_empty());
    assert_eq!(
        ids(&list(&controller, &["--state", "succeeded"])),
        submitted
    );
    let workflow_id = every["instances"][0]["workflow"].to_string();
    let workflow_id = workflow_id.trim_matches('"');
    assert_eq!(
        ids(&list(&controller, &["--workflow", workflow_id])),
        submitted
    );
    assert!(ids(&list(&controller, &["--workflow", "no-such-workflow"])).is_empty());
    assert!(ids(&list(&controller, &["--since", "99999999999999"])).is_empty());
    let bad = controller.cli(&["list", "--state", "finished"], CLI_TIMEOUT);
    bad.expect_code(1, "list --state finished");
    assert!(
        bad.stderr.contains("unknown instance state") && bad.stderr.contains("succeeded"),
        "{}",
        bad.stderr
    );
    let table = controller.cli(&["list", "--limit", "1"], CLI_TIMEOUT);
    table.expect_code(0, "list --limit 1");
    assert!(table.stderr.contains("--after"), "{}", table.stderr);

    // A control on a finished instance is refused with its own reason (it is read back).
    let id = submitted[0].to_string();
    let refused = controller.cli(&["cancel", &id], CLI_TIMEOUT);
    refused.expect_code(1, "cancel of a finished instance");
    assert!(
        refused.stderr.contains("is succeeded: cannot cancel it"),
        "{}",
        refused.stderr
    );
    assert_eq!(in_memory(&controller), 0.0);

    // A restart reads only what is live, and shows the same.
    controller.restart();
    assert_eq!(in_memory(&controller), 0.0);
    shown(&controller);
}

#[test]
fn retention_deletes_old_finished_instances_and_keeps_live_ones() {
    let dir = scratch("retention-sweep").unwrap();
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--retain-finished", "3s"],
    );
    let _nodes = start_nodes(&dir, &controller, &[("P1", "1,2,3"), ("P2", "1,3")]);
    let gate = dir.join("gate");
    let quick = workflow(&dir, "quick.xml", "");
    let slow = workflow(
        &dir,
        "slow.xml",
        &format!(
            "i=0; while [ ! -e '{}' ] &amp;&amp; [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done",
            gate.display()
        ),
    );
    let old = controller.submit(&quick);
    controller
        .wait(old, 60)
        .expect_code(0, "wait for the quick instance");
    let live = controller.submit(&slow);
    assert!(http_get(&controller.api, &format!("/instances/{old}")).is_ok());

    wait_for("the old finished instance to be deleted", SOON, || {
        http_get(&controller.api, &format!("/instances/{old}"))
            .err()
            .filter(|e| e.contains("404"))
    });
    let history = http_get(&controller.api, &format!("/instances/{old}/history"));
    assert!(history.is_err_and(|e| e.contains("404")));
    let status = controller.cli(&["status", &old.to_string()], CLI_TIMEOUT);
    status.expect_code(1, "status of a deleted instance");
    assert_eq!(ids(&list(&controller, &[])), vec![live]);
    let metrics = http_get(&controller.api, "/metrics").unwrap();
    assert!(metric(&metrics, "mobiwf_instances_deleted_total", &[]) >= 1.0);

    // The live one was untouched: it is still under way, and finishes.
    let state = controller.status(live)["state"].clone();
    assert!(state == "running" || state == "deploying", "{state}");
    std::fs::write(&gate, "").unwrap();
    controller
        .wait(live, 60)
        .expect_code(0, "wait for the slow instance");
    assert_eq!(controller.status(live)["state"], "succeeded");
}
