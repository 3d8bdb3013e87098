//! The worklist views and the JSON the API returns.

use mobiwf_proto::{ActivityId, Hold, InstanceId, ItemStatus, UserId};

use super::*;
use crate::desk::{Entry, EntryState, Order};

/// Five items offered to alice: (instance, activity, ready, priority, deadline).
fn five() -> Fixture {
    let mut f = Fixture::new();
    let rows: [(u64, u64, u64, i64, Option<u64>); 5] = [
        (1, 1, 300, 1, None),
        (2, 1, 100, 5, Some(900)),
        (3, 1, 200, 5, Some(500)),
        (4, 2, 100, 0, None),
        (4, 1, 100, 0, Some(900)),
    ];
    for (instance, activity, ready, priority, deadline) in rows {
        let mut item = info(instance, activity);
        item.ready_ms = ready;
        item.priority = priority;
        item.deadline_ms = deadline;
        f.item(snap(&item, 1, &["alice"], vec![], ItemStatus::Open));
    }
    f
}

/// [`five`], with item (3, 1) locked by alice since.
fn five_with_3_locked_by_alice() -> Fixture {
    let mut f = five();
    f.item(snap(
        &info(3, 1),
        2,
        &[],
        vec![holder("alice", Hold::Locked, 1, None)],
        ItemStatus::Open,
    ));
    f
}

#[test]
fn arrival_is_the_oldest_offer_first_then_instance_and_activity() {
    let f = five();
    let arrival = vec![(2, 1), (4, 1), (4, 2), (3, 1), (1, 1)];
    assert_eq!(listed(&f.desk, "alice", Order::Arrival), arrival);
    assert_eq!(Order::default(), Order::Arrival);
    // No item carries a data size yet: size is arrival.
    assert_eq!(listed(&f.desk, "alice", Order::Size), arrival);
}

#[test]
fn priority_is_the_highest_first_then_arrival() {
    let f = five();
    assert_eq!(
        listed(&f.desk, "alice", Order::Priority),
        vec![(2, 1), (3, 1), (1, 1), (4, 1), (4, 2)]
    );
}

#[test]
fn deadline_is_the_earliest_first_and_none_last() {
    let f = five();
    assert_eq!(
        listed(&f.desk, "alice", Order::Deadline),
        vec![(3, 1), (2, 1), (4, 1), (4, 2), (1, 1)]
    );
}

#[test]
fn orders_are_named_by_their_words() {
    for order in Order::ALL {
        assert_eq!(Order::parse(order.as_str()), Some(order));
        assert_eq!(order.to_string(), order.as_str());
        let json = serde_json::to_string(&order).unwrap();
        assert_eq!(json, format!("\"{order}\""));
    }
    assert_eq!(Order::parse("size"), Some(Order::Size));
    assert_eq!(Order::parse("Priority"), None);
    assert_eq!(Order::parse(""), None);
}

#[test]
fn a_worklist_holds_the_open_items_offered_to_or_held_by_the_user() {
    let mut f = Fixture::new();
    let offered = info(1, 1);
    let mine = info(1, 2);
    let theirs = info(1, 3);
    let ended = info(1, 4);
    f.item(snap(
        &offered,
        1,
        &["alice", "bob"],
        vec![],
        ItemStatus::Open,
    ));
    f.item(snap(
        &mine,
        1,
        &["bob"],
        vec![holder("alice", Hold::Locked, 77, Some("dave"))],
        ItemStatus::Open,
    ));
    f.item(snap(&theirs, 1, &[], selected("bob", 5), ItemStatus::Open));
    f.item(snap(&ended, 1, &["alice"], vec![], ItemStatus::Open));
    f.item(snap(&ended, 2, &["alice"], vec![], done("carol")));
    let alice = f.desk.worklist("alice", Order::Arrival);
    let states: Vec<(u64, EntryState)> =
        alice.iter().map(|e| (e.info.activity.0, e.state)).collect();
    assert_eq!(states, [(1, EntryState::Offered), (2, EntryState::Locked)]);
    assert_eq!(alice[1].since_ms, Some(77));
    assert_eq!(alice[1].grantor, Some(UserId::new("dave")));
    assert_eq!(alice[0].since_ms, None);
    let bob: Vec<(u64, EntryState)> = f
        .desk
        .worklist("bob", Order::Arrival)
        .iter()
        .map(|e| (e.info.activity.0, e.state))
        .collect();
    assert_eq!(
        bob,
        [
            (1, EntryState::Offered),
            (2, EntryState::Offered),
            (3, EntryState::Selected)
        ]
    );
}

#[test]
fn an_entry_is_flat_json_with_the_items_fields() {
    let mut f = Fixture::new();
    let item = info(7, 3);
    f.item(snap(
        &item,
        1,
        &[],
        vec![holder("alice", Hold::Selected, 42, Some("dave"))],
        ItemStatus::Open,
    ));
    let entry = f.desk.worklist("alice", Order::Arrival).remove(0);
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(json["instance"], 7);
    assert_eq!(json["activity"], 3);
    assert_eq!(json["name"], "Inspect 7.3");
    assert_eq!(json["state"], "selected");
    assert_eq!(json["since_ms"], 42);
    assert_eq!(json["grantor"], "dave");
    assert_eq!(json["host"], HOST);
    assert!(json.get("pending").is_none());
    let back: Entry = serde_json::from_value(json).unwrap();
    assert_eq!(back, entry);
}

#[test]
fn a_page_is_its_slice_of_the_whole_list_in_every_order() {
    let mut f = five();
    // bob holds one (not on alice's list), alice holds one.
    f.item(snap(
        &info(2, 1),
        2,
        &[],
        selected("bob", 1),
        ItemStatus::Open,
    ));
    f.item(snap(
        &info(3, 1),
        2,
        &[],
        selected("alice", 1),
        ItemStatus::Open,
    ));
    for order in Order::ALL {
        let whole = f.desk.worklist("alice", order);
        assert_eq!(whole.len(), 4);
        for from in 0..=5 {
            for limit in 1..=5 {
                let page = f.desk.worklist_page("alice", order, from, limit);
                let end = (from + limit).min(whole.len());
                let expected = whole.get(from..end).unwrap_or_default();
                assert_eq!(page.entries, expected, "{order} from {from} limit {limit}");
                assert_eq!(page.total, 4);
            }
        }
    }
    assert_eq!(f.desk.worklist_page("bob", Order::Arrival, 0, 9).total, 1);
}

#[test]
fn one_entry_is_what_the_whole_list_shows_for_its_item() {
    let mut f = five_with_3_locked_by_alice();
    f.item(snap(&info(5, 1), 1, &["bob"], vec![], ItemStatus::Open));
    f.claim("alice", &info(1, 1), mobiwf_proto::ItemAction::Select);
    for user in ["alice", "bob", "carol"] {
        let whole = f.desk.worklist(user, Order::Arrival);
        for key in [(1, 1), (2, 1), (3, 1), (4, 1), (4, 2), (5, 1), (9, 9)] {
            let (instance, activity) = (InstanceId(key.0), ActivityId(key.1));
            let listed = whole
                .iter()
                .find(|e| (e.info.instance, e.info.activity) == (instance, activity));
            let one = f.desk.worklist_entry(user, instance, activity);
            assert_eq!(one.as_ref(), listed, "{user} {key:?}");
        }
    }
    assert!(
        f.desk
            .worklist_entry("alice", InstanceId(5), ActivityId(1))
            .is_none()
    );
    assert!(
        f.desk
            .worklist_entry("bob", InstanceId(5), ActivityId(1))
            .is_some()
    );
}

#[test]
fn while_away_one_entry_is_only_a_locked_item() {
    let mut f = five_with_3_locked_by_alice();
    let entry = |f: &Fixture, key: (u64, u64)| {
        f.desk
            .worklist_entry("alice", InstanceId(key.0), ActivityId(key.1))
    };
    assert!(entry(&f, (1, 1)).is_some());
    f.apply(crate::desk::DeskInput::Disconnect(UserId::new("alice")))
        .expect("alice holds nothing selected");
    assert!(entry(&f, (1, 1)).is_none(), "offered items wait while away");
    assert_eq!(entry(&f, (3, 1)).map(|e| e.state), Some(EntryState::Locked));
}

#[test]
fn the_links_follow_the_entries() {
    let mut f = five_with_3_locked_by_alice();
    f.claim("alice", &info(1, 1), mobiwf_proto::ItemAction::Select);
    let links = f.desk.worklist_links("alice");
    let whole = f.desk.worklist("alice", Order::Arrival);
    assert_eq!(links.len(), whole.len());
    let locked = whole
        .iter()
        .filter(|e| e.state == EntryState::Locked)
        .count();
    let pending = whole.iter().filter(|e| e.pending.is_some()).count();
    assert_eq!(links.iter().filter(|l| l.locked).count(), locked);
    assert_eq!(links.iter().filter(|l| l.pending).count(), pending);
    assert_eq!((locked, pending), (1, 1));
    assert!(links.iter().all(|l| *l.host == host()));
}

#[test]
#[ignore = "a measurement: run by scripts/bench-worklist, prints timings"]
fn bench_worklist_pages_on_the_desk() {
    use std::time::{Duration, Instant};
    let mut desk = crate::Desk::new();
    let (dir, me) = (directory(), mobiwf_proto::NodeName::new("N2"));
    for n in 1..=10_000u64 {
        let mut item = info(n, 2);
        item.priority = i64::try_from(n % 7).unwrap();
        item.ready_ms = 1000 + (n * 37) % 1000;
        item.deadline_ms = (!n.is_multiple_of(3)).then_some(5_000_000 + (n * 7919) % 100_000);
        let snapshot = snap(&item, 1, &["alice", "bob"], vec![], ItemStatus::Open);
        desk.apply(10_000, &dir, &me, DeskInput::Item(Box::new(snapshot)))
            .unwrap();
    }
    let best = |f: &dyn Fn() -> usize| -> Duration {
        (0..7)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
    println!("| order | first page | page 100 | whole list |");
    println!("|---|---|---|---|");
    for order in Order::ALL {
        let first = best(&|| desk.worklist_page("alice", order, 0, 50).entries.len());
        let later = best(&|| desk.worklist_page("alice", order, 4950, 50).entries.len());
        let whole = best(&|| desk.worklist("alice", order).len());
        println!(
            "| {order} | {} | {} | {} |",
            ms(first),
            ms(later),
            ms(whole)
        );
    }
    let links = best(&|| desk.worklist_links("alice").len());
    println!("link counts: {}", ms(links));
}
