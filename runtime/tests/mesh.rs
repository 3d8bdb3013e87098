//! Tests of the libp2p mesh (request and reply between two swarms on loopback, concurrency,
//! failures, the frame size limit) and of the on-disk node identity.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io;
use std::time::{Duration, Instant};

use futures::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, StreamExt};
use libp2p::identity::Keypair;
use libp2p::request_response::{self, ProtocolSupport};
use libp2p::swarm::SwarmEvent;
use libp2p::{Multiaddr, PeerId, StreamProtocol};
use mobiwf_proto::{Envelope, MAX_MESSAGE_BYTES, Message, MessageId, Outcome, Reply};
use mobiwf_runtime::identity;
use mobiwf_runtime::mesh::{self, Inbound, MeshConfig, MeshHandle, SendError};
use tokio::sync::mpsc;

fn loopback() -> Multiaddr {
    "/ip4/127.0.0.1/tcp/0".parse().unwrap()
}

fn config(request_timeout: Duration) -> MeshConfig {
    MeshConfig {
        request_timeout,
        ..MeshConfig::new(Keypair::generate_ed25519(), vec![loopback()])
    }
}

async fn node(request_timeout: Duration) -> (MeshHandle, mpsc::Receiver<Inbound>) {
    mesh::start(config(request_timeout)).await.unwrap()
}

fn notify(origin: &MeshHandle, seq: u64) -> Envelope {
    Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: origin.peer_id().to_string().into(),
            seq,
        },
        message: Message::Notify(mobiwf_proto::Notify::new(
            mobiwf_proto::InstanceId(1),
            mobiwf_proto::ActivityId(seq),
            Outcome::Succeeded,
        )),
    }
}

/// Answers every inbound request with `answer(envelope)` until the channel closes.
fn serve(
    mut inbound: mpsc::Receiver<Inbound>,
    answer: impl Fn(&Envelope) -> Reply + Send + 'static,
) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut served = 0;
        while let Some(request) = inbound.recv().await {
            let _ = request.reply.send(answer(&request.envelope));
            served += 1;
        }
        served
    })
}

#[tokio::test]
async fn listen_addrs_carry_the_peer_id() {
    let (a, _inbound) = node(Duration::from_secs(5)).await;
    let addrs = a.listen_addrs();
    assert_eq!(addrs.len(), 1, "{addrs:?}");
    let text = addrs[0].to_string();
    assert!(text.starts_with("/ip4/127.0.0.1/tcp/"), "{text}");
    assert!(!text.contains("/tcp/0/"), "{text}");
    assert!(text.ends_with(&format!("/p2p/{}", a.peer_id())), "{text}");
    a.shutdown().await;
    assert!(a.listen_addrs().is_empty());
}

#[tokio::test]
async fn listening_on_all_interfaces_reports_each_of_them() {
    let config = MeshConfig::new(
        Keypair::generate_ed25519(),
        vec!["/ip4/0.0.0.0/tcp/0".parse().unwrap()],
    );
    let (a, _inbound) = mesh::start(config).await.unwrap();
    let addrs: Vec<String> = a.listen_addrs().iter().map(|a| a.to_string()).collect();
    assert!(
        addrs.iter().any(|a| a.starts_with("/ip4/127.0.0.1/tcp/")),
        "{addrs:?}"
    );
    for addr in &addrs {
        assert!(!addr.starts_with("/ip4/0.0.0.0/"), "{addrs:?}");
        assert!(
            addr.ends_with(&format!("/p2p/{}", a.peer_id())),
            "{addrs:?}"
        );
    }
    a.shutdown().await;
}

#[tokio::test]
async fn request_and_reply() {
    let (a, a_inbound) = node(Duration::from_secs(5)).await;
    let (b, mut b_inbound) = node(Duration::from_secs(5)).await;

    let sent = notify(&a, 1);
    let request = {
        let a = a.clone();
        let sent = sent.clone();
        let (to, addrs) = (b.peer_id(), b.listen_addrs());
        tokio::spawn(async move { a.request(to, addrs, sent).await })
    };
    let inbound = b_inbound.recv().await.unwrap();
    assert_eq!(inbound.from, a.peer_id());
    assert_eq!(inbound.envelope, sent);
    inbound.reply.send(Reply::Ack).unwrap();
    assert_eq!(request.await.unwrap().unwrap(), Reply::Ack);

    // Again on the now open connection, refused this time; no addresses needed.
    let request = {
        let a = a.clone();
        let sent = notify(&a, 2);
        let to = b.peer_id();
        tokio::spawn(async move { a.request(to, Vec::new(), sent).await })
    };
    let inbound = b_inbound.recv().await.unwrap();
    assert_eq!(inbound.envelope.id.seq, 2);
    let refused = Reply::Refused {
        reason: "unknown instance 1".into(),
    };
    inbound.reply.send(refused.clone()).unwrap();
    assert_eq!(request.await.unwrap().unwrap(), refused);

    // And the other way round.
    let a_server = serve(a_inbound, |_| Reply::Ack);
    let reply = b
        .request(a.peer_id(), a.listen_addrs(), notify(&b, 1))
        .await
        .unwrap();
    assert_eq!(reply, Reply::Ack);

    a.shutdown().await;
    b.shutdown().await;
    assert_eq!(a_server.await.unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_requests_are_all_answered() {
    const N: u64 = 200;
    let (a, _a_inbound) = node(Duration::from_secs(10)).await;
    let (b, b_inbound) = node(Duration::from_secs(10)).await;
    let server = serve(b_inbound, |envelope| {
        if envelope.id.seq % 2 == 0 {
            Reply::Ack
        } else {
            Reply::Refused {
                reason: envelope.id.seq.to_string(),
            }
        }
    });

    let requests = (0..N).map(|seq| {
        let a = a.clone();
        let (to, addrs) = (b.peer_id(), b.listen_addrs());
        async move { (seq, a.request(to, addrs, notify(&a, seq)).await) }
    });
    let results = futures::future::join_all(requests).await;
    assert_eq!(results.len() as u64, N);
    for (seq, result) in results {
        let reply = result.unwrap_or_else(|e| panic!("request {seq} failed: {e}"));
        if seq % 2 == 0 {
            assert_eq!(reply, Reply::Ack);
        } else {
            assert_eq!(
                reply,
                Reply::Refused {
                    reason: seq.to_string()
                }
            );
        }
    }
    b.shutdown().await;
    assert_eq!(server.await.unwrap() as u64, N);
    a.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_inbound_channel_holds_requests_back_without_losing_them() {
    // A small channel: each sender has at most MAX_BATCHES_IN_FLIGHT_PER_PEER requests under
    // way, so a few senders fill it; what they send next goes in batches, the first of which
    // finds the channel full again partway through.
    const CAPACITY: usize = 8;
    const SENDERS: usize = CAPACITY / mesh::MAX_BATCHES_IN_FLIGHT_PER_PEER + 2;
    const EACH: u64 = 40;
    let timeout = Duration::from_secs(20);
    let (b, b_inbound) = mesh::start(MeshConfig {
        inbound_capacity: CAPACITY,
        ..config(timeout)
    })
    .await
    .unwrap();
    let mut senders = Vec::new();
    for _ in 0..SENDERS {
        senders.push(node(timeout).await);
    }

    let mut requests = Vec::new();
    for (a, _) in &senders {
        for seq in 0..EACH {
            let a = a.clone();
            let (to, addrs) = (b.peer_id(), b.listen_addrs());
            requests.push(tokio::spawn(async move {
                a.request(to, addrs, notify(&a, seq)).await
            }));
        }
    }

    // Nobody reads until the channel is full: the requests past it are held back (a bounded
    // channel), and each must still be answered once b reads.
    let started = Instant::now();
    while b_inbound.len() < CAPACITY {
        assert!(
            started.elapsed() < timeout,
            "only {} queued",
            b_inbound.len()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let server = serve(b_inbound, |_| Reply::Ack);
    for request in requests {
        assert_eq!(request.await.unwrap().unwrap(), Reply::Ack);
    }
    b.shutdown().await;
    assert_eq!(server.await.unwrap() as u64, SENDERS as u64 * EACH);
    for (a, _) in &senders {
        a.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_message_of_a_batch_gets_its_own_answer() {
    const N: u64 = 100;
    let (a, _a_inbound) = node(Duration::from_secs(10)).await;
    let (b, mut b_inbound) = node(Duration::from_secs(10)).await;
    // b answers in the order the messages came: Ack, a refusal, or nothing (left unanswered,
    // for the sender to try again).
    let server = tokio::spawn(async move {
        let mut served = 0u64;
        while let Some(request) = b_inbound.recv().await {
            let seq = request.envelope.id.seq;
            match seq % 3 {
                0 => drop(request.reply.send(Reply::Ack)),
                1 => drop(request.reply.send(Reply::Refused {
                    reason: seq.to_string(),
                })),
                _ => drop(request.reply),
            }
            served += 1;
        }
        served
    });
    let requests = (0..N).map(|seq| {
        let a = a.clone();
        let (to, addrs) = (b.peer_id(), b.listen_addrs());
        async move { (seq, a.request(to, addrs, notify(&a, seq)).await) }
    });
    for (seq, result) in futures::future::join_all(requests).await {
        match seq % 3 {
            0 => assert_eq!(result.unwrap(), Reply::Ack, "{seq}"),
            1 => assert_eq!(
                result.unwrap(),
                Reply::Refused {
                    reason: seq.to_string()
                },
                "{seq}"
            ),
            _ => {
                let err = result.unwrap_err();
                assert!(err.unanswered(), "{seq}: {err:?}");
            }
        }
    }
    b.shutdown().await;
    assert_eq!(server.await.unwrap(), N);
    a.shutdown().await;
}

#[tokio::test]
async fn request_to_a_peer_that_is_not_listening_fails_promptly() {
    // Timeouts far beyond the test's own guard: only the refused connection can end the
    // request in time.
    let config = MeshConfig {
        dial_timeout: Duration::from_secs(600),
        ..config(Duration::from_secs(600))
    };
    let (a, _inbound) = mesh::start(config).await.unwrap();
    let guard = Duration::from_secs(60);

    // A port nobody listens on any more.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let nobody = Keypair::generate_ed25519().public().to_peer_id();
    let addr: Multiaddr = format!("/ip4/127.0.0.1/tcp/{port}/p2p/{nobody}")
        .parse()
        .unwrap();

    let err = tokio::time::timeout(guard, a.request(nobody, vec![addr], notify(&a, 1)))
        .await
        .expect("the refusal was not told: the request waited for a timeout")
        .unwrap_err();
    assert!(
        matches!(err, SendError::Dial { peer, .. } if peer == nobody),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains(&nobody.to_string()), "{text}");

    // Without any address at all.
    let err = tokio::time::timeout(guard, a.request(nobody, Vec::new(), notify(&a, 2)))
        .await
        .expect("a peer without addresses was waited for")
        .unwrap_err();
    assert!(matches!(err, SendError::Dial { .. }), "{err:?}");
    a.shutdown().await;
}

#[tokio::test]
async fn unanswered_request_times_out_and_dropped_reply_fails() {
    // Long enough that b's handler has the request before a gives up on it, even on a busy
    // machine (the test asserts which event ends the request, not how soon).
    let timeout = Duration::from_secs(5);
    let (a, _a_inbound) = node(timeout).await;
    // b waits longer than a, so that a's timeout rather than b giving up ends the exchange.
    let (b, mut b_inbound) = node(10 * timeout).await;
    let (to, addrs) = (b.peer_id(), b.listen_addrs());

    // b holds the first request unanswered for as long as the test runs, and drops the
    // second's reply sender.
    let (got_first, first_held) = tokio::sync::oneshot::channel();
    let holder = tokio::spawn(async move {
        let held = b_inbound.recv().await.unwrap();
        let _ = got_first.send(());
        let dropped = b_inbound.recv().await.unwrap();
        drop(dropped.reply);
        std::future::pending::<()>().await;
        drop(held);
    });

    let err = a
        .request(to, addrs.clone(), notify(&a, 1))
        .await
        .unwrap_err();
    // Ended by a's request timeout, on a request b had received and still held.
    assert!(
        matches!(err, SendError::Timeout { after, .. } if after == timeout),
        "{err:?}"
    );
    tokio::time::timeout(Duration::from_secs(60), first_held)
        .await
        .expect("b never received the request")
        .unwrap();
    assert!(!holder.is_finished());

    // b drops the reply sender: a learns it then, not at its timeout (which is longer than
    // the test may take, here).
    let (patient, _patient_inbound) = node(Duration::from_secs(600)).await;
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        patient.request(to, addrs, notify(&patient, 2)),
    )
    .await
    .expect("the dropped reply was not told: the request waited for its timeout")
    .unwrap_err();
    assert!(!matches!(err, SendError::Timeout { .. }), "{err:?}");
    assert!(
        err.unanswered(),
        "a dropped reply is told as unanswered: {err:?}"
    );

    holder.abort();
    a.shutdown().await;
    patient.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn oversized_request_is_refused_by_the_sender() {
    let (a, _a_inbound) = node(Duration::from_secs(5)).await;
    let (b, mut b_inbound) = node(Duration::from_secs(5)).await;

    let big = Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: a.peer_id().to_string().into(),
            seq: 1,
        },
        message: Message::Deploy(mobiwf_proto::Deploy {
            instance: mobiwf_proto::InstanceId(1),
            partition: mobiwf_proto::PartitionId(1),
            document: "x".repeat(MAX_MESSAGE_BYTES),
            responsible: None,
            hour_ms: None,
            inputs: Default::default(),
            runs_on: Default::default(),
        }),
    };
    let err = a
        .request(b.peer_id(), b.listen_addrs(), big)
        .await
        .unwrap_err();
    assert!(matches!(err, SendError::Codec { .. }), "{err:?}");
    assert!(
        !err.unanswered(),
        "refused by the sender, not left unanswered"
    );
    let text = err.to_string();
    assert!(text.contains("exceeds the limit"), "{text}");
    assert!(text.contains(&b.peer_id().to_string()), "{text}");
    assert!(b_inbound.try_recv().is_err());

    // Refused before anything was sent: the next message goes as usual.
    let server = serve(b_inbound, |_| Reply::Ack);
    let reply = a
        .request(b.peer_id(), b.listen_addrs(), notify(&a, 2))
        .await
        .unwrap();
    assert_eq!(reply, Reply::Ack);
    b.shutdown().await;
    assert_eq!(server.await.unwrap(), 1);
    a.shutdown().await;
}

/// A codec that sends whatever frame body it is given, with its true length as prefix, as a
/// broken or hostile peer ignoring the limit would.
#[derive(Clone, Default)]
struct RawCodec;

impl request_response::Codec for RawCodec {
    type Protocol = StreamProtocol;
    type Request = Vec<u8>;
    type Response = Vec<u8>;

    async fn read_request<T>(&mut self, _: &StreamProtocol, _: &mut T) -> io::Result<Vec<u8>>
    where
        T: AsyncRead + Unpin + Send,
    {
        Err(io::Error::other("not a server"))
    }

    async fn read_response<T>(&mut self, _: &StreamProtocol, io: &mut T) -> io::Result<Vec<u8>>
    where
        T: AsyncRead + Unpin + Send,
    {
        let mut bytes = Vec::new();
        io.read_to_end(&mut bytes).await?;
        if bytes.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(bytes)
    }

    async fn write_request<T>(
        &mut self,
        _: &StreamProtocol,
        io: &mut T,
        body: Vec<u8>,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        let len = u32::try_from(body.len()).map_err(io::Error::other)?;
        io.write_all(&len.to_be_bytes()).await?;
        io.write_all(&body).await?;
        io.flush().await
    }

    async fn write_response<T>(
        &mut self,
        _: &StreamProtocol,
        _: &mut T,
        _: Vec<u8>,
    ) -> io::Result<()>
    where
        T: AsyncWrite + Unpin + Send,
    {
        Err(io::Error::other("not a server"))
    }
}

#[tokio::test]
async fn oversized_frame_is_refused_by_the_receiver() {
    let (b, mut b_inbound) = node(Duration::from_secs(5)).await;

    let mut raw = libp2p::SwarmBuilder::with_new_identity()
        .with_tokio()
        .with_tcp(
            libp2p::tcp::Config::default(),
            libp2p::noise::Config::new,
            libp2p::yamux::Config::default,
        )
        .unwrap()
        .with_behaviour(|_| {
            request_response::Behaviour::<RawCodec>::new(
                [(
                    StreamProtocol::new(mobiwf_proto::PROTOCOL),
                    ProtocolSupport::Outbound,
                )],
                request_response::Config::default(),
            )
        })
        .unwrap()
        .build();
    for addr in b.listen_addrs() {
        raw.add_peer_address(b.peer_id(), addr);
    }

    // Sends `body` as one frame; the reply, or the error.
    let mut exchange = async |body: Vec<u8>| -> Result<Vec<u8>, String> {
        let sent = raw.behaviour_mut().send_request(&b.peer_id(), body);
        tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                if let SwarmEvent::Behaviour(event) = raw.select_next_some().await {
                    match event {
                        request_response::Event::OutboundFailure {
                            request_id, error, ..
                        } if request_id == sent => return Err(error.to_string()),
                        request_response::Event::Message {
                            message:
                                request_response::Message::Response {
                                    request_id,
                                    response,
                                },
                            ..
                        } if request_id == sent => return Ok(response),
                        _ => {}
                    }
                }
            }
        })
        .await
        .expect("the receiver neither answered nor closed the stream")
    };

    // A valid envelope padded with JSON whitespace to one byte over the limit: only the limit
    // makes it unacceptable.
    let envelope = Envelope {
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: "raw".into(),
            seq: 1,
        },
        message: Message::Notify(mobiwf_proto::Notify::new(
            mobiwf_proto::InstanceId(1),
            mobiwf_proto::ActivityId(1),
            Outcome::Succeeded,
        )),
    };
    // A batch of one, `len` bytes in all.
    let batch = |len: usize| {
        let mut body = b"[".to_vec();
        body.extend(serde_json::to_vec(&envelope).unwrap());
        body.resize(len - 1, b' ');
        body.push(b']');
        body
    };
    let outcome = exchange(batch(MAX_MESSAGE_BYTES + 1)).await;
    assert!(outcome.is_err(), "got a reply: {outcome:?}");
    assert!(b_inbound.try_recv().is_err());

    // The same padded to exactly the limit is accepted.
    let server = serve(b_inbound, |_| Reply::Ack);
    let reply = exchange(batch(MAX_MESSAGE_BYTES)).await.unwrap();
    let reply: Vec<Option<Reply>> = serde_json::from_slice(&reply[4..]).unwrap();
    assert_eq!(reply, vec![Some(Reply::Ack)]);

    b.shutdown().await;
    assert_eq!(server.await.unwrap(), 1);
}

#[tokio::test]
async fn shutdown_stops_everything() {
    let (a, _a_inbound) = node(Duration::from_secs(2)).await;
    let (b, mut b_inbound) = node(Duration::from_secs(2)).await;
    let (to, addrs) = (b.peer_id(), b.listen_addrs());

    b.shutdown().await;
    b.shutdown().await; // twice is fine
    assert!(b_inbound.recv().await.is_none());
    assert!(b.listen_addrs().is_empty());
    let err = b
        .request(a.peer_id(), a.listen_addrs(), notify(&b, 1))
        .await
        .unwrap_err();
    assert!(matches!(err, SendError::Stopped { .. }), "{err:?}");
    assert!(err.to_string().contains("shut down"), "{err}");

    // Its listener is closed: a cannot reach it any more.
    let err = a.request(to, addrs, notify(&a, 1)).await.unwrap_err();
    assert!(matches!(err, SendError::Dial { .. }), "{err:?}");
    a.shutdown().await;
}

#[test]
fn identity_is_created_once_and_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("node-a");
    let first = identity::load_or_create(&keys).unwrap();
    let second = identity::load_or_create(&keys).unwrap();
    assert_eq!(first.public().to_peer_id(), second.public().to_peer_id());

    let file = keys.join(identity::KEY_FILE);
    assert_eq!(
        std::fs::read(&file).unwrap(),
        first.to_protobuf_encoding().unwrap()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    // Only the key file is left behind.
    let names: Vec<_> = std::fs::read_dir(&keys)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from(identity::KEY_FILE)]);

    let other = identity::load_or_create(&dir.path().join("node-b")).unwrap();
    assert_ne!(PeerId::from(first.public()), PeerId::from(other.public()));
}

#[test]
fn corrupt_identity_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(identity::KEY_FILE);
    std::fs::write(&file, b"not a key").unwrap();
    let err = identity::load_or_create(dir.path()).unwrap_err();
    let text = format!("{err:#}");
    assert!(text.contains(&file.display().to_string()), "{text}");
    assert!(text.contains("delete"), "{text}");
    assert!(text.contains("peer id"), "{text}");
    // The file is left alone.
    assert_eq!(std::fs::read(&file).unwrap(), b"not a key");
}

/// A mesh member with `key` (a private mesh) or without (`None`).
async fn private_node(
    key: Option<mesh::private::PreSharedKey>,
) -> (MeshHandle, mpsc::Receiver<Inbound>) {
    let config = MeshConfig {
        swarm_key: key,
        ..config(Duration::from_secs(5))
    };
    mesh::start(config).await.unwrap()
}

fn key_of(text: &str) -> mesh::private::PreSharedKey {
    text.parse().unwrap()
}

#[tokio::test]
async fn in_a_private_mesh_only_peers_with_its_key_connect() {
    let key = key_of(&mesh::private::new_key_file().unwrap());
    let other = key_of(&mesh::private::new_key_file().unwrap());
    let (member, member_in) = private_node(Some(key)).await;
    let served = serve(member_in, |_| Reply::Ack);
    let to = member.peer_id();
    let at = member.listen_addrs();

    let (colleague, _in) = private_node(Some(key)).await;
    let reply = colleague
        .request(to, at.clone(), notify(&colleague, 1))
        .await;
    assert!(matches!(reply, Ok(Reply::Ack)), "{reply:?}");

    // Without the key, or with another one, nothing gets through: not even a handshake.
    let (open, _in) = private_node(None).await;
    let reply = open.request(to, at.clone(), notify(&open, 1)).await;
    assert!(
        reply.is_err(),
        "a peer without the key was answered: {reply:?}"
    );
    let (stranger, _in) = private_node(Some(other)).await;
    let reply = stranger.request(to, at, notify(&stranger, 1)).await;
    assert!(
        reply.is_err(),
        "a peer with another key was answered: {reply:?}"
    );

    member.shutdown().await;
    assert_eq!(
        served.await.unwrap(),
        1,
        "only the colleague's request was served"
    );
}

/// Forwards TCP from a listener on loopback to `to` until `cut` is set; from then on it keeps
/// every socket open and forwards nothing: a link that went silent.
async fn silent_proxy(
    to: std::net::SocketAddr,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let here = listener.local_addr().unwrap();
    let cut = std::sync::Arc::new(AtomicBool::new(false));
    let cut_here = cut.clone();
    tokio::spawn(async move {
        while let Ok((inside, _)) = listener.accept().await {
            let Ok(outside) = tokio::net::TcpStream::connect(to).await else {
                continue;
            };
            let (in_read, in_write) = inside.into_split();
            let (out_read, out_write) = outside.into_split();
            for (mut from, mut into) in [
                (
                    Box::new(in_read) as Box<dyn tokio::io::AsyncRead + Unpin + Send>,
                    Box::new(out_write) as Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
                ),
                (Box::new(out_read), Box::new(in_write)),
            ] {
                let cut = cut_here.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = from.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        if !cut.load(Ordering::Relaxed) && into.write_all(&buf[..n]).await.is_err()
                        {
                            break;
                        }
                    }
                });
            }
        }
    });
    (here, cut)
}

#[tokio::test]
async fn a_connection_that_goes_silent_is_closed_by_ping_and_its_request_fails() {
    // A request timeout far beyond the test's own deadline: only ping can end the request.
    let (a, _a_inbound) = node(Duration::from_secs(600)).await;
    let (b, b_inbound) = node(Duration::from_secs(600)).await;
    let _served = serve(b_inbound, |_| Reply::Ack);
    let b_tcp = b
        .listen_addrs()
        .iter()
        .find_map(|addr| {
            let mut ip = None;
            let mut port = None;
            for p in addr.iter() {
                match p {
                    libp2p::multiaddr::Protocol::Ip4(v) => ip = Some(v),
                    libp2p::multiaddr::Protocol::Tcp(v) => port = Some(v),
                    _ => {}
                }
            }
            Some(std::net::SocketAddr::from((ip?, port?)))
        })
        .expect("b listens on TCP");
    let (proxy, cut) = silent_proxy(b_tcp).await;
    let via: Multiaddr = format!("/ip4/127.0.0.1/tcp/{}", proxy.port())
        .parse()
        .unwrap();
    let reply = a
        .request(b.peer_id(), vec![via.clone()], notify(&a, 1))
        .await;
    assert_eq!(
        reply.unwrap(),
        Reply::Ack,
        "through the proxy while it forwards"
    );

    cut.store(true, std::sync::atomic::Ordering::Relaxed);
    let deadline = mesh::PING_INTERVAL + mesh::PING_TIMEOUT + Duration::from_secs(30);
    let silent = tokio::time::timeout(deadline, a.request(b.peer_id(), vec![via], notify(&a, 2)))
        .await
        .expect("ping closed the silent connection: the request did not wait for its timeout");
    assert!(silent.is_err(), "{silent:?}");
    a.shutdown().await;
    b.shutdown().await;
}
