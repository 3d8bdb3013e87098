//! Work without the network: going away and coming back, what may be done while away, and
//! the copies of what lockable items read (kept across snapshots and restarts, gone with the
//! item).

use mobiwf_proto::{
    DataValue, Datum, FileRef, Hold, ItemAction, ItemStatus, Message, Presence, UserId, Verdict,
};

use super::*;
use crate::desk::{Offline, Order};

fn lockable(instance: u64) -> mobiwf_proto::ItemInfo {
    let mut item = info(instance, 1);
    item.disconnected = true;
    item
}

fn photo() -> FileRef {
    FileRef {
        sha256: "ab".repeat(32),
        size: 3_000_000,
    }
}

fn values() -> Vec<Datum> {
    vec![
        Datum {
            name: "reading".to_owned(),
            value: DataValue::Number("5".to_owned()),
            by: mobiwf_proto::Writer::Activity(mobiwf_proto::ActivityId(1)),
            at_us: 1,
            pass: Default::default(),
        },
        Datum {
            name: "photo".to_owned(),
            value: DataValue::File(photo()),
            by: mobiwf_proto::Writer::Activity(mobiwf_proto::ActivityId(1)),
            at_us: 1,
            pass: Default::default(),
        },
    ]
}

/// alice locked item 1; item 2 is offered to alice and bob; item 3 alice selected.
fn day() -> Fixture {
    let mut f = Fixture::new();
    let locked = holder("alice", Hold::Locked, 5, None);
    f.item(snap(&lockable(1), 1, &[], vec![locked], ItemStatus::Open));
    f.item(snap(
        &lockable(2),
        1,
        &["alice", "bob"],
        vec![],
        ItemStatus::Open,
    ));
    f
}

/// Item 1 as the desk knows it.
fn first(f: &Fixture) -> &crate::DeskItem {
    f.desk.item(InstanceId(1), ActivityId(1)).unwrap()
}

fn away(user: &str) -> DeskInput {
    DeskInput::Disconnect(UserId::new(user))
}

#[test]
fn a_user_holding_a_selected_item_cannot_go() {
    let mut f = day();
    let selected = holder("alice", Hold::Selected, 5, None);
    f.item(snap(&lockable(3), 1, &[], vec![selected], ItemStatus::Open));
    let refused = f.apply(away("alice")).unwrap_err();
    assert!(
        matches!(refused, DeskRefusal::Selected { .. }),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("activity 1 \"Inspect 3.1\""),
        "{refused}"
    );
    assert!(!f.desk.is_away("alice"));
    // Someone else's device cannot take her away either.
    f.me = NodeName::new("N3");
    assert!(matches!(
        f.apply(away("alice")).unwrap_err(),
        DeskRefusal::NotHere { .. }
    ));
}

#[test]
fn a_select_or_lock_under_way_keeps_the_user_here() {
    let mut f = day();
    f.apply(claim("alice", &lockable(2), ItemAction::Lock))
        .unwrap();
    let refused = f.apply(away("alice")).unwrap_err();
    assert!(refused.to_string().contains("lock under way"), "{refused}");
    // The host's answer ends it: locked, she may go.
    let request = f.desk.pending().next().unwrap().request;
    let locked = holder("alice", Hold::Locked, 5, None);
    let snapshot = snap(&lockable(2), 2, &[], vec![locked], ItemStatus::Open);
    f.item(answering(snapshot, "alice", request, Verdict::Done));
    f.apply(away("alice")).unwrap();
    // Each presence told has the next number, kept across a restart.
    let told = Presence {
        away: users(&["alice"]),
        seq: 1,
    };
    assert_eq!(f.desk.presence(), told);
    f.commit();
    assert_eq!(f.desk.presence().seq, 2);
}

#[test]
fn while_away_only_locked_items_show_and_can_be_worked_on() {
    let mut f = day();
    f.apply(away("alice")).unwrap();
    assert!(f.desk.is_away("alice"));
    assert_eq!(listed(&f.desk, "alice", Order::Arrival), [(1, 1)]);
    // bob stayed: he still sees the offered item.
    assert_eq!(listed(&f.desk, "bob", Order::Arrival), [(2, 1)]);
    let refused = f
        .apply(claim("alice", &lockable(2), ItemAction::Select))
        .unwrap();
    let verdicts = answers(&refused);
    assert!(
        reason(&verdicts[0].2).contains("disconnected"),
        "{verdicts:?}"
    );
    assert!(sent(&refused).is_empty());
    // A completion of the locked item waits for the host, saying when she did it.
    let complete = completion();
    let applied = f.apply(claim("alice", &lockable(1), complete)).unwrap();
    let sent = sent(&applied);
    assert_eq!(sent.len(), 1);
    let Message::Claim(mobiwf_proto::Claim { offline_ms, .. }) = &sent[0].1 else {
        panic!("{sent:?}")
    };
    assert_eq!(*offline_ms, Some(f.now_ms));
    assert!(f.desk.pending().all(|p| p.offline));
    // Back: everything shows again; claims carry no offline time.
    f.apply(DeskInput::Reconnect(UserId::new("alice"))).unwrap();
    assert!(!f.desk.is_away("alice"));
    assert_eq!(listed(&f.desk, "alice", Order::Arrival), [(1, 1), (2, 1)]);
    let select = f
        .apply(claim("alice", &lockable(2), ItemAction::Select))
        .unwrap();
    let Message::Claim(mobiwf_proto::Claim { offline_ms, .. }) = &super::sent(&select)[0].1 else {
        panic!("a select goes to the host")
    };
    assert_eq!(*offline_ms, None);
}

#[test]
fn going_away_twice_is_going_away_once_and_survives_a_restart() {
    let mut f = day();
    f.apply(away("alice")).unwrap();
    let since: Vec<_> = f.desk.away().map(|(u, at)| (u.clone(), at)).collect();
    assert_eq!(since, [(UserId::new("alice"), f.now_ms)]);
    f.apply(away("alice")).unwrap();
    let again: Vec<_> = f.desk.away().map(|(u, at)| (u.clone(), at)).collect();
    assert_eq!(since, again);
    // `apply` checked that the desk restored from its store is the same.
}

#[test]
fn copies_keep_the_values_and_the_files_still_missing_and_go_with_the_item() {
    let mut f = day();
    let copied = DeskInput::Copied {
        instance: InstanceId(1),
        activity: ActivityId(1),
        data: values(),
        held: Vec::new(),
    };
    f.apply(copied).unwrap();
    let item = f.desk.item(InstanceId(1), ActivityId(1)).unwrap();
    assert_eq!(item.offline(), Offline::Copying);
    assert_eq!(item.copy.as_ref().unwrap().missing_bytes(), 3_000_000);
    let entry = &f.desk.worklist("alice", Order::Arrival)[0];
    assert_eq!(entry.offline, Some(Offline::Copying));
    // A newer snapshot keeps the copy; the file arriving makes it whole.
    let locked = holder("alice", Hold::Locked, 5, None);
    f.item(snap(&lockable(1), 2, &[], vec![locked], ItemStatus::Open));
    f.apply(DeskInput::FileHeld(photo())).unwrap();
    assert_eq!(first(&f).offline(), Offline::Ready);
    assert_eq!(f.desk.to_copy()[0].key(), (InstanceId(1), ActivityId(1)));
    // Done: the copy goes.
    f.item(snap(&lockable(1), 3, &[], vec![], done("alice")));
    assert!(first(&f).copy.is_none());
    // A copy of an item that ended meanwhile is not kept.
    let late = DeskInput::Copied {
        instance: InstanceId(1),
        activity: ActivityId(1),
        data: values(),
        held: vec![photo()],
    };
    f.apply(late).unwrap();
    assert!(first(&f).copy.is_none());
}

#[test]
fn locked_items_are_copied_first_and_items_that_may_not_go_offline_never() {
    let mut f = day();
    f.item(snap(&info(4, 1), 1, &["alice"], vec![], ItemStatus::Open));
    let order: Vec<_> = f.desk.to_copy().iter().map(|i| i.key()).collect();
    assert_eq!(
        order,
        [
            (InstanceId(1), ActivityId(1)),
            (InstanceId(2), ActivityId(1))
        ]
    );
    assert_eq!(f.desk.locked_by("alice").len(), 1);
    assert_eq!(f.desk.worklist("alice", Order::Arrival)[2].offline, None);
}

fn host_link(reachable: bool) -> DeskInput {
    DeskInput::HostLink {
        host: host().peer().unwrap().clone(),
        reachable,
    }
}

#[test]
fn when_the_host_cannot_be_reached_only_items_held_with_their_data_here_go_on() {
    let mut f = day();
    // Item 1 (alice locked it) has its data here; item 2 is only offered.
    f.apply(DeskInput::Copied {
        instance: InstanceId(1),
        activity: ActivityId(1),
        data: vec![values()[0].clone()],
        held: Vec::new(),
    })
    .unwrap();
    assert_eq!(first(&f).offline(), Offline::Ready);
    f.apply(host_link(false)).unwrap();
    let list = f.desk.worklist("alice", Order::Arrival);
    assert_eq!(list.len(), 2, "disabled items stay listed: {list:?}");
    assert!(list[0].disabled.is_none(), "{list:?}");
    let why = list[1].disabled.clone().unwrap_or_default();
    assert!(why.contains("cannot be reached"), "{why}");
    // A select of the disabled item is refused at once, nothing is sent.
    let refused = f
        .apply(claim("bob", &lockable(2), ItemAction::Select))
        .unwrap();
    assert!(sent(&refused).is_empty());
    let verdicts = answers(&refused);
    assert!(
        reason(&verdicts[0].2).contains("cannot be reached"),
        "{verdicts:?}"
    );
    // The locked and copied item goes on: its completion waits for the host.
    let complete = completion();
    let applied = f.apply(claim("alice", &lockable(1), complete)).unwrap();
    assert_eq!(sent(&applied).len(), 1);
    // The host answers again: everything is enabled.
    f.apply(host_link(true)).unwrap();
    assert!(
        f.desk
            .worklist("bob", Order::Arrival)
            .iter()
            .all(|e| e.disabled.is_none())
    );
    let select = f
        .apply(claim("bob", &lockable(2), ItemAction::Select))
        .unwrap();
    assert_eq!(sent(&select).len(), 1);
}

#[test]
fn an_item_held_without_its_data_here_is_disabled_while_its_host_cannot_be_reached() {
    let mut f = Fixture::new();
    let (locked, selected) = (lockable(1), info(3, 1));
    let held = |hold| vec![holder("alice", hold, 10, None)];
    f.item(snap(&locked, 1, &[], held(Hold::Locked), ItemStatus::Open));
    f.item(snap(
        &selected,
        1,
        &[],
        held(Hold::Selected),
        ItemStatus::Open,
    ));
    f.apply(host_link(false)).unwrap();
    for (item, action) in [
        (&locked, ItemAction::Unlock),
        (&selected, ItemAction::Release),
    ] {
        let refused = f.apply(claim("alice", item, action)).unwrap();
        assert!(sent(&refused).is_empty(), "{item:?}");
        assert!(reason(&answers(&refused)[0].2).contains("cannot be reached"));
    }
}

#[test]
fn items_are_copied_locked_first_then_selected_then_offered() {
    let mut f = Fixture::new();
    let held = |hold| vec![holder("alice", hold, 10, None)];
    f.item(snap(&lockable(1), 1, &["alice"], vec![], ItemStatus::Open));
    f.item(snap(
        &lockable(2),
        1,
        &[],
        held(Hold::Selected),
        ItemStatus::Open,
    ));
    f.item(snap(
        &lockable(3),
        1,
        &[],
        held(Hold::Locked),
        ItemStatus::Open,
    ));
    let order: Vec<_> = f.desk.to_copy().iter().map(|i| i.key().0.0).collect();
    assert_eq!(order, [3, 2, 1]);
}
