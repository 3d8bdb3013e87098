//! The apply-once rule with bounded memory (`seen`), through `Group::receive` as the daemons
//! use it: a duplicate is never applied twice, a late first delivery is never taken for a
//! duplicate, the keys kept stay within the messages not yet known answered, and a new
//! incarnation of a sender starts afresh.

use libp2p::PeerId;
use mobiwf_proto::{Envelope, Message, MessageId, NodeId, Reply};
use proptest::prelude::*;
use tokio::sync::oneshot;

use super::group::Group;
use super::seen::{MAX_FORGOTTEN_PER_GROUP, MAX_SEEN_ABOVE_FLOOR};
use super::sequencer::Sequencer;
use crate::mesh::Inbound;
use crate::metrics::{Metrics, Peer};
use crate::store::{Durability, MemoryStore, Store};

struct Receiver {
    store: MemoryStore,
    metrics: Metrics,
    seq: Sequencer,
    applied: Vec<(u64, u64)>,
}

impl Receiver {
    fn new() -> Receiver {
        Receiver::of(MemoryStore::default())
    }

    /// A receiver starting on `store` as it is.
    fn of(store: MemoryStore) -> Receiver {
        let seq = Sequencer::load(&store, PeerId::random()).unwrap();
        Receiver {
            store,
            metrics: Metrics::new(),
            seq,
            applied: Vec::new(),
        }
    }

    /// One group of deliveries `(from, incarnation, seq, answered_below)`, written; the
    /// replies (`None`: left unanswered).
    fn group(&mut self, deliveries: &[(PeerId, u64, u64, u64)]) -> Vec<Option<Reply>> {
        let mut group = Group::default();
        let mut answers = Vec::new();
        for &(from, incarnation, seq, answered_below) in deliveries {
            let (reply, answer) = oneshot::channel();
            let id = MessageId {
                origin: NodeId::new(from.to_string()),
                incarnation,
                seq,
            };
            let envelope = Envelope {
                id,
                answered_below,
                epoch: None,
                message: notify(),
            };
            let inbound = Inbound {
                from,
                envelope,
                reply,
            };
            let applied = &mut self.applied;
            group
                .receive(
                    &self.store,
                    &self.metrics,
                    Peer::Partner,
                    inbound,
                    |_, id, _| {
                        applied.push((id.incarnation, id.seq));
                        Ok(())
                    },
                )
                .unwrap();
            answers.push(answer);
        }
        let (batch, written) = group.finish(&mut self.seq);
        self.store.write(batch, Durability::Synced).unwrap();
        for (to, reply) in written.acks {
            let _ = to.send(reply);
        }
        answers
            .into_iter()
            .map(|mut answer| answer.try_recv().ok())
            .collect()
    }

    fn seen_keys(&self) -> usize {
        self.store.scan_prefix(b"seen/").unwrap().len()
    }
}

fn notify() -> Message {
    Message::Notify(mobiwf_proto::Notify::new(
        mobiwf_proto::InstanceId(1),
        mobiwf_proto::ActivityId(2),
        mobiwf_proto::Outcome::Succeeded,
    ))
}

#[test]
fn below_the_floor_is_a_duplicate_and_the_keys_below_it_are_deleted() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    // 1..=3 applied while 1 is the lowest unanswered: keys kept for all three.
    let replies = r.group(&[(s, 9, 1, 1), (s, 9, 2, 1), (s, 9, 3, 1)]);
    assert_eq!(replies, vec![Some(Reply::Ack); 3]);
    assert_eq!(r.seen_keys(), 3);
    // The sender had its answers: the next message says so, the keys below 4 go.
    r.group(&[(s, 9, 4, 4)]);
    assert_eq!(r.seen_keys(), 1, "only 4's key is left");
    // A stale copy of 2 (a retry that crossed its answer) is acknowledged, not applied.
    let replies = r.group(&[(s, 9, 2, 2)]);
    assert_eq!(replies, vec![Some(Reply::Ack)]);
    assert_eq!(r.applied, vec![(9, 1), (9, 2), (9, 3), (9, 4)]);
}

#[test]
fn a_late_first_delivery_above_the_floor_is_applied() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    // 5 is unanswered (lost on the way) while 6 and 7 get through: the floor stays at 5.
    r.group(&[(s, 1, 6, 5), (s, 1, 7, 5)]);
    r.group(&[(s, 1, 5, 5), (s, 1, 6, 5)]);
    assert_eq!(r.applied, vec![(1, 6), (1, 7), (1, 5)]);
    // Answered: the floor passes all three and no key is left.
    r.group(&[(s, 1, 8, 8)]);
    assert_eq!(r.seen_keys(), 1);
}

#[test]
fn a_floor_never_goes_past_the_message_that_carries_it() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    // A sender saying more than it may (its own message cannot be answered yet).
    r.group(&[(s, 1, 3, 10)]);
    r.group(&[(s, 1, 4, 3)]);
    assert_eq!(r.applied, vec![(1, 3), (1, 4)]);
}

#[test]
fn a_new_incarnation_numbers_afresh() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    r.group(&[(s, 1, 1, 1), (s, 1, 2, 2), (s, 1, 3, 3)]);
    // The data directory wiped, the key kept: numbers from 1 again, a new incarnation.
    r.group(&[(s, 2, 1, 1), (s, 2, 2, 1)]);
    assert_eq!(r.applied, vec![(1, 1), (1, 2), (1, 3), (2, 1), (2, 2)]);
}

#[test]
fn a_store_from_before_incarnations_keeps_its_old_seen_keys_as_incarnation_0_once() {
    let store = MemoryStore::default();
    let mut old = crate::store::Batch::default();
    old.put("seen/12D3KooWold/00000000000000000007", Vec::new());
    old.put("seen/12D3KooWold/00000000000000000008", Vec::new());
    old.put(
        "run/00000000000000000001/00000000000000000001",
        b"{}".to_vec(),
    );
    store.write(old, Durability::Synced).unwrap();
    let first = Sequencer::load(&store, PeerId::random()).unwrap();
    let keys: Vec<String> = store
        .scan_prefix(b"seen/")
        .unwrap()
        .into_iter()
        .map(|(k, _)| String::from_utf8(k).unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "seen/12D3KooWold/0000000000000000/00000000000000000007",
            "seen/12D3KooWold/0000000000000000/00000000000000000008"
        ]
    );
    assert_eq!(
        store.scan_prefix(b"run/").unwrap().len(),
        1,
        "nothing else goes"
    );
    // A store with an incarnation keeps its (new) keys.
    let mut new = crate::store::Batch::default();
    new.put(
        "seen/12D3KooWnew/0000000000000001/00000000000000000001",
        Vec::new(),
    );
    store.write(new, Durability::Synced).unwrap();
    let again = Sequencer::load(&store, PeerId::random()).unwrap();
    assert_eq!(again.incarnation(), first.incarnation());
    assert_eq!(store.scan_prefix(b"seen/").unwrap().len(), 3);
}

#[test]
fn a_message_applied_before_the_upgrade_and_sent_again_after_it_is_not_applied_twice() {
    // Applied by a receiver of protocol 2, whose answer was lost: its sender, upgraded too,
    // sends it again from its outbox with incarnation 0.
    let sender = PeerId::random();
    let store = MemoryStore::default();
    let mut old = crate::store::Batch::default();
    old.put(format!("seen/{sender}/00000000000000000007"), Vec::new());
    store.write(old, Durability::Synced).unwrap();
    let mut r = Receiver::of(store);
    let replies = r.group(&[(sender, 0, 7, 0), (sender, 0, 8, 0)]);
    assert_eq!(replies, vec![Some(Reply::Ack), Some(Reply::Ack)]);
    assert_eq!(r.applied, vec![(0, 8)], "7 was applied before the upgrade");
}

#[test]
fn too_far_above_the_floor_is_left_unanswered_until_the_floor_rises() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    let far = 1 + MAX_SEEN_ABOVE_FLOOR;
    let replies = r.group(&[(s, 1, 1, 1), (s, 1, far, 1)]);
    assert_eq!(replies, vec![Some(Reply::Ack), None]);
    let replies = r.group(&[(s, 1, far, 2)]);
    assert_eq!(replies, vec![Some(Reply::Ack)]);
    assert_eq!(r.applied, vec![(1, 1), (1, far)]);
}

#[test]
fn a_message_id_naming_another_sender_is_refused() {
    let mut r = Receiver::new();
    let (s, other) = (PeerId::random(), PeerId::random());
    let mut group = Group::default();
    let (reply, mut answer) = oneshot::channel();
    let id = MessageId {
        origin: NodeId::new(other.to_string()),
        incarnation: 1,
        seq: 1,
    };
    let inbound = Inbound {
        from: s,
        envelope: Envelope::new(id, notify()),
        reply,
    };
    group
        .receive(&r.store, &r.metrics, Peer::Partner, inbound, |_, _, _| {
            panic!("not applied")
        })
        .unwrap();
    let (batch, written) = group.finish(&mut r.seq);
    assert!(batch.is_empty());
    for (to, reply) in written.acks {
        let _ = to.send(reply);
    }
    assert!(matches!(answer.try_recv(), Ok(Reply::Refused { .. })));
}

/// A sender's outbox as the rule assumes it: every message tried until answered, each try
/// carrying the lowest unanswered number; answers may be lost, tries duplicated and reordered.
#[derive(Debug, Clone)]
enum Step {
    /// Try the `i`-th unanswered message (modulo their count); its answer is lost when `lose`.
    Try { i: usize, lose: bool },
    /// A stale copy of an already answered message arrives.
    Stale { i: usize },
    /// The group ends: written.
    Write,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => (any::<usize>(), any::<bool>()).prop_map(|(i, lose)| Step::Try { i, lose }),
        1 => any::<usize>().prop_map(|i| Step::Stale { i }),
        2 => Just(Step::Write),
    ]
}

proptest! {
    #[test]
    fn every_message_is_applied_exactly_once_and_keys_stay_with_the_unanswered(
        count in 1u64..40,
        steps in proptest::collection::vec(step(), 0..200),
    ) {
        let mut r = Receiver::new();
        let s = PeerId::random();
        // Every other number goes to another receiver: gaps never hold the floor back.
        let mut unanswered: Vec<u64> = (1..=count).map(|n| 2 * n).collect();
        let mut answered: Vec<u64> = Vec::new();
        let mut pending = Vec::new();
        let deliver = |r: &mut Receiver, pending: &mut Vec<_>| -> Vec<Option<Reply>> {
            let replies = r.group(pending);
            pending.clear();
            replies
        };
        let mut tries: Vec<(u64, bool)> = Vec::new();
        for step in steps.into_iter().chain(std::iter::once(Step::Write)) {
            match step {
                Step::Try { i, lose } if !unanswered.is_empty() => {
                    let seq = unanswered[i % unanswered.len()];
                    let floor = unanswered[0];
                    pending.push((s, 3, seq, floor));
                    tries.push((seq, lose));
                }
                Step::Stale { i } if !answered.is_empty() => {
                    let seq = answered[i % answered.len()];
                    pending.push((s, 3, seq, 0));
                    tries.push((seq, true));
                }
                Step::Write => {
                    let replies = deliver(&mut r, &mut pending);
                    for ((seq, lose), reply) in tries.drain(..).zip(replies) {
                        if reply == Some(Reply::Ack) && !lose && unanswered.contains(&seq) {
                            unanswered.retain(|n| *n != seq);
                            answered.push(seq);
                        }
                    }
                }
                _ => {}
            }
        }
        // Then every message until all are answered.
        while !unanswered.is_empty() {
            let floor = unanswered[0];
            let all: Vec<_> = unanswered.iter().map(|&seq| (s, 3, seq, floor)).collect();
            r.group(&all);
            answered.append(&mut unanswered);
        }
        r.group(&[(s, 3, 2 * count + 2, 2 * count + 2)]);
        let mut applied: Vec<u64> = r.applied.iter().map(|(_, seq)| *seq).collect();
        applied.sort_unstable();
        let expected: Vec<u64> = (1..=count + 1).map(|n| 2 * n).collect();
        prop_assert_eq!(applied, expected, "each applied exactly once");
        prop_assert_eq!(r.seen_keys(), 1, "only the last message's key is left");
    }
}

#[test]
fn a_floor_jumping_over_many_keys_deletes_a_bounded_number_per_group_and_the_rest_later() {
    let mut r = Receiver::new();
    let s = PeerId::random();
    let floor_key = MessageId {
        origin: NodeId::new(s.to_string()),
        incarnation: 3,
        seq: 0,
    }
    .floor_key();
    let floor = |r: &Receiver| {
        String::from_utf8(
            r.store
                .get(floor_key.as_bytes())
                .unwrap()
                .unwrap_or_default(),
        )
        .unwrap()
    };
    // 1..=1200 applied while 1 stays the lowest unanswered: a key for each.
    let many: Vec<(PeerId, u64, u64, u64)> = (1..=1200).map(|seq| (s, 3, seq, 1)).collect();
    for chunk in many.chunks(300) {
        r.group(chunk);
    }
    assert_eq!(r.seen_keys(), 1200);
    // The sender had its answers: the floor passes all 1200 at once, but one group deletes
    // only so many of their keys; the floor's key says from where keys remain.
    r.group(&[(s, 3, 1201, 1201)]);
    assert_eq!(r.seen_keys(), 1201 - MAX_FORGOTTEN_PER_GROUP);
    assert_eq!(floor(&r), format!("1201 {}", MAX_FORGOTTEN_PER_GROUP + 1));
    // Below the floor is a duplicate at once, its key deleted or not.
    let replies = r.group(&[(s, 3, 2, 2), (s, 3, 1100, 2)]);
    assert_eq!(replies, vec![Some(Reply::Ack); 2]);
    assert_eq!(
        r.seen_keys(),
        1201 - MAX_FORGOTTEN_PER_GROUP,
        "no raise, no sweep"
    );
    // The sender's next raises sweep the rest, a bounded number each.
    r.group(&[(s, 3, 1202, 1202)]);
    assert_eq!(r.seen_keys(), 1202 - 2 * MAX_FORGOTTEN_PER_GROUP);
    r.group(&[(s, 3, 1203, 1203)]);
    assert_eq!(r.seen_keys(), 1, "only 1203's key is left");
    assert_eq!(
        floor(&r),
        "1203",
        "nothing left below the floor: as it always was written"
    );
    assert_eq!(r.applied.len(), 1203, "each applied once");
}
