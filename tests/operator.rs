//! Proves the operator's controls on the real binaries (a controller and the paper's partners
//! P1 and P2 as separate processes): `interrupt` holds every new start until `resume` (an
//! activity whose predecessor finishes meanwhile stays waiting; after `resume` the instance
//! succeeds); `cancel` ends a running instance cancelled, kills its running command and cancels
//! every unfinished activity on every partner; `history` shows the operator's action and the
//! activities' transitions with their partners; controls that do not apply (a finished
//! instance, an unknown one) exit 1 with the reason, and 3 without a controller.
//!
//! Every activity runs a command that logs `start INSTANCE ACTIVITY PID`, waits until the test
//! opens its gate (a file), then logs `done INSTANCE ACTIVITY`: the test decides when each
//! activity ends, so nothing depends on timing luck.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, GATE_LIMIT_TICKS, PAPER_PLACEMENT, assert_all_succeeded, http_get,
    metric, paper_mesh, paper_workflow_with, run, running, status_activity, wait_for, xml_text,
};
use mobiwf_tests::{binary, scratch};
use serde_json::Value;

/// How long the test waits for something that should happen at once.
const SOON: Duration = Duration::from_secs(30);

/// The gates of the gated commands: `DIR/<instance>-<activity>`, or `DIR/all`. Dropping it
/// opens every gate, so no command is left waiting after the test.
struct Gates {
    dir: PathBuf,
}

impl Gates {
    fn new(dir: &Path) -> Gates {
        std::fs::create_dir_all(dir).unwrap();
        Gates {
            dir: dir.to_owned(),
        }
    }

    fn open(&self, instance: u64, activity: u64) {
        std::fs::write(self.dir.join(format!("{instance}-{activity}")), "").unwrap();
    }
}

impl Drop for Gates {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("all"), "");
    }
}

/// The paper's workflow with a gated command in every activity, logging to `log`.
fn gated_workflow(dir: &Path, gates: &Gates, log: &Path) -> PathBuf {
    let (g, l) = (gates.dir.display(), log.display());
    let command = format!(
        "echo \"start $MOBIWF_INSTANCE $MOBIWF_ACTIVITY $$\" >> '{l}'; i=0; \
         while [ ! -e \"{g}/$MOBIWF_INSTANCE-$MOBIWF_ACTIVITY\" ] && [ ! -e '{g}/all' ] \
         && [ $i -lt {GATE_LIMIT_TICKS} ]; do sleep 0.05; i=$((i+1)); done; \
         echo \"done $MOBIWF_INSTANCE $MOBIWF_ACTIVITY\" >> '{l}'"
    );
    let file = dir.join("gated.xml");
    std::fs::write(
        &file,
        paper_workflow_with(|_| format!("<command>{}</command>", xml_text(&command))),
    )
    .unwrap();
    file
}

/// The log's lines as (word, instance, activity, pid).
fn log_lines(log: &Path) -> Vec<(String, u64, u64, Option<u32>)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            let w: Vec<&str> = line.split_whitespace().collect();
            assert!(w.len() >= 3, "unexpected log line {line:?}");
            (
                w[0].to_owned(),
                w[1].parse().unwrap(),
                w[2].parse().unwrap(),
                w.get(3).map(|p| p.parse().unwrap()),
            )
        })
        .collect()
}

/// The pid of the command of `activity` once it logged its start.
fn started(log: &Path, instance: u64, activity: u64) -> Option<u32> {
    log_lines(log)
        .into_iter()
        .find(|(w, i, a, _)| w == "start" && *i == instance && *a == activity)
        .and_then(|l| l.3)
}

fn logged(log: &Path, word: &str, instance: u64, activity: u64) -> bool {
    log_lines(log)
        .iter()
        .any(|(w, i, a, _)| w == word && *i == instance && *a == activity)
}

/// Control messages the partners acknowledged (each after applying it durably).
fn controls_acked(controller: &Controller) -> f64 {
    http_get(&controller.api, "/metrics").map_or(0.0, |page| {
        metric(&page, "mobiwf_messages_sent_total", &[("kind", "control")])
    })
}

/// `history ID --json`, parsed.
fn history(controller: &Controller, id: u64) -> Vec<Value> {
    let out = controller.cli(&["history", &id.to_string(), "--json"], CLI_TIMEOUT);
    out.expect_code(0, "history --json");
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap_or_else(|e| panic!("history --json printed invalid JSON ({e}):\n{}", out.stdout))
        .as_array()
        .cloned()
        .unwrap()
}

#[test]
fn interrupt_holds_new_starts_until_resume() {
    let dir = scratch("operator-interrupt").unwrap();
    let gates = Gates::new(&dir.join("gates"));
    let log = dir.join("ran.log");
    let file = gated_workflow(&dir, &gates, &log);
    let (controller, mut p1, mut p2) = paper_mesh(&dir);
    let nodes = controller.cli(&["nodes"], CLI_TIMEOUT);
    nodes.expect_code(0, "nodes");
    for (name, skills) in [("P1", "1,2,3"), ("P2", "1,3")] {
        let row: Vec<&str> = nodes
            .stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{}", nodes.stdout))
            .split_whitespace()
            .collect();
        assert_eq!(row[1], skills, "{name}'s skills:\n{}", nodes.stdout);
        assert_eq!(row[2], "no", "{name} is not suspected:\n{}", nodes.stdout);
        assert!(
            row[3].starts_with("/ip4/127.0.0.1/tcp/"),
            "{}",
            nodes.stdout
        );
    }

    let id = controller.submit(&file);
    let ids = id.to_string();
    wait_for("A1 (16) to start on P1", SOON, || {
        p1.check_alive();
        started(&log, id, 16)
    });

    let out = controller.cli(&["interrupt", &ids], CLI_TIMEOUT);
    out.expect_code(0, "interrupt a running instance");
    assert!(
        out.stdout.contains(&format!("instance {id} interrupted")),
        "{}",
        out.stdout
    );
    let status = controller.status(id);
    assert_eq!(status["state"], "interrupted", "{status:#}");
    let table = controller.cli(&["status", &ids], CLI_TIMEOUT);
    assert!(table.stdout.contains("interrupted"), "{}", table.stdout);
    // Both partners applied it (they acknowledge a message once it is on their disk).
    wait_for("P1 and P2 to acknowledge the interruption", SOON, || {
        (controls_acked(&controller) >= 2.0).then_some(())
    });
    // Interrupting it again does not apply.
    let again = controller.cli(&["interrupt", &ids], CLI_TIMEOUT);
    again.expect_code(1, "interrupt an interrupted instance");
    assert!(again.stderr.contains("interrupted"), "{}", again.stderr);

    // The running activity finishes; its successor A2 (17), on the same node, does not start.
    gates.open(id, 16);
    wait_for("A1 (16) to succeed on P1", SOON, || {
        p1.check_alive();
        (p1.state_of(id, 16).as_deref() == Some("succeeded")).then_some(())
    });
    let held_since = Instant::now();
    while held_since.elapsed() < Duration::from_secs(1) {
        assert_eq!(
            p1.state_of(id, 17).as_deref(),
            Some("not_ready"),
            "A2 (17) left waiting while the instance is interrupted"
        );
        assert!(
            !logged(&log, "start", id, 17),
            "A2 (17) started while the instance was interrupted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let out = controller.cli(&["resume", &ids], CLI_TIMEOUT);
    out.expect_code(0, "resume an interrupted instance");
    assert!(
        out.stdout.contains(&format!("instance {id} resumed")),
        "{}",
        out.stdout
    );
    for a in [17, 18, 19, 20] {
        gates.open(id, a);
    }
    controller
        .wait(id, 60)
        .expect_code(0, "wait for the resumed instance");
    let status = controller.status(id);
    assert_all_succeeded(&status, &PAPER_PLACEMENT);
    // A2 started only after the resume, by the controller's record of both.
    let events = history(&controller, id);
    let resumed_at = events
        .iter()
        .find(|e| {
            e["what"]
                .as_str()
                .is_some_and(|w| w.starts_with("operator: resume"))
        })
        .and_then(|e| e["at_ms"].as_u64())
        .unwrap_or_else(|| panic!("no resume in the history: {events:#?}"));
    let a2_started = status_activity(&status, 17)["started_ms"].as_u64().unwrap();
    assert!(
        a2_started >= resumed_at,
        "A2 (17) started at {a2_started}, before the resume at {resumed_at}"
    );
    assert!(
        events.iter().any(|e| e["what"]
            .as_str()
            .is_some_and(|w| w.starts_with("operator: interrupt"))),
        "no interrupt in the history: {events:#?}"
    );

    // (c) Controls that do not apply, and unknown instances.
    let out = controller.cli(&["interrupt", &ids], CLI_TIMEOUT);
    out.expect_code(1, "interrupt a finished instance");
    assert!(
        out.stderr
            .contains(&format!("instance {id} is succeeded: cannot interrupt it")),
        "unclear refusal: {}",
        out.stderr
    );
    controller
        .cli(&["resume", &ids], CLI_TIMEOUT)
        .expect_code(1, "resume a finished instance");
    controller
        .cli(&["cancel", &ids], CLI_TIMEOUT)
        .expect_code(1, "cancel a finished instance");
    let out = controller.cli(&["history", "424242"], CLI_TIMEOUT);
    out.expect_code(1, "history of an unknown instance");
    assert!(out.stderr.contains("no instance 424242"), "{}", out.stderr);
    let out = controller.cli(&["cancel", "424242"], CLI_TIMEOUT);
    out.expect_code(1, "cancel an unknown instance");
    assert!(out.stderr.contains("no instance 424242"), "{}", out.stderr);
    let nobody = run(
        std::process::Command::new(binary("mobiwf-controller").unwrap()).args([
            "interrupt",
            "1",
            "--api",
            "127.0.0.1:1",
        ]),
        CLI_TIMEOUT,
    );
    nobody.expect_code(3, "interrupt with no controller listening");
    p1.check_alive();
    p2.check_alive();
}

#[test]
fn cancel_kills_running_work_and_ends_the_instance() {
    let dir = scratch("operator-cancel").unwrap();
    let gates = Gates::new(&dir.join("gates"));
    let log = dir.join("ran.log");
    let file = gated_workflow(&dir, &gates, &log);
    let (controller, mut p1, mut p2) = paper_mesh(&dir);

    let id = controller.submit(&file);
    let ids = id.to_string();
    // A1 (16) and A2 (17) on P1 go through; A4 (19) on P2 is running when the operator cancels.
    gates.open(id, 16);
    gates.open(id, 17);
    let pid = wait_for("A4 (19) to start on P2", SOON, || {
        p1.check_alive();
        p2.check_alive();
        started(&log, id, 19)
    });
    let command = gates.dir.display().to_string();
    assert!(running(pid, &command), "A4's command {pid} is not running");
    wait_for("A2 (17) to succeed on P1", SOON, || {
        (p1.state_of(id, 17).as_deref() == Some("succeeded")).then_some(())
    });

    let out = controller.cli(&["cancel", &ids], CLI_TIMEOUT);
    out.expect_code(0, "cancel a running instance");
    assert!(
        out.stdout.contains(&format!("instance {id} cancelled")),
        "{}",
        out.stdout
    );
    let out = controller.wait(id, 60);
    out.expect_code(1, "wait for a cancelled instance");
    assert!(out.stdout.contains("cancelled"), "{}", out.stdout);

    // The running command is killed, and every unfinished activity ends cancelled on its node.
    wait_for(
        format!("A4's command (pid {pid}) to be killed"),
        SOON,
        || (!running(pid, &command)).then_some(()),
    );
    for (node, a) in [(&p2, 19), (&p2, 20), (&p1, 18)] {
        wait_for(
            format!("activity {a} to be cancelled on {}", node.spec.name),
            SOON,
            || (node.state_of(id, a).as_deref() == Some("cancelled")).then_some(()),
        );
    }
    // Nothing is left to run: A4's command is dead (above), and A3 (18) and A5 (20) are final
    // on their nodes without having started.
    let log_now = log_lines(&log);
    for a in [18, 20] {
        assert!(
            !logged(&log, "start", id, a),
            "activity {a} started after the cancel: {log_now:?}"
        );
    }

    // Each partner's result comes back; then the controller's view is complete.
    wait_for("both partition results", SOON, || {
        let status = controller.status(id);
        status["partitions"]
            .as_array()?
            .iter()
            .all(|p| p["finished"] == true)
            .then_some(status)
    });
    let status = controller.status(id);
    assert_eq!(status["state"], "cancelled", "{status:#}");
    for a in [18, 20] {
        assert!(
            status_activity(&status, a)["started_ms"].is_null(),
            "activity {a} never started:\n{status:#}"
        );
    }
    for a in [18, 19, 20] {
        let view = status_activity(&status, a);
        assert_eq!(view["state"], "cancelled", "activity {a}:\n{status:#}");
        assert!(
            view["detail"]
                .as_str()
                .is_some_and(|d| d.contains("cancelled by an operator")),
            "activity {a}:\n{status:#}"
        );
    }
    // A2 (17) finished before the cancel and told the controller at once (responseImmediate).
    assert_eq!(
        status_activity(&status, 17)["state"],
        "succeeded",
        "{status:#}"
    );
    let table = controller.cli(&["status", &ids], CLI_TIMEOUT);
    table.expect_code(0, "status");
    eprintln!("{}", table.stdout);
    assert!(
        table.stdout.contains("cancelled by an operator"),
        "{}",
        table.stdout
    );

    // The history: the operator's action, and the transitions with their partners.
    let events = history(&controller, id);
    let has = |partner: &str, activity: Option<u64>, what: &str| {
        events.iter().any(|e| {
            e["partner"].as_str() == Some(partner)
                && e["activity"].as_u64() == activity
                && e["what"].as_str().is_some_and(|w| w.contains(what))
        })
    };
    assert!(
        events.iter().any(|e| e["what"]
            .as_str()
            .is_some_and(|w| w.starts_with("operator: cancel"))),
        "no cancel in the history: {events:#?}"
    );
    assert!(has("P1", None, "partition 1 deployed"), "{events:#?}");
    assert!(has("P2", None, "partition 2 deployed"), "{events:#?}");
    assert!(has("P1", Some(17), "A2 (17) started"), "{events:#?}");
    assert!(has("P1", Some(17), "A2 (17) succeeded"), "{events:#?}");
    let out = controller.cli(&["history", &ids], CLI_TIMEOUT);
    out.expect_code(0, "history");
    eprintln!("{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines[0].starts_with("TIME") && lines[0].contains("PARTNER"),
        "{}",
        out.stdout
    );
    assert!(lines[1].starts_with("+0.000s"), "{}", out.stdout);
    assert_eq!(lines.len(), events.len() + 1, "{}", out.stdout);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("P1") && l.contains("A2 (17) succeeded")),
        "{}",
        out.stdout
    );
    assert!(
        lines.iter().any(|l| l.contains("operator: cancel")),
        "{}",
        out.stdout
    );
    // A clock time `HH:MM:SS.mmm` on every line.
    for l in &lines[1..] {
        let clock = l.split_whitespace().nth(1).unwrap_or("");
        assert!(
            clock.len() == 12 && clock.as_bytes()[2] == b':' && clock.as_bytes()[8] == b'.',
            "no clock time in {l:?}"
        );
    }
    // What the nodes report after the cancel is kept where it adds to what the controller
    // knew: A1 (16) succeeded on P1 before the cancel (the controller heard of it only in P1's
    // partition result: it is not responseImmediate), and A4 (19) had started on P2 when its
    // command was killed.
    let mut problems = Vec::new();
    if status_activity(&status, 16)["state"] != "succeeded" {
        problems.push(format!(
            "A1 (16) succeeded on P1 before the cancel, but the controller shows it {}",
            status_activity(&status, 16)["state"]
        ));
    }
    if status_activity(&status, 19)["started_ms"]
        .as_u64()
        .is_none()
    {
        problems.push("A4 (19) ran on P2 until the cancel killed it, but the controller shows it never started".to_owned());
    }
    if !has("P2", Some(19), "A4 (19) started") {
        problems.push("the history has no start of A4 (19) on P2".to_owned());
    }
    assert!(
        problems.is_empty(),
        "{}\n{status:#}\n{events:#?}",
        problems.join("\n")
    );
    p1.check_alive();
    p2.check_alive();
}
