//! The lanes and the backoff without a network: a stand-in link whose peers are up or down,
//! counting the attempts in flight per peer. The tests that wait run on tokio's paused clock
//! (the lanes' timers are tokio's): it moves on only when every task waits, straight to the
//! next timer, so what happens at each instant is the same on every run, however loaded the
//! machine.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use libp2p::{Multiaddr, PeerId};
use tokio::sync::{broadcast, mpsc};
use tokio::time::Instant;

use super::*;
use crate::metrics::Peer;
use crate::store::MemoryStore;
use mobiwf_proto::{Message, MessageId};

/// Peers that answer (the others fail after `FAIL_AFTER`, like a dial timing out).
#[derive(Default)]
struct Fake {
    up: Mutex<HashSet<PeerId>>,
    in_flight: Mutex<HashMap<PeerId, usize>>,
    most_in_flight: Mutex<HashMap<PeerId, usize>>,
    attempts: Mutex<HashMap<PeerId, usize>>,
    /// Where `relocate` finds a peer: it answers from then on.
    moved: Mutex<HashSet<PeerId>>,
    seen: Mutex<Option<broadcast::Sender<PeerId>>>,
    delivered: Mutex<Vec<(PeerId, Instant)>>,
    /// Every try: (to, seq, answered_below).
    tries: Mutex<Vec<(PeerId, u64, u64)>>,
    /// When each try began, on the test's clock.
    tried_at: Mutex<Vec<(PeerId, Instant)>>,
    /// How many more tries each peer leaves unanswered (it is up, but sheds them).
    unanswered: Mutex<HashMap<PeerId, usize>>,
    /// How many times the controller was asked where a peer is.
    relocations: Mutex<usize>,
    /// The messages (by number) every peer refuses.
    refused: Mutex<HashSet<u64>>,
}

const FAIL_AFTER: Duration = Duration::from_millis(30);

struct FakeLink(Arc<Fake>, PeerId);

impl Link for FakeLink {
    fn me(&self) -> PeerId {
        self.1
    }

    fn request(
        &self,
        to: PeerId,
        _addrs: Vec<Multiaddr>,
        envelope: Envelope,
    ) -> BoxFuture<'static, Result<Reply, LinkError>> {
        let fake = self.0.clone();
        Box::pin(async move {
            fake.tries
                .lock()
                .unwrap()
                .push((to, envelope.id.seq, envelope.answered_below));
            fake.tried_at.lock().unwrap().push((to, Instant::now()));
            {
                let mut now = fake.in_flight.lock().unwrap();
                let n = now.entry(to).or_default();
                *n += 1;
                let mut most = fake.most_in_flight.lock().unwrap();
                let m = most.entry(to).or_default();
                *m = (*m).max(*n);
                *fake.attempts.lock().unwrap().entry(to).or_default() += 1;
            }
            let up = fake.up.lock().unwrap().contains(&to);
            let shed = {
                let mut left = fake.unanswered.lock().unwrap();
                let left = left.entry(to).or_default();
                let shed = up && *left > 0;
                *left = left.saturating_sub(1);
                shed
            };
            let refused = fake.refused.lock().unwrap().contains(&envelope.id.seq);
            let result = if refused {
                Ok(Reply::Refused {
                    reason: "not yours".to_owned(),
                })
            } else if shed {
                Err(LinkError::Unanswered("shed".to_owned()))
            } else if up {
                tokio::time::sleep(Duration::from_millis(2)).await;
                fake.delivered.lock().unwrap().push((to, Instant::now()));
                Ok(Reply::Ack)
            } else {
                tokio::time::sleep(FAIL_AFTER).await;
                Err(LinkError::Failed("unreachable".to_owned()))
            };
            *fake.in_flight.lock().unwrap().get_mut(&to).unwrap() -= 1;
            result
        })
    }

    fn seen(&self) -> broadcast::Receiver<PeerId> {
        let (tx, rx) = broadcast::channel(16);
        *self.0.seen.lock().unwrap() = Some(tx);
        rx
    }

    fn relocate(&self, peer: PeerId) -> BoxFuture<'static, bool> {
        let fake = self.0.clone();
        Box::pin(async move {
            *fake.relocations.lock().unwrap() += 1;
            let moved = fake.moved.lock().unwrap().remove(&peer);
            if moved {
                fake.up.lock().unwrap().insert(peer);
            }
            moved
        })
    }
}

fn outbox(fake: &Arc<Fake>, backoff: Backoff) -> Outbox {
    outbox_telling(fake, backoff, None)
}

fn outbox_telling(
    fake: &Arc<Fake>,
    backoff: Backoff,
    link_news: Option<mpsc::UnboundedSender<LinkNews>>,
) -> Outbox {
    let (local, _rx) = mpsc::channel(16);
    let wiring = Wiring {
        link: Arc::new(FakeLink(fake.clone(), PeerId::random())),
        local,
        metrics: Arc::new(Metrics::new()),
        delivered: None,
        stop_on_refusal: None,
        link_news,
    };
    Outbox::start_with(Arc::new(MemoryStore::new()), wiring, backoff).unwrap()
}

/// An outbox with a short backoff (10 to 40 ms) that tells of peers gone and back.
fn telling_outbox() -> (Arc<Fake>, Outbox, mpsc::UnboundedReceiver<LinkNews>) {
    let fake = Arc::new(Fake::default());
    let (news_tx, news) = mpsc::unbounded_channel();
    let backoff = Backoff {
        min: Duration::from_millis(10),
        max: Duration::from_millis(40),
    };
    let outbox = outbox_telling(&fake, backoff, Some(news_tx));
    (fake, outbox, news)
}

fn messages(to: PeerId, from_seq: u64, n: u64) -> Vec<Outgoing> {
    (from_seq..from_seq + n)
        .map(|seq| {
            let envelope = Envelope {
                answered_below: 0,
                id: MessageId {
                    incarnation: 0,
                    origin: NodeId::new("me"),
                    seq,
                },
                message: Message::Probe(Default::default()),
            };
            Outgoing::parsed(to, Vec::new(), Peer::Partner, envelope)
        })
        .collect()
}

async fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn delivered_to(fake: &Fake, peer: PeerId) -> usize {
    let delivered = fake.delivered.lock().unwrap();
    delivered.iter().filter(|(p, _)| *p == peer).count()
}

fn attempts_to(fake: &Fake, peer: PeerId) -> usize {
    fake.attempts
        .lock()
        .unwrap()
        .get(&peer)
        .copied()
        .unwrap_or(0)
}

/// When the tries to `peer` from `since` on began.
fn tries_since(fake: &Fake, peer: PeerId, since: Instant) -> Vec<Instant> {
    let tried = fake.tried_at.lock().unwrap();
    tried
        .iter()
        .filter(|(p, at)| *p == peer && *at >= since)
        .map(|(_, at)| *at)
        .collect()
}

/// The time between each try and the next.
fn gaps(tries: &[Instant]) -> Vec<Duration> {
    tries.windows(2).map(|w| w[1] - w[0]).collect()
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_peer_does_not_slow_the_others_and_is_probed_one_at_a_time() {
    let fake = Arc::new(Fake::default());
    let (down, up) = (PeerId::random(), PeerId::random());
    fake.up.lock().unwrap().insert(up);
    let backoff = Backoff {
        min: Duration::from_millis(10),
        max: Duration::from_millis(40),
    };
    let outbox = outbox(&fake, backoff);
    // Far more messages to the dead peer than the global cap.
    outbox.dispatch(messages(down, 1, 2 * MAX_IN_FLIGHT as u64));
    // Its first round failed long ago, and its backoff is at the longest.
    tokio::time::sleep(Duration::from_millis(300)).await;
    outbox.dispatch(messages(up, 10_000, 200));
    // Each takes 2 ms, 32 at a time: all are through after 7 rounds unless the dead peer's
    // waiting deliveries hold the global slots (then none goes).
    let rounds = 200_u32.div_ceil(MAX_IN_FLIGHT_PER_PEER as u32);
    tokio::time::sleep(Duration::from_millis(2) * rounds + Duration::from_millis(1)).await;
    assert_eq!(delivered_to(&fake, up), 200, "the live peer waited");
    let most = fake.most_in_flight.lock().unwrap().clone();
    assert!(most[&down] <= MAX_IN_FLIGHT_PER_PEER, "{most:?}");
    assert!(most[&up] <= MAX_IN_FLIGHT_PER_PEER, "{most:?}");
    // Once it failed, one delivery at a time tries the dead peer, once per wait: each probe
    // fails after 30 ms, the next goes when the backoff (40 ms by now) is over, not sooner
    // nor later; not one per message.
    let now = fake.in_flight.lock().unwrap()[&down];
    fake.most_in_flight.lock().unwrap().insert(down, now);
    let from = Instant::now();
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(fake.most_in_flight.lock().unwrap()[&down], 1);
    let probes = tries_since(&fake, down, from);
    assert!(probes.len() >= 9, "{} probes in 700 ms", probes.len());
    for gap in gaps(&probes) {
        assert_eq!(gap, FAIL_AFTER + backoff.max, "between two probes");
    }
    assert_eq!(outbox.depth(), 2 * MAX_IN_FLIGHT);
    outbox.shutdown();
}

#[tokio::test(start_paused = true)]
async fn the_backoff_resets_when_the_peer_is_seen_and_everything_waiting_goes() {
    let fake = Arc::new(Fake::default());
    let peer = PeerId::random();
    // A backoff far longer than the test: only the peer being seen can deliver in time.
    let backoff = Backoff {
        min: Duration::from_millis(20),
        max: Duration::from_secs(600),
    };
    let outbox = outbox(&fake, backoff);
    outbox.dispatch(messages(peer, 1, 50));
    // Let it fail long enough for the backoff to grow past seconds: the first round (one
    // lane full of attempts) counts once, then a probe per wait (20 ms, 40 ms, ... 1.28 s).
    wait_until("the backoff to grow", Duration::from_secs(10), || {
        attempts_to(&fake, peer) >= MAX_IN_FLIGHT_PER_PEER + 7
    })
    .await;
    // The probe in flight fails; without the peer being seen the next would wait 2.56 s.
    fake.up.lock().unwrap().insert(peer);
    let seen = fake.seen.lock().unwrap().clone().unwrap();
    seen.send(peer).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        delivered_to(&fake, peer),
        50,
        "delivered within 100 ms of the peer being seen"
    );
    wait_until("the outbox to empty", Duration::from_secs(5), || {
        outbox.depth() == 0
    })
    .await;
    assert_eq!(outbox.inner.lanes.len(), 0, "idle lanes are dropped");
}

#[tokio::test(start_paused = true)]
async fn a_peer_the_controller_finds_elsewhere_is_tried_there_at_once() {
    let fake = Arc::new(Fake::default());
    let peer = PeerId::random();
    fake.moved.lock().unwrap().insert(peer);
    let backoff = Backoff {
        min: Duration::from_secs(600),
        max: Duration::from_secs(600),
    };
    let outbox = outbox(&fake, backoff);
    outbox.dispatch(messages(peer, 1, 3));
    // Long before the backoff's 600 s are over.
    wait_until(
        "delivery at the new address",
        Duration::from_secs(5),
        || delivered_to(&fake, peer) == 3,
    )
    .await;
    assert_eq!(*fake.relocations.lock().unwrap(), 1);
}

#[tokio::test(start_paused = true)]
async fn failures_of_attempts_made_together_count_once() {
    let backoff = Backoff {
        min: Duration::from_millis(100),
        max: Duration::from_secs(10),
    };
    let lanes = Lanes::default();
    let lane = lanes.of(PeerId::random(), backoff);
    assert_eq!(lane.failed(), Duration::from_millis(100));
    // Another attempt of the same round fails: the wait does not double.
    assert!(lane.failed() <= Duration::from_millis(100));
    lane.reset();
    assert_eq!(lane.failed(), Duration::from_millis(100));
    // Up to the end of the wait a failure is of the same round: what is left of the wait.
    tokio::time::advance(Duration::from_millis(99)).await;
    assert_eq!(lane.failed(), Duration::from_millis(1));
    // From its end on, a failure is the next round's: the wait doubles.
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(lane.failed(), Duration::from_millis(200));
    lane.succeeded();
    // Polled once: a wait left in place would be pending (awaited, the paused clock would
    // skip over it).
    assert!(
        lane.turn().now_or_never().flatten().is_some(),
        "no wait after a success"
    );
    assert!(lane.locate_due(Duration::from_secs(60)));
    tokio::time::advance(Duration::from_secs(59)).await;
    assert!(!lane.locate_due(Duration::from_secs(60)));
    tokio::time::advance(Duration::from_secs(1)).await;
    assert!(lane.locate_due(Duration::from_secs(60)));
}

#[tokio::test(start_paused = true)]
async fn a_peer_is_told_unreachable_after_three_failed_tries_and_reachable_once_it_answers() {
    let (fake, outbox, mut news) = telling_outbox();
    let (down, up) = (PeerId::random(), PeerId::random());
    fake.up.lock().unwrap().insert(up);
    outbox.dispatch(messages(up, 1, 3));
    outbox.dispatch(messages(down, 10, 5));
    let told = tokio::time::timeout(Duration::from_secs(10), news.recv()).await;
    assert_eq!(
        told.unwrap(),
        Some(LinkNews {
            peer: down,
            reachable: false
        })
    );
    assert!(
        fake.attempts.lock().unwrap()[&down] >= UNREACHABLE_AFTER_FAILURES as usize,
        "told before {UNREACHABLE_AFTER_FAILURES} tries"
    );
    // Nothing more while it stays down and fails again; the peer that answers is never news.
    let before = attempts_to(&fake, down);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(attempts_to(&fake, down) >= before + 2, "not tried again");
    assert!(news.try_recv().is_err(), "told twice");
    fake.up.lock().unwrap().insert(down);
    let told = tokio::time::timeout(Duration::from_secs(10), news.recv()).await;
    assert_eq!(
        told.unwrap(),
        Some(LinkNews {
            peer: down,
            reachable: true
        })
    );
    wait_until("every message delivered", Duration::from_secs(10), || {
        delivered_to(&fake, down) == 5
    })
    .await;
    assert!(news.try_recv().is_err(), "reachable told twice");
}

#[tokio::test(start_paused = true)]
async fn a_message_left_unanswered_is_tried_again_after_a_pause_and_its_peer_is_not_taken_for_gone()
{
    let (fake, outbox, mut news) = telling_outbox();
    let busy = PeerId::random();
    fake.up.lock().unwrap().insert(busy);
    // More unanswered tries than it takes to be told unreachable.
    let shed = UNREACHABLE_AFTER_FAILURES as usize + 1;
    fake.unanswered.lock().unwrap().insert(busy, shed);
    let started = Instant::now();
    outbox.dispatch(messages(busy, 1, 1));
    wait_until("the delivery", Duration::from_secs(10), || {
        delivered_to(&fake, busy) == 1
    })
    .await;
    assert_eq!(fake.attempts.lock().unwrap()[&busy], shed + 1);
    // Paused between tries, the pause doubling: 100, 200, 400, 800 ms.
    let pauses: Vec<Duration> = (0..shed as u32)
        .map(|k| UNANSWERED_PAUSE_MIN * 2_u32.pow(k))
        .collect();
    assert_eq!(gaps(&tries_since(&fake, busy, started)), pauses);
    assert!(news.try_recv().is_err(), "a live peer was news");
    assert_eq!(
        *fake.relocations.lock().unwrap(),
        0,
        "a live peer was located"
    );
    outbox.shutdown();
}

#[tokio::test(start_paused = true)]
async fn each_try_tells_its_receiver_the_lowest_number_it_has_no_answer_for() {
    let fake = Arc::new(Fake::default());
    let (down, up) = (PeerId::random(), PeerId::random());
    fake.up.lock().unwrap().insert(up);
    let backoff = Backoff {
        min: Duration::from_millis(5),
        max: Duration::from_millis(20),
    };
    let outbox = outbox(&fake, backoff);
    outbox.dispatch(messages(down, 1, 3));
    outbox.dispatch(messages(up, 4, 2));
    wait_until(
        "the reachable peer's messages",
        Duration::from_secs(5),
        || delivered_to(&fake, up) == 2,
    )
    .await;
    // The other receiver's unanswered messages (1 to 3) do not hold this one's floor back.
    for (to, seq, below) in fake.tries.lock().unwrap().iter() {
        if *to == up {
            assert_eq!(*below, 4, "message {seq}");
        } else {
            assert_eq!(*below, 1, "message {seq}");
        }
    }
    assert_eq!(outbox.lowest_unanswered(&NodeId::new(up.to_string())), None);
    assert_eq!(
        outbox.lowest_unanswered(&NodeId::new(down.to_string())),
        Some(1)
    );
    fake.up.lock().unwrap().insert(down);
    wait_until("the other peer's messages", Duration::from_secs(5), || {
        delivered_to(&fake, down) == 3
    })
    .await;
    wait_until("their answers counted", Duration::from_secs(5), || {
        outbox
            .lowest_unanswered(&NodeId::new(down.to_string()))
            .is_none()
    })
    .await;
    outbox.dispatch(messages(down, 6, 1));
    wait_until("a later message", Duration::from_secs(5), || {
        delivered_to(&fake, down) == 4
    })
    .await;
    let tries = fake.tries.lock().unwrap();
    let last = tries.iter().rev().find(|(to, _, _)| *to == down).unwrap();
    assert_eq!(*last, (down, 6, 6), "all below 6 answered");
}

/// An owner that takes only refusals hears of those alone, and their entries stay unanswered
/// until it releases them with its own write; the outbox removes the rest itself.
#[tokio::test]
async fn an_owner_takes_only_the_answers_it_asked_for() {
    let fake = Arc::new(Fake::default());
    let peer = PeerId::random();
    fake.up.lock().unwrap().insert(peer);
    fake.refused.lock().unwrap().insert(2);
    let (to, mut taken) = mpsc::unbounded_channel();
    let (local, _rx) = mpsc::channel(16);
    let wiring = Wiring {
        link: Arc::new(FakeLink(fake.clone(), PeerId::random())),
        local,
        metrics: Arc::new(Metrics::new()),
        delivered: Some(DeliveredTo {
            to,
            takes: |_, reply| matches!(reply, Reply::Refused { .. }),
        }),
        stop_on_refusal: None,
        link_news: None,
    };
    let backoff = Backoff {
        min: Duration::from_millis(10),
        max: Duration::from_millis(40),
    };
    let outbox = Outbox::start_with(Arc::new(MemoryStore::new()), wiring, backoff).unwrap();
    outbox.dispatch(messages(peer, 1, 3));
    let first = tokio::time::timeout(Duration::from_secs(10), taken.recv())
        .await
        .expect("the refusal is told")
        .expect("the channel is open");
    assert_eq!(first.message.envelope.id.seq, 2);
    assert!(
        matches!(first.reply, Reply::Refused { .. }),
        "{:?}",
        first.reply
    );
    let node = NodeId::new(peer.to_string());
    wait_until(
        "the acknowledged ones removed",
        Duration::from_secs(10),
        || delivered_to(&fake, peer) == 2,
    )
    .await;
    wait_until("only the refused one left", Duration::from_secs(10), || {
        outbox.lowest_unanswered(&node) == Some(2)
    })
    .await;
    assert!(
        taken.try_recv().is_err(),
        "acknowledgements stay the outbox's"
    );
    outbox.release(&[(node.clone(), 2)]);
    assert_eq!(outbox.lowest_unanswered(&node), None);
}
