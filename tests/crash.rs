//! Proves crash recovery of the real binaries: with several instances of a two-partner
//! workflow under way, a partner node (then, in the second test, the controller) is killed with
//! SIGKILL and restarted on the same data directory and address; every instance still
//! succeeds, and every activity's command ran exactly once (each appends one
//! `instance activity` line to a shared file).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::path::Path;
use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    Controller, Node, NodeSpec, PAPER_PLACEMENT, activity_lines, assert_all_succeeded,
    logging_workflow, wait_for,
};
use mobiwf_tests::scratch;

/// Instances submitted per test.
const INSTANCES: u64 = 4;
/// The paper's activities.
const ACTIVITIES: [u64; 5] = [16, 17, 18, 19, 20];

/// Which component the test kills.
#[derive(Clone, Copy, Debug)]
enum Victim {
    PartnerP2,
    Controller,
}

/// Commands a node started that have not recorded their exit status (see the node's
/// `executor`: `runs/<instance>-<partition>-<activity>/claim` without `exit`).
fn running_commands(runs: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(runs) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join("claim").exists() && !e.path().join("exit").exists())
        .count()
}

fn crash_and_recover(victim: Victim) {
    let started = Instant::now();
    let dir = scratch(&format!("crash-{victim:?}")).unwrap();
    let log = dir.join("ran.log");
    // Every command takes a little time: the crash comes while some run.
    let file = logging_workflow(&dir, &log, Duration::from_millis(400));

    let mut controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");
    let mut p1 = Node::start(NodeSpec::loopback(
        &dir.join("p1"),
        "P1",
        "1,2,3",
        &controller.address,
    ));
    let mut p2 = Node::start(NodeSpec::loopback(
        &dir.join("p2"),
        "P2",
        "1,3",
        &controller.address,
    ));
    controller.wait_registered(&["P1", "P2"]);

    let ids: Vec<u64> = (0..INSTANCES).map(|_| controller.submit(&file)).collect();

    // Kill once work is under way: P2 while one of its commands is running (claimed, no exit
    // status yet), the controller as soon as any command has finished.
    let p2_runs = dir.join("p2").join("runs");
    let under_way = || match victim {
        Victim::PartnerP2 => running_commands(&p2_runs) > 0,
        Victim::Controller => !activity_lines(&log).is_empty(),
    };
    wait_for("the first commands to run", Duration::from_secs(60), || {
        p1.check_alive();
        p2.check_alive();
        under_way().then_some(())
    });
    match victim {
        Victim::PartnerP2 => p2.kill(),
        Victim::Controller => controller.kill(),
    }
    let at_kill = activity_lines(&log);
    if let Victim::PartnerP2 = victim {
        eprintln!(
            "P2 killed with {} of its commands running",
            running_commands(&p2_runs)
        );
    }
    let total = usize::try_from(INSTANCES).unwrap() * ACTIVITIES.len();
    eprintln!(
        "{victim:?} killed with {} of {total} commands done",
        at_kill.len()
    );
    assert!(
        at_kill.len() < total,
        "everything had finished before the kill; the test proves nothing"
    );
    // Work goes on while it is down. Without the controller, partners still notify each
    // other: A3 (18, on P1) runs only after P2's A4 (19) told P1 it finished.
    match victim {
        Victim::Controller => {
            let a3_before = at_kill.keys().filter(|(_, a)| *a == 18).count();
            wait_for(
                "an A3 to run while the controller is down",
                Duration::from_secs(60),
                || {
                    let a3_now = activity_lines(&log)
                        .keys()
                        .filter(|(_, a)| *a == 18)
                        .count();
                    (a3_now > a3_before).then_some(())
                },
            );
        }
        Victim::PartnerP2 => {
            // Commands already started finish while it is down (their wrapper outlives it).
            wait_for(
                "P2's running commands to end while it is down",
                Duration::from_secs(60),
                || (running_commands(&p2_runs) == 0).then_some(()),
            );
        }
    }
    match victim {
        Victim::PartnerP2 => p2.restart(),
        Victim::Controller => controller.restart(),
    }

    for &id in &ids {
        let out = controller.wait(id, 90);
        out.expect_code(
            0,
            &format!("wait for instance {id} after the {victim:?} restart"),
        );
        assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    }

    let seen = activity_lines(&log);
    let mut problems = Vec::new();
    for &id in &ids {
        for a in ACTIVITIES {
            match seen.get(&(id, a)) {
                Some(1) => {}
                Some(n) => problems.push(format!("instance {id} activity {a} ran {n} times")),
                None => problems.push(format!("instance {id} activity {a} never ran")),
            }
        }
    }
    for (i, a) in seen.keys() {
        if !ids.contains(i) || !ACTIVITIES.contains(a) {
            problems.push(format!("unexpected line: instance {i} activity {a}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    p1.check_alive();
    p2.check_alive();
    controller.check_alive();
    eprintln!("crash_and_recover({victim:?}): {:?}", started.elapsed());
}

#[test]
fn partner_killed_and_restarted_every_activity_runs_once() {
    crash_and_recover(Victim::PartnerP2);
}

#[test]
fn controller_killed_and_restarted_every_activity_runs_once() {
    crash_and_recover(Victim::Controller);
}
