//! Proves that a partner's notification survives a network cut: P2 runs in its own network
//! namespace behind a veth link; while the link is down, P1 finishes the manual A2 and fails to
//! notify P2 (its `/metrics` counts the failed sends); once the link is up again the
//! notification is delivered, the instance succeeds, and no activity of P2 started twice. How
//! soon after the link's return the delivery happens is the benchmark's to measure.
//!
//! Needs root and `ip netns`; skipped otherwise (`scripts/test` lists the skips; with
//! `MOBIWF_REQUIRE_NETNS=1`, as in CI, it fails).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    Controller, Netns, Node, NodeSpec, PAPER_PLACEMENT, assert_all_succeeded, metric,
    paper_workflow_with, wait_deployed_and_offered, wait_for,
};
use mobiwf_tests::scratch;

#[test]
fn notification_is_delivered_after_the_link_comes_back() {
    let started = Instant::now();
    let Some(net) = Netns::create_or_skip("n") else {
        return;
    };
    let dir = scratch("netns").unwrap();
    let workflow = dir.join("workflow.xml");
    std::fs::write(
        &workflow,
        paper_workflow_with(|id| {
            if id == 17 {
                "<kind>manual</kind>".to_owned()
            } else {
                String::new()
            }
        }),
    )
    .unwrap();

    let on_host = format!("/ip4/{}/tcp/0", net.host_ip);
    // Declared after `net`: dropped (killed) before the namespace is removed.
    let controller = Controller::start(&dir.join("controller"), &on_host);
    let mut p1_spec = NodeSpec::loopback(&dir.join("p1"), "P1", "1,2,3", &controller.address);
    p1_spec.listen = on_host.clone();
    let mut p1 = Node::start(p1_spec);
    let mut p2_spec = NodeSpec::loopback(&dir.join("p2"), "P2", "1,3", &controller.address);
    p2_spec.listen = format!("/ip4/{}/tcp/0", net.ns_ip);
    p2_spec.api = format!("{}:0", net.ns_ip);
    p2_spec.netns = Some(net.name.clone());
    let mut p2 = Node::start(p2_spec);
    controller.wait_registered(&["P1", "P2"]);

    let id = controller.submit(&workflow);
    wait_deployed_and_offered(&controller, &p1, id);

    net.link(false);
    let cut = Instant::now();
    p1.cli(&["complete", &id.to_string(), "17"])
        .expect_code(0, "complete A2 on P1");
    // Several failures: P1 keeps retrying while the link is down.
    let failures = wait_for(
        "P1's /metrics to count 3 failed notify sends to a partner",
        Duration::from_secs(90),
        || {
            p1.check_alive();
            let page = p1.metrics().ok()?;
            let n = metric(
                &page,
                "mobiwf_send_failures_total",
                &[("kind", "notify"), ("peer", "partner")],
            );
            (n >= 3.0).then_some(n)
        },
    );
    eprintln!(
        "P1 counted {failures} failed notify sends {:?} after the cut",
        cut.elapsed()
    );
    let page = p1.metrics().unwrap();
    let delivered = metric(
        &page,
        "mobiwf_messages_sent_total",
        &[("kind", "notify"), ("peer", "partner")],
    );
    assert_eq!(
        delivered, 0.0,
        "a notification got through the cut link:\n{page}"
    );
    net.link(true);
    let back = Instant::now();
    // P1 tries a failing peer again at least every 500 ms, and at once when it connects;
    // the deadline only stops a test that would otherwise wait forever.
    wait_for(
        "P2 to apply both notifications after the link came back",
        Duration::from_secs(60),
        || {
            let page = p2.metrics().ok()?;
            let n = metric(
                &page,
                "mobiwf_messages_received_total",
                &[("kind", "notify"), ("peer", "partner")],
            );
            (n >= 2.0).then_some(())
        },
    );
    eprintln!(
        "the notifications reached P2 {:?} after the link came back",
        back.elapsed()
    );

    controller
        .wait(id, 90)
        .expect_code(0, "wait for the instance after the link came back");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);

    let p2_page = wait_for("P2's /metrics", Duration::from_secs(30), || {
        p2.metrics().ok()
    });
    let started_p2 = metric(&p2_page, "mobiwf_activities_started_total", &[]);
    assert_eq!(
        started_p2, 2.0,
        "P2 should have started A4 and A5 once each:\n{p2_page}"
    );
    let p1_page = p1.metrics().unwrap();
    let started_p1 = metric(&p1_page, "mobiwf_activities_started_total", &[]);
    assert_eq!(
        started_p1, 3.0,
        "P1 should have started A1, A2, A3 once each:\n{p1_page}"
    );
    let sent = metric(
        &p1_page,
        "mobiwf_messages_sent_total",
        &[("kind", "notify"), ("peer", "partner")],
    );
    assert_eq!(
        sent, 2.0,
        "P1 should have delivered two notifications (A2, A3) to P2:\n{p1_page}"
    );
    let notified = metric(
        &p2_page,
        "mobiwf_messages_received_total",
        &[("kind", "notify"), ("peer", "partner")],
    );
    assert_eq!(
        notified, 2.0,
        "P2 should have applied two notifications (A2, A3):\n{p2_page}"
    );
    wait_for("P1's outbox to be empty", Duration::from_secs(30), || {
        let page = p1.metrics().ok()?;
        (metric(&page, "mobiwf_outbox_depth", &[]) == 0.0).then_some(())
    });
    p1.check_alive();
    p2.check_alive();
    eprintln!(
        "notification_is_delivered_after_the_link_comes_back: {:?}",
        started.elapsed()
    );
}
