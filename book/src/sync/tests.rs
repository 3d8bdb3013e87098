//! The manager's rule on plain data: table-style cases for each way a request goes, then a
//! property over random requests, releases and time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mobiwf_proto::{ActivityId, InstanceId, NodeId, NodeName, PartitionId, SyncTicket};
use mobiwf_xml_schema::{ClassDocument, ClassName, TaskClass};
use proptest::prelude::*;

use super::*;

/// press excludes itself and drill; paint conflicts with nothing; drill with press only.
fn plant() -> ClassDocument {
    let class = |id: &str, conflicts: &[&str], max_wait_secs| TaskClass {
        id: id.into(),
        conflicts: conflicts.iter().map(|c| ClassName::from(*c)).collect(),
        max_wait_secs,
    };
    ClassDocument {
        classes: vec![
            class("press", &["press", "drill"], 10),
            class("drill", &[], 5),
            class("paint", &[], 60),
        ],
    }
}

fn ticket(activity: u64, round: u32) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(1),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        round,
    }
}

fn entry(activity: u64, round: u32, class: &str, at: u64) -> SyncEntry {
    SyncEntry {
        ticket: ticket(activity, round),
        class: class.into(),
        node: NodeName::new("P1"),
        peer: NodeId::new("peer1"),
        since_ms: at,
        ending: None,
        wait_counts_from_ms: None,
    }
}

/// The peer of [`entry`]'s requests.
fn p1() -> NodeId {
    NodeId::new("peer1")
}

/// How long after a later request an earlier round's hold ends at the latest (a fence).
const FENCE_MS: u64 = 1000;

fn begin(m: &mut Manager, c: &ClassDocument, e: SyncEntry) -> Begun {
    let ends_at = e.since_ms + FENCE_MS;
    m.begin(c, e, ends_at, &mut Vec::new())
}

fn holders(m: &Manager) -> Vec<u64> {
    m.state()
        .holders
        .iter()
        .map(|e| e.ticket.activity.0)
        .collect()
}

fn waiters(m: &Manager) -> Vec<u64> {
    m.state()
        .waiters
        .iter()
        .map(|e| e.ticket.activity.0)
        .collect()
}

#[test]
fn a_request_is_granted_or_waits_as_the_conflicts_say() {
    // (held class, asked class, granted at once?)
    let cases = [
        ("press", "press", false),
        ("press", "drill", false),
        ("drill", "press", false),
        ("drill", "drill", true),
        ("paint", "paint", true),
        ("paint", "press", true),
        ("press", "paint", true),
    ];
    let c = plant();
    for (held, asked, granted) in cases {
        let mut m = Manager::default();
        assert_eq!(begin(&mut m, &c, entry(1, 0, held, 0)), Begun::Granted);
        let got = begin(&mut m, &c, entry(2, 0, asked, 0));
        assert_eq!(
            matches!(got, Begun::Granted),
            granted,
            "{held} held, {asked} asked: {got:?}"
        );
    }
}

#[test]
fn a_later_request_waits_behind_an_earlier_conflicting_waiter_first_come_first_served() {
    let c = plant();
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 0, "drill", 0));
    // press waits for the drill; a second drill, compatible with the first, would slip past
    // the waiting press were it not first come, first served.
    assert!(matches!(
        begin(&mut m, &c, entry(2, 0, "press", 1)),
        Begun::Waiting(_)
    ));
    let Begun::Waiting(behind) = begin(&mut m, &c, entry(3, 0, "drill", 2)) else {
        panic!("the second drill waits behind the press");
    };
    assert_eq!(
        behind,
        vec![Blocker {
            ticket: ticket(2, 0),
            class: "press".into(),
            holds: false
        }]
    );
    // paint conflicts with nobody: granted although others wait.
    assert_eq!(begin(&mut m, &c, entry(4, 0, "paint", 3)), Begun::Granted);
    // The drill ends: the press goes first; the second drill still waits, now behind it.
    assert!(m.end(&ticket(1, 0), &p1()).is_some());
    assert_eq!(
        m.grant_ready(&c, 10)
            .iter()
            .map(|e| e.ticket.activity.0)
            .collect::<Vec<_>>(),
        [2]
    );
    assert_eq!(waiters(&m), [3]);
    m.end(&ticket(2, 0), &p1());
    assert_eq!(m.grant_ready(&c, 11).len(), 1);
    assert_eq!(holders(&m), [4, 3]);
}

#[test]
fn repeated_requests_are_idempotent_and_a_stale_round_is_ignored() {
    let c = plant();
    let mut m = Manager::default();
    assert_eq!(begin(&mut m, &c, entry(1, 0, "press", 0)), Begun::Granted);
    assert_eq!(
        begin(&mut m, &c, entry(1, 0, "press", 5)),
        Begun::AlreadyHeld
    );
    assert!(matches!(
        begin(&mut m, &c, entry(2, 0, "press", 1)),
        Begun::Waiting(_)
    ));
    assert_eq!(
        begin(&mut m, &c, entry(2, 0, "press", 6)),
        Begun::AlreadyWaiting
    );
    assert_eq!(m.state().waiters.len(), 1);
    assert_eq!(
        m.state().waiters[0].since_ms,
        1,
        "a repeat does not restart the wait"
    );
    // Round 1 of activity 1 supersedes its held round 0 (which holds on until its node
    // releases it or its fence passed), then round 0 is stale.
    let mut superseded = Vec::new();
    let got = m.begin(&c, entry(1, 1, "press", 7), 7 + FENCE_MS, &mut superseded);
    assert!(
        superseded.is_empty(),
        "a hold is not ended by a later round"
    );
    let Begun::Waiting(behind) = got else {
        panic!("round 1 waits: {got:?}");
    };
    assert_eq!(
        behind
            .iter()
            .map(|b| (b.ticket, b.holds))
            .collect::<Vec<_>>(),
        [(ticket(1, 0), true), (ticket(2, 0), false)],
        "behind its own earlier round, which may still run, and the earlier waiter 2"
    );
    assert_eq!(begin(&mut m, &c, entry(1, 0, "press", 8)), Begun::Stale);
    // A later round supersedes an earlier waiting round at once.
    let mut superseded = Vec::new();
    m.begin(&c, entry(1, 2, "press", 9), 9 + FENCE_MS, &mut superseded);
    assert_eq!(superseded.len(), 1);
    assert!(!superseded[0].held && superseded[0].entry.ticket == ticket(1, 1));
}

#[test]
fn a_later_rounds_max_wait_counts_from_when_its_own_earlier_round_ends_at_the_latest() {
    let c = plant();
    let mut m = Manager::default();
    assert_eq!(begin(&mut m, &c, entry(1, 0, "press", 0)), Begun::Granted);
    begin(&mut m, &c, entry(1, 1, "press", 100));
    // press waits 10 s at most: counted from 100 + FENCE_MS, when round 0 ends at the latest.
    let refused_at = 100 + FENCE_MS + 10_000;
    assert_eq!(m.state().waiters[0].refused_at_ms(&c), refused_at);
    assert_eq!(m.next_expiry(&c), Some(refused_at));
    assert!(m.expire(&c, 100 + 10_000).is_empty());
    assert_eq!(m.expire(&c, refused_at).len(), 1);
    // Granted, it counts no more.
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 0, "press", 0));
    begin(&mut m, &c, entry(1, 1, "press", 100));
    m.end(&ticket(1, 0), &p1());
    let granted = m.grant_ready(&c, 200);
    assert_eq!(granted[0].wait_counts_from_ms, None);
}

#[test]
fn a_superseded_hold_holds_until_released_or_fenced_whatever_its_node() {
    let c = plant();
    let mut m = Manager::default();
    assert_eq!(begin(&mut m, &c, entry(1, 0, "press", 0)), Begun::Granted);
    // The node killed round 0's try on its timeOut, and the loop's next pass asks at 100: the
    // killed try may still run, so round 1 must not be granted beside it.
    assert!(matches!(
        begin(&mut m, &c, entry(1, 1, "press", 100)),
        Begun::Waiting(_)
    ));
    assert_eq!(holders(&m), [1]);
    let ending = m.state().holders[0].ending.clone().unwrap();
    assert_eq!(
        (ending.at_ms, ending.cause),
        (100 + FENCE_MS, EndCause::Superseded)
    );
    // Its node being back (or suspected later) does not let it stand, nor end it sooner.
    m.stand(&p1());
    m.mark_ending(&ticket(1, 0), &p1(), 50, "suspected");
    assert_eq!(m.state().holders[0].ending, Some(ending.clone()));
    assert!(m.due_endings(100 + FENCE_MS - 1).is_empty());
    // A later suspicion moves its end later, still superseded.
    m.mark_ending(&ticket(1, 0), &p1(), 5000, "suspected");
    let later = m.state().holders[0].ending.clone().unwrap();
    assert_eq!((later.at_ms, later.cause), (5000, EndCause::Superseded));
    assert_eq!(m.due_endings(5000).len(), 1);
    assert_eq!(
        m.grant_ready(&c, 5000)
            .iter()
            .map(|e| e.ticket)
            .collect::<Vec<_>>(),
        [ticket(1, 1)]
    );
    // Or its node's release of exactly round 0 (the killed try's end was told) ends it.
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 0, "press", 0));
    begin(&mut m, &c, entry(1, 1, "press", 100));
    assert!(m.end(&ticket(1, 0), &p1()).is_some());
    assert_eq!(m.grant_ready(&c, 101).len(), 1);
    assert_eq!(holders(&m), [1]);
    assert_eq!(m.state().holders[0].ticket, ticket(1, 1));
}

#[test]
fn a_release_ends_exactly_its_round() {
    let c = plant();
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 3, "press", 0));
    assert_eq!(
        m.end(&ticket(1, 2), &p1()),
        None,
        "an older round frees nothing"
    );
    assert_eq!(holders(&m), [1]);
    let ended = m.end(&ticket(1, 3), &p1()).expect("its own round");
    assert!(ended.held);
    assert!(m.is_empty());
}

#[test]
fn a_waiter_is_refused_when_its_class_wait_runs_out_and_not_before() {
    let c = plant();
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 0, "press", 0));
    begin(&mut m, &c, entry(2, 0, "drill", 1_000));
    begin(&mut m, &c, entry(3, 0, "press", 2_000));
    // drill waits 5 s: due at 6000; press 10 s: due at 12000.
    assert_eq!(m.next_expiry(&c), Some(6_000));
    assert!(m.expire(&c, 5_999).is_empty());
    let refused = m.expire(&c, 6_000);
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].0.ticket, ticket(2, 0));
    assert!(refused[0].1[0].holds, "it waited behind the holder");
    assert_eq!(waiters(&m), [3]);
    assert_eq!(m.next_expiry(&c), Some(12_000));
}

#[test]
fn an_unknown_class_waits_the_default_time() {
    let m = Manager::restore(SyncRecord {
        holders: vec![],
        waiters: vec![entry(1, 0, "gone", 0)],
        ..SyncRecord::default()
    });
    assert_eq!(m.next_expiry(&ClassDocument::default()), Some(60_000));
}

/// `entry` asked by `peer`.
fn asked_by(peer: &str, e: SyncEntry) -> SyncEntry {
    SyncEntry {
        peer: NodeId::new(peer),
        ..e
    }
}

#[test]
fn another_peers_request_for_the_same_ticket_is_another_request() {
    let c = plant();
    let mut m = Manager::default();
    assert_eq!(begin(&mut m, &c, entry(1, 0, "press", 0)), Begun::Granted);
    // The same ticket from another peer: not the holder, so not answered with its grant;
    // it waits as any other press would.
    let other = asked_by("peer2", entry(1, 0, "press", 1));
    assert!(matches!(
        begin(&mut m, &c, other.clone()),
        Begun::Waiting(_)
    ));
    assert_eq!(begin(&mut m, &c, other), Begun::AlreadyWaiting);
    // Its later round supersedes nothing of the first peer's, and the first peer's earlier
    // round is not stale for it.
    let mut superseded = Vec::new();
    let later = asked_by("peer2", entry(1, 1, "press", 2));
    assert!(matches!(
        m.begin(&c, later, 2 + FENCE_MS, &mut superseded),
        Begun::Waiting(_)
    ));
    assert_eq!(superseded.len(), 1, "only its own round 0");
    assert_eq!(superseded[0].entry.peer, NodeId::new("peer2"));
    assert_eq!(holders(&m), [1]);
    // A release names its peer: the other peer's frees nothing of the holder's.
    assert_eq!(m.end(&ticket(1, 0), &NodeId::new("peer2")), None);
    assert_eq!(holders(&m), [1]);
    assert!(m.end(&ticket(1, 0), &NodeId::new("peer1")).is_some());
    let granted = m.grant_ready(&c, 3);
    assert_eq!(granted.len(), 1);
    assert_eq!(
        (granted[0].ticket, granted[0].peer.as_str()),
        (ticket(1, 1), "peer2")
    );
    // A class compatible with itself: both peers hold, each its own request.
    let mut m = Manager::default();
    begin(&mut m, &c, entry(5, 0, "paint", 0));
    let paint = asked_by("peer2", entry(5, 0, "paint", 1));
    assert_eq!(begin(&mut m, &c, paint), Begun::Granted);
    assert_eq!(holders(&m), [5, 5]);
}

#[test]
fn a_hold_marked_ending_ends_when_its_time_comes_and_stands_again_when_its_node_is_back() {
    let c = plant();
    let mut m = Manager::default();
    begin(&mut m, &c, entry(1, 0, "press", 0));
    begin(&mut m, &c, entry(2, 0, "paint", 0));
    let peer = NodeId::new("peer1");
    assert_eq!(m.next_ending(), None);
    m.mark_ending(&ticket(1, 0), &peer, 6_000, "removed");
    // An earlier end never replaces a later one; a later one does.
    m.mark_ending(&ticket(1, 0), &peer, 5_000, "suspected");
    assert_eq!(m.next_ending(), Some(6_000));
    m.mark_ending(&ticket(1, 0), &peer, 7_000, "removed again");
    assert_eq!(m.next_ending(), Some(7_000));
    assert!(m.due_endings(6_999).is_empty());
    let ended = m.due_endings(7_000);
    assert_eq!(ended.len(), 1);
    assert!(ended[0].held);
    assert_eq!(
        ended[0].entry.ending.as_ref().map(|e| e.why.as_str()),
        Some("removed again")
    );
    assert_eq!(holders(&m), [2]);
    // Marked, then its node is back: it stands, and nothing ends it on time.
    m.mark_ending(&ticket(2, 0), &peer, 8_000, "suspected");
    m.take_dirty();
    m.stand(&peer);
    assert!(m.take_dirty().is_some(), "stored again");
    assert_eq!(m.next_ending(), None);
    assert!(m.due_endings(u64::MAX).is_empty());
    assert_eq!(holders(&m), [2]);
}

#[test]
fn a_state_stored_before_endings_loads_and_an_ending_is_stored_with_its_hold() {
    // `meta/sync` as the code before endings wrote it.
    let old = r#"{"holders":[{"ticket":{"instance":1,"partition":1,"activity":1,"round":0},"class":"press","node":"P1","peer":"peer1","since_ms":5}],"waiters":[]}"#;
    let state: SyncRecord = serde_json::from_str(old).unwrap();
    assert_eq!(state.holders, vec![entry(1, 0, "press", 5)]);
    assert_eq!(
        serde_json::to_string(&state).unwrap(),
        old,
        "written back the same"
    );
    let mut m = Manager::restore(state);
    m.mark_ending(&ticket(1, 0), &NodeId::new("peer1"), 9, "removed");
    let stored = m.take_dirty().expect("changed");
    let text = serde_json::to_string(&stored).unwrap();
    assert!(
        text.contains(r#""ending":{"at_ms":9,"why":"removed"}"#),
        "{text}"
    );
    let back: SyncRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back, stored);
    // A superseded hold says so in its stored ending, and loads back as one.
    let mut m = Manager::restore(back);
    m.mark_superseded(&ticket(1, 0), &NodeId::new("peer1"), 20, 1);
    let text = serde_json::to_string(&m.take_dirty().expect("changed")).unwrap();
    assert!(
        text.contains(r#""at_ms":20,"#) && text.contains(r#""cause":"superseded""#),
        "{text}"
    );
    let back: SyncRecord = serde_json::from_str(&text).unwrap();
    let ending = back.holders[0].ending.clone().unwrap();
    assert_eq!((ending.at_ms, ending.cause), (20, EndCause::Superseded));
}

/// One step of a random run.
#[derive(Debug, Clone)]
enum Step {
    /// A request of the activity; `again`: of its next round (a rerun or a loop's next pass,
    /// its earlier round maybe still held by a killed try).
    Begin {
        activity: u64,
        class: usize,
        again: bool,
    },
    End {
        activity: u64,
    },
    Wait {
        ms: u64,
    },
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        (0..8u64, 0..3usize, any::<bool>()).prop_map(|(activity, class, again)| Step::Begin {
            activity,
            class,
            again
        }),
        (0..8u64).prop_map(|activity| Step::End { activity }),
        (0..4_000u64).prop_map(|ms| Step::Wait { ms }),
    ];
    prop::collection::vec(step, 0..60)
}

/// The invariants after every step: no two holders conflict; no waiter could be granted (it
/// has a blocker); no waiter is past its wait.
fn check(m: &Manager, c: &ClassDocument, now: u64) -> Result<(), TestCaseError> {
    let h = &m.state().holders;
    for (i, a) in h.iter().enumerate() {
        for b in &h[i + 1..] {
            prop_assert!(
                !c.conflict(&a.class, &b.class),
                "{a:?} and {b:?} hold conflicting classes"
            );
        }
    }
    for (i, w) in m.state().waiters.iter().enumerate() {
        prop_assert!(
            !m.blockers(c, &w.class, i).is_empty(),
            "{w:?} waits for nothing"
        );
        prop_assert!(now < w.refused_at_ms(c), "{w:?} overdue");
    }
    Ok(())
}

proptest! {
    #[test]
    fn conflicting_classes_are_never_held_at_once_and_every_waiter_is_answered(run in steps()) {
        let c = plant();
        let names = ["press", "drill", "paint"];
        let mut m = Manager::default();
        let mut now = 0;
        let mut asked = std::collections::BTreeSet::new();
        let mut answered = std::collections::BTreeSet::new();
        let mut rounds = std::collections::BTreeMap::<u64, u32>::new();
        // The tries running under a grant, as their node sees them: until it releases them,
        // or, once a later round came (their try killed), until that request's fence.
        let mut running = std::collections::BTreeMap::<(u64, u32), Option<u64>>::new();
        for step in run {
            match step {
                Step::Begin { activity, class, again } => {
                    let round = rounds.entry(activity).or_default();
                    if again {
                        *round += 1;
                        let earlier = running.iter_mut().filter(|((a, r), _)| *a == activity && r < round);
                        for (_, until) in earlier {
                            until.get_or_insert(now + FENCE_MS);
                        }
                    }
                    match begin(&mut m, &c, entry(activity, *round, names[class], now)) {
                        Begun::Granted => {
                            answered.insert(activity);
                            running.insert((activity, *round), None);
                        }
                        Begun::Waiting(_) => { asked.insert(activity); }
                        _ => {}
                    }
                }
                Step::End { activity } => {
                    // Its node releases every round it asked (killed tries over).
                    for r in 0..=rounds.get(&activity).copied().unwrap_or_default() {
                        m.end(&ticket(activity, r), &p1());
                        running.remove(&(activity, r));
                    }
                    asked.remove(&activity);
                }
                Step::Wait { ms } => {
                    now += ms;
                    m.due_endings(now);
                    for (e, _) in m.expire(&c, now) {
                        answered.insert(e.ticket.activity.0);
                    }
                }
            }
            for e in m.grant_ready(&c, now) {
                answered.insert(e.ticket.activity.0);
                running.insert((e.ticket.activity.0, e.ticket.round), None);
            }
            running.retain(|_, until| until.is_none_or(|t| t > now));
            check(&m, &c, now)?;
            // Whatever may still run holds its class at the manager.
            for (a, r) in running.keys() {
                prop_assert!(
                    m.state().holders.iter().any(|h| h.ticket == ticket(*a, *r)),
                    "activity {a} round {r} may still run but holds nothing"
                );
            }
        }
        // Time passes past every fence and wait: every waiter left is answered, granted or
        // refused.
        now += 60_000 + 2 * FENCE_MS;
        m.due_endings(now);
        for e in m.grant_ready(&c, now) {
            answered.insert(e.ticket.activity.0);
        }
        for (e, _) in m.expire(&c, now) {
            answered.insert(e.ticket.activity.0);
        }
        prop_assert!(m.state().waiters.is_empty());
        for a in asked {
            prop_assert!(answered.contains(&a), "activity {a} asked and was never answered");
        }
    }
}
