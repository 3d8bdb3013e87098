//! A mesh no stranger can join, through the real binaries: a node under a name
//! another key registered first is refused and gets no work, a node without a join token is
//! refused, a revoked token no longer lets anyone in, the allow list does, and `nodes remove`
//! frees a name for another key. Every refusal is counted at the controller.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use mobiwf_tests::binary;
use mobiwf_tests::harness::{
    CLI_TIMEOUT, Controller, Node, NodeSpec, PAPER_PLACEMENT, assert_all_succeeded, http_get,
    metric, paper_mesh, run,
};
use mobiwf_tests::{repo_root, scratch};

/// How long a refused node may take to hear its refusal and stop.
const REFUSED_WITHIN: Duration = Duration::from_secs(60);

/// Runs `mobiwf-node run` in the foreground until it stops: a refused node must.
fn run_refused_node(
    dir: &Path,
    name: &str,
    controller: &Controller,
    token: Option<&Path>,
) -> String {
    let mut cmd = Command::new(binary("mobiwf-node").unwrap());
    cmd.args([
        "run",
        "--name",
        name,
        "--skills",
        "1,3",
        "--listen",
        "/ip4/127.0.0.1/tcp/0",
    ])
    .arg("--data-dir")
    .arg(dir)
    .args(["--controller", &controller.address]);
    if let Some(token) = token {
        cmd.arg("--join-token-file").arg(token);
    }
    let out = run(&mut cmd, REFUSED_WITHIN);
    out.expect_code(1, &format!("a refused node {name} stops"));
    out.stderr
}

fn nodes(controller: &Controller) -> Vec<Value> {
    let out = controller.cli(&["nodes", "--json"], CLI_TIMEOUT);
    out.expect_code(0, "nodes --json");
    serde_json::from_str::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn peer_of(address: &str) -> String {
    address.rsplit("/p2p/").next().unwrap().to_owned()
}

fn refused_registrations(controller: &Controller) -> f64 {
    let page = http_get(&controller.api, "/metrics").unwrap();
    metric(
        &page,
        "mobiwf_messages_refused_total",
        &[("kind", "register")],
    )
}

#[test]
fn a_rogue_node_under_a_taken_name_and_a_node_without_a_token_are_refused() {
    let dir = scratch("enrol-rogue").unwrap();
    let (controller, _p1, p2) = paper_mesh(&dir);
    let token = controller.dir.join("join.token");

    // Another key under P2's name, even with a valid join token: refused, and it stops.
    let said = run_refused_node(&dir.join("rogue"), "P2", &controller, Some(&token));
    assert!(said.contains("belongs to peer"), "{said}");
    assert!(said.contains("nodes remove P2"), "{said}");
    // A new name without a token: refused.
    let said = run_refused_node(&dir.join("stranger"), "P3", &controller, None);
    assert!(said.contains("not enrolled"), "{said}");
    assert!(refused_registrations(&controller) >= 2.0);

    // P2 is still the first key, alone under its name, and runs all of P2's work.
    let listed = nodes(&controller);
    let p2s: Vec<&Value> = listed.iter().filter(|n| n["name"] == "P2").collect();
    assert_eq!(p2s.len(), 1, "{listed:?}");
    assert_eq!(p2s[0]["peer"], peer_of(&p2.address), "{listed:?}");
    assert!(!listed.iter().any(|n| n["name"] == "P3"), "{listed:?}");
    let paper = repo_root().join("examples/paper/workflow.xml");
    for _ in 0..3 {
        let id = controller.submit(&paper);
        controller
            .wait(id, 60)
            .expect_code(0, "the paper's instance");
        assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);
    }
}

#[test]
fn tokens_the_allow_list_and_removing_a_node() {
    let dir = scratch("enrol-tokens").unwrap();
    let controller = Controller::start(&dir.join("controller"), "/ip4/127.0.0.1/tcp/0");

    // A token of its own for the field, saved to a file: N1 joins with it.
    let out = controller.cli(&["tokens", "create", "--label", "field team"], CLI_TIMEOUT);
    out.expect_code(0, "tokens create");
    let field = dir.join("field.token");
    std::fs::write(&field, out.stdout.trim()).unwrap();
    let listed = controller.cli(&["tokens", "list", "--json"], CLI_TIMEOUT);
    let listed: Value = serde_json::from_str(&listed.stdout).unwrap();
    let id = listed["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["label"] == "field team")
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .expect("the new token is listed");
    assert!(
        !listed.to_string().contains(out.stdout.trim()),
        "tokens are never shown again"
    );
    let mut spec = NodeSpec::loopback(&dir.join("n1"), "N1", "1", &controller.address);
    spec.join_token_file = Some(field.clone());
    let n1 = Node::start(spec);
    controller.wait_registered(&["N1"]);

    // Revoked: N2 cannot join with it; allowed by peer id, it joins without a token.
    controller
        .cli(&["tokens", "revoke", &id], CLI_TIMEOUT)
        .expect_code(0, "tokens revoke");
    let said = run_refused_node(&dir.join("n2"), "N2", &controller, Some(&field));
    assert!(said.contains("does not know"), "{said}");
    let n2_peer = peer_id_in(&dir.join("n2"));
    controller
        .cli(&["nodes", "allow", &n2_peer], CLI_TIMEOUT)
        .expect_code(0, "nodes allow");
    let mut spec = NodeSpec::loopback(&dir.join("n2"), "N2", "1", &controller.address);
    spec.join_token_file = None;
    let _n2 = Node::start(spec);
    controller.wait_registered(&["N2"]);
    // A node already registered needs no token to come back (its key is its proof): the
    // controller acknowledges its registration, refuses nothing, and it keeps running.
    drop(n1);
    let refused_before = refused_registrations(&controller);
    let mut again = NodeSpec::loopback(&dir.join("n1"), "N1", "1", &controller.address);
    again.join_token_file = None;
    let mut n1 = Node::start(again);
    mobiwf_tests::harness::wait_for(
        "the controller to acknowledge N1's registration without a token",
        Duration::from_secs(30),
        || {
            n1.check_alive();
            let page = n1.metrics().ok()?;
            (metric(&page, "mobiwf_messages_sent_total", &[("kind", "register")]) >= 1.0)
                .then_some(())
        },
    );
    assert_eq!(refused_registrations(&controller), refused_before);
    n1.check_alive();

    // N1's name goes to another key only after `nodes remove N1`.
    let main_token = controller.dir.join("join.token");
    let said = run_refused_node(&dir.join("n1-new"), "N1", &controller, Some(&main_token));
    assert!(said.contains("belongs to peer"), "{said}");
    controller
        .cli(&["nodes", "remove", "N1"], CLI_TIMEOUT)
        .expect_code(0, "nodes remove");
    let out = controller.cli(&["nodes", "remove", "N1"], CLI_TIMEOUT);
    out.expect_code(1, "removing an unknown node");
    assert!(
        out.stderr.contains("no registered node is named N1"),
        "{}",
        out.stderr
    );
    let mut spec = NodeSpec::loopback(&dir.join("n1-new"), "N1", "1", &controller.address);
    spec.join_token_file = Some(main_token);
    let new_n1 = Node::start(spec);
    let new_peer = peer_of(&new_n1.address);
    mobiwf_tests::harness::wait_for("N1 under its new key", Duration::from_secs(30), || {
        nodes(&controller)
            .iter()
            .any(|n| n["name"] == "N1" && n["peer"] == new_peer.as_str())
            .then_some(())
    });
    // A peer id that is not one is refused with a clear word.
    let out = controller.cli(&["nodes", "allow", "not-a-peer"], CLI_TIMEOUT);
    out.expect_code(1, "allowing garbage");
    assert!(out.stderr.contains("is not a peer id"), "{}", out.stderr);
}

/// The peer id of the node whose data directory is `dir` (`mobiwf-node peer-id`).
fn peer_id_in(dir: &Path) -> String {
    let key = dir.join("identity.key");
    assert!(
        key.exists(),
        "the refused node kept its identity in {}",
        key.display()
    );
    let out = run(
        Command::new(binary("mobiwf-node").unwrap())
            .args(["peer-id", "--data-dir"])
            .arg(dir),
        CLI_TIMEOUT,
    );
    out.expect_code(0, "mobiwf-node peer-id");
    out.stdout.trim().to_owned()
}

/// Sends `message` to the node at `address` from a peer of our own (a new key, never
/// registered), as a libp2p request; the node's reply.
fn forge(address: &str, message: mobiwf_proto::Message) -> mobiwf_proto::Reply {
    use mobiwf_runtime::mesh::{self, MeshConfig};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let key = libp2p::identity::Keypair::generate_ed25519();
        let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
        let (handle, _inbound) = mesh::start(MeshConfig::new(key, listen)).await.unwrap();
        let addr: libp2p::Multiaddr = address.parse().unwrap();
        let peer = peer_of(address).parse().unwrap();
        let envelope = mobiwf_proto::Envelope {
            answered_below: 0,
            epoch: None,
            id: mobiwf_proto::MessageId {
                incarnation: 0,
                origin: handle.peer_id().to_string().into(),
                seq: 1,
            },
            message,
        };
        handle.request(peer, vec![addr], envelope).await.unwrap()
    })
}

#[test]
fn a_forged_notification_from_a_peer_that_does_not_run_the_predecessor_is_refused() {
    let dir = scratch("enrol-forged").unwrap();
    let (controller, _p1, p2) = paper_mesh(&dir);
    let id = controller.submit(&repo_root().join("examples/paper/workflow.xml"));
    controller
        .wait(id, 60)
        .expect_code(0, "the paper's instance");
    // A2 (17) runs on P1: a word about it from anyone else is refused, and counted.
    let forged = mobiwf_proto::Message::Notify(mobiwf_proto::Notify::new(
        mobiwf_proto::InstanceId(id),
        mobiwf_proto::ActivityId(17),
        mobiwf_proto::Outcome::Released,
    ));
    let reply = forge(&p2.address, forged);
    let mobiwf_proto::Reply::Refused { reason } = reply else {
        panic!("a forged notification was taken: {reply:?}");
    };
    assert!(reason.contains("does not run activity 17"), "{reason}");
    let page = http_get(&p2.api, "/metrics").unwrap();
    let refused = metric(
        &page,
        "mobiwf_messages_refused_total",
        &[("kind", "notify")],
    );
    assert!(refused >= 1.0, "{page}");
    // A stranger's word to the controller is refused too.
    let reply = forge(
        &controller.address,
        mobiwf_proto::Message::Locate(mobiwf_proto::Locate {
            peer: mobiwf_proto::NodeId::new("x"),
        }),
    );
    assert!(
        matches!(reply, mobiwf_proto::Reply::Refused { .. }),
        "{reply:?}"
    );
}

#[test]
fn in_a_private_mesh_a_node_without_the_swarm_key_cannot_even_connect() {
    let dir = scratch("enrol-private").unwrap();
    let key = dir.join("swarm.key");
    let key_arg = key.display().to_string();
    let controller = Controller::start_with(
        &dir.join("controller"),
        "/ip4/127.0.0.1/tcp/0",
        &["--swarm-key-file", &key_arg],
    );
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&key).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "the swarm key is private");
    let member = |name: &str, skills: &str| {
        let mut spec = NodeSpec::loopback(
            &dir.join(name.to_lowercase()),
            name,
            skills,
            &controller.address,
        );
        spec.extra = vec!["--swarm-key-file".into(), key_arg.clone()];
        Node::start(spec)
    };
    let _p1 = member("P1", "1,2,3");
    let _p2 = member("P2", "1,3");
    controller.wait_registered(&["P1", "P2"]);
    let id = controller.submit(&repo_root().join("examples/paper/workflow.xml"));
    controller
        .wait(id, 60)
        .expect_code(0, "the paper's instance in a private mesh");
    assert_all_succeeded(&controller.status(id), &PAPER_PLACEMENT);

    // With the join token but without the swarm key: its registration never gets through.
    let outsider = Node::start(NodeSpec::loopback(
        &dir.join("p3"),
        "P3",
        "1",
        &controller.address,
    ));
    mobiwf_tests::harness::wait_for(
        "the outsider's registration to fail twice",
        Duration::from_secs(60),
        || {
            let page = outsider.metrics().ok()?;
            (metric(&page, "mobiwf_send_failures_total", &[("kind", "register")]) >= 2.0)
                .then_some(())
        },
    );
    assert!(
        !nodes(&controller).iter().any(|n| n["name"] == "P3"),
        "{:?}",
        nodes(&controller)
    );
    assert_eq!(
        refused_registrations(&controller),
        0.0,
        "nothing of the outsider reached the controller to be refused"
    );
}
