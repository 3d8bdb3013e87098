//! Roaming nodes and delivery that survives churn, on the real binaries: a node restarted on
//! another port, and one moved to another address of its network namespace, keep receiving
//! their notifications (peers are addressed by peer id: a partner whose delivery fails asks
//! the controller where the node is now); and a churn run, a node's link cut and restored
//! every two seconds for a minute (one cut lasting 12 s) while 50 instances are submitted and
//! run: deliveries cross the cuts, all complete, no activity runs twice.
//!
//! The namespace tests need root and `ip netns`; they skip otherwise (`scripts/test` lists
//! the skips; with `MOBIWF_REQUIRE_NETNS=1`, as in CI, they fail).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    Controller, Netns, Node, NodeSpec, PAPER_PLACEMENT, activity_lines, assert_all_succeeded,
    http_get, logging_workflow, metric, paper_workflow_with, wait_deployed_and_offered, wait_for,
};
use mobiwf_tests::scratch;

/// The paper's workflow with A2 (17, on P1) manual: the instance waits for a person there.
fn manual_a2(dir: &Path) -> PathBuf {
    let file = dir.join("workflow.xml");
    let xml = paper_workflow_with(|id| {
        if id == 17 {
            "<kind>manual</kind>".to_owned()
        } else {
            String::new()
        }
    });
    std::fs::write(&file, xml).unwrap();
    file
}

/// P2's activities (A4, A5) started once each since it last started.
fn assert_p2_started_each_once(p2: &Node) {
    let page = wait_for("P2's /metrics", Duration::from_secs(30), || {
        p2.metrics().ok()
    });
    let started = metric(&page, "mobiwf_activities_started_total", &[]);
    assert_eq!(
        started, 2.0,
        "P2 should have started A4 and A5 once:\n{page}"
    );
}

/// The node whose partition document names P2's old address: P1 completes A2 while P2 is
/// down, P2 comes back on another port, and P1's waiting notification reaches it there.
#[test]
fn a_node_restarted_on_another_port_keeps_receiving_its_notifications() {
    let started = Instant::now();
    let dir = scratch("roaming-port").unwrap();
    let workflow = manual_a2(&dir);
    let (controller, mut p1, mut p2) = mobiwf_tests::harness::paper_mesh(&dir);
    let id = controller.submit(&workflow);
    wait_deployed_and_offered(&controller, &p1, id);
    let old = p2.address.clone();

    p2.kill();
    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2 on P1");
    let new = p2.restart_on("/ip4/127.0.0.1/tcp/0", "127.0.0.1:0");
    eprintln!("P2 moved from {old} to {new}");
    let back = Instant::now();
    controller
        .wait(id, 60)
        .expect_code(0, "wait for the instance after P2 came back elsewhere");
    eprintln!("the instance ended {:?} after P2 came back", back.elapsed());
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    assert_p2_started_each_once(&p2);
    let nodes = controller.cli(&["nodes", "--json"], Duration::from_secs(30));
    assert!(
        nodes.stdout.contains(&new),
        "the controller should know P2's new address:\n{}",
        nodes.stdout
    );

    // A second instance is deployed to P2 where it is now.
    let id = controller.submit(&workflow);
    wait_deployed_and_offered(&controller, &p1, id);
    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2 on P1");
    controller
        .wait(id, 60)
        .expect_code(0, "the second instance");
    p1.check_alive();
    p2.check_alive();
    eprintln!(
        "a_node_restarted_on_another_port_keeps_receiving_its_notifications: {:?}",
        started.elapsed()
    );
}

/// A controller on the host, P1 on the host, P2 in `net`; the controller's failure detector
/// waits `suspect_after` seconds.
fn mesh_with_p2_in(net: &Netns, dir: &Path, suspect_after: &str) -> (Controller, Node, Node) {
    let on_host = format!("/ip4/{}/tcp/0", net.host_ip);
    let controller = Controller::start_with(
        &dir.join("controller"),
        &on_host,
        &["--suspect-after", suspect_after],
    );
    let mut p1_spec = NodeSpec::loopback(&dir.join("p1"), "P1", "1,2,3", &controller.address);
    p1_spec.listen = on_host;
    let p1 = Node::start(p1_spec);
    let mut p2_spec = NodeSpec::loopback(&dir.join("p2"), "P2", "1,3", &controller.address);
    p2_spec.listen = format!("/ip4/{}/tcp/0", net.ns_ip);
    p2_spec.api = format!("{}:0", net.ns_ip);
    p2_spec.netns = Some(net.name.clone());
    let p2 = Node::start(p2_spec);
    controller.wait_registered(&["P1", "P2"]);
    (controller, p1, p2)
}

/// P2 moves to another address of its network (the old one is gone) and comes back there:
/// the notification P1 holds for it, staged with the old address, reaches it.
#[test]
fn a_node_that_moved_to_another_address_keeps_receiving_its_notifications() {
    let started = Instant::now();
    let Some(mut net) = Netns::create_or_skip("m") else {
        return;
    };
    let dir = scratch("roaming-move").unwrap();
    let workflow = manual_a2(&dir);
    let (controller, mut p1, mut p2) = mesh_with_p2_in(&net, &dir, "30");
    let id = controller.submit(&workflow);
    wait_deployed_and_offered(&controller, &p1, id);

    p2.kill();
    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2 on P1");
    net.move_to(7);
    let new = p2.restart_on(
        &format!("/ip4/{}/tcp/0", net.ns_ip),
        &format!("{}:0", net.ns_ip),
    );
    eprintln!("P2 moved to {new}");
    controller
        .wait(id, 60)
        .expect_code(0, "wait for the instance after P2 moved");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    assert_p2_started_each_once(&p2);
    p1.check_alive();
    p2.check_alive();
    eprintln!(
        "a_node_that_moved_to_another_address_keeps_receiving_its_notifications: {:?}",
        started.elapsed()
    );
}

/// Failed sends to partners so far, of P1 and the controller (both outside the namespace).
fn send_failures_to_partners(p1: &Node, controller: &Controller) -> f64 {
    [
        p1.metrics().unwrap(),
        http_get(&controller.api, "/metrics").unwrap(),
    ]
    .iter()
    .map(|page| metric(page, "mobiwf_send_failures_total", &[("peer", "partner")]))
    .sum()
}

/// How many instances the churn run starts, and over how long (all submitted well before the
/// churn ends).
const SUBMIT_FOR: Duration = Duration::from_secs(50);
const CHURN_INSTANCES: u64 = 50;
/// How long the churn lasts, and each half of one cycle (link down, link up).
const CHURN_FOR: Duration = Duration::from_secs(60);
const CHURN_HALF_CYCLE: Duration = Duration::from_secs(2);
/// Which cut lasts [`LONG_CUT`] instead of a half cycle, and how long. A 2 s cut fails no
/// send: TCP holds a request over it and delivers it when the link returns. Past the ping
/// timeout and the request timeout (10 s) the connection is given up, sends fail and are
/// tried again until the link returns.
const LONG_CUT_NUMBER: u32 = 8;
const LONG_CUT: Duration = Duration::from_secs(12);

/// P2's link is cut and restored every two seconds for a minute (one cut lasting 12 s) while
/// 50 instances, submitted over that minute, run across P1 and P2: deliveries cross the cuts
/// (sends fail in the long one and are tried again), every instance succeeds and every
/// activity ran exactly once.
#[test]
fn churn_fifty_instances_complete_and_nothing_runs_twice() {
    let started = Instant::now();
    let Some(net) = Netns::create_or_skip("c") else {
        return;
    };
    let dir = scratch("roaming-churn").unwrap();
    let log = dir.join("ran.log");
    let workflow = logging_workflow(&dir, &log, Duration::from_millis(100));
    // The cuts are short: the controller must not give P2 up meanwhile.
    let (controller, mut p1, mut p2) = mesh_with_p2_in(&net, &dir, "30");

    // One submission a second for 50 s, each cut at least 2 s long: every cut has
    // instances submitted while P2 is unreachable, whose deployment and notifications to P2
    // can only get through after it.
    let every = SUBMIT_FOR / u32::try_from(CHURN_INSTANCES).unwrap();
    let failures_before = send_failures_to_partners(&p1, &controller);
    let churn_started = Instant::now();
    let mut ids = Vec::new();
    let mut submitted_while_cut = 0;
    let mut cuts = 0;
    let mut up = true;
    let mut next_toggle = Instant::now() + CHURN_HALF_CYCLE;
    let mut next_submit = Instant::now();
    while churn_started.elapsed() < CHURN_FOR {
        let now = Instant::now();
        if now >= next_toggle {
            up = !up;
            net.link(up);
            if !up {
                cuts += 1;
            }
            let half = if !up && cuts == LONG_CUT_NUMBER {
                LONG_CUT
            } else {
                CHURN_HALF_CYCLE
            };
            next_toggle += half;
        }
        if (ids.len() as u64) < CHURN_INSTANCES && now >= next_submit {
            ids.push(controller.submit(&workflow));
            if !up {
                submitted_while_cut += 1;
            }
            next_submit += every;
        }
        p1.check_alive();
        p2.check_alive();
        std::thread::sleep(Duration::from_millis(20));
    }
    net.link(true);
    eprintln!(
        "{cuts} cuts in {:?}, {} instances submitted, {submitted_while_cut} of them while P2 \
         was cut off",
        churn_started.elapsed(),
        ids.len()
    );
    assert_eq!(ids.len() as u64, CHURN_INSTANCES);
    assert!(cuts >= 10, "only {cuts} cuts");
    assert!(
        submitted_while_cut >= 10,
        "only {submitted_while_cut} instances were submitted while P2 was cut off"
    );

    for id in &ids {
        controller
            .wait(*id, 120)
            .expect_code(0, &format!("wait for instance {id} after the churn"));
        assert_all_succeeded(&controller.status(*id), &PAPER_PLACEMENT);
    }
    let ran = activity_lines(&log);
    for id in &ids {
        for (activity, _) in PAPER_PLACEMENT {
            assert_eq!(
                ran.get(&(*id, activity)).copied(),
                Some(1),
                "instance {id} activity {activity} should have run once"
            );
        }
    }
    assert_eq!(
        ran.len() as u64,
        CHURN_INSTANCES * PAPER_PLACEMENT.len() as u64
    );
    // Deliveries crossed the cuts: sends to the partners failed during the churn and were
    // tried again until acknowledged (every instance above succeeded, each activity once).
    let failed = send_failures_to_partners(&p1, &controller) - failures_before;
    assert!(
        failed > 0.0,
        "no send to a partner failed during the churn: no delivery crossed a cut"
    );
    for (name, node) in [("P1", &p1), ("P2", &p2)] {
        wait_for(
            format!("{name}'s outbox to be empty"),
            Duration::from_secs(30),
            || {
                let page = node.metrics().ok()?;
                (metric(&page, "mobiwf_outbox_depth", &[]) == 0.0).then_some(())
            },
        );
    }
    eprintln!(
        "churn_fifty_instances_complete_and_nothing_runs_twice: {:?}",
        started.elapsed()
    );
}
