//! The pages' rendering, pure: markup in data shows as text, the deadline counts down and
//! turns red under its last notice, the buttons follow the item's state, the completion form
//! is typed as the definition declares, and a refusal replaces the buttons.
#![allow(clippy::unwrap_used)]

use mobiwf_people::{Entry, EntryState, Offline, Order};
use mobiwf_proto::{
    ActivityId, DataValue, FileRef, InstanceId, ItemDeadline, ItemInfo, Location, PartitionId,
    UserId,
};
use mobiwf_xml_schema::DataKind;

use super::item_view::{Said, gone_page, item_page};
use super::view::{Shown, countdown, fingerprint, worklist, worklist_page};
use crate::daemon::{ItemDetail, ReadValue, WorklistEntry, WorklistPage};

const MARKUP: &str = "<script>alert(1)</script>";
const ESCAPED: &str = "&lt;script&gt;alert(1)&lt;/script&gt;";

fn entry(state: EntryState) -> WorklistEntry {
    let info = ItemInfo {
        pass: Default::default(),
        instance: InstanceId(7),
        partition: PartitionId(1),
        activity: ActivityId(2),
        name: MARKUP.to_owned(),
        description: format!("check {MARKUP}"),
        kind: "manual".to_owned(),
        priority: 3,
        disconnected: true,
        ready_ms: 1000,
        deadline_ms: None,
        host: Location::lenient("/ip4/127.0.0.1/tcp/1/p2p/12D3KooWhost"),
        due: None,
        application: None,
        paused_ms: None,
    };
    WorklistEntry {
        entry: Entry {
            info,
            state,
            since_ms: None,
            grantor: None,
            pending: None,
            offline: Some(Offline::Ready),
            disabled: None,
        },
        host_name: None,
        user: UserId::new("alice"),
    }
}

/// A list of one page holding all of `entries`.
fn all(entries: &[WorklistEntry]) -> WorklistPage {
    WorklistPage {
        entries: entries.to_vec(),
        total: entries.len(),
    }
}

fn detail(state: EntryState) -> ItemDetail {
    ItemDetail {
        entry: entry(state),
        reads: Some(vec![
            ReadValue {
                name: "site".to_owned(),
                value: Some(DataValue::String(MARKUP.to_owned())),
            },
            ReadValue {
                name: "plan".to_owned(),
                value: Some(DataValue::File(FileRef {
                    sha256: "ab".repeat(32),
                    size: 12,
                })),
            },
        ]),
        writes: Some(vec![
            ("reading".to_owned(), DataKind::Number),
            ("photo".to_owned(), DataKind::File),
            ("note".to_owned(), DataKind::String),
        ]),
    }
}

#[test]
fn markup_in_names_and_values_shows_as_text() {
    let entries = [entry(EntryState::Offered)];
    let page = worklist_page(
        "alice",
        &all(&entries),
        Shown::first(Order::Priority),
        0,
        &maud::html! {},
    )
    .into_string();
    assert!(page.contains(ESCAPED), "{page}");
    assert!(!page.contains(MARKUP), "{page}");
    let item = item_page(&detail(EntryState::Selected), "c", None, 0).into_string();
    assert!(item.contains(&format!("check {ESCAPED}")), "{item}");
    assert!(!item.contains("<script"), "{item}");
    let gone = gone_page(7, 2, &Said::Refused(MARKUP.to_owned())).into_string();
    assert!(gone.contains(ESCAPED) && !gone.contains(MARKUP), "{gone}");
}

#[test]
fn the_list_shows_each_items_facts_and_follows_its_order() {
    let mut held = entry(EntryState::Locked);
    held.entry.info.pass = mobiwf_proto::Pass(3);
    let page = worklist_page(
        "alice",
        &all(&[held.clone()]),
        Shown::first(Order::Deadline),
        0,
        &maud::html! {},
    )
    .into_string();
    assert!(
        page.contains(&format!("{ESCAPED} #3")),
        "the pass after the first: {page}"
    );
    assert!(
        page.contains("priority 3") && page.contains("ready offline"),
        "{page}"
    );
    assert!(
        page.contains("held by alice") && page.contains("locked"),
        "{page}"
    );
    assert!(
        page.contains(r#"href="/?order=deadline" aria-current="page""#),
        "{page}"
    );
    assert!(page.contains("/events?order=deadline&amp;since="), "{page}");
    let empty = worklist(&all(&[]), Shown::first(Order::Arrival), "x", 0).into_string();
    assert!(empty.contains("Nothing to do."), "{empty}");
    assert!(!empty.contains("pager"), "no count of nothing: {empty}");
    // The fingerprint follows what is shown, not the clock.
    let offered = [entry(EntryState::Offered)];
    assert_eq!(
        fingerprint(&all(&offered), Shown::first(Order::Arrival)),
        fingerprint(&all(&offered), Shown::first(Order::Arrival))
    );
    assert_ne!(
        fingerprint(&all(&offered), Shown::first(Order::Arrival)),
        fingerprint(&all(&[held]), Shown::first(Order::Arrival))
    );
    assert_ne!(
        fingerprint(&all(&offered), Shown::first(Order::Arrival)),
        fingerprint(&all(&offered), Shown::first(Order::Size))
    );
}

#[test]
fn a_deadline_counts_down_and_is_red_under_its_last_notice() {
    assert_eq!(countdown(3_600_000 + 5 * 60_000, 0), "in 1h 05m");
    assert_eq!(countdown(61_000, 0), "in 1m 01s");
    assert_eq!(countdown(0, 190_000), "3m 10s ago");
    assert_eq!(countdown(2 * 86_400_000 + 3_600_000, 0), "in 2d 1h");
    let hour = 1000;
    let mut item = entry(EntryState::Selected);
    item.entry.info.due = Some(Box::new(ItemDeadline {
        hours: 48,
        at_ms: 48 * hour,
        hour_ms: hour,
        sent_ms: 0,
        passed: Vec::new(),
    }));
    // The last notice before the deadline is at 6 hours left.
    let early = worklist(&all(&[item.clone()]), Shown::first(Order::Arrival), "x", 0).into_string();
    assert!(
        early.contains(&format!(r#"data-warn-ms="{}""#, 42 * hour)),
        "{early}"
    );
    assert!(!early.contains("due late"), "{early}");
    let late = worklist(&all(&[item]), Shown::first(Order::Arrival), "x", 42 * hour).into_string();
    assert!(late.contains(r#"class="due late""#), "{late}");
}

#[test]
fn the_buttons_follow_the_state_and_the_form_is_typed() {
    let offered = item_page(&detail(EntryState::Offered), "tok", None, 0).into_string();
    for action in ["select", "lock"] {
        assert!(
            offered.contains(&format!("/items/7/2/{action}")),
            "{offered}"
        );
    }
    assert!(!offered.contains("/items/7/2/complete"), "{offered}");
    let selected = item_page(&detail(EntryState::Selected), "tok", None, 0).into_string();
    for action in ["release", "pause", "complete", "delegate"] {
        assert!(
            selected.contains(&format!("/items/7/2/{action}")),
            "{selected}"
        );
    }
    assert!(
        selected.contains(r#"type="number" step="any""#),
        "{selected}"
    );
    assert!(
        selected.contains(r#"type="file" name="file.photo""#),
        "{selected}"
    );
    assert!(
        selected.contains(r#"type="text" name="value.note""#),
        "{selected}"
    );
    assert!(
        selected.contains(r#"enctype="multipart/form-data""#),
        "{selected}"
    );
    assert!(
        selected.contains("/items/7/2/files/plan"),
        "a file it reads: {selected}"
    );
    assert_eq!(
        selected.matches(r#"name="csrf" value="tok""#).count(),
        4,
        "{selected}"
    );
    let mut unknown = detail(EntryState::Locked);
    unknown.writes = None;
    unknown.reads = None;
    let page = item_page(&unknown, "tok", None, 0).into_string();
    assert!(
        page.contains(r#"name="values""#) && page.contains("/items/7/2/unlock"),
        "{page}"
    );
    assert!(page.contains("its host holds it"), "{page}");
}

#[test]
fn a_refusal_shows_where_the_buttons_were() {
    let gone = Said::Refused("activity 2 is no longer available: bob holds it".to_owned());
    let page = item_page(&detail(EntryState::Offered), "tok", Some(&gone), 0).into_string();
    assert!(page.contains("no longer available: bob holds it"), "{page}");
    assert!(
        !page.contains("/items/7/2/select"),
        "no stale button left: {page}"
    );
    let other = Said::Refused("no lock without disconnected".to_owned());
    let page = item_page(&detail(EntryState::Offered), "tok", Some(&other), 0).into_string();
    assert!(
        page.contains("no lock without") && page.contains("/items/7/2/select"),
        "{page}"
    );
}

/// The link of the user whose worklist is `held` alone, as the node counts it.
fn link(
    held: &WorklistEntry,
    away_since_ms: Option<u64>,
    cut_since_ms: Option<u64>,
) -> crate::daemon::UserLink {
    let waiting = usize::from(held.entry.pending.is_some());
    crate::daemon::UserLink {
        away_since_ms,
        hosts: vec![crate::daemon::ItemsHost {
            peer: held.entry.info.host.peer().unwrap().clone(),
            name: held.host_name.clone(),
            waiting,
        }],
        locked: usize::from(held.entry.state == EntryState::Locked),
        waiting,
        cut_off: cut_since_ms
            .map(|since_ms| crate::daemon::CutOff {
                peer: mobiwf_proto::NodeId::new("12D3KooWhost"),
                name: None,
                since_ms,
            })
            .into_iter()
            .collect(),
    }
}

#[test]
fn the_link_says_connected_cut_off_or_reconnecting_per_host() {
    use super::link_view::{HostState, link_state, link_view};
    let mut held = entry(EntryState::Locked);
    held.host_name = Some(mobiwf_proto::NodeName::new("H"));
    let connected = link_view(&link(&held, None, None));
    assert_eq!(connected.word(), "connected");
    assert_eq!(connected.hosts[0].name, "H");
    assert_eq!(connected.locked, 1);
    let shown = link_state(&connected).into_string();
    assert!(shown.contains("host H: connected"), "{shown}");

    // Cut off since 01:00:00 UTC (deliveries failed).
    let cut = link_view(&link(&held, None, Some(3_600_000)));
    assert_eq!(
        cut.hosts[0].state,
        HostState::CutOff {
            since_ms: 3_600_000
        }
    );
    let shown = link_state(&cut).into_string();
    assert!(
        shown.contains(r#"data-link="cut-off""#)
            && shown.contains("cut off since 01:00:00.000 UTC"),
        "{shown}"
    );

    // An action sent and not answered: reconnecting to its host.
    held.entry.pending = Some("complete".to_owned());
    let back = link_view(&link(&held, None, None));
    assert_eq!(back.word(), "reconnecting");
    assert_eq!(back.hosts[0].state, HostState::Reconnecting { waiting: 1 });
    assert!(
        link_state(&back)
            .into_string()
            .contains("reconnecting, 1 action not answered yet")
    );

    // Away: said first, whatever the hosts.
    let away = link_view(&link(&held, Some(7_200_000), Some(3_600_000)));
    assert_eq!(away.word(), "away");
    let shown = link_state(&away).into_string();
    assert!(
        shown.contains("Disconnected since 02:00:00.000 UTC"),
        "{shown}"
    );
}

#[test]
fn the_link_offers_disconnect_while_connected_and_reconnect_while_away() {
    use super::link_view::{Told, link_section, link_view};
    let held = entry(EntryState::Locked);
    let here = link_view(&link(&held, None, None));
    let page = link_section(&here, "tok", None).into_string();
    assert!(
        page.contains(r#"action="/disconnect""#) && !page.contains(r#"action="/reconnect""#),
        "{page}"
    );
    assert!(page.contains(r#"name="csrf" value="tok""#), "{page}");
    assert!(page.contains("take my 1 locked items offline"), "{page}");
    let away = link_view(&link(&held, Some(1), None));
    let told = Told::Refused(MARKUP.to_owned());
    let page = link_section(&away, "tok", Some(&told)).into_string();
    assert!(
        page.contains(r#"action="/reconnect""#) && !page.contains(r#"action="/disconnect""#),
        "{page}"
    );
    assert!(page.contains(ESCAPED) && !page.contains(MARKUP), "{page}");
}

#[test]
fn the_protocol_s_answers_are_told_in_words() {
    use super::link_view::{Told, disconnect_told, link_view, reconnect_told};
    use serde_json::json;
    let refused = disconnect_told(
        409,
        &json!({"error": "alice holds selected item A2", "reason": "selected"}),
    );
    let Told::Refused(why) = refused else {
        panic!("a 409 is a refusal: {refused:?}")
    };
    assert!(
        why.contains("you hold a selected item") && why.contains("alice holds selected item A2"),
        "{why}"
    );
    let Told::Refused(why) =
        disconnect_told(409, &json!({"error": "needs about 9 s", "reason": "time"}))
    else {
        panic!("a 409 is a refusal")
    };
    assert!(
        why.contains("longer than you wait") && why.contains("needs about 9 s"),
        "{why}"
    );
    let done = disconnect_told(
        200,
        &json!({"away": true, "locked": ["A1 of instance 3", "A1 of instance 4"],
                "copied_bytes": 12, "applications": [{"name": "editor", "size_kib": 2}]}),
    );
    let Told::Done(what) = done else {
        panic!("a 200 is done: {done:?}")
    };
    assert!(
        what.contains("2 locked item(s) kept on this device")
            && what.contains("A1 of instance 3, A1 of instance 4")
            && what.contains("12 bytes copied")
            && what.contains("editor (2 KiB)"),
        "{what}"
    );
    let mut done_offline = entry(EntryState::Locked);
    done_offline.entry.pending = Some("complete".to_owned());
    let before = link_view(&link(&done_offline, Some(1), Some(2)));
    let Told::Done(what) = reconnect_told(200, &json!({"away": false}), &before) else {
        panic!("a 200 is done")
    };
    assert!(
        what.contains("1 action of yours done while away")
            && what.contains("Still cut off from 12D3KooWhost"),
        "{what}"
    );
}
