//! A node nobody can dial is reached through a relay, on the real binaries:
//! P2 runs in its own network namespace and listens only on the namespace's own 127.0.0.1
//! (the test proves that the host cannot connect there, while inside the namespace the port
//! is open), started `--via-relay` (the controller's relay). It registers its circuit address
//! only; P1, outside, reaches it through the controller: the paper's workflow completes, each
//! activity once, and the controller counts the circuits it joined. After the controller (the
//! relay) is killed and restarted, P2 makes its reservation again and a new instance reaches it
//! the same way.
//!
//! Needs root and `ip netns`; skipped otherwise (`scripts/test` lists the skips; with
//! `MOBIWF_REQUIRE_NETNS=1`, as in CI, it fails).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::too_many_lines)] // end-to-end scenarios read best from top to bottom

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use mobiwf_tests::harness::{
    Controller, Netns, Node, NodeSpec, PAPER_PLACEMENT, activity_lines, assert_all_succeeded,
    http_get, logging_workflow, metric, wait_for,
};
use mobiwf_tests::scratch;

/// How many instances run before the relay restarts.
const INSTANCES: u64 = 3;

/// A port free on the host's loopback now (P2 listens on it inside its namespace: the host's
/// own 127.0.0.1 has nothing there).
fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    listener.local_addr().unwrap().port()
}

/// Whether a TCP connection to `addr` can be made from the host.
fn host_can_connect(addr: SocketAddr) -> bool {
    TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
}

/// Whether a TCP connection to 127.0.0.1:`port` can be made inside the namespace.
fn namespace_can_connect(net: &Netns, port: u16) -> bool {
    Command::new("ip")
        .args(["netns", "exec", &net.name, "bash", "-c"])
        .arg(format!("exec 3<>/dev/tcp/127.0.0.1/{port}"))
        .status()
        .is_ok_and(|s| s.success())
}

/// The controller's metric `name` (0 when it cannot be read).
fn controller_metric(controller: &Controller, name: &str) -> f64 {
    http_get(&controller.api, "/metrics").map_or(0.0, |page| metric(&page, name, &[]))
}

/// Runs `count` instances of `workflow` and checks each succeeded with the paper's placement.
fn run_instances(controller: &Controller, workflow: &Path, count: u64) -> Vec<u64> {
    let ids: Vec<u64> = (0..count).map(|_| controller.submit(workflow)).collect();
    for id in &ids {
        controller
            .wait(*id, 60)
            .expect_code(0, &format!("wait for instance {id}"));
        assert_all_succeeded(&controller.status(*id), &PAPER_PLACEMENT);
    }
    ids
}

#[test]
fn a_node_nobody_can_dial_takes_part_through_the_controllers_relay() {
    let started = Instant::now();
    let Some(net) = Netns::create_or_skip("r") else {
        return;
    };
    let dir = scratch("relay").unwrap();
    let log = dir.join("ran.log");
    let workflow = logging_workflow(&dir, &log, Duration::ZERO);

    // The controller and P1 on the host, where the namespace can reach them.
    let on_host = format!("/ip4/{}/tcp/0", net.host_ip);
    let mut controller = Controller::start_with(&dir.join("controller"), &on_host, &[]);
    let mut p1_spec = NodeSpec::loopback(&dir.join("p1"), "P1", "1,2,3", &controller.address);
    p1_spec.listen = on_host;
    let mut p1 = Node::start(p1_spec);
    // P2 in the namespace, listening on its own loopback only, through the controller's relay.
    let port = free_port();
    let mut p2_spec = NodeSpec::loopback(&dir.join("p2"), "P2", "1,3", &controller.address);
    p2_spec.listen = format!("/ip4/127.0.0.1/tcp/{port}");
    p2_spec.netns = Some(net.name.clone());
    p2_spec.extra = vec!["--via-relay".into()];
    let mut p2 = Node::start(p2_spec);
    controller.wait_registered(&["P1", "P2"]);

    // Nobody outside can dial P2: not at its port on the namespace's link address, not at
    // the host's own loopback; inside the namespace the port is open.
    let ns_ip: Ipv4Addr = net.ns_ip.parse().unwrap();
    assert!(
        namespace_can_connect(&net, port),
        "P2 should listen on 127.0.0.1:{port} in its namespace"
    );
    assert!(
        !host_can_connect(SocketAddr::from((ns_ip, port))),
        "the host reached P2's port on the namespace's link address"
    );
    assert!(
        !host_can_connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
        "something listens on the host's 127.0.0.1:{port}"
    );
    // What P2 registered is its circuit through the controller, and only that.
    let circuit = format!("{}/p2p-circuit/p2p/", controller.address);
    assert!(
        p2.address.starts_with(&circuit),
        "P2 published {} (expected a circuit through {})",
        p2.address,
        controller.address
    );
    let nodes = controller.cli(&["nodes", "--json"], Duration::from_secs(30));
    let nodes: serde_json::Value = serde_json::from_str(&nodes.stdout).unwrap();
    let registered = nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "P2")
        .map(|n| n["addrs"].clone())
        .unwrap();
    assert_eq!(registered, serde_json::json!([p2.address]), "{nodes:#}");

    let mut ids = run_instances(&controller, &workflow, INSTANCES);
    assert!(controller_metric(&controller, "mobiwf_relay_reservations_accepted_total") >= 1.0);
    let circuits = controller_metric(&controller, "mobiwf_relay_circuits_accepted_total");
    assert!(
        circuits >= 1.0,
        "P1 should have reached P2 through the controller's relay"
    );
    eprintln!("{INSTANCES} instances through the relay ({circuits} circuits)");

    // The relay goes away and comes back: P2 makes its reservation again, and the next
    // instance reaches it through the new relay process.
    controller.restart();
    let back = Instant::now();
    wait_for(
        "P2's reservation on the restarted relay",
        Duration::from_secs(60),
        || {
            (controller_metric(&controller, "mobiwf_relay_reservations_accepted_total") >= 1.0)
                .then_some(())
        },
    );
    eprintln!(
        "P2 reserved again {:?} after the relay restarted",
        back.elapsed()
    );
    ids.extend(run_instances(&controller, &workflow, 1));
    assert!(
        controller_metric(&controller, "mobiwf_relay_circuits_accepted_total") >= 1.0,
        "P1 should have reached P2 through the restarted relay"
    );

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
    assert_eq!(ran.len(), ids.len() * PAPER_PLACEMENT.len());
    controller.check_alive();
    p1.check_alive();
    p2.check_alive();
    eprintln!(
        "a_node_nobody_can_dial_takes_part_through_the_controllers_relay: {:?}",
        started.elapsed()
    );
}
