//! The hosts' snapshots: what they replace, and what they tell the users; the controller's
//! notices.

use mobiwf_proto::{Hold, ItemAction, ItemAnswer, ItemStatus, Message, Tell, UserId, Verdict};

use super::*;
use crate::desk::{MAX_NOTICES_PER_USER, Order};

#[test]
fn an_offer_shows_on_the_worklists_and_tells_each_user() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    let applied = f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    assert!(applied.effects.is_empty());
    for user in ["alice", "bob"] {
        assert_eq!(listed(&f.desk, user, Order::Arrival), vec![(7, 3)]);
        assert_eq!(
            f.told(user),
            vec![(
                "offered".to_owned(),
                "activity 3 \"Inspect 7.3\" of instance 7 is offered to you".to_owned()
            )]
        );
        assert_eq!(f.desk.notices(user)[0].at_ms, f.now_ms);
    }
    assert!(f.desk.worklist("dave", Order::Arrival).is_empty());
    assert!(f.desk.notices("dave").is_empty());
}

#[test]
fn an_older_snapshot_is_ignored_but_its_answer_is_taken() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    let request = f.claim("bob", &item, ItemAction::Select);
    // The host's later change (alice holds it) comes before the one answering bob.
    f.item(snap(&item, 3, &[], selected("alice", 2), ItemStatus::Open));
    let told = f.desk.notices("bob").len();
    let stale = f.item(answering(
        snap(&item, 2, &[], selected("bob", 1), ItemStatus::Open),
        "bob",
        request,
        Verdict::Done,
    ));
    assert_eq!(
        answers(&stale),
        vec![(request, UserId::new("bob"), Verdict::Done)]
    );
    assert_eq!(
        f.desk.item(item.instance, item.activity).unwrap().version,
        3
    );
    assert!(f.desk.worklist("bob", Order::Arrival).is_empty());
    assert_eq!(listed(&f.desk, "alice", Order::Arrival), vec![(7, 3)]);
    assert_eq!(f.desk.notices("bob").len(), told);
    // The same version again changes nothing either.
    f.item(snap(&item, 3, &["bob"], vec![], ItemStatus::Open));
    assert!(f.desk.worklist("bob", Order::Arrival).is_empty());
    assert_eq!(f.desk.pending().count(), 0);
}

#[test]
fn an_answer_to_no_claim_under_way_is_a_repeat_and_ignored() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
    let request = f.claim("alice", &item, ItemAction::Select);
    let with_answer = answering(
        snap(&item, 2, &[], selected("alice", 1), ItemStatus::Open),
        "alice",
        request,
        Verdict::Done,
    );
    assert_eq!(answers(&f.item(with_answer.clone())).len(), 1);
    assert!(f.item(with_answer).effects.is_empty());
}

#[test]
fn a_refusal_from_the_host_answers_the_claim_and_tells_the_user() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
    let request = f.claim("alice", &item, ItemAction::Select);
    let verdict = Verdict::Unavailable {
        reason: "activity 3 of instance 7 is no longer available: carol holds it".to_owned(),
    };
    let applied = f.item(answering(
        snap(&item, 2, &[], vec![], ItemStatus::Open),
        "alice",
        request,
        verdict.clone(),
    ));
    assert_eq!(
        answers(&applied),
        vec![(request, UserId::new("alice"), verdict)]
    );
    let told = f.told("alice");
    let kinds: Vec<&str> = told.iter().map(|(k, _)| k.as_str()).collect();
    // Told once, by the refusal (not also by a revocation).
    assert_eq!(kinds, ["offered", "refused"]);
    assert!(told[1].1.starts_with("your select of activity 3"));
    assert!(told[1].1.contains("carol holds it"));
}

#[test]
fn done_by_someone_else_is_no_longer_available_and_ones_own_completion_says_nothing() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(
        &item,
        1,
        &["bob"],
        selected("alice", 1),
        ItemStatus::Open,
    ));
    let request = f
        .apply(claim("alice", &item, completion()))
        .unwrap()
        .request
        .unwrap();
    f.item(answering(
        snap(&item, 2, &[], vec![], done("alice")),
        "alice",
        request,
        Verdict::Done,
    ));
    assert_eq!(
        f.told("alice"),
        vec![(
            "assigned".to_owned(),
            "activity 3 \"Inspect 7.3\" of instance 7 is yours now (selected)".to_owned()
        )]
    );
    let bob = f.told("bob");
    assert_eq!(bob.last().unwrap().0, "revoked");
    assert!(
        bob.last()
            .unwrap()
            .1
            .ends_with("is no longer available: done by alice")
    );
    assert!(f.desk.worklist("alice", Order::Arrival).is_empty());
    // Another snapshot of a finished item tells nobody anything more.
    f.item(snap(
        &item,
        3,
        &[],
        vec![],
        ItemStatus::Closed {
            why: "late".to_owned(),
        },
    ));
    assert_eq!(f.desk.notices("bob").len(), bob.len());
}

#[test]
fn a_closed_item_tells_everyone_it_was_on_the_worklist_of() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(
        &item,
        1,
        &["bob"],
        selected("alice", 1),
        ItemStatus::Open,
    ));
    f.item(snap(
        &item,
        2,
        &[],
        vec![],
        ItemStatus::Closed {
            why: "its timeOut ran out".to_owned(),
        },
    ));
    for user in ["alice", "bob"] {
        assert_eq!(
            f.told(user).last().unwrap(),
            &(
                "closed".to_owned(),
                "activity 3 \"Inspect 7.3\" of instance 7 was closed: its timeOut ran out"
                    .to_owned()
            )
        );
        assert!(f.desk.worklist(user, Order::Arrival).is_empty());
    }
    assert!(f.desk.notices("dave").is_empty());
}

#[test]
fn a_delegation_tells_the_new_holder_and_not_the_one_who_delegated() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &[], selected("alice", 1), ItemStatus::Open));
    let request = f
        .apply(claim(
            "alice",
            &item,
            ItemAction::Delegate {
                to: UserId::new("bob"),
            },
        ))
        .unwrap()
        .request
        .unwrap();
    f.item(answering(
        snap(
            &item,
            2,
            &[],
            vec![holder("bob", Hold::Selected, 30, Some("alice"))],
            ItemStatus::Open,
        ),
        "alice",
        request,
        Verdict::Done,
    ));
    let alice = f.told("alice");
    assert_eq!(alice.len(), 1, "{alice:?}");
    assert_eq!(
        f.told("bob"),
        vec![(
            "delegated".to_owned(),
            "activity 3 \"Inspect 7.3\" of instance 7 was delegated to you by alice (selected)"
                .to_owned()
        )]
    );
    let bob = &f.desk.worklist("bob", Order::Arrival)[0];
    assert_eq!(bob.grantor, Some(UserId::new("alice")));
    assert_eq!(bob.since_ms, Some(30));
    assert!(f.desk.worklist("alice", Order::Arrival).is_empty());
}

#[test]
fn a_released_item_is_offered_again_to_those_who_lost_it() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    f.item(snap(&item, 2, &[], selected("alice", 1), ItemStatus::Open));
    f.item(snap(&item, 3, &["alice", "bob"], vec![], ItemStatus::Open));
    let kinds: Vec<String> = f.told("bob").into_iter().map(|(k, _)| k).collect();
    assert_eq!(kinds, ["offered", "revoked", "offered"]);
    assert_eq!(
        f.told("alice").len(),
        2,
        "offered, then yours (no notice for the release)"
    );
    assert!(
        f.desk
            .item(item.instance, item.activity)
            .unwrap()
            .former
            .is_empty()
    );
    let bob = f.apply(claim("bob", &item, ItemAction::Select)).unwrap();
    assert_eq!(sent(&bob).len(), 1);
}

#[test]
fn notices_from_the_controller_are_kept_for_this_devices_users_only() {
    let mut f = Fixture::new();
    let applied = f
        .apply(DeskInput::Notice(notice(
            "alice",
            4,
            "instance 4 started",
            5,
        )))
        .unwrap();
    assert!(applied.effects.is_empty());
    f.apply(DeskInput::Notice(notice(
        "carol",
        4,
        "instance 4 started",
        5,
    )))
    .unwrap();
    f.apply(DeskInput::Notice(notice("zed", 4, "instance 4 started", 5)))
        .unwrap();
    assert_eq!(
        f.desk.notices("alice"),
        [notice("alice", 4, "instance 4 started", 5)]
    );
    assert!(f.desk.notices("carol").is_empty());
    assert!(f.desk.notices("zed").is_empty());
}

#[test]
fn a_user_keeps_the_newest_notices_up_to_the_limit() {
    let mut f = Fixture::new();
    let extra = 5;
    for n in 0..MAX_NOTICES_PER_USER + extra {
        let input = DeskInput::Notice(notice("bob", 1, &format!("notice {n}"), n as u64));
        f.desk.apply(n as u64, &f.dir, &f.me, input).unwrap();
        if n % 250 == 0 || n + 1 >= MAX_NOTICES_PER_USER {
            f.commit();
        }
    }
    let kept = f.desk.notices("bob");
    assert_eq!(kept.len(), MAX_NOTICES_PER_USER);
    assert_eq!(kept[0].text, format!("notice {extra}"));
    assert_eq!(
        kept.last().unwrap().text,
        format!("notice {}", MAX_NOTICES_PER_USER + extra - 1)
    );
    let stored = f
        .store
        .keys()
        .filter(|k| k.starts_with("desk/notice/"))
        .count();
    assert_eq!(stored, MAX_NOTICES_PER_USER);
}

#[test]
fn the_longest_finished_items_are_forgotten_beyond_the_limit() {
    let mut f = Fixture::new();
    for activity in 1..=4 {
        let item = info(3, activity);
        f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
        f.item(snap(&item, 2, &[], vec![], done("bob")));
    }
    let open = info(3, 9);
    f.item(snap(&open, 1, &["alice"], vec![], ItemStatus::Open));
    f.desk.forget_finished(2);
    f.commit();
    let known: Vec<u64> = f.desk.items().map(|i| i.info.activity.0).collect();
    assert_eq!(known, [3, 4, 9]);
    assert!(
        !f.store
            .contains_key(&crate::desk::item_key(open.instance, info(3, 1).activity))
    );
    assert!(
        f.store
            .contains_key(&crate::desk::item_key(open.instance, open.activity))
    );
}

#[test]
fn an_open_item_taken_elsewhere_is_forgotten_like_a_finished_one() {
    let mut f = Fixture::new();
    // Taken on another device: the host tells this one only that its users lost it, and
    // nothing more of it later (not its end).
    for activity in 1..=3 {
        let item = info(4, activity);
        f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
        f.item(snap(&item, 2, &[], vec![], ItemStatus::Open));
    }
    let kept = info(4, 9);
    f.item(snap(&kept, 1, &["alice"], vec![], ItemStatus::Open));
    f.desk.forget_finished(1);
    f.commit();
    let known: Vec<u64> = f.desk.items().map(|i| i.info.activity.0).collect();
    assert_eq!(known, [3, 9], "the item alice is still offered is kept");
    // Offered again (released elsewhere): it is this device's again.
    let again = info(4, 3);
    f.item(snap(&again, 3, &["alice"], vec![], ItemStatus::Open));
    f.desk.forget_finished(0);
    f.commit();
    let known: Vec<u64> = f.desk.items().map(|i| i.info.activity.0).collect();
    assert_eq!(known, [3, 9]);
}

#[test]
fn only_the_items_host_speaks_for_it() {
    let mut f = Fixture::new();
    let item = info(5, 2);
    f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
    let mut forged = item.clone();
    forged.host = Location::parse("/ip4/10.0.0.9/tcp/1/p2p/12D3KooWSomeoneElse").unwrap();
    f.item(snap(&forged, 9, &[], vec![], done("mallory")));
    assert_eq!(
        f.desk.item(item.instance, item.activity).unwrap().version,
        1
    );
    assert_eq!(listed(&f.desk, "alice", Order::Arrival), [(5, 2)]);
    // The same host at another address is the same host.
    let mut moved = item.clone();
    let peer = item.host.peer().unwrap();
    moved.host = Location::parse(format!("/ip4/127.0.0.1/tcp/9/p2p/{peer}")).unwrap();
    f.item(snap(&moved, 2, &[], vec![], done("bob")));
    assert_eq!(
        f.desk.item(item.instance, item.activity).unwrap().version,
        2
    );
}

#[test]
fn the_wire_messages_for_the_desk_become_its_inputs() {
    let item = info(7, 3);
    let message = Message::Item(mobiwf_proto::ItemSnapshot {
        info: item.clone(),
        version: 4,
        offered: users(&["alice"]),
        holders: vec![],
        status: ItemStatus::Open,
        answer: None,
    });
    assert_eq!(
        DeskInput::from_message(message),
        Some(DeskInput::Item(Box::new(snap(
            &item,
            4,
            &["alice"],
            vec![],
            ItemStatus::Open
        ))))
    );
    let told = notice("alice", 1, "hello", 2);
    assert_eq!(
        DeskInput::from_message(Message::Notice(Tell {
            notice: told.clone()
        })),
        Some(DeskInput::Notice(told))
    );
    let answered = ItemAnswer {
        instance: item.instance,
        activity: item.activity,
        answer: Answer {
            user: UserId::new("alice"),
            request: 9,
            verdict: Verdict::Done,
        },
    };
    assert_eq!(
        DeskInput::from_message(Message::Answer(answered.clone())),
        Some(DeskInput::Answer(answered))
    );
    assert_eq!(
        DeskInput::from_message(Message::Probe(Default::default())),
        None
    );
}

#[test]
fn a_change_a_users_claim_under_way_may_have_caused_tells_them_through_its_answer() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    let alice = f.claim("alice", &item, ItemAction::Select);
    let bob = f.claim("bob", &item, ItemAction::Select);
    // The host answers bob (refused) in a later version than alice's, which comes last.
    let refusal = Verdict::Unavailable {
        reason: "activity 3 of instance 7 is no longer available: alice holds it".to_owned(),
    };
    f.item(answering(
        snap(&item, 3, &[], selected("alice", 2), ItemStatus::Open),
        "bob",
        bob,
        refusal,
    ));
    f.item(answering(
        snap(&item, 2, &[], selected("alice", 2), ItemStatus::Open),
        "alice",
        alice,
        Verdict::Done,
    ));
    let kinds = |user| -> Vec<String> { f.told(user).into_iter().map(|(k, _)| k).collect() };
    assert_eq!(kinds("alice"), ["offered"]);
    assert_eq!(kinds("bob"), ["offered", "refused"]);
    assert_eq!(f.desk.pending().count(), 0);
}

#[test]
fn a_user_whose_claim_is_under_way_is_answered_not_told_the_item_was_done_by_another() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open));
    let request = f.claim("bob", &item, ItemAction::Select);
    let refused = Verdict::Unavailable {
        reason: "no longer available: carol completed it".to_owned(),
    };
    let applied = f.item(answering(
        snap(&item, 2, &[], vec![], done("carol")),
        "bob",
        request,
        refused.clone(),
    ));
    assert_eq!(answers(&applied), [(request, UserId::new("bob"), refused)]);
    let kinds = |user| -> Vec<String> { f.told(user).into_iter().map(|(k, _)| k).collect() };
    assert!(
        !kinds("bob").contains(&"revoked".to_owned()),
        "{:?}",
        kinds("bob")
    );
    assert!(
        kinds("alice").contains(&"revoked".to_owned()),
        "{:?}",
        kinds("alice")
    );
}
