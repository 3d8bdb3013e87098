//! A node renews a task class's lease on round trips with its controller, never on hearing
//! it alone: the real `mobiwf-node`, its controller played by a peer of this test that
//! deploys one held activity at a time, grants it with a lease of 2 s and probes the node
//! every 0.1 s. While each probe echoes the node's answer to the one before (the controller
//! received it), a command running longer than the lease runs to its end. Once the probes
//! stop echoing (the node hears its controller, but its answers are lost on the way back), the
//! node kills the held command when its lease ran out and fails the activity, "synchronization
//! lost", releasing its class: it would otherwise have run on after a real controller
//! suspected it and gave its class to another. A grant that comes after a silence longer than
//! the lease since its request is not used (the controller may have given the class to
//! another meanwhile): the node releases it and asks again, however fresh its round trips are
//! by then.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{
    ActivityState, Deploy, Envelope, InstanceId, Message, MessageId, PartitionId, Probe, Reply,
    SyncGranted, SyncTicket,
};
use mobiwf_runtime::mesh::{self, MeshConfig, MeshHandle};
use mobiwf_tests::harness::{Node, NodeSpec, wait_for, xml_text};
use mobiwf_tests::scratch;

/// The lease the fake controller grants, ms.
const LEASE_MS: u64 = 2_000;

/// How long any message of the node is waited for.
const BOUND: Duration = Duration::from_secs(90);

/// A controller of this test's own: it answers every message of the node (and keeps it),
/// sends it what the test says, and probes it, echoing its answers or not.
struct FakeController {
    runtime: tokio::runtime::Runtime,
    mesh: MeshHandle,
    /// Its address, for the node's `--controller`.
    address: String,
    /// What the node sent it, in order.
    got: Arc<Mutex<Vec<Message>>>,
    /// Whether its probes echo the node's answers.
    echo: Arc<AtomicBool>,
    /// The number of its last message to the node.
    seq: AtomicU64,
}

impl FakeController {
    fn start() -> FakeController {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let key = libp2p::identity::Keypair::generate_ed25519();
        let listen = vec!["/ip4/127.0.0.1/tcp/0".parse().unwrap()];
        let (mesh, mut inbound) = runtime
            .block_on(mesh::start(MeshConfig::new(key, listen)))
            .unwrap();
        let address = format!("{}/p2p/{}", mesh.listen_addrs()[0], mesh.peer_id());
        let got = Arc::new(Mutex::new(Vec::new()));
        let kept = got.clone();
        runtime.spawn(async move {
            while let Some(request) = inbound.recv().await {
                let message = request.envelope.message;
                let reply = match message {
                    Message::Locate(_) => Reply::Located { addrs: Vec::new() },
                    _ => Reply::Ack,
                };
                kept.lock().unwrap().push(message);
                let _ = request.reply.send(reply);
            }
        });
        FakeController {
            runtime,
            mesh,
            address,
            got,
            echo: Arc::new(AtomicBool::new(true)),
            seq: AtomicU64::new(0),
        }
    }

    /// Sends `message` to `node` as its controller does (a stored message, numbered).
    fn send(&self, node: &Node, message: Message) {
        let (peer, addr) = peer_of(&node.address);
        let envelope = Envelope::new(
            MessageId {
                origin: self.mesh.peer_id().to_string().into(),
                incarnation: 7,
                seq: self.seq.fetch_add(1, Ordering::Relaxed) + 1,
            },
            message,
        );
        let reply = self
            .runtime
            .block_on(self.mesh.request(peer, vec![addr], envelope));
        assert!(matches!(reply, Ok(Reply::Ack)), "{reply:?}");
    }

    /// Probes `node` every 0.1 s from now on, each probe echoing the latest answer that came
    /// back while `echo` says so.
    fn probe(&self, node: &Node) {
        let (peer, addr) = peer_of(&node.address);
        let (mesh, echo) = (self.mesh.clone(), self.echo.clone());
        let origin = self.mesh.peer_id().to_string();
        self.runtime.spawn(async move {
            let mut answered = 0;
            for seq in 1.. {
                let probe = Probe {
                    seq,
                    echo: if echo.load(Ordering::Relaxed) {
                        answered
                    } else {
                        0
                    },
                };
                let id = MessageId {
                    origin: origin.clone().into(),
                    incarnation: 0,
                    seq: 0,
                };
                let envelope = Envelope::new(id, Message::Probe(probe));
                if let Ok(Reply::Ack) = mesh.request(peer, vec![addr.clone()], envelope).await {
                    answered = seq;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
    }

    /// Waits for the first message of the node `pick` takes.
    fn wait<T>(&self, what: &str, pick: impl Fn(&Message) -> Option<T>) -> T {
        wait_for(what, BOUND, || {
            self.got.lock().unwrap().iter().find_map(&pick)
        })
    }
}

fn peer_of(address: &str) -> (PeerId, Multiaddr) {
    let peer = address.rsplit("/p2p/").next().unwrap().parse().unwrap();
    (peer, address.parse().unwrap())
}

/// Instance `instance`'s one partition: activity 1 of class press, running `command`.
fn partition(instance: u64, command: &str) -> String {
    format!(
        "<workflow id=\"{instance}\"><activities><activity id=\"1\"><nameActivity>press\
         </nameActivity><status>0</status><responseImmediate>0</responseImmediate>\
         <timeToWait>0</timeToWait><contingencyActivityId>-1</contingencyActivityId>\
         <command>{}</command><class>press</class><preconditions/><adjacents/></activity>\
         </activities></workflow>",
        xml_text(command)
    )
}

/// Deploys instance `instance` running `command`, grants its request once it asks, and
/// gives how its partition ended: (state, detail).
fn run_held(
    fake: &FakeController,
    node: &Node,
    instance: u64,
    command: &str,
) -> (ActivityState, String) {
    let deploy = Deploy {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        document: partition(instance, command),
        responsible: None,
        hour_ms: None,
        runs_on: Vec::new(),
        inputs: Default::default(),
    };
    fake.send(node, Message::Deploy(deploy));
    let ticket: SyncTicket = fake.wait("the node to ask for press", |m| match m {
        Message::BeginSync(b) if b.ticket.instance == InstanceId(instance) => Some(b.ticket),
        _ => None,
    });
    let granted = SyncGranted {
        ticket,
        lease_ms: LEASE_MS,
    };
    fake.send(node, Message::SyncGranted(granted));
    let ended = fake.wait("the partition's result", |m| match m {
        Message::PartitionResult(r) if r.instance == InstanceId(instance) => {
            let a = &r.activities[0];
            Some((a.state, a.detail.clone().unwrap_or_default()))
        }
        _ => None,
    });
    fake.wait("the class released", |m| match m {
        Message::EndSync(e) if e.ticket == ticket => Some(()),
        _ => None,
    });
    ended
}

/// A node P1 in a scratch directory named `name`, registered with a fake controller that
/// probes it from now on.
fn probed_node(name: &str) -> (std::path::PathBuf, FakeController, Node) {
    let dir = scratch(name).unwrap();
    let fake = FakeController::start();
    let node = Node::start(NodeSpec::loopback(
        &dir.join("p1"),
        "P1",
        "1",
        &fake.address,
    ));
    fake.wait("the node to register", |m| {
        matches!(m, Message::Register(_)).then_some(())
    });
    fake.probe(&node);
    (dir, fake, node)
}

#[test]
fn a_held_command_runs_on_round_trips_and_dies_when_only_the_controller_is_heard() {
    let (dir, fake, node) = probed_node("fencing");
    // Round trips all along: 3 s of work under a 2 s lease ends as it should.
    let (state, detail) = run_held(&fake, &node, 1, "sleep 3");
    assert_eq!(state, ActivityState::Succeeded, "{detail}");
    // The node's answers are lost: it still hears every probe, and must stop all the same.
    fake.echo.store(false, Ordering::Relaxed);
    let beat = dir.join("beat");
    let long = format!(
        "i=0; while [ $i -lt 300 ]; do date +%s%N >> '{}'; sleep 0.1; i=$((i+1)); done",
        beat.display()
    );
    let (state, detail) = run_held(&fake, &node, 2, &long);
    assert_eq!(state, ActivityState::Failed, "it ran to its end: {detail}");
    assert!(detail.starts_with("synchronization lost"), "{detail}");
    let beats = std::fs::read_to_string(&beat).unwrap_or_default();
    assert!(beats.lines().count() < 300, "the command was not stopped");
}

#[test]
fn a_grant_that_comes_after_a_silence_longer_than_its_lease_is_released_and_asked_again() {
    let (dir, fake, node) = probed_node("fencing-late");
    let ran = dir.join("ran");
    let deploy = Deploy {
        instance: InstanceId(3),
        partition: PartitionId(1),
        document: partition(3, &format!("touch '{}'", ran.display())),
        responsible: None,
        hour_ms: None,
        runs_on: Vec::new(),
        inputs: Default::default(),
    };
    fake.send(&node, Message::Deploy(deploy));
    let first: SyncTicket = fake.wait("the node to ask for press", |m| match m {
        Message::BeginSync(b) if b.ticket.instance == InstanceId(3) => Some(b.ticket),
        _ => None,
    });
    // The node's answers are lost for longer than the lease (it sees no round trip: its
    // lease for the request runs out), then get through again.
    fake.echo.store(false, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(LEASE_MS + 1_000));
    fake.echo.store(true, Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(500));
    // The grant the controller sent before it suspected the node arrives only now.
    let late = SyncGranted {
        ticket: first,
        lease_ms: LEASE_MS,
    };
    fake.send(&node, Message::SyncGranted(late));
    fake.wait("the late grant released", |m| match m {
        Message::EndSync(e) if e.ticket == first => Some(()),
        _ => None,
    });
    let again: SyncTicket = fake.wait("the node to ask again", |m| match m {
        Message::BeginSync(b) if b.ticket.instance == InstanceId(3) && b.ticket.round == 1 => {
            Some(b.ticket)
        }
        _ => None,
    });
    assert!(!ran.exists(), "the command ran under the late grant");
    // The new request's grant, in time, runs it. (Should the loaded machine stall the node or
    // the probes past the lease again, the node asks once more: the latest request is
    // granted then.)
    let mut granted_round = None;
    let (state, detail) = wait_for("the partition's result", BOUND, || {
        let got = fake.got.lock().unwrap().clone();
        let latest = got
            .iter()
            .filter_map(|m| match m {
                Message::BeginSync(b) if b.ticket.instance == InstanceId(3) => Some(b.ticket),
                _ => None,
            })
            .max_by_key(|t| t.round)
            .unwrap_or(again);
        if granted_round < Some(latest.round) {
            granted_round = Some(latest.round);
            let granted = SyncGranted {
                ticket: latest,
                lease_ms: LEASE_MS,
            };
            fake.send(&node, Message::SyncGranted(granted));
        }
        got.iter().find_map(|m| match m {
            Message::PartitionResult(r) if r.instance == InstanceId(3) => {
                let a = &r.activities[0];
                Some((a.state, a.detail.clone().unwrap_or_default()))
            }
            _ => None,
        })
    });
    assert_eq!(state, ActivityState::Succeeded, "{detail}");
    assert!(ran.exists(), "the command ran under the new grant");
}
