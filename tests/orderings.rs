//! Ordering requirements between definitions with the real binaries (a controller and partners
//! P1 and P2 as processes): definitions P1 (T11 then T12, on P1) and P2 (T21 then T22, on P2)
//! deployed, the seed ordering applied (`orderings apply`, in XML and in PDL; `orderings show`
//! and a restart keep it). The instance that asks first for an ordered task goes first on every
//! pair: while the earlier one's first task is held at a gate, the later one's first task is
//! `synchronizing` and `status`, `history` and `sync show` say after what it waits; once the
//! gate opens both instances succeed, and the commands' own logs (the machine's clock) show
//! each earlier task ended before its paired later task started. Both ways round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_tests::harness::{CLI_TIMEOUT, Controller, start_nodes, wait_for, xml_text};
use mobiwf_tests::scratch;
use serde_json::Value;

/// How long the tests wait for an instance to end, or for a state to show.
const WAIT_SECS: u64 = 120;

/// A command that logs `<instance> <task> start <ns>`, waits for `gate` when given (at most a
/// minute), then logs `<instance> <task> end <ns>` (`date +%s%N`: the machine's clock, which
/// both nodes share).
fn timed(log: &Path, task: &str, gate: Option<&Path>) -> String {
    let log = log.display();
    let wait = gate.map_or(String::new(), |g| {
        format!(
            "i=0; while [ ! -f '{}' ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; ",
            g.display()
        )
    });
    format!(
        "echo \"$MOBIWF_INSTANCE {task} start $(date +%s%N)\" >> '{log}'; {wait}\
         echo \"$MOBIWF_INSTANCE {task} end $(date +%s%N)\" >> '{log}'"
    )
}

/// A definition of two tasks, `second` after `first`, on partner `partner`, each logging to
/// `log`; `first` waits for `gate`.
fn definition(
    dir: &Path,
    partner: &str,
    [first, second]: [&str; 2],
    log: &Path,
    gate: &Path,
) -> PathBuf {
    let activity = |id: u64, name: &str, pre: &str, command: String| {
        format!(
            "<activity id=\"{id}\"><nameActivity>{name}</nameActivity>\
             <activityTypeId>1</activityTypeId><preconditions>{pre}</preconditions>\
             <command>{}</command></activity>",
            xml_text(&command)
        )
    };
    let xml = format!(
        "<workflow id=\"7\"><description>{partner}</description><activities>{}{}</activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         <partitions><partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId>\
         <activityId>2</activityId></partition></partitions>\
         <partners><partner id=\"1\"><name>{partner}</name><skills><activityTypeId>1</activityTypeId>\
         </skills></partner></partners></workflow>",
        activity(1, first, "", timed(log, first, Some(gate))),
        activity(
            2,
            second,
            "<preconditionId>1</preconditionId>",
            timed(log, second, None)
        ),
    );
    let file = dir.join(format!("{partner}.xml"));
    std::fs::write(&file, xml).unwrap();
    file
}

/// When each (instance, task) started and ended, from the logs.
fn times(logs: &[PathBuf], instance: u64, task: &str) -> (u128, u128) {
    let mut start = None;
    let mut end = None;
    for log in logs {
        for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let [i, t, what, at] = words[..] else {
                panic!("unexpected line {line:?} in {}", log.display());
            };
            if i.parse::<u64>().unwrap() != instance || t != task {
                continue;
            }
            let at: u128 = at.parse().unwrap();
            match what {
                "start" => start = Some(at),
                "end" => end = Some(at),
                _ => panic!("unexpected line {line:?}"),
            }
        }
    }
    match (start, end) {
        (Some(s), Some(e)) => (s, e),
        _ => panic!("instance {instance}'s {task} did not run to its end: {logs:?}"),
    }
}

fn started(controller: &Controller, name: &str) -> u64 {
    let out = controller.cli(&["start", name], CLI_TIMEOUT);
    out.expect_code(0, &format!("start {name}"));
    out.stdout.trim().parse().unwrap()
}

/// Waits until `log` shows that `task` of `instance` started.
fn wait_started(log: &Path, instance: u64, task: &str) {
    let line = format!("{instance} {task} start ");
    wait_for(
        format!("{line}in {}", log.display()),
        Duration::from_secs(WAIT_SECS),
        || {
            std::fs::read_to_string(log)
                .ok()
                .filter(|l| l.lines().any(|l| l.starts_with(&line)))
        },
    );
}

fn activity<'a>(status: &'a Value, name: &str) -> &'a Value {
    let all = status["activities"].as_array().unwrap();
    all.iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no {name}: {status:#}"))
}

/// `orderings apply` of the seed ordering written in `document` (`seed.xml` or `seed.pdl`),
/// checked with `orderings show` after a restart of the controller.
fn apply_seed(controller: &mut Controller, document: &str) {
    let seed = mobiwf_tests::repo_root()
        .join("examples/orderings")
        .join(document);
    let out = controller.cli(&["orderings", "apply", seed.to_str().unwrap()], CLI_TIMEOUT);
    out.expect_code(0, "orderings apply");
    assert!(
        out.stdout
            .contains("ordering document applied: 1 orderings"),
        "{}",
        out.stdout
    );
    controller.restart();
    let shown = controller.cli(&["orderings", "show"], CLI_TIMEOUT);
    shown.expect_code(0, "orderings show");
    assert!(
        shown.stdout.contains("P1") && shown.stdout.contains("T12") && shown.stdout.contains("T22"),
        "{}",
        shown.stdout
    );
}

/// Definitions P1 and P2 deployed under their names, each command logging to `logs`; only the
/// first task of `first_def` waits for `gate` (the other's is already open).
fn deploy_both(
    controller: &Controller,
    dir: &Path,
    logs: &[PathBuf; 2],
    first_def: &str,
    gate: &Path,
) {
    let open = dir.join("open");
    std::fs::write(&open, "").unwrap();
    let (p1_gate, p2_gate) = if first_def == "P1" {
        (gate, open.as_path())
    } else {
        (open.as_path(), gate)
    };
    let p1 = definition(dir, "P1", ["T11", "T12"], &logs[0], p1_gate);
    let p2 = definition(dir, "P2", ["T21", "T22"], &logs[1], p2_gate);
    for (file, name) in [(&p1, "P1"), (&p2, "P2")] {
        let out = controller.cli(
            &["deploy", file.to_str().unwrap(), "--name", name],
            CLI_TIMEOUT,
        );
        out.expect_code(0, "deploy");
    }
}

/// The seed ordering, with `first_def` (P1 or P2) started first: its first task is held at a
/// gate while the other instance's paired task waits after it, in `synchronizing`.
fn one_order(test: &str, document: &str, first_def: &str) {
    let dir = scratch(test).unwrap();
    let mut controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let _nodes = start_nodes(&dir, &controller, &[("P1", "1"), ("P2", "1")]);
    let logs = [dir.join("log-p1"), dir.join("log-p2")];
    let gate = dir.join("gate");
    deploy_both(&controller, &dir, &logs, first_def, &gate);
    apply_seed(&mut controller, document);

    let (second_def, [first_task, first_next], [later_task, later_next], first_log) =
        if first_def == "P1" {
            ("P2", ["T11", "T12"], ["T21", "T22"], &logs[0])
        } else {
            ("P1", ["T21", "T22"], ["T11", "T12"], &logs[1])
        };
    let first = started(&controller, first_def);
    // It asked for its first task (and got the first ticket) before its command started.
    wait_started(first_log, first, first_task);
    let later = started(&controller, second_def);
    let words = format!("after instance {first}'s {first_task}");
    let status = wait_for(
        format!("instance {later}'s {later_task} to wait {words}"),
        Duration::from_secs(WAIT_SECS),
        || {
            let status = controller.status(later);
            let a = activity(&status, later_task);
            let waits = a["state"] == "synchronizing"
                && a["detail"].as_str().is_some_and(|d| d.contains(&words));
            waits.then_some(status)
        },
    );
    let table = controller.cli(&["status", &later.to_string()], CLI_TIMEOUT);
    assert!(
        table.stdout.contains(&words),
        "{}\n{status:#}",
        table.stdout
    );
    let history = serde_json::to_string(&controller.history(later)).unwrap();
    assert!(
        history.contains(&format!(
            "waits for the relative order of its instance: {words}"
        )),
        "{history}"
    );
    let sync = controller.cli(&["sync", "show"], CLI_TIMEOUT);
    assert!(sync.stdout.contains(&words), "{}", sync.stdout);

    std::fs::write(&gate, "").unwrap();
    for id in [first, later] {
        controller
            .wait(id, WAIT_SECS)
            .expect_code(0, "both instances succeed");
    }
    for (earlier, then) in [(first_task, later_task), (first_next, later_next)] {
        let (_, ended) = times(&logs, first, earlier);
        let (began, _) = times(&logs, later, then);
        assert!(
            ended < began,
            "instance {first}'s {earlier} ended at {ended} ns, after instance {later}'s {then} \
             started at {began} ns"
        );
    }
}

#[test]
fn the_instance_of_p1_that_asks_first_goes_first_on_every_pair() {
    one_order("orderings-p1-first", "seed.xml", "P1");
}

#[test]
fn the_instance_of_p2_that_asks_first_goes_first_on_every_pair() {
    one_order("orderings-p2-first", "seed.pdl", "P2");
}
