#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use proptest::prelude::*;

fn members(names: &[&str]) -> Vec<MemberId> {
    names.iter().map(|n| MemberId((*n).to_owned())).collect()
}

#[test]
fn an_instances_shard_is_stable_and_below_the_count() {
    let eight = ShardCount::new(8).unwrap();
    // Pinned: a change of the hash would move every stored instance to another shard.
    let shards: Vec<u32> = (1..=8).map(|i| shard_of(InstanceId(i), eight).0).collect();
    // SHA-256 of "mobiwf-instance\0<id>\0", its first 8 bytes big-endian, mod 8 (as
    // computed apart, with Python's hashlib).
    assert_eq!(shards, vec![0, 0, 1, 0, 5, 4, 3, 1]);
    for i in 0..1000 {
        assert!(shard_of(InstanceId(i), eight).0 < 8);
        assert_eq!(shard_of(InstanceId(i), ShardCount::ONE), ShardId(0));
    }
    assert_eq!(ShardCount::new(0), None);
}

#[test]
fn instances_spread_over_the_shards() {
    let four = ShardCount::new(4).unwrap();
    let mut counts = [0u32; 4];
    for i in 0..4000 {
        counts[shard_of(InstanceId(i), four).0 as usize] += 1;
    }
    for count in counts {
        assert!((800..1200).contains(&count), "{counts:?}");
    }
}

#[test]
fn every_member_computes_the_same_owner_from_the_live_list_in_any_order() {
    let live = members(&["a", "b", "c"]);
    let mut reversed = live.clone();
    reversed.reverse();
    for shard in ShardCount::new(16).unwrap().all() {
        assert_eq!(owner_of(shard, &live), owner_of(shard, &reversed));
    }
    assert_eq!(owner_of(ShardId(0), &[]), None);
    assert_eq!(
        owner_of(ShardId(3), &members(&["solo"])),
        Some(&MemberId("solo".into()))
    );
}

#[test]
fn shards_spread_over_the_members() {
    let live = members(&["a", "b", "c", "d"]);
    let owners = assignment(ShardCount::new(400).unwrap(), &live);
    for m in &live {
        let n = owners.values().filter(|o| *o == m).count();
        assert!((60..140).contains(&n), "{m}: {n}");
    }
}

#[test]
fn the_epoch_gate_admits_the_current_and_newer_epochs_and_refuses_older_ones() {
    let s = ShardId(2);
    let other = ShardId(3);
    // (epoch given, what the gate answers), in order, on one gate.
    let table: &[(i64, Result<Admitted, i64>)] = &[
        (5, Ok(Admitted::Newer { was: None })),
        (5, Ok(Admitted::Current)),
        (4, Err(5)),
        (
            9,
            Ok(Admitted::Newer {
                was: Some(Epoch(5)),
            }),
        ),
        (5, Err(9)),
        (9, Ok(Admitted::Current)),
    ];
    let mut gate = EpochGate::new();
    for (given, want) in table {
        let got = gate.admit(s, Epoch(*given));
        let want = want.map_err(|known| Stale {
            shard: s,
            given: Epoch(*given),
            known: Epoch(known),
        });
        assert_eq!(got, want, "epoch {given}");
    }
    // Each shard's epochs are its own.
    assert_eq!(
        gate.admit(other, Epoch(1)),
        Ok(Admitted::Newer { was: None })
    );
    assert_eq!(gate.known(s), Some(Epoch(9)));
    let stale = gate.admit(s, Epoch(1)).unwrap_err();
    assert!(stale.to_string().contains("fenced"), "{stale}");
}

#[test]
fn the_claim_decisions_follow_their_table() {
    let me = MemberId("me".into());
    let other = MemberId("other".into());
    let live = vec![me.clone(), other.clone()];
    let shard = (0..64)
        .map(ShardId)
        .find(|s| owner_of(*s, &live) == Some(&other))
        .expect("a shard another member is preferred for");
    let mine = |epoch| SeenOwner {
        member: &me,
        epoch: Epoch(epoch),
        ours: true,
    };
    let old_me = SeenOwner {
        member: &me,
        epoch: Epoch(3),
        ours: false,
    };
    let theirs = SeenOwner {
        member: &other,
        epoch: Epoch(7),
        ours: false,
    };
    let view = |held: Option<i64>, owner, looks| ClaimView {
        shard,
        me: &me,
        live: &live,
        owner,
        held: held.map(Epoch),
        ownerless_looks: looks,
    };
    let table = [
        (view(Some(4), Some(mine(4)), 0), Decision::Keep(Epoch(4))),
        (view(Some(4), Some(mine(6)), 0), Decision::Drop),
        (view(Some(4), Some(theirs), 0), Decision::Drop),
        (view(Some(4), None, 0), Decision::Drop),
        (view(None, Some(mine(6)), 0), Decision::Keep(Epoch(6))),
        (view(None, Some(old_me), 0), Decision::Wait),
        (view(None, Some(theirs), 9), Decision::Wait),
        (view(None, None, 0), Decision::Wait),
        (view(None, None, PATIENCE_LOOKS), Decision::Claim),
    ];
    for (view, want) in &table {
        assert_eq!(decide(view), *want, "{view:?}");
    }
    let preferred = ClaimView {
        live: &live,
        me: &other,
        ..view(None, None, 0)
    };
    assert_eq!(decide(&preferred), Decision::Claim);
}

fn member_names() -> impl Strategy<Value = Vec<MemberId>> {
    proptest::collection::btree_set("[a-z]{1,6}", 1..8)
        .prop_map(|set| set.into_iter().map(MemberId).collect())
}

proptest! {
    /// A member joining takes only shards it wins; every other shard stays where it was.
    #[test]
    fn a_joining_member_moves_only_the_shards_it_takes(
        live in member_names(), joining in "[A-Z]{1,6}", shards in 1u32..64,
    ) {
        let count = ShardCount::new(shards).unwrap();
        let before = assignment(count, &live);
        let mut after_live = live.clone();
        let joining = MemberId(joining);
        after_live.push(joining.clone());
        let after = assignment(count, &after_live);
        for shard in count.all() {
            if after[&shard] != before[&shard] {
                prop_assert_eq!(&after[&shard], &joining);
            }
        }
    }

    /// A member leaving gives up only its own shards; every other shard stays where it was.
    #[test]
    fn a_leaving_member_moves_only_its_own_shards(
        live in member_names(), leaving in 0usize..8, shards in 1u32..64,
    ) {
        prop_assume!(live.len() > 1);
        let count = ShardCount::new(shards).unwrap();
        let before = assignment(count, &live);
        let gone = live[leaving % live.len()].clone();
        let after_live: Vec<MemberId> = live.iter().filter(|m| **m != gone).cloned().collect();
        let after = assignment(count, &after_live);
        for shard in count.all() {
            if before[&shard] != gone {
                prop_assert_eq!(&after[&shard], &before[&shard]);
            } else {
                prop_assert_ne!(&after[&shard], &gone);
            }
        }
    }
}
