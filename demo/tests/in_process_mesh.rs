//! A controller and two partner nodes in one process, over real libp2p on loopback: the
//! paper's workflow completes, and the notifications between partitions went partner to
//! partner (the nodes' and the controller's message counters prove it), for one instance and
//! for many at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use mobiwf_book::InstanceState;
use mobiwf_controller::{Controller, ControllerConfig};
use mobiwf_node::{Node, NodeConfig};
use mobiwf_proto::ActivityState;
use mobiwf_runtime::store::MemoryStore;

const PAPER: &[u8] = include_bytes!("../../examples/paper/workflow.xml");

struct Mesh {
    controller: Controller,
    p1: Node,
    p2: Node,
    _dir: tempfile::TempDir,
}

async fn mesh() -> Mesh {
    mesh_with(false).await
}

/// The mesh; with `p2_behind_relay`, P2 listens nowhere and is reached only through the
/// controller's relay (`--via-relay`).
async fn mesh_with(p2_behind_relay: bool) -> Mesh {
    let dir = tempfile::tempdir().expect("tempdir");
    let loopback = || vec!["/ip4/127.0.0.1/tcp/0".parse().expect("multiaddr")];
    let controller = mobiwf_controller::start(ControllerConfig {
        data_dir: dir.path().join("controller"),
        listen: loopback(),
        api: "127.0.0.1:0".parse().expect("addr"),
        api_tls: None,
        store: Some(Arc::new(MemoryStore::new())),
        detector: Default::default(),
        hub_routing: false,
        hour_ms: mobiwf_proto::DEFAULT_HOUR_MS,
        open_enrolment: false,
        relay_server: true,
        swarm_key: None,
        api_auth: true,
        retain_finished: None,
        admission: mobiwf_controller::admission::Policy::Adaptive,
        inbound: Default::default(),
    })
    .await
    .expect("controller");
    let node = |name: &str, skills: Vec<u64>| NodeConfig {
        data_dir: dir.path().join(name),
        name: name.into(),
        skills: skills
            .into_iter()
            .map(mobiwf_proto::ActivityTypeId)
            .collect(),
        controller: mobiwf_runtime::outbox::location(&controller.addrs[0]).expect("an address"),
        listen: loopback(),
        api: "127.0.0.1:0".parse().expect("addr"),
        api_tls: None,
        store: Some(Arc::new(MemoryStore::new())),
        prefetch: true,
        hour_ms: mobiwf_proto::DEFAULT_HOUR_MS,
        join_token: Some(
            mobiwf_runtime::secret::read_token_file(&dir.path().join("controller/join.token"))
                .expect("join token"),
        ),
        via_relay: None,
        relay_server: false,
        swarm_key: None,
        commands: mobiwf_node::command_policy::CommandPolicy::Any,
        api_auth: true,
        inbound: Default::default(),
        applications: Vec::new(),
    };
    let p1 = mobiwf_node::start(node("P1", vec![1, 2, 3]))
        .await
        .expect("P1");
    let mut p2 = node("P2", vec![1, 3]);
    if p2_behind_relay {
        p2.listen = Vec::new();
        p2.via_relay = Some(controller.addrs[0].parse().expect("multiaddr"));
    }
    let p2 = mobiwf_node::start(p2).await.expect("P2");
    let client = controller.client();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let seen = client.version();
        if client.nodes().await.expect("nodes").len() == 2 {
            break;
        }
        assert!(
            client.changed(seen, deadline).await,
            "the nodes did not register"
        );
    }
    Mesh {
        controller,
        p1,
        p2,
        _dir: dir,
    }
}

/// The value of a metric line such as `mobiwf_messages_received_total{kind="notify",peer="partner"} 2`.
fn metric(text: &str, name: &str, labels: &str) -> u64 {
    let prefix = if labels.is_empty() {
        format!("{name} ")
    } else {
        format!("{name}{{{labels}}} ")
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map_or(0, |v| v.trim().parse::<f64>().expect("number") as u64)
}

async fn run_instances(m: &Mesh, count: usize) -> Vec<mobiwf_proto::InstanceId> {
    let client = m.controller.client();
    let mut ids = Vec::new();
    for _ in 0..count {
        let id = client
            .submit(
                PAPER.to_vec(),
                "paper.xml".to_owned(),
                mobiwf_book::StartWith::default(),
            )
            .await
            .expect("ask")
            .expect("submitted");
        ids.push(id);
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for &id in &ids {
        let inst = client
            .wait(id, deadline)
            .await
            .expect("ask")
            .expect("instance");
        assert_eq!(inst.state(), InstanceState::Succeeded, "{inst:#?}");
        for a in &inst.activities {
            assert_eq!(a.state(), ActivityState::Succeeded, "{a:?}");
            let expected = if [16, 17, 18].contains(&a.id.0) {
                "P1"
            } else {
                "P2"
            };
            assert_eq!(a.node.as_ref().map(|n| n.as_str()), Some(expected), "{a:?}");
            assert!(a.started_ms.is_some() && a.finished_ms.is_some(), "{a:?}");
        }
    }
    ids
}

/// Waits until every outbox is empty: the last acknowledgements may arrive just after the
/// instance is complete, and the sent counters count acknowledged messages.
async fn settle(m: &Mesh) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let all = [
            m.p1.client().metrics.encode(),
            m.p2.client().metrics.encode(),
            m.controller.client().metrics.encode(),
        ];
        if all
            .iter()
            .all(|t| metric(t, "mobiwf_outbox_depth", "") == 0)
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "outboxes did not drain: {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_listens_nowhere_is_reached_through_the_controllers_relay() {
    let m = mesh_with(true).await;
    let circuit = format!("{}/p2p-circuit/p2p/{}", m.controller.addrs[0], m.p2.peer_id);
    assert_eq!(
        m.p2.addrs,
        vec![circuit.clone()],
        "P2 registers its circuit only"
    );
    let nodes = m.controller.client().nodes().await.expect("nodes");
    let p2 = nodes.iter().find(|n| n.name.as_str() == "P2").expect("P2");
    assert_eq!(p2.addrs, vec![circuit]);

    run_instances(&m, 3).await;
    settle(&m).await;
    let p1 = m.p1.client().metrics.encode();
    let p2 = m.p2.client().metrics.encode();
    let ctl = m.controller.client().metrics.encode();
    // P1's first notification (A2→A4) had to find P2 through the relay.
    assert!(
        metric(&ctl, "mobiwf_relay_reservations_accepted_total", "") >= 1,
        "{ctl}"
    );
    assert!(
        metric(&ctl, "mobiwf_relay_circuits_accepted_total", "") >= 1,
        "{ctl}"
    );
    assert!(
        metric(&p1, "mobiwf_relayed_connections_total", "") >= 1,
        "{p1}"
    );
    assert!(
        metric(&p2, "mobiwf_relayed_connections_total", "") >= 1,
        "{p2}"
    );
    assert_eq!(
        metric(
            &p2,
            "mobiwf_messages_received_total",
            r#"kind="notify",peer="partner""#
        ),
        6,
        "{p2}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_paper_runs_and_partners_notify_each_other_directly() {
    let m = mesh().await;
    run_instances(&m, 1).await;
    settle(&m).await;

    let p1 = m.p1.client().metrics.encode();
    let p2 = m.p2.client().metrics.encode();
    let ctl = m.controller.client().metrics.encode();
    let received = "mobiwf_messages_received_total";
    let sent = "mobiwf_messages_sent_total";
    // A2→A4 and A3→A5 leave P1; A4→A3 leaves P2: each straight to the other partner.
    assert_eq!(
        metric(&p1, sent, r#"kind="notify",peer="partner""#),
        2,
        "{p1}"
    );
    assert_eq!(
        metric(&p2, sent, r#"kind="notify",peer="partner""#),
        1,
        "{p2}"
    );
    assert_eq!(
        metric(&p1, received, r#"kind="notify",peer="partner""#),
        1,
        "{p1}"
    );
    assert_eq!(
        metric(&p2, received, r#"kind="notify",peer="partner""#),
        2,
        "{p2}"
    );
    // The controller only deployed, and heard registrations, reports and results.
    assert!(
        !ctl.contains(r#"kind="notify""#),
        "the controller saw a notification:\n{ctl}"
    );
    assert_eq!(
        metric(&ctl, sent, r#"kind="deploy",peer="partner""#),
        2,
        "{ctl}"
    );
    assert_eq!(
        metric(&ctl, received, r#"kind="partition_result",peer="partner""#),
        2,
        "{ctl}"
    );
    // A2, A3 and A4 have responseImmediate 1: the controller heard each at once.
    assert_eq!(
        metric(&ctl, received, r#"kind="report",peer="partner""#),
        3,
        "{ctl}"
    );
    assert_eq!(
        metric(
            &p1,
            "mobiwf_activities_finished_total",
            r#"state="succeeded""#
        ),
        3
    );
    assert_eq!(
        metric(
            &p2,
            "mobiwf_activities_finished_total",
            r#"state="succeeded""#
        ),
        2
    );
    assert_eq!(metric(&p1, "mobiwf_outbox_depth", ""), 0, "{p1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_instances_run_at_once_on_the_same_nodes() {
    let m = mesh().await;
    let ids = run_instances(&m, 25).await;
    assert_eq!(ids.len(), 25);
    settle(&m).await;
    let p2 = m.p2.client().metrics.encode();
    assert_eq!(
        metric(
            &p2,
            "mobiwf_messages_received_total",
            r#"kind="notify",peer="partner""#
        ),
        50
    );
    assert_eq!(
        metric(&p2, "mobiwf_duplicate_messages_total", ""),
        0,
        "{p2}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_to_wait_starts_an_activity_whose_preconditions_are_late() {
    let m = mesh().await;
    // A2 (17) waits for a person; A5 (20) may wait one second for A3 before it starts anyway.
    let paper = String::from_utf8_lossy(PAPER).into_owned();
    let a2 = paper.find("<activity id=\"17\">").expect("A2");
    let end = a2 + paper[a2..].find("</activity>").expect("end of A2");
    let workflow = format!("{}<kind>manual</kind>{}", &paper[..end], &paper[end..])
        .replace("<timeToWait>20</timeToWait>", "<timeToWait>1</timeToWait>");
    let client = m.controller.client();
    let id = client
        .submit(
            workflow.into_bytes(),
            "paper-manual.xml".to_owned(),
            mobiwf_book::StartWith::default(),
        )
        .await
        .expect("ask")
        .expect("submitted");

    // A5 runs on its emergency trigger while A2 is still on P1's worklist, and the controller
    // hears of it at once.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let seen = client.version();
        let inst = client.instance(id).await.expect("ask").expect("instance");
        let a5 = inst.activities.iter().find(|a| a.id.0 == 20).expect("A5");
        if a5.emergency {
            let worklist = m.p1.client().worklist().await.expect("worklist");
            assert_eq!(
                worklist.len(),
                1,
                "A2 is still waiting for its person: {worklist:?}"
            );
            assert_eq!(
                (worklist[0].instance, worklist[0].activity),
                (id, mobiwf_proto::ActivityId(17))
            );
            break;
        }
        assert!(
            client.changed(seen, deadline).await,
            "A5 never started: {inst:#?}"
        );
    }
    m.p1.client()
        .complete(mobiwf_node::daemon::PersonEnd {
            instance: id,
            activity: mobiwf_proto::ActivityId(17),
            finish: mobiwf_node::daemon::Finish::Succeeded {
                detail: None,
                flag: None,
            },
            written: Vec::new(),
        })
        .await
        .expect("ask")
        .expect("completed");
    let inst = client
        .wait(id, deadline)
        .await
        .expect("ask")
        .expect("instance");
    assert_eq!(inst.state(), InstanceState::Succeeded, "{inst:#?}");
    let a5 = inst.activities.iter().find(|a| a.id.0 == 20).expect("A5");
    assert!(
        a5.emergency && a5.state() == ActivityState::Succeeded,
        "{a5:?}"
    );
    let others_normal = inst
        .activities
        .iter()
        .filter(|a| a.id.0 != 20)
        .all(|a| !a.emergency);
    assert!(others_normal, "{inst:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_over_its_time_out_is_killed_and_fails_the_instance_with_the_reason() {
    let m = mesh().await;
    // A4 (19, on P2, contingency -1) runs a command far longer than its one-second timeOut.
    let paper = String::from_utf8_lossy(PAPER).into_owned();
    let a4 = paper.find("<activity id=\"19\">").expect("A4");
    let end = a4 + paper[a4..].find("</activity>").expect("end of A4");
    let body = paper[a4..end].replace("<timeOut>0</timeOut>", "<timeOut>1</timeOut>");
    let workflow = format!(
        "{}{body}<command>sleep 30</command>{}",
        &paper[..a4],
        &paper[end..]
    );
    let client = m.controller.client();
    let id = client
        .submit(
            workflow.into_bytes(),
            "paper-slow.xml".to_owned(),
            mobiwf_book::StartWith::default(),
        )
        .await
        .expect("ask")
        .expect("submitted");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let inst = client
        .wait(id, deadline)
        .await
        .expect("ask")
        .expect("instance");
    assert_eq!(inst.state(), InstanceState::Failed, "{inst:#?}");
    let state = |id: u64| {
        inst.activities
            .iter()
            .find(|a| a.id.0 == id)
            .expect("activity")
    };
    assert_eq!(state(19).state(), ActivityState::Failed);
    assert_eq!(
        state(19).detail.as_deref(),
        Some("ran longer than its timeOut of 1 s")
    );
    assert_eq!(state(18).state(), ActivityState::Cancelled);
    assert_eq!(state(20).state(), ActivityState::Cancelled);
}
