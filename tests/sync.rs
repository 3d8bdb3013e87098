//! Task classes across partners, with the real binaries: the controller's synchronization
//! manager never lets two activities of conflicting classes run at once, whichever node runs
//! them. Each command records its own start and end (and, when long, a heartbeat) in its
//! node's log with the machine's clock, so overlaps are read from what ran, not from what the
//! controller believes: 20 instances of a self-conflicting class on two partners never overlap;
//! when the holder's node is SIGKILLed mid-task, its command dies with its lease and the class
//! passes to a waiter on the other node once the failure detector suspects the dead one; when
//! an operator removes the holder's node, alive and mid-task, the class passes only once the
//! holder's lease ran out there and its command died; 100 requests on two conflicting classes
//! all finish, never overlapping.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use mobiwf_node::executor::Wrapper;
use mobiwf_tests::harness::{Controller, Node, start_nodes, wait_for, xml_text};
use mobiwf_tests::scratch;

/// How long the tests wait for an instance to end.
const WAIT_SECS: u64 = 120;

/// The class document these tests apply: `press` excludes itself (one press at a time);
/// `paint` and `dry` exclude each other but not themselves.
const CLASSES: &str = r#"<classes>
  <class id="press"><conflicts>press</conflicts></class>
  <class id="paint"><conflicts>dry</conflicts></class>
  <class id="dry"/>
</classes>
"#;

/// One activity of `class` on partner `partner` ("P1" or "P2"), running `command`.
fn one_activity(dir: &Path, name: &str, partner: &str, class: &str, command: &str) -> PathBuf {
    let xml = format!(
        "<workflow id=\"7\"><description>{name}</description><activities>\
           <activity id=\"1\"><nameActivity>{name}</nameActivity><activityTypeId>1</activityTypeId>\
           <preconditions/><command>{}</command><class>{class}</class></activity>\
         </activities>\
         <activityTypes><activityType id=\"1\"/></activityTypes>\
         <partitions><partition id=\"1\"><partnerId>1</partnerId><activityId>1</activityId></partition></partitions>\
         <partners><partner id=\"1\"><name>{partner}</name><skills><activityTypeId>1</activityTypeId></skills></partner></partners>\
         </workflow>",
        xml_text(command)
    );
    let file = dir.join(format!("{name}.xml"));
    std::fs::write(&file, xml).unwrap();
    file
}

/// A command that logs `<instance> <tag> start <ns>`, runs `body`, then logs `<instance> <tag>
/// end <ns>` (`date +%s%N`: the machine's clock, which both nodes share).
fn timed(log: &Path, tag: &str, body: &str) -> String {
    let log = log.display();
    format!(
        "echo \"$MOBIWF_INSTANCE {tag} start $(date +%s%N)\" >> '{log}'; {body}; \
         echo \"$MOBIWF_INSTANCE {tag} end $(date +%s%N)\" >> '{log}'"
    )
}

/// A run as its log tells it: which instance, under which tag, from when to when (ns); `end`
/// is the last line the command wrote (its end, or its last heartbeat when it was killed).
#[derive(Debug, Clone)]
struct Span {
    instance: u64,
    tag: String,
    start: u128,
    end: u128,
}

/// The spans of every log in `logs`.
fn spans(logs: &[PathBuf]) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for log in logs {
        for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let [instance, tag, what, at] = words[..] else {
                panic!("unexpected line {line:?} in {}", log.display());
            };
            let (instance, at) = (instance.parse().unwrap(), at.parse().unwrap());
            match what {
                "start" => spans.push(Span {
                    instance,
                    tag: tag.to_owned(),
                    start: at,
                    end: at,
                }),
                "end" | "alive" => {
                    let span = spans
                        .iter_mut()
                        .rev()
                        .find(|s| s.instance == instance && s.tag == tag)
                        .unwrap_or_else(|| panic!("{line:?} before its start"));
                    span.end = span.end.max(at);
                }
                _ => panic!("unexpected line {line:?}"),
            }
        }
    }
    spans.sort_by_key(|s| s.start);
    spans
}

/// Panics when two spans whose tags conflict (by `conflict`) overlap in time.
fn assert_apart(spans: &[Span], conflict: impl Fn(&str, &str) -> bool) {
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            if conflict(&a.tag, &b.tag) {
                assert!(
                    a.end < b.start || b.end < a.start,
                    "{a:?} and {b:?} ran at once; every span: {spans:#?}"
                );
            }
        }
    }
}

/// A controller with `detector` options, the class document applied, and partners P1 and P2.
fn mesh(dir: &Path, detector: &[&str]) -> (Controller, Node, Node) {
    let controller =
        Controller::start_with(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0", detector);
    let classes = dir.join("classes.xml");
    std::fs::write(&classes, CLASSES).unwrap();
    controller
        .cli(
            &["classes", "apply", classes.to_str().unwrap()],
            Duration::from_secs(30),
        )
        .expect_code(0, "classes apply");
    let mut nodes = start_nodes(dir, &controller, &[("P1", "1"), ("P2", "1")]).into_iter();
    let (Some(p1), Some(p2)) = (nodes.next(), nodes.next()) else {
        unreachable!("two nodes were started")
    };
    (controller, p1, p2)
}

#[test]
fn twenty_instances_of_a_self_conflicting_class_on_two_partners_never_overlap() {
    let dir = scratch("sync-press").unwrap();
    let (controller, _p1, _p2) = mesh(&dir, &[]);
    let logs = [dir.join("log-p1"), dir.join("log-p2")];
    let on_p1 = one_activity(
        &dir,
        "press-p1",
        "P1",
        "press",
        &timed(&logs[0], "press", "sleep 0.1"),
    );
    let on_p2 = one_activity(
        &dir,
        "press-p2",
        "P2",
        "press",
        &timed(&logs[1], "press", "sleep 0.1"),
    );
    let ids: Vec<u64> = (0..20)
        .map(|i| controller.submit(if i % 2 == 0 { &on_p1 } else { &on_p2 }))
        .collect();
    for id in &ids {
        controller
            .wait(*id, WAIT_SECS)
            .expect_code(0, "every instance ends with success");
    }
    let spans = spans(&logs);
    assert_eq!(spans.len(), 20, "each instance ran once: {spans:#?}");
    assert_apart(&spans, |_, _| true);
    let sync = controller.cli(&["sync", "show"], Duration::from_secs(30));
    sync.expect_code(0, "sync show");
    eprintln!("sync show at the end:\n{}", sync.stdout);
}

#[test]
fn a_hundred_requests_on_two_conflicting_classes_all_finish_apart() {
    let dir = scratch("sync-paint-dry").unwrap();
    let (controller, _p1, _p2) = mesh(&dir, &[]);
    let logs = [dir.join("log-p1"), dir.join("log-p2")];
    let docs = [
        one_activity(
            &dir,
            "paint-p1",
            "P1",
            "paint",
            &timed(&logs[0], "paint", "true"),
        ),
        one_activity(&dir, "dry-p2", "P2", "dry", &timed(&logs[1], "dry", "true")),
        one_activity(&dir, "dry-p1", "P1", "dry", &timed(&logs[0], "dry", "true")),
        one_activity(
            &dir,
            "paint-p2",
            "P2",
            "paint",
            &timed(&logs[1], "paint", "true"),
        ),
    ];
    let ids: Vec<u64> = (0..100).map(|i| controller.submit(&docs[i % 4])).collect();
    for id in &ids {
        controller
            .wait(*id, WAIT_SECS)
            .expect_code(0, "every instance ends with success");
    }
    let spans = spans(&logs);
    assert_eq!(spans.len(), 100, "each instance ran once");
    assert_apart(&spans, |a, b| a != b);
}

/// Kills the commands a killed node left running (their wrappers lead their own process
/// groups), so that nothing outlives the test; none should be left when the lease works.
fn kill_orphans(runs: &Path) -> usize {
    let mut killed = 0;
    for entry in std::fs::read_dir(runs).into_iter().flatten().flatten() {
        let dir = entry.path();
        if dir.join("exit").exists() {
            continue;
        }
        let claim = std::fs::read_to_string(dir.join("claim").join("pid")).unwrap_or_default();
        // A wrapper the lease killed may stay a zombie until something reaps it: dead.
        if let Some(wrapper) = Wrapper::parse(&claim).filter(|w| w.alive() && !zombie(w.pid)) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", wrapper.pid)])
                .status();
            killed += 1;
        }
    }
    killed
}

/// True when process `pid` has ended and waits to be reaped (state `Z` or `X`).
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            Some(rest.trim_start().starts_with(['Z', 'X']))
        })
        .unwrap_or(false)
}

/// A holder on P1 that beats every 0.1 s for up to a minute, and a waiter on P2 submitted
/// once the holder beats (it cannot have run yet): their instance ids.
fn held_and_waited(controller: &Controller, dir: &Path, logs: &[PathBuf; 2]) -> (u64, u64) {
    let beating = format!(
        "i=0; while [ $i -lt 600 ]; do echo \"$MOBIWF_INSTANCE press alive $(date +%s%N)\" >> '{}'; \
         sleep 0.1; i=$((i+1)); done",
        logs[0].display()
    );
    let holder = one_activity(
        dir,
        "holder",
        "P1",
        "press",
        &timed(&logs[0], "press", &beating),
    );
    let waiter = one_activity(
        dir,
        "waiter",
        "P2",
        "press",
        &timed(&logs[1], "press", "true"),
    );
    let first = controller.submit(&holder);
    wait_for("the holder to beat", Duration::from_secs(60), || {
        std::fs::read_to_string(&logs[0])
            .ok()
            .filter(|log| log.contains(" press alive "))
    });
    let second = controller.submit(&waiter);
    let status = controller.status(second);
    assert_ne!(
        status["activities"][0]["state"], "succeeded",
        "the waiter cannot have run while the holder holds the class: {status:#}"
    );
    (first, second)
}

/// Panics unless the holder's command (instance `first`) stopped before the waiter's
/// (`second`) started.
fn assert_holder_stopped_first(logs: &[PathBuf; 2], first: u64, second: u64) {
    let spans = spans(logs);
    let holder_span = spans.iter().find(|s| s.instance == first).unwrap();
    let waiter_span = spans.iter().find(|s| s.instance == second).unwrap();
    assert!(
        holder_span.end < waiter_span.start,
        "the holder's command beat until {} ns, after the waiter started at {} ns: {spans:#?}",
        holder_span.end,
        waiter_span.start
    );
}

#[test]
fn the_class_of_a_holder_killed_mid_task_passes_to_the_waiter_once_its_lease_ran_out() {
    let dir = scratch("sync-killed").unwrap();
    let detector = ["--probe-every", "0.25", "--suspect-after", "3"];
    let (controller, mut p1, _p2) = mesh(&dir, &detector);
    let logs = [dir.join("log-p1"), dir.join("log-p2")];
    let (first, second) = held_and_waited(&controller, &dir, &logs);
    p1.kill();
    controller
        .wait(second, WAIT_SECS)
        .expect_code(0, "the waiter runs once the holder's node is suspected");
    assert_holder_stopped_first(&logs, first, second);
    assert_eq!(
        kill_orphans(&dir.join("p1").join("runs")),
        0,
        "the lease killed the holder's command"
    );
}

#[test]
fn the_class_of_a_removed_holder_passes_on_only_once_its_lease_ran_out_there() {
    let dir = scratch("sync-removed").unwrap();
    // A lease of 4 s: the holder's command outlives a release at the removal for certain.
    let detector = ["--probe-every", "0.25", "--suspect-after", "8"];
    let (controller, p1, _p2) = mesh(&dir, &detector);
    let logs = [dir.join("log-p1"), dir.join("log-p2")];
    let (first, second) = held_and_waited(&controller, &dir, &logs);
    // P1 hangs mid-task (alive, its connections open, nothing answered or carried out):
    // only its lease, no longer kept up, stops the command it left running.
    p1.signal("STOP");
    controller
        .cli(&["nodes", "remove", "P1"], Duration::from_secs(30))
        .expect_code(0, "nodes remove P1");
    controller
        .wait(second, WAIT_SECS)
        .expect_code(0, "the waiter runs once the removed holder's lease ran out");
    assert_holder_stopped_first(&logs, first, second);
    assert_eq!(
        kill_orphans(&dir.join("p1").join("runs")),
        0,
        "the lease killed the holder's command"
    );
    p1.signal("CONT");
}
