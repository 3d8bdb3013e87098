//! A user acts on an item: what the desk answers alone, and what it sends to the host.

use mobiwf_proto::{Hold, ItemAction, ItemAnswer, ItemStatus, Message, UserId, Verdict};

use super::*;
use crate::desk::Order;

fn offered_to_alice_and_bob() -> (Fixture, mobiwf_proto::ItemInfo) {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    (f, item)
}

#[test]
fn a_select_sends_one_claim_to_the_host_and_waits_for_its_answer() {
    let (mut f, item) = offered_to_alice_and_bob();
    let applied = f.apply(claim("alice", &item, ItemAction::Select)).unwrap();
    let request = applied.request.unwrap();
    assert_eq!(applied.verdict(), None);
    assert_eq!(applied.sent_to(), Some(&host()));
    assert_eq!(
        sent(&applied),
        vec![(
            host(),
            Message::Claim(mobiwf_proto::Claim {
                instance: item.instance,
                activity: item.activity,
                user: UserId::new("alice"),
                action: ItemAction::Select,
                request,
                offline_ms: None,
                // The offer it acts on.
                offered_ms: Some(item.ready_ms),
            })
        )]
    );
    let pending: Vec<_> = f.desk.pending().collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].request, pending[0].user.as_str()),
        (request, "alice")
    );
    let entry = &f.desk.worklist("alice", Order::Arrival)[0];
    assert_eq!(entry.pending.as_deref(), Some("select"));
}

#[test]
fn the_first_select_wins_and_the_other_user_of_the_device_is_told_and_refused_here() {
    let (mut f, item) = offered_to_alice_and_bob();
    let request = f.claim("alice", &item, ItemAction::Select);
    let answered = f.item(answering(
        snap(&item, 2, &[], selected("alice", 11_500), ItemStatus::Open),
        "alice",
        request,
        Verdict::Done,
    ));
    assert_eq!(
        answers(&answered),
        vec![(request, UserId::new("alice"), Verdict::Done)]
    );
    assert_eq!(f.desk.pending().count(), 0);
    assert_eq!(listed(&f.desk, "bob", Order::Arrival), vec![]);
    let alice = f.desk.worklist("alice", Order::Arrival);
    assert_eq!(alice.len(), 1);
    assert_eq!(alice[0].state, super::super::EntryState::Selected);
    assert_eq!(alice[0].since_ms, Some(11_500));
    assert_eq!(alice[0].pending, None);
    let bob = f.told("bob");
    assert_eq!(bob.len(), 2, "{bob:?}");
    assert_eq!(bob[1].0, "revoked");
    assert!(bob[1].1.contains("no longer available"), "{}", bob[1].1);
    assert!(bob[1].1.contains("alice holds it"), "{}", bob[1].1);
    assert_eq!(f.told("alice").len(), 1, "alice is told only of the offer");

    let late = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    assert!(sent(&late).is_empty());
    assert_eq!(f.desk.pending().count(), 0);
    let verdict = late.verdict().unwrap();
    assert!(
        matches!(verdict, Verdict::Unavailable { .. }),
        "{verdict:?}"
    );
    assert!(reason(verdict).contains("no longer available"));
    assert!(late.request.unwrap() > request);
}

#[test]
fn an_item_taken_on_another_device_is_no_longer_available_here() {
    let (mut f, item) = offered_to_alice_and_bob();
    // carol, on N3, selected it: this device's users are no longer offered it.
    f.item(snap(&item, 2, &[], vec![], ItemStatus::Open));
    for user in ["alice", "bob"] {
        let told = f.told(user);
        assert_eq!(told.last().unwrap().0, "revoked");
        assert!(told.last().unwrap().1.contains("no longer available"));
        let applied = f.apply(claim(user, &item, ItemAction::Lock)).unwrap();
        assert!(sent(&applied).is_empty());
        assert!(
            reason(applied.verdict().unwrap()).contains("no longer available"),
            "{applied:?}"
        );
    }
    // dave never had it: not his to take.
    let dave = f.apply(claim("dave", &item, ItemAction::Select)).unwrap();
    assert!(matches!(dave.verdict(), Some(Verdict::Forbidden { .. })));
}

#[test]
fn users_of_other_nodes_and_unknown_users_are_refused() {
    let (mut f, item) = offered_to_alice_and_bob();
    let refused = |f: &mut Fixture, user: &str| {
        f.apply(claim(user, &item, ItemAction::Select))
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(&mut f, "carol"),
        "carol's worklist is on node N3, not on this node N2; ask there"
    );
    assert!(refused(&mut f, "zed").contains("not in the organisation directory"));
    assert!(refused(&mut f, "erin").contains("has no device"));
    f.dir.version = 0;
    f.dir.org.users.clear();
    assert!(refused(&mut f, "alice").contains("no organisation directory has reached"));
    assert!(matches!(
        f.desk
            .apply(1, &f.dir, &f.me, claim("alice", &item, ItemAction::Select)),
        Err(DeskRefusal::NotHere { .. })
    ));
    assert_eq!(f.desk.pending().count(), 0);
}

#[test]
fn an_item_that_never_reached_the_device_is_unknown() {
    let (mut f, _) = offered_to_alice_and_bob();
    let other = info(7, 4);
    let err = f
        .apply(claim("alice", &other, ItemAction::Select))
        .unwrap_err();
    assert!(matches!(err, DeskRefusal::UnknownItem { .. }), "{err:?}");
    assert!(
        err.to_string().contains("activity 4 of instance 7"),
        "{err}"
    );
}

#[test]
fn only_the_holder_releases_completes_or_delegates() {
    let (mut f, item) = offered_to_alice_and_bob();
    f.item(snap(&item, 2, &[], selected("alice", 1), ItemStatus::Open));
    for action in [
        ItemAction::Release,
        completion(),
        ItemAction::Delegate {
            to: UserId::new("bob"),
        },
    ] {
        let applied = f.apply(claim("bob", &item, action)).unwrap();
        assert!(sent(&applied).is_empty());
        let verdict = applied.verdict().unwrap();
        assert!(matches!(verdict, Verdict::Forbidden { .. }), "{verdict:?}");
        assert!(reason(verdict).contains("alice holds it"));
    }
    // An administrator's delegation is the host's to judge.
    let admin = f
        .apply(claim(
            "dave",
            &item,
            ItemAction::Delegate {
                to: UserId::new("bob"),
            },
        ))
        .unwrap();
    assert_eq!(sent(&admin).len(), 1);
    let holder = f
        .apply(claim(
            "alice",
            &item,
            ItemAction::Complete {
                succeeded: false,
                detail: Some("broken".to_owned()),
                flag: None,
                data: Default::default(),
            },
        ))
        .unwrap();
    assert_eq!(sent(&holder).len(), 1);
    assert_eq!(f.desk.pending().count(), 2);
}

#[test]
fn a_select_of_an_item_not_offered_is_forbidden() {
    let mut f = Fixture::new();
    let item = info(8, 1);
    f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
    let applied = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    let verdict = applied.verdict().unwrap();
    assert!(matches!(verdict, Verdict::Forbidden { .. }), "{verdict:?}");
    assert!(reason(verdict).contains("not offered to you"));
    assert!(sent(&applied).is_empty());
}

fn invalid(
    f: &mut Fixture,
    user: &str,
    item: &mobiwf_proto::ItemInfo,
    action: ItemAction,
) -> String {
    let applied = f.apply(claim(user, item, action)).unwrap();
    assert!(sent(&applied).is_empty(), "{applied:?}");
    let verdict = applied.verdict().unwrap().clone();
    assert!(matches!(verdict, Verdict::Invalid { .. }), "{verdict:?}");
    reason(&verdict).to_owned()
}

#[test]
fn actions_that_do_not_fit_the_item_are_invalid() {
    let (mut f, item) = offered_to_alice_and_bob();
    assert_eq!(
        invalid(&mut f, "alice", &item, ItemAction::Lock),
        "activity 3 may not be locked: it does not allow disconnected work (<disconnected>); \
         select it instead"
    );
    let complete = completion();
    assert!(invalid(&mut f, "alice", &item, complete).contains("select or lock it"));
    assert!(invalid(&mut f, "alice", &item, ItemAction::Insert).contains("administrator"));
    assert!(invalid(&mut f, "alice", &item, ItemAction::Remove).contains("worklist remove 7 3"));

    let mut offline = info(9, 1);
    offline.disconnected = true;
    f.item(snap(
        &offline,
        1,
        &[],
        vec![holder("alice", Hold::Locked, 5, None)],
        ItemStatus::Open,
    ));
    assert!(invalid(&mut f, "alice", &offline, ItemAction::Release).contains("unlock it instead"));
    f.item(snap(
        &offline,
        2,
        &[],
        selected("alice", 6),
        ItemStatus::Open,
    ));
    assert!(invalid(&mut f, "alice", &offline, ItemAction::Unlock).contains("release it instead"));
    let to_self = ItemAction::Delegate {
        to: UserId::new("alice"),
    };
    assert!(invalid(&mut f, "alice", &offline, to_self).contains("someone else"));
    assert_eq!(f.desk.pending().count(), 0);
}

#[test]
fn the_same_hold_again_is_done_and_another_hold_is_the_hosts_to_judge() {
    let mut f = Fixture::new();
    let mut item = info(9, 2);
    item.disconnected = true;
    f.item(snap(&item, 1, &[], selected("bob", 5), ItemStatus::Open));
    let again = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    assert_eq!(again.verdict(), Some(&Verdict::Done));
    assert!(sent(&again).is_empty());
    let lock = f.apply(claim("bob", &item, ItemAction::Lock)).unwrap();
    assert_eq!(sent(&lock).len(), 1);
}

#[test]
fn while_a_claim_is_under_way_the_next_one_goes_to_the_host() {
    let (mut f, item) = offered_to_alice_and_bob();
    f.apply(claim("alice", &item, ItemAction::Select)).unwrap();
    // By the desk's snapshot alice holds nothing yet; the host orders her two claims.
    let release = f.apply(claim("alice", &item, ItemAction::Release)).unwrap();
    assert_eq!(sent(&release).len(), 1);
    assert_eq!(f.desk.pending().count(), 2);
    let entry = &f.desk.worklist("alice", Order::Arrival)[0];
    assert_eq!(entry.pending.as_deref(), Some("release"));
}

#[test]
fn a_finished_item_is_no_longer_available_except_to_repeat_ones_own_completion() {
    let (mut f, item) = offered_to_alice_and_bob();
    f.item(snap(&item, 3, &[], vec![], done("alice")));
    let complete = |succeeded| ItemAction::Complete {
        succeeded,
        detail: None,
        flag: None,
        data: Default::default(),
    };
    let repeat = f.apply(claim("alice", &item, complete(true))).unwrap();
    assert_eq!(repeat.verdict(), Some(&Verdict::Done));
    let contrary = f.apply(claim("alice", &item, complete(false))).unwrap();
    assert!(reason(contrary.verdict().unwrap()).contains("no longer available: done by alice"));
    let bob = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    assert!(reason(bob.verdict().unwrap()).contains("no longer available: done by alice"));

    let closed = info(7, 5);
    f.item(snap(&closed, 1, &["bob"], vec![], ItemStatus::Open));
    f.item(snap(
        &closed,
        2,
        &[],
        vec![],
        ItemStatus::Closed {
            why: "the instance was cancelled".to_owned(),
        },
    ));
    let bob = f.apply(claim("bob", &closed, ItemAction::Select)).unwrap();
    assert!(
        reason(bob.verdict().unwrap())
            .contains("no longer available: closed (the instance was cancelled)")
    );
    assert!(sent(&bob).is_empty());
}

#[test]
fn request_numbers_grow_across_local_and_sent_claims_and_restarts() {
    let (mut f, item) = offered_to_alice_and_bob();
    let a = f.apply(claim("alice", &item, ItemAction::Lock)).unwrap();
    let b = f.apply(claim("alice", &item, ItemAction::Select)).unwrap();
    f.desk = Desk::restore(f.store.clone()).unwrap();
    let c = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    let numbers = [a.request.unwrap(), b.request.unwrap(), c.request.unwrap()];
    assert_eq!(numbers, [1, 2, 3]);
}

#[test]
fn an_answer_without_an_item_wakes_only_the_claim_it_names() {
    let (mut f, item) = offered_to_alice_and_bob();
    let request = f.claim("alice", &item, ItemAction::Select);
    let answer = |user: &str, activity: u64| {
        DeskInput::Answer(ItemAnswer {
            instance: item.instance,
            activity: mobiwf_proto::ActivityId(activity),
            answer: mobiwf_proto::Answer {
                user: UserId::new(user),
                request,
                verdict: Verdict::Invalid {
                    reason: "it has not started".to_owned(),
                },
            },
        })
    };
    // Another user's or another item's answer with this number is not this claim's.
    assert!(answers(&f.apply(answer("bob", item.activity.0)).unwrap()).is_empty());
    assert!(answers(&f.apply(answer("alice", 99)).unwrap()).is_empty());
    assert_eq!(f.desk.pending().count(), 1);
    let applied = f.apply(answer("alice", item.activity.0)).unwrap();
    assert_eq!(
        answers(&applied),
        vec![(
            request,
            UserId::new("alice"),
            Verdict::Invalid {
                reason: "it has not started".to_owned()
            }
        )]
    );
    assert_eq!(f.desk.pending().count(), 0);
    assert!(f.told("alice").iter().any(|(kind, _)| kind == "refused"));
    // A repeat wakes nobody.
    assert!(answers(&f.apply(answer("alice", item.activity.0)).unwrap()).is_empty());
}

#[test]
fn a_claim_under_way_holds_back_only_its_users_decisions_on_its_item() {
    let (mut f, item) = offered_to_alice_and_bob();
    let other = info(7, 4);
    f.item(snap(&other, 1, &["bob"], vec![], ItemStatus::Open));
    f.apply(claim("alice", &item, ItemAction::Select)).unwrap();
    // Bob's claim on the same item is decided here as ever: he does not hold it.
    let applied = f.apply(claim("bob", &item, ItemAction::Release)).unwrap();
    assert_eq!(applied.sent_to(), None);
    assert!(matches!(applied.verdict(), Some(Verdict::Invalid { .. })));
    // And so is Alice's on an item not offered to her.
    let applied = f.apply(claim("alice", &other, ItemAction::Select)).unwrap();
    assert_eq!(applied.sent_to(), None);
    assert!(matches!(applied.verdict(), Some(Verdict::Forbidden { .. })));
    // Only Alice's entry of the item shows her claim under way.
    let pending = |user| -> Vec<Option<String>> {
        f.desk
            .worklist(user, Order::Arrival)
            .iter()
            .map(|e| e.pending.clone())
            .collect()
    };
    assert_eq!(pending("alice"), [Some("select".to_owned())]);
    assert_eq!(pending("bob"), [None, None]);
}

#[test]
fn the_verdict_of_a_claim_is_its_own_answer() {
    let answered = |request| DeskEffect::Answered {
        request,
        user: UserId::new("alice"),
        verdict: Verdict::Done,
    };
    let applied = Applied {
        request: Some(2),
        effects: vec![answered(1)],
    };
    assert_eq!(applied.verdict(), None, "another claim's answer");
    let applied = Applied {
        request: Some(2),
        effects: vec![answered(1), answered(2)],
    };
    assert_eq!(applied.verdict(), Some(&Verdict::Done));
}

#[test]
fn the_holders_claims_that_fit_their_hold_go_to_the_host() {
    let mut f = Fixture::new();
    let (release, delegate, unlock) = (info(7, 1), info(7, 2), info(7, 3));
    for item in [&release, &delegate] {
        f.item(snap(item, 1, &[], selected("alice", 10), ItemStatus::Open));
    }
    let locked = vec![holder("alice", Hold::Locked, 10, None)];
    f.item(snap(&unlock, 1, &[], locked, ItemStatus::Open));
    let to_bob = ItemAction::Delegate {
        to: UserId::new("bob"),
    };
    for (item, action) in [
        (&release, ItemAction::Release),
        (&delegate, to_bob),
        (&unlock, ItemAction::Unlock),
    ] {
        let applied = f.apply(claim("alice", item, action.clone())).unwrap();
        assert_eq!(applied.sent_to(), Some(&host()), "{action:?}");
    }
}

#[test]
fn only_the_holder_pauses_or_resumes_an_item_and_the_host_decides() {
    let (mut f, item) = offered_to_alice_and_bob();
    for action in [ItemAction::Pause, ItemAction::Resume] {
        let applied = f.apply(claim("alice", &item, action.clone())).unwrap();
        assert!(sent(&applied).is_empty(), "offered, not held: {applied:?}");
        let verdict = applied.verdict().unwrap();
        assert!(matches!(verdict, Verdict::Forbidden { .. }), "{verdict:?}");
        assert!(reason(verdict).contains("only its holder"), "{verdict:?}");
    }
    f.item(snap(&item, 2, &[], selected("alice", 5), ItemStatus::Open));
    let applied = f.apply(claim("alice", &item, ItemAction::Pause)).unwrap();
    assert_eq!(applied.verdict(), None, "the host decides");
    assert_eq!(applied.sent_to(), Some(&host()));
}
