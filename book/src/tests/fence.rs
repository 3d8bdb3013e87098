//! The holds of a node that is removed or suspected end only once its lease ran out there
//! (`sync/fence.rs`): a removal frees nothing at once, the tick frees it on time; a grant
//! just before its node is suspected is kept a fence after the grant; a removed node that
//! enrols again before then keeps its holds; a hold a later round of its activity superseded
//! (a killed try that may still run) holds on until its node releases it or its fence passed.

use super::sync::{ask, grants, holders, one_press, plant, release, sync_events, ticket};
use super::*;
use crate::history::Event;
use mobiwf_proto::fence_ms;

/// P1 (peerA) holds press for instance 1, P2 (peerB) waits for it with instance 2.
fn held_and_waited() -> Book {
    let mut b = plant();
    submit(&mut b, &one_press(1)).expect("first");
    submit(&mut b, &one_press(2)).expect("second");
    let granted = ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
    assert_eq!(grants(&granted), [("peerA".to_owned(), ticket(1, 1, 0))]);
    ask(&mut b, T0, "peerB", ticket(2, 1, 0), "press");
    b
}

/// Why instance 1's hold was released, from its history.
fn released_why(b: &Book) -> String {
    let history = b.history(InstanceId(1)).unwrap_or_default();
    let why = history.iter().find_map(|e| match &e.what {
        Event::SyncReleased {
            why, held: true, ..
        } => Some(why.clone()),
        _ => None,
    });
    why.expect("released")
}

fn tick(b: &mut Book, at: u64) -> Applied {
    b.apply(at, Input::Tick).expect("tick")
}

fn remove_p1(b: &mut Book, at: u64) -> Applied {
    let name = NodeName::new("P1");
    b.apply(at, Input::RemoveNode { name }).expect("removed")
}

scenarios! {
    fn a_removed_holders_class_passes_on_only_once_its_lease_ran_out_there() {
        let mut b = held_and_waited();
        let removed_at = T0 + 100;
        let applied = remove_p1(&mut b, removed_at);
        assert!(grants(&applied).is_empty(), "freed at once: {:?}", sent(&applied));
        assert_eq!(holders(&b), [ticket(1, 1, 0)]);
        // `sync show` says it ends, when, and why; the tick is asked for then.
        let end = removed_at + fence_ms(crate::DEFAULT_LEASE_MS);
        let view = b.sync_view();
        let ending = view.holders[0].ending.clone().expect("ending");
        assert_eq!(ending.at_ms, end);
        assert!(ending.why.contains("node P1 was removed by an operator"), "{}", ending.why);
        assert_eq!(b.next_deadline(), Some(end));
        let stored = b.take_changes().sync.expect("the end is stored");
        assert_eq!(stored.holders[0].ending.as_ref().map(|e| e.at_ms), Some(end));
        assert!(grants(&tick(&mut b, end - 1)).is_empty());
        let freed = tick(&mut b, end);
        assert_eq!(grants(&freed), [("peerB".to_owned(), ticket(2, 1, 0))]);
        assert!(released_why(&b).contains("removed by an operator"), "{}", released_why(&b));
        assert_eq!(sync_events(&b, 1), [(1, "granted"), (1, "released")]);
    }

    fn a_hold_granted_just_before_its_node_is_suspected_ends_a_fence_after_its_grant() {
        let mut b = held_and_waited();
        // Its node's lease may count from its request, answered by the grant at T0.
        let suspected = suspect(&mut b, T0 + 1_000, "peerA");
        assert!(grants(&suspected).is_empty(), "{:?}", sent(&suspected));
        let end = T0 + fence_ms(crate::DEFAULT_LEASE_MS);
        assert_eq!(b.sync_view().holders[0].ending.as_ref().map(|e| e.at_ms), Some(end));
        assert!(grants(&tick(&mut b, end - 1)).is_empty());
        assert_eq!(grants(&tick(&mut b, end)), [("peerB".to_owned(), ticket(2, 1, 0))]);
        assert!(released_why(&b).contains("node P1 is suspected"), "{}", released_why(&b));
    }

    fn a_held_round_a_later_round_superseded_holds_on_until_released_or_fenced() {
        for released in [true, false] {
            let mut b = held_and_waited();
            // The loop's next pass (or a rerun) of instance 1's activity asks at T0 + 100
            // while its killed try may still run: nothing is granted beside it.
            let asked = ask(&mut b, T0 + 100, "peerA", ticket(1, 1, 1), "press");
            assert!(grants(&asked).is_empty(), "{:?}", sent(&asked));
            assert_eq!(holders(&b), [ticket(1, 1, 0)]);
            let end = T0 + 100 + fence_ms(crate::DEFAULT_LEASE_MS);
            let ending = b.sync_view().holders[0].ending.clone().expect("ending");
            assert_eq!((ending.at_ms, ending.cause), (end, crate::EndCause::Superseded));
            assert!(ending.why.contains("superseded by round 1 of its activity"), "{}", ending.why);
            // Its node answering probes does not let it stand.
            assert!(grants(&tick(&mut b, end - 1)).is_empty());
            let freed = if released {
                release(&mut b, end - 1, "peerA", ticket(1, 1, 0))
            } else {
                tick(&mut b, end)
            };
            // First come, first served: instance 2 asked before round 1.
            assert_eq!(grants(&freed), [("peerB".to_owned(), ticket(2, 1, 0))], "{released}");
        }
    }

    fn a_removed_node_registered_again_before_its_holds_end_keeps_them() {
        let mut b = held_and_waited();
        remove_p1(&mut b, T0 + 100);
        b.apply(T0 + 200, Input::Register(node("peerA", "P1", &[1, 2])))
            .expect("registered");
        assert_eq!(b.sync_view().holders[0].ending, None, "it stands again");
        let end = T0 + 100 + fence_ms(crate::DEFAULT_LEASE_MS);
        assert!(grants(&tick(&mut b, end)).is_empty());
        assert_eq!(holders(&b), [ticket(1, 1, 0)]);
        // Its own release frees it, as any holder's.
        let freed = release(&mut b, end + 1, "peerA", ticket(1, 1, 0));
        assert_eq!(grants(&freed), [("peerB".to_owned(), ticket(2, 1, 0))]);
    }
}
