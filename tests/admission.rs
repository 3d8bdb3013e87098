//! Proves admission control through the real HTTP API (a controller started
//! `--admission-limit 2` and the paper's partners P1 and P2 as separate processes): with two
//! instances under way, a third submission is answered 429 with `Retry-After` and a body
//! that names the limit, a start by name too, the CLI says so and exits 75, and nothing of
//! them is stored; the two admitted instances succeed once let go, and then a submission is
//! admitted again and succeeds.
//!
//! Every activity runs a command that waits until the test creates one gate file: the test
//! decides when the admitted instances may end, so nothing depends on timing luck.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, PAPER_PLACEMENT, api_token_of, assert_all_succeeded, gated, http_get,
    http_request, metric, paper_partners, paper_workflow_with, xml_text,
};
use mobiwf_tests::scratch;
use serde_json::Value;

/// The paper's workflow, every activity waiting for the file `gate` (the harness's gated
/// command, logging to `run.log` in `dir`).
fn gated_workflow(dir: &Path, gate: &Path) -> PathBuf {
    let log = dir.join("run.log");
    let file = dir.join("gated.xml");
    std::fs::write(
        &file,
        paper_workflow_with(|a| {
            format!(
                "<command>{}</command>",
                xml_text(&gated(&log, &format!("A{a}"), gate))
            )
        }),
    )
    .unwrap();
    file
}

/// The ids of the instances the controller holds, in its list.
fn listed(controller: &Controller) -> Vec<u64> {
    let page: Value =
        serde_json::from_str(&http_get(&controller.api, "/instances?limit=100").unwrap()).unwrap();
    page["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn past_the_admission_limit_submissions_are_shed_with_429_and_admitted_ones_complete() {
    let dir = scratch("admission-shed").unwrap();
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--admission-limit", "2"],
    );
    let (_p1, _p2) = paper_partners(&dir, &controller);
    let gate = dir.join("gate");
    let workflow = gated_workflow(&dir, &gate);
    let (a, b) = (controller.submit(&workflow), controller.submit(&workflow));

    // Two under way: a third is shed at the door, through the API...
    let token = api_token_of(&controller.api);
    let document = std::fs::read_to_string(&workflow).unwrap();
    let shed = http_request(
        &controller.api,
        "POST",
        "/instances?source=third",
        token.as_deref(),
        Some(&document),
    )
    .unwrap();
    assert_eq!(shed.status, 429, "{shed:?}");
    let head = shed.head.to_ascii_lowercase();
    assert!(head.contains("\r\nretry-after: "), "{}", shed.head);
    let body: Value = serde_json::from_str(&shed.body).unwrap();
    assert_eq!(
        (body["limit"].as_u64(), body["under_way"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(body["retry_after_secs"].as_u64().unwrap() >= 1, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("admission limit 2") && error.contains("nothing was stored"),
        "{error}"
    );

    // ... through the CLI, which says so and exits 75 ("try again later") ...
    let path = workflow.display().to_string();
    let out = controller.cli(&["submit", &path], CLI_TIMEOUT);
    out.expect_code(75, "submit past the admission limit");
    assert!(
        out.stderr.contains("429 Too Many Requests, retry after")
            && out.stderr.contains("the workflow was not started"),
        "{}",
        out.stderr
    );

    // ... and a start by name is shed as well.
    controller
        .cli(&["deploy", &path, "--name", "gated"], CLI_TIMEOUT)
        .expect_code(0, "deploy");
    controller
        .cli(&["start", "gated"], CLI_TIMEOUT)
        .expect_code(75, "start past the admission limit");

    // Nothing of the shed ones was stored, and they were counted.
    assert_eq!(listed(&controller), vec![a, b]);
    let metrics = http_get(&controller.api, "/metrics").unwrap();
    assert_eq!(metric(&metrics, "mobiwf_submissions_shed_total", &[]), 3.0);

    // The admitted ones complete; then there is room again.
    std::fs::write(&gate, "").unwrap();
    for id in [a, b] {
        controller
            .wait(id, 120)
            .expect_code(0, "wait for an admitted instance");
        assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    }
    let c = controller.submit(&workflow);
    controller
        .wait(c, 120)
        .expect_code(0, "wait for the one admitted later");
    assert_all_succeeded(&controller.status(c), &PAPER_PLACEMENT);
}
