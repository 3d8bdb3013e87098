//! The worklist's pages, through the view functions on a real desk: each page holds its share
//! of the list in the list's order, says how many items there are and links to its
//! neighbours; an item another user takes leaves the page (a new fingerprint, so the live
//! stream sends it) and the count follows. `bench_worklist_pages` prints how long a page of a
//! 10,000-item worklist takes (`scripts/bench-worklist`).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use mobiwf_people::{Desk, DeskInput, Directory, ItemSnapshot, Order};
use mobiwf_proto::{
    ActivityId, Hold, Holder, InstanceId, ItemInfo, ItemStatus, Location, NodeName, PartitionId,
    UserId,
};

use super::view::{Shown, fingerprint, worklist};
use crate::daemon::{WorklistEntry, WorklistPage};

const HOST: &str = "/ip4/10.0.0.9/tcp/4001/p2p/12D3KooWHost";

/// Item `n` (instance `n`), its keys varied so that each order differs from arrival.
fn info(n: u64) -> ItemInfo {
    ItemInfo {
        pass: Default::default(),
        instance: InstanceId(n),
        partition: PartitionId(1),
        activity: ActivityId(2),
        name: format!("Inspect pump {n}"),
        description: "look at the pump".to_owned(),
        kind: "manual".to_owned(),
        priority: i64::try_from(n % 7).unwrap(),
        disconnected: false,
        ready_ms: 1000 + (n * 37) % 1000,
        deadline_ms: (!n.is_multiple_of(3)).then_some(5_000_000 + (n * 7919) % 100_000),
        host: Location::parse(HOST).unwrap(),
        due: None,
        application: None,
        paused_ms: None,
    }
}

fn snapshot(n: u64, version: u64, offered: &[&str], holders: Vec<Holder>) -> DeskInput {
    DeskInput::Item(Box::new(ItemSnapshot {
        info: info(n),
        version,
        offered: offered.iter().map(|u| UserId::new(*u)).collect(),
        holders,
        status: ItemStatus::Open,
        answer: None,
    }))
}

/// A desk with `count` items offered to alice and bob.
fn desk_of(count: u64) -> Desk {
    let mut desk = Desk::new();
    for n in 1..=count {
        apply(&mut desk, snapshot(n, 1, &["alice", "bob"], Vec::new()));
    }
    desk
}

fn apply(desk: &mut Desk, input: DeskInput) {
    let me = NodeName::new("N2");
    desk.apply(10_000, &Directory::default(), &me, input)
        .unwrap();
}

/// Alice's page `shown`, as the actor answers it (no host names: the directory knows none).
fn page(desk: &Desk, shown: Shown) -> WorklistPage {
    let window = shown.window();
    let page = desk.worklist_page("alice", shown.order, window.from, window.limit);
    WorklistPage {
        entries: page
            .entries
            .into_iter()
            .map(|entry| WorklistEntry {
                entry,
                host_name: None,
                user: UserId::new("alice"),
            })
            .collect(),
        total: page.total,
    }
}

fn instances(list: &WorklistPage) -> Vec<u64> {
    list.entries
        .iter()
        .map(|e| e.entry.info.instance.0)
        .collect()
}

fn shown(order: Order, page: usize, limit: usize) -> Shown {
    Shown::new(order, Some(page), Some(limit))
}

#[test]
fn pages_hold_their_share_and_link_to_their_neighbours() {
    let desk = desk_of(120);
    let first = shown(Order::Arrival, 1, 50);
    let list = page(&desk, first);
    assert_eq!((list.entries.len(), list.total), (50, 120));
    let html = worklist(&list, first, "x", 0).into_string();
    assert!(html.contains("120 items · 1–50 shown"), "{html}");
    assert!(
        html.contains(r#"rel="next" href="/?order=arrival&amp;page=2""#)
            && !html.contains(r#"rel="prev""#),
        "{html}"
    );
    let last = shown(Order::Arrival, 3, 50);
    let list = page(&desk, last);
    assert_eq!(list.entries.len(), 20);
    let html = worklist(&list, last, "x", 0).into_string();
    assert!(html.contains("120 items · 101–120 shown"), "{html}");
    assert!(
        html.contains(r#"rel="prev" href="/?order=arrival&amp;page=2""#)
            && !html.contains(r#"rel="next""#),
        "{html}"
    );
    assert!(html.contains("/events?order=arrival&amp;page=3&amp;since=x"));
    // After the last page: nothing on it, the count and the way back.
    let past = shown(Order::Arrival, 4, 50);
    let html = worklist(&page(&desk, past), past, "x", 0).into_string();
    assert!(
        html.contains("Nothing on this page.") && html.contains("120 items · none on page 4"),
        "{html}"
    );
    assert!(html.contains(r#"rel="prev""#), "{html}");
    // A list that fills its pages exactly has no page after the last full one.
    let even = desk_of(100);
    let second = shown(Order::Arrival, 2, 50);
    let html = worklist(&page(&even, second), second, "x", 0).into_string();
    assert!(
        html.contains("51–100 shown") && !html.contains(r#"rel="next""#),
        "{html}"
    );
    // The first page of the default size: the addresses of before, and the count alone.
    let one = desk_of(1);
    let html = worklist(
        &page(&one, Shown::first(Order::Arrival)),
        Shown::first(Order::Arrival),
        "x",
        0,
    )
    .into_string();
    assert!(
        html.contains(r#"data-events="/events?order=arrival&amp;since=x""#),
        "{html}"
    );
    assert!(html.contains("1 item") && !html.contains("shown"), "{html}");
    // Out of bounds asked, in bounds given.
    assert_eq!(
        Shown::new(Order::Size, Some(0), Some(0)),
        shown(Order::Size, 1, 1)
    );
    assert_eq!(
        Shown::new(Order::Size, None, Some(usize::MAX)).limit,
        super::view::MAX_PAGE
    );
}

#[test]
fn the_order_is_kept_across_pages() {
    let desk = desk_of(103);
    for order in Order::ALL {
        let whole: Vec<u64> = desk
            .worklist("alice", order)
            .iter()
            .map(|e| e.info.instance.0)
            .collect();
        assert_eq!(whole.len(), 103);
        let mut paged = Vec::new();
        for n in 1..=11 {
            let list = page(&desk, shown(order, n, 10));
            assert_eq!(list.total, 103);
            paged.extend(instances(&list));
        }
        assert_eq!(paged, whole, "{order}");
    }
    // The orders do differ: priority puts the highest first on the first page.
    let top = page(&desk, shown(Order::Priority, 1, 10));
    assert!(top.entries.iter().all(|e| e.entry.info.priority == 6));
}

#[test]
fn an_item_taken_by_another_leaves_the_page_and_the_count() {
    let mut desk = desk_of(30);
    let first = shown(Order::Arrival, 1, 10);
    let before = page(&desk, first);
    let taken = before.entries[3].entry.info.instance.0;
    let next_in = page(&desk, shown(Order::Arrival, 2, 10)).entries[0]
        .entry
        .info
        .instance
        .0;
    // Bob selects it on this device.
    let bob = Holder {
        user: UserId::new("bob"),
        hold: Hold::Selected,
        since_ms: 9_000,
        grantor: None,
    };
    apply(&mut desk, snapshot(taken, 2, &[], vec![bob]));
    let after = page(&desk, first);
    assert_ne!(fingerprint(&before, first), fingerprint(&after, first));
    assert!(!instances(&after).contains(&taken));
    assert_eq!(after.entries.len(), 10, "the page stays full");
    assert!(
        instances(&after).contains(&next_in),
        "the next one moves up"
    );
    let html = worklist(&after, first, "x", 0).into_string();
    assert!(
        !html.contains(&format!(r#"data-item="{taken}/2""#)),
        "{html}"
    );
    assert!(html.contains("29 items · 1–10 shown"), "{html}");
    assert!(
        html.contains(r#"href="/?order=arrival&amp;page=2&amp;limit=10""#),
        "{html}"
    );
    // A change after the page shows in the count, so the page's stream sends it too.
    let last = page(&desk, shown(Order::Arrival, 3, 10));
    apply(
        &mut desk,
        snapshot(last.entries[0].entry.info.instance.0, 2, &[], Vec::new()),
    );
    let again = page(&desk, first);
    assert_eq!(again.total, 28);
    assert_eq!(instances(&again), instances(&after));
    assert_ne!(fingerprint(&after, first), fingerprint(&again, first));
}

/// The least of `runs` timings of `f`.
fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

#[test]
#[ignore = "a measurement: run by scripts/bench-worklist, prints timings"]
fn bench_worklist_pages() {
    let desk = desk_of(10_000);
    // The whole list, as the page rendered it before pages (and the JSON API still answers).
    let whole = |order: Order| WorklistPage {
        entries: desk
            .worklist("alice", order)
            .into_iter()
            .map(|entry| WorklistEntry {
                entry,
                host_name: None,
                user: UserId::new("alice"),
            })
            .collect(),
        total: 10_000,
    };
    println!("| order | first page | page 100 | desk's part of page 100 | whole list |");
    println!("|---|---|---|---|---|");
    for order in Order::ALL {
        let render = |list: &WorklistPage, shown: Shown| {
            let id = fingerprint(list, shown);
            worklist(list, shown, &id, 0).into_string()
        };
        let first = Shown::first(order);
        let later = shown(order, 100, super::view::DEFAULT_PAGE);
        let first_ms = best(5, || render(&page(&desk, first), first));
        let later_ms = best(5, || render(&page(&desk, later), later));
        let window = later.window();
        let desk_ms = best(5, || {
            desk.worklist_page("alice", order, window.from, window.limit)
        });
        let whole_ms = best(3, || render(&whole(order), first));
        println!(
            "| {order} | {} | {} | {} | {} |",
            ms(first_ms),
            ms(later_ms),
            ms(desk_ms),
            ms(whole_ms)
        );
    }
    // The link section of `GET /`: counted on the desk over the whole list.
    let links = best(5, || desk.worklist_links("alice").len());
    println!("link counts (GET / and GET /link): {}", ms(links));
    // `GET /users/{user}/worklist`: the whole list as JSON (it is not paged).
    let api = best(3, || {
        serde_json::to_vec(&whole(Order::Arrival).entries).unwrap()
    });
    println!("JSON API's listing, whole (arrival): {}", ms(api));
}
