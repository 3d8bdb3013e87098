//! Deadlines kept by the device: the host's clock offset applied (the smallest seen), the
//! threshold notices raised on the device's own clock while no snapshot comes, each once
//! whether the desk's timer or the host's snapshot comes first, the hand-over noticed to the
//! former holder, whose completion still goes to the host (which records it). Every step
//! goes through the store round trip of [`Fixture::apply`].

use mobiwf_proto::{ItemDeadline, ItemInfo, ItemStatus};

use super::*;
use crate::desk::DEADLINE_NOTICE;

/// An item whose deadline of `hours` hours of 100 ms ends at 7000 ms on the host's clock,
/// snapshot made at `sent_ms` (host clock), thresholds `passed`.
fn due_info(hours: u32, sent_ms: u64, passed: &[u32]) -> ItemInfo {
    let mut i = info(1, 3);
    i.due = Some(Box::new(ItemDeadline {
        hours,
        at_ms: 7000,
        hour_ms: 100,
        sent_ms,
        passed: passed.to_vec(),
    }));
    i
}

/// The deadline notices of `user`: (text, at).
fn deadline_notices(f: &Fixture, user: &str) -> Vec<(String, u64)> {
    f.desk
        .notices(user)
        .iter()
        .filter(|n| n.kind == DEADLINE_NOTICE)
        .map(|n| (n.text.clone(), n.at_ms))
        .collect()
}

/// Ticks the desk at `local_ms` on the device's clock.
fn tick_at(f: &mut Fixture, local_ms: u64) {
    f.now_ms = local_ms - 1000;
    f.apply(DeskInput::Tick).unwrap();
}

#[test]
fn notices_come_on_the_device_clock_with_the_host_offset_and_only_once() {
    let mut f = Fixture::new();
    // Arrives at 11 000 (device) made at 5000 (host): offset 6000.
    f.item(snap(
        &due_info(20, 5000, &[]),
        1,
        &["alice", "bob"],
        vec![],
        ItemStatus::Open,
    ));
    // 12 hours left: 7000 - 1200 = 5800 on the host, 11 800 here.
    assert_eq!(f.desk.next_deadline(), Some(11_800));
    tick_at(&mut f, 11_799);
    assert!(deadline_notices(&f, "alice").is_empty());
    tick_at(&mut f, 11_800);
    let alice = deadline_notices(&f, "alice");
    assert_eq!(alice.len(), 1);
    assert!(alice[0].0.contains("12 hours are left"), "{alice:?}");
    assert_eq!(
        deadline_notices(&f, "bob").len(),
        1,
        "everyone offered it here"
    );
    assert_eq!(f.desk.next_deadline(), Some(12_400), "6 hours left next");

    // The host's snapshot saying 12 passed comes later: no second notice.
    f.now_ms = 11_900;
    f.item(snap(
        &due_info(20, 5900, &[12]),
        2,
        &["alice", "bob"],
        vec![],
        ItemStatus::Open,
    ));
    assert_eq!(deadline_notices(&f, "alice").len(), 1);

    // Offline from now on: 6 and 0 hours left on the device's own clock.
    tick_at(&mut f, 13_000);
    tick_at(&mut f, 13_000);
    let alice = deadline_notices(&f, "alice");
    assert_eq!(alice.len(), 3, "{alice:?}");
    assert!(alice[1].0.contains("6 hours are left") && alice[2].0.contains("is reached"));
    assert_eq!(f.desk.next_deadline(), None);
}

#[test]
fn the_smallest_offset_seen_wins_a_late_snapshot_does_not_delay_the_notices() {
    let mut f = Fixture::new();
    // Waited 3 s in an outbox: offset 11 000 - 2000 = 9000.
    f.item(snap(
        &due_info(20, 2000, &[]),
        1,
        &["alice"],
        vec![],
        ItemStatus::Open,
    ));
    assert_eq!(f.desk.next_deadline(), Some(5800 + 9000));
    // Fresh: offset 12 000 - 6000 = 6000.
    f.item(snap(
        &due_info(20, 6000, &[]),
        2,
        &["alice"],
        vec![],
        ItemStatus::Open,
    ));
    assert_eq!(f.desk.next_deadline(), Some(5800 + 6000));
    // A later, slower one does not move it back.
    f.item(snap(
        &due_info(20, 6000, &[]),
        3,
        &["alice"],
        vec![],
        ItemStatus::Open,
    ));
    assert_eq!(f.desk.next_deadline(), Some(5800 + 6000));
}

#[test]
fn the_host_s_word_first_tells_the_holder_and_the_timer_does_not_repeat_it() {
    let mut f = Fixture::new();
    let held = vec![holder("alice", mobiwf_proto::Hold::Selected, 10, None)];
    f.item(snap(
        &due_info(20, 5000, &[]),
        1,
        &[],
        held.clone(),
        ItemStatus::Open,
    ));
    f.item(snap(
        &due_info(20, 5800, &[12]),
        2,
        &[],
        held,
        ItemStatus::Open,
    ));
    assert_eq!(deadline_notices(&f, "alice").len(), 1, "the holder is told");
    assert!(
        deadline_notices(&f, "bob").is_empty(),
        "not those not involved"
    );
    tick_at(&mut f, 11_900);
    assert_eq!(deadline_notices(&f, "alice").len(), 1);
}

#[test]
fn the_former_holder_is_told_of_the_hand_over_and_her_late_result_goes_to_the_host() {
    let mut f = Fixture::new();
    let held = vec![holder("alice", mobiwf_proto::Hold::Locked, 10, None)];
    f.item(snap(
        &due_info(30, 5000, &[]),
        1,
        &[],
        held,
        ItemStatus::Open,
    ));
    // 24 hours left: the host handed it over (ron holds it, on another device).
    f.item(snap(
        &due_info(30, 4600, &[24]),
        2,
        &[],
        vec![],
        ItemStatus::Open,
    ));
    let alice = deadline_notices(&f, "alice");
    assert_eq!(alice.len(), 1);
    assert!(alice[0].0.contains("responsible"), "{alice:?}");
    assert!(f.desk.notices("alice").iter().any(|n| n.kind == "revoked"));
    let complete = completion();
    let applied = f
        .apply(claim("alice", &due_info(30, 0, &[]), complete))
        .unwrap();
    assert_eq!(applied.sent_to(), Some(&host()), "the host records it");
    assert_eq!(
        f.desk.next_deadline(),
        None,
        "nobody here is involved any more"
    );
}

#[test]
fn an_extended_deadline_is_told_again_from_what_is_ahead() {
    let mut f = Fixture::new();
    f.item(snap(
        &due_info(20, 5000, &[]),
        1,
        &["alice"],
        vec![],
        ItemStatus::Open,
    ));
    tick_at(&mut f, 13_000);
    assert_eq!(
        deadline_notices(&f, "alice").len(),
        3,
        "12, 6 and 0 hours left"
    );
    // Extended by 10 hours (1000 ms): 6 and 0 are ahead again.
    let mut extended = due_info(30, 7100, &[24, 12]);
    if let Some(due) = extended.due.as_mut() {
        due.at_ms = 8000;
    }
    f.now_ms = 12_100;
    f.item(snap(&extended, 2, &["alice"], vec![], ItemStatus::Open));
    assert_eq!(
        deadline_notices(&f, "alice").len(),
        3,
        "nothing told again yet"
    );
    assert_eq!(f.desk.next_deadline(), Some(8000 - 600 + 6000));
    tick_at(&mut f, 14_000);
    let alice = deadline_notices(&f, "alice");
    assert_eq!(alice.len(), 5, "{alice:?}");
    assert!(alice[3].0.contains("6 hours") && alice[4].0.contains("is reached"));
}

#[test]
fn a_completion_of_an_item_taken_away_without_a_hand_over_is_refused_here() {
    // A 30-hour deadline not yet at 24 hours left, and a 24-hour one (its 24-hour threshold
    // passed at once, but nothing is handed over when the deadline is no longer than that).
    for (hours, passed) in [(30, &[][..]), (24, &[24][..])] {
        let mut f = Fixture::new();
        let held = vec![holder("alice", mobiwf_proto::Hold::Selected, 10, None)];
        f.item(snap(
            &due_info(hours, 5000, &[]),
            1,
            &[],
            held,
            ItemStatus::Open,
        ));
        // Taken off her worklist.
        f.item(snap(
            &due_info(hours, 5000, passed),
            2,
            &["bob"],
            vec![],
            ItemStatus::Open,
        ));
        let complete = completion();
        let applied = f
            .apply(claim("alice", &due_info(hours, 0, &[]), complete))
            .unwrap();
        assert_eq!(applied.sent_to(), None, "{hours} hours");
        assert!(
            matches!(applied.verdict(), Some(Verdict::Forbidden { .. })),
            "{hours} hours: {:?}",
            applied.verdict()
        );
    }
}
