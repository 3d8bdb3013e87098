//! The apply-once rule on plain values: a table of what one message does to its sender's
//! floor and what it is, and a property over senders whose outboxes lose answers, try again
//! and send stale copies, with the store played by two maps (no `Store`).

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;

use super::*;

fn id(origin: &str, incarnation: u64, seq: u64) -> MessageId {
    MessageId {
        origin: NodeId::new(origin),
        incarnation,
        seq,
    }
}

fn by_record(too_far: bool) -> Look {
    Look::ByRecord(ByRecord { too_far })
}

const DUPLICATE: Look = Look::Decided(Verdict::Duplicate);

/// One row: the sender's floor, the numbers of its applied earlier in the group, the message's
/// number and `answered_below`; the raise expected (from, to, numbers forgotten) and the look.
struct Row {
    floor: u64,
    applied_here: &'static [u64],
    seq: u64,
    answered_below: u64,
    raise: Option<(u64, u64, &'static [u64])>,
    look: Look,
}

#[test]
fn what_one_message_does_to_the_floor_and_what_it_is() {
    let far = MAX_SEEN_ABOVE_FLOOR;
    let rows = [
        // A first message that says nothing: judged by its record.
        (0, &[][..], 1, 0, None, by_record(false)),
        // The sender says 1 and 2 were answered: the floor rises to 3.
        (0, &[], 5, 3, Some((0, 3, &[][..])), by_record(false)),
        // Never past the message's own number: it is not answered yet.
        (0, &[], 3, 10, Some((0, 3, &[][..])), by_record(false)),
        // Never down; below the floor, a stale copy whatever its record.
        (4, &[], 2, 2, None, DUPLICATE),
        (4, &[], 2, 0, None, DUPLICATE),
        // At the floor: its record decides.
        (4, &[], 4, 4, None, by_record(false)),
        // Applied earlier in this group: a duplicate without asking the store.
        (0, &[7], 7, 0, None, DUPLICATE),
        // A raise forgets what the group applied below it, and only that.
        (
            0,
            &[5, 6, 9],
            8,
            7,
            Some((0, 7, &[5, 6][..])),
            by_record(false),
        ),
        // Raised up to the message's own number, not past it: its copy applied here stays.
        (0, &[8], 8, 9, Some((0, 8, &[][..])), DUPLICATE),
        // Too far above the floor, up to the limit's edge.
        (1, &[], far, 1, None, by_record(false)),
        (1, &[], far + 1, 1, None, by_record(true)),
        // A raise brings it within reach.
        (1, &[], far + 1, 2, Some((1, 2, &[][..])), by_record(false)),
    ]
    .map(
        |(floor, applied_here, seq, answered_below, raise, look)| Row {
            floor,
            applied_here,
            seq,
            answered_below,
            raise,
            look,
        },
    );
    for (n, row) in rows.iter().enumerate() {
        let mut ledger = Ledger::default();
        for &seq in row.applied_here {
            ledger.applied(id("s", 1, seq));
        }
        let got = ledger.judge(&id("s", 1, row.seq), row.floor, row.answered_below);
        let want = Judgement {
            raise: row.raise.map(|(from, to, forgotten)| Raise {
                from,
                to,
                forgotten: forgotten.iter().map(|&seq| id("s", 1, seq)).collect(),
            }),
            look: row.look,
        };
        assert_eq!(got, want, "row {n}");
        let floor = row.raise.map_or(row.floor, |(_, to, _)| to);
        assert_eq!(ledger.floor(&id("s", 1, 0)), Some(floor), "row {n}");
    }
}

#[test]
fn the_record_decides_a_message_at_or_above_the_floor() {
    let rows = [
        (false, false, Verdict::New),
        (false, true, Verdict::Duplicate),
        (true, false, Verdict::TooFarAhead),
        (true, true, Verdict::Duplicate),
    ];
    for (too_far, stored, verdict) in rows {
        assert_eq!(ByRecord { too_far }.verdict(stored), verdict, "{rows:?}");
    }
}

#[test]
fn senders_and_their_incarnations_are_kept_apart() {
    let mut ledger = Ledger::default();
    for (origin, incarnation) in [("a", 1), ("a", 2), ("b", 1)] {
        ledger.applied(id(origin, incarnation, 3));
    }
    assert_eq!(ledger.floor(&id("a", 1, 0)), None, "nothing read yet");
    let raised = ledger.judge(&id("a", 1, 5), 0, 5);
    assert_eq!(raised.raise.map(|r| r.forgotten), Some(vec![id("a", 1, 3)]));
    assert_eq!(ledger.floor(&id("a", 2, 0)), None);
    for (origin, incarnation) in [("a", 2), ("b", 1)] {
        let again = ledger.judge(&id(origin, incarnation, 3), 0, 0);
        assert_eq!(again.look, DUPLICATE, "{origin}/{incarnation}");
    }
}

#[test]
fn an_id_must_name_the_peer_it_came_from() {
    assert_eq!(foreign_id(&id("me", 1, 1), "me"), None);
    let reason = foreign_id(&id("other", 1, 1), "me").unwrap();
    assert!(
        reason.contains("names other") && reason.ends_with("came from me"),
        "{reason}"
    );
}

/// The store as the shell keeps it: each sender's floor, and the ids recorded applied.
#[derive(Default)]
struct Disk {
    floors: HashMap<(NodeId, u64), u64>,
    keys: BTreeSet<MessageId>,
}

/// A change the shell stages, applied in order when the group is written.
enum Op {
    Floor(MessageId, u64),
    Put(MessageId),
    Delete(MessageId),
}

/// A receiver: the rule, driven as the shell drives it, on a [`Disk`].
#[derive(Default)]
struct Receiver {
    disk: Disk,
    applied: Vec<MessageId>,
}

impl Receiver {
    /// One group of deliveries `(id, answered_below)`, every new one applied, then written;
    /// whether each was answered (left unanswered: `false`).
    fn group(&mut self, deliveries: &[(MessageId, u64)]) -> Vec<bool> {
        let mut ledger = Ledger::default();
        let mut ops = Vec::new();
        let mut answered = Vec::new();
        for (id, answered_below) in deliveries {
            let floor = ledger.floor(id).unwrap_or_else(|| {
                let sender = (id.origin.clone(), id.incarnation);
                self.disk.floors.get(&sender).copied().unwrap_or(0)
            });
            let judgement = ledger.judge(id, floor, *answered_below);
            if let Some(raise) = judgement.raise {
                ops.push(Op::Floor(id.clone(), raise.to));
                let gone = self.disk.keys.iter().filter(|k| {
                    (&k.origin, k.incarnation) == (&id.origin, id.incarnation)
                        && (raise.from..raise.to).contains(&k.seq)
                });
                ops.extend(gone.cloned().map(Op::Delete));
                ops.extend(raise.forgotten.into_iter().map(Op::Delete));
            }
            let verdict = match judgement.look {
                Look::Decided(verdict) => verdict,
                Look::ByRecord(look) => look.verdict(self.disk.keys.contains(id)),
            };
            if verdict == Verdict::New {
                self.applied.push(id.clone());
                ledger.applied(id.clone());
                ops.push(Op::Put(id.clone()));
            }
            answered.push(verdict != Verdict::TooFarAhead);
        }
        for op in ops {
            match op {
                Op::Floor(id, to) => {
                    let before = self.disk.floors.insert((id.origin, id.incarnation), to);
                    assert!(before.unwrap_or(0) < to, "a floor went down");
                }
                Op::Put(id) => {
                    self.disk.keys.insert(id);
                }
                Op::Delete(id) => {
                    self.disk.keys.remove(&id);
                }
            }
        }
        answered
    }
}

/// What a sender's outbox does, as the rule assumes it; answers may be lost, tries reordered.
#[derive(Debug, Clone)]
enum Step {
    /// Sender `s` tries its `i`-th unanswered message; the answer is lost when `lose`.
    Try { s: usize, i: usize, lose: bool },
    /// A stale copy of sender `s`'s `i`-th answered message arrives.
    Stale { s: usize, i: usize },
    /// The group ends: written.
    Write,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        5 => (0..SENDERS.len(), any::<usize>(), any::<bool>())
            .prop_map(|(s, i, lose)| Step::Try { s, i, lose }),
        1 => (0..SENDERS.len(), any::<usize>()).prop_map(|(s, i)| Step::Stale { s, i }),
        2 => Just(Step::Write),
    ]
}

/// Two peers, one of them with two incarnations (its store wiped, its key kept).
const SENDERS: [(&str, u64); 3] = [("a", 1), ("a", 2), ("b", 7)];

/// One sender's outbox: its messages to this receiver, unanswered and answered.
struct Outbox {
    unanswered: Vec<u64>,
    answered: Vec<u64>,
}

proptest! {
    #[test]
    fn every_message_is_applied_exactly_once_and_only_the_unanswered_keep_keys(
        count in 1u64..30,
        steps in proptest::collection::vec(step(), 0..200),
    ) {
        let mut r = Receiver::default();
        // Every other number goes to another receiver: gaps never hold a floor back.
        let mut outboxes: Vec<Outbox> = SENDERS
            .iter()
            .map(|_| Outbox { unanswered: (1..=count).map(|n| 2 * n).collect(), answered: Vec::new() })
            .collect();
        let of = |s: usize, seq: u64| id(SENDERS[s].0, SENDERS[s].1, seq);
        let (mut pending, mut tries) = (Vec::new(), Vec::new());
        for step in steps.into_iter().chain(std::iter::once(Step::Write)) {
            match step {
                Step::Try { s, i, lose } if !outboxes[s].unanswered.is_empty() => {
                    let o = &outboxes[s];
                    let seq = o.unanswered[i % o.unanswered.len()];
                    pending.push((of(s, seq), o.unanswered[0]));
                    tries.push((s, seq, lose));
                }
                Step::Stale { s, i } if !outboxes[s].answered.is_empty() => {
                    let o = &outboxes[s];
                    pending.push((of(s, o.answered[i % o.answered.len()]), 0));
                    tries.push((s, 0, true));
                }
                Step::Write => {
                    let answers = r.group(&pending);
                    pending.clear();
                    for ((s, seq, lose), answered) in tries.drain(..).zip(answers) {
                        let o = &mut outboxes[s];
                        if answered && !lose && o.unanswered.contains(&seq) {
                            o.unanswered.retain(|n| *n != seq);
                            o.answered.push(seq);
                        }
                    }
                    // No floor ever passes a message its sender has no answer for.
                    for (s, o) in outboxes.iter().enumerate() {
                        let floor = r.disk.floors.get(&(NodeId::new(SENDERS[s].0), SENDERS[s].1));
                        if let (Some(floor), Some(lowest)) = (floor, o.unanswered.first()) {
                            prop_assert!(floor <= lowest, "floor {} past {}", floor, lowest);
                        }
                    }
                }
                _ => {}
            }
        }
        // Then every message until all are answered, and one more that says so.
        for (s, o) in outboxes.iter_mut().enumerate() {
            let all: Vec<_> = o.unanswered.iter().map(|&seq| (of(s, seq), o.unanswered[0])).collect();
            r.group(&all);
            o.answered.append(&mut o.unanswered);
            let last = 2 * count + 2;
            r.group(&[(of(s, last), last)]);
        }
        let mut applied = r.applied.clone();
        applied.sort();
        let expected: Vec<MessageId> = (0..SENDERS.len())
            .flat_map(|s| (1..=count + 1).map(move |n| of(s, 2 * n)))
            .collect();
        prop_assert_eq!(applied, expected, "each applied exactly once");
        let keys: Vec<MessageId> = r.disk.keys.iter().cloned().collect();
        let last: Vec<MessageId> = (0..SENDERS.len()).map(|s| of(s, 2 * count + 2)).collect();
        prop_assert_eq!(keys, last, "only each sender's last message keeps its key");
    }
}
