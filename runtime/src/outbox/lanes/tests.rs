//! The lane's rules, driven directly: the backoff's waits are an hour or more, so that the
//! time a test takes never decides what it sees, and the passing of a wait is made by
//! clearing `retry_at` (what the clock would do). Each test runs in a Tokio runtime only
//! because a delivery held back waits on Tokio's timer; a turn is polled once
//! (`now_or_never`), never awaited.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use libp2p::PeerId;

use super::{Backoff, Lane, Lanes, UNREACHABLE_AFTER_FAILURES};

const HOUR: Duration = Duration::from_secs(3600);

fn backoff() -> Backoff {
    Backoff {
        min: HOUR,
        max: 3 * HOUR,
    }
}

fn lane() -> Lane {
    Lane::new(backoff())
}

/// The wait after the last failure is over, as if the clock had run to it.
fn wait_over(lane: &Lane) {
    lane.state().wait_over();
}

fn may_go_now(lane: &Lane) -> bool {
    lane.turn().now_or_never().flatten().is_some()
}

#[tokio::test]
async fn a_fresh_lane_lets_a_delivery_go_at_once() {
    let lane = lane();
    assert!(may_go_now(&lane));
    assert_eq!(lane.reachability_news(), None);
}

#[tokio::test]
async fn a_failure_holds_the_lane_back_for_the_wait_it_returns() {
    let lane = lane();
    assert_eq!(lane.failed(), HOUR);
    assert!(!may_go_now(&lane), "the backoff holds it");
    wait_over(&lane);
    assert!(may_go_now(&lane), "its wait is over: the probe goes");
}

#[tokio::test]
async fn the_wait_doubles_on_every_failed_probe_up_to_the_longest() {
    let lane = lane();
    let mut waits = Vec::new();
    for _ in 0..4 {
        waits.push(lane.failed());
        wait_over(&lane);
    }
    assert_eq!(waits, [HOUR, 2 * HOUR, 3 * HOUR, 3 * HOUR]);
}

#[tokio::test]
async fn attempts_that_fail_together_count_once() {
    let lane = lane();
    assert_eq!(lane.failed(), HOUR);
    // Another attempt made before the wait was set fails too: it waits what is left.
    let left = lane.failed();
    assert!(left <= HOUR && left > HOUR / 2, "{left:?}");
    wait_over(&lane);
    assert_eq!(
        lane.failed(),
        2 * HOUR,
        "the first doubling, not the second"
    );
}

#[tokio::test]
async fn a_peer_is_unreachable_after_failed_tries_in_a_row_and_told_once_each_way() {
    let lane = lane();
    for _ in 1..UNREACHABLE_AFTER_FAILURES {
        lane.failed();
        wait_over(&lane);
        assert_eq!(lane.reachability_news(), None);
    }
    // Attempts that fail together are one try.
    lane.failed();
    lane.failed();
    assert_eq!(lane.reachability_news(), Some(false));
    assert_eq!(lane.reachability_news(), None, "told once");
    lane.succeeded();
    assert_eq!(lane.reachability_news(), Some(true));
    assert_eq!(lane.reachability_news(), None, "told once");
    // The count starts over after a success.
    lane.failed();
    wait_over(&lane);
    assert_eq!(lane.reachability_news(), None);
}

#[tokio::test]
async fn a_success_ends_the_backoff_and_starts_the_waits_over() {
    let lane = lane();
    lane.failed();
    wait_over(&lane);
    assert_eq!(lane.failed(), 2 * HOUR);
    lane.succeeded();
    assert!(may_go_now(&lane));
    assert_eq!(lane.failed(), HOUR);
}

#[tokio::test]
async fn while_a_peer_fails_one_delivery_probes_it_and_the_others_wait() {
    let lane = lane();
    lane.failed();
    wait_over(&lane);
    let probe = lane.turn().now_or_never().flatten();
    assert!(probe.is_some());
    assert!(!may_go_now(&lane), "another delivery probes it");
    drop(probe);
    assert!(may_go_now(&lane));
    lane.succeeded();
    let (a, b) = (lane.turn().now_or_never(), lane.turn().now_or_never());
    assert!(
        a.flatten().is_some() && b.flatten().is_some(),
        "no probe once it answered"
    );
}

#[tokio::test]
async fn a_reset_lets_the_next_probe_go_now_with_the_shortest_wait() {
    let lane = lane();
    lane.failed();
    wait_over(&lane);
    lane.failed();
    lane.reset();
    assert!(may_go_now(&lane));
    assert_eq!(lane.failed(), HOUR);
}

#[tokio::test]
async fn the_waiting_deliveries_are_woken_by_every_change() {
    let lane = lane();
    let mut woken = Box::pin(lane.changed());
    assert!(
        woken.as_mut().now_or_never().is_none(),
        "nothing changed yet"
    );
    lane.failed();
    assert!(woken.now_or_never().is_some(), "a failure is a change");

    // A success after a reset (still failing, no wait set) wakes those waiting for the probe.
    lane.reset();
    let mut woken = Box::pin(lane.changed());
    assert!(woken.as_mut().now_or_never().is_none());
    lane.succeeded();
    assert!(woken.now_or_never().is_some(), "the probe got through");

    let mut woken = Box::pin(lane.changed());
    assert!(woken.as_mut().now_or_never().is_none());
    lane.reset();
    assert!(woken.now_or_never().is_some(), "a reset is a change");
}

#[tokio::test]
async fn a_success_on_a_lane_that_never_failed_wakes_nobody() {
    let lane = lane();
    let mut woken = Box::pin(lane.changed());
    assert!(woken.as_mut().now_or_never().is_none());
    lane.succeeded();
    assert!(woken.now_or_never().is_none());
}

#[tokio::test]
async fn the_peer_is_located_at_most_once_per_period() {
    let lane = lane();
    assert!(lane.locate_due(HOUR));
    assert!(!lane.locate_due(HOUR));
    assert!(lane.locate_due(Duration::ZERO), "its period is over");
}

#[tokio::test]
async fn lanes_give_one_lane_per_peer_and_drop_it_when_no_delivery_uses_it() {
    let lanes = Lanes::default();
    let (peer, other) = (PeerId::random(), PeerId::random());
    let first = lanes.of(peer, backoff());
    let second = lanes.of(peer, backoff());
    assert!(Arc::ptr_eq(&first, &second));
    let third = lanes.of(other, backoff());
    assert!(!Arc::ptr_eq(&first, &third));
    assert_eq!(lanes.len(), 2);
    lanes.done(peer, first);
    assert_eq!(lanes.len(), 2, "another delivery to the peer still uses it");
    lanes.done(peer, second);
    assert_eq!(lanes.len(), 1);
    lanes.done(other, third);
    assert_eq!(lanes.len(), 0);
}

#[tokio::test]
async fn a_peer_seen_again_goes_at_once() {
    let lanes = Lanes::default();
    let (peer, other) = (PeerId::random(), PeerId::random());
    let (lane, untouched) = (lanes.of(peer, backoff()), lanes.of(other, backoff()));
    lane.failed();
    untouched.failed();
    lanes.seen(&peer);
    assert!(may_go_now(&lane));
    assert!(!may_go_now(&untouched), "only the peer seen");
    lanes.seen_all();
    assert!(may_go_now(&untouched));
}
