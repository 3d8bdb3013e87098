//! Ordering requirements between definitions through the book: the document applied (resolved
//! against the deployed definitions), the ordered tasks marked in the partitions of an
//! instance started by name, and the seed's example both ways: the later instance's task waits
//! for its relative order (status and history say after what), then goes on once the earlier
//! one is final or its instance ended; an ordered task of a class never holds its class while
//! it waits for its order; a restart keeps the waiters and the tickets.

use super::*;
use crate::definitions::Deploy;
use crate::history::Event;
use crate::{Start, Starter};
use mobiwf_proto::{BeginSync, SyncGranted, SyncTicket};

const SEED: &str = include_str!("../../../examples/orderings/seed.xml");
const CLASSES: &str =
    r#"<classes><class id="press"><conflicts>press</conflicts></class></classes>"#;

/// `first` then `second` (its precondition), in one partition on partner `partner`, named
/// as given; `class`: `first`'s task class.
fn two_tasks(partner: u64, [first, second]: [&str; 2], class: Option<&str>) -> String {
    let xml = wf(
        &[act(1, -1, &[]), act(2, -1, &[1])],
        &[(1, partner, 0, &[1, 2])],
    );
    let class = class.map_or(String::new(), |c| format!("<class>{c}</class>"));
    xml.replace(
        "<nameActivity>N1</nameActivity>",
        &format!("<nameActivity>{first}</nameActivity>{class}"),
    )
    .replace(
        "<nameActivity>N2</nameActivity>",
        &format!("<nameActivity>{second}</nameActivity>"),
    )
}

/// P1 (peerA) and P2 (peerB); definitions P1 (T11, T12 on P1) and P2 (T21, T22 on P2, T21
/// of `class`) deployed; the seed ordering applied.
fn seeded(class: Option<&str>) -> Book {
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    if class.is_some() {
        let classes = mobiwf_xml_schema::load_classes(CLASSES.as_bytes()).expect("classes");
        let input = Input::Classes {
            document: CLASSES.to_owned(),
            classes: classes.value,
        };
        b.apply(T0, input).expect("classes");
    }
    for (name, partner, tasks, class) in [
        ("P1", 1, ["T11", "T12"], None),
        ("P2", 2, ["T21", "T22"], class),
    ] {
        let deploy = Deploy {
            document: two_tasks(partner, tasks, class).into_bytes(),
            source: format!("{name}.xml"),
            name: Some(name.to_owned()),
        };
        b.deploy_definition(T0, deploy).expect("deployed");
    }
    apply_orderings(&mut b, "seed.xml", SEED).expect("applied");
    b
}

fn apply_orderings(b: &mut Book, source: &str, text: &str) -> Result<Applied, BookError> {
    let input = Input::Orderings {
        source: source.to_owned(),
        document: text.to_owned(),
    };
    b.apply(T0, input)
}

fn start(b: &mut Book, name: &str) -> (u64, Applied) {
    let input = Input::Start(Start {
        name: name.into(),
        version: None,
        responsible: None,
        starter: Starter::Anyone,
        inputs: Default::default(),
    });
    let applied = b.apply(T0 + 10, input).expect("started");
    (applied.instance.expect("instance").0, applied)
}

fn ticket(instance: u64, activity: u64) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        round: 0,
    }
}

fn ask(b: &mut Book, at: u64, peer: &str, t: SyncTicket, class: Option<&str>) -> Applied {
    let class = class.map(Into::into);
    from_node(
        b,
        at,
        peer,
        Message::BeginSync(BeginSync {
            ticket: t,
            class,
            pass: mobiwf_proto::Pass::FIRST,
        }),
    )
}

fn grants(applied: &Applied) -> Vec<SyncTicket> {
    sent(applied)
        .into_iter()
        .filter_map(|(_, m)| match m {
            Message::SyncGranted(SyncGranted { ticket, .. }) => Some(ticket),
            _ => None,
        })
        .collect()
}

/// A node reports that activity `activity` of `instance` succeeded.
fn succeeded(b: &mut Book, at: u64, peer: &str, instance: u64, activity: u64) -> Applied {
    let message = Message::Report(Report {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        record: record(activity, ActivityState::Succeeded),
    });
    from_node(b, at, peer, message)
}

fn view_of(b: &Book, instance: u64, activity: u64) -> ActivityView {
    let inst = b.instance(InstanceId(instance)).expect("instance");
    let a = inst
        .activities
        .iter()
        .find(|a| a.id == ActivityId(activity));
    a.expect("activity").clone()
}

fn order_events(b: &Book, instance: u64) -> Vec<String> {
    b.history(InstanceId(instance))
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match &e.what {
            Event::OrderWaiting { activity, after } => Some(format!("{} {after}", activity.name)),
            Event::OrderPassed { activity, .. } => Some(format!("{} passed", activity.name)),
            Event::OrderReleased { activity, why } => {
                Some(format!("{} left: {why}", activity.name))
            }
            _ => None,
        })
        .collect()
}

const AFTER_1_T11: &str = "waits for the relative order of its instance: after instance 1's T11";

#[test]
fn the_ordered_tasks_of_an_instance_started_by_name_are_marked_and_tell_their_ends_at_once() {
    let mut b = seeded(None);
    let (i, applied) = start(&mut b, "P1");
    let docs = deployed(&applied);
    assert_eq!(docs.len(), 1);
    let doc = mobiwf_xml_schema::load_partition(docs[0].2.as_bytes())
        .expect("partition")
        .value;
    for a in &doc.activities {
        assert!(a.ordered && a.response_immediate, "{a:?}");
    }
    let inst = b.instance(InstanceId(i)).expect("instance");
    assert_eq!(inst.ordered.len(), 2);
    // Submitted without a name: no part in orderings.
    let applied = submit(&mut b, &two_tasks(1, ["T11", "T12"], None)).expect("submitted");
    let doc = &deployed(&applied)[0].2;
    assert!(!doc.contains("<ordered>"), "{doc}");
}

#[test]
fn the_seed_example_p1_first_then_p2_waits_after_each_paired_task() {
    let mut b = seeded(None);
    let (i, _) = start(&mut b, "P1");
    let (j, _) = start(&mut b, "P2");
    // i asks first: it gets the first ticket and goes on at once, without a lease's class.
    assert_eq!(
        grants(&ask(&mut b, T0 + 20, "peerA", ticket(i, 1), None)),
        vec![ticket(i, 1)]
    );
    // j's T21 waits after i's T11: status and history say so, `sync show` too.
    assert!(grants(&ask(&mut b, T0 + 30, "peerB", ticket(j, 1), None)).is_empty());
    let t21 = view_of(&b, j, 1);
    assert_eq!(t21.state(), ActivityState::Synchronizing);
    assert_eq!(t21.detail.as_deref(), Some(AFTER_1_T11));
    assert_eq!(order_events(&b, j), vec![format!("T21 {AFTER_1_T11}")]);
    let view = b.sync_view();
    assert_eq!(view.ordered.len(), 1);
    assert_eq!(
        view.ordered[0].after,
        vec!["after instance 1's T11".to_owned()]
    );
    assert!(view.holders.is_empty() && view.waiters.is_empty());

    // i's T11 ends: j's T21 is granted, its words leave its status.
    let applied = succeeded(&mut b, T0 + 40, "peerA", i, 1);
    assert_eq!(grants(&applied), vec![ticket(j, 1)]);
    assert_eq!(view_of(&b, j, 1).detail, None);
    assert!(b.sync_view().ordered.is_empty());
    // i's T12 asks and goes on; j's T22 waits after it, until it ends.
    assert_eq!(
        grants(&ask(&mut b, T0 + 50, "peerA", ticket(i, 2), None)),
        vec![ticket(i, 2)]
    );
    assert!(grants(&ask(&mut b, T0 + 60, "peerB", ticket(j, 2), None)).is_empty());
    assert_eq!(
        grants(&succeeded(&mut b, T0 + 70, "peerA", i, 2)),
        vec![ticket(j, 2)]
    );
    assert_eq!(
        order_events(&b, j),
        vec![
            format!("T21 {AFTER_1_T11}"),
            "T21 passed".to_owned(),
            "T22 waits for the relative order of its instance: after instance 1's T12".to_owned(),
            "T22 passed".to_owned(),
        ]
    );
    assert!(order_events(&b, i).is_empty());
}

#[test]
fn the_seed_example_p2_first_then_p1_waits_and_an_ended_instance_frees_it() {
    let mut b = seeded(None);
    let (i, _) = start(&mut b, "P1");
    let (j, _) = start(&mut b, "P2");
    assert_eq!(
        grants(&ask(&mut b, T0 + 20, "peerB", ticket(j, 1), None)),
        vec![ticket(j, 1)]
    );
    assert!(grants(&ask(&mut b, T0 + 30, "peerA", ticket(i, 1), None)).is_empty());
    let words = format!("waits for the relative order of its instance: after instance {j}'s T21");
    assert_eq!(view_of(&b, i, 1).detail.as_deref(), Some(words.as_str()));
    // The earlier instance is cancelled: its ticket goes, and the wait ends with it.
    let cancel = Input::Control {
        instance: InstanceId(j),
        action: Control::Cancel,
    };
    let applied = b.apply(T0 + 40, cancel).expect("cancelled");
    assert_eq!(grants(&applied), vec![ticket(i, 1)]);
    assert!(b.sync_view().ordered.is_empty());
    assert!(b.ordering_tickets().held.keys().all(|k| k.0 == i));
}

#[test]
fn an_ordered_task_of_a_class_waits_for_its_order_first_then_for_its_class() {
    let mut b = seeded(Some("press"));
    let (i, _) = start(&mut b, "P1");
    let (j, _) = start(&mut b, "P2");
    let (k, _) = start(&mut b, "P2");
    ask(&mut b, T0 + 20, "peerA", ticket(i, 1), None);
    // k's and j's T21 (press) both wait after i's T11, and hold or wait for no class meanwhile.
    ask(&mut b, T0 + 25, "peerB", ticket(k, 1), Some("press"));
    ask(&mut b, T0 + 30, "peerB", ticket(j, 1), Some("press"));
    let state = b.sync_state();
    assert!(
        state.holders.is_empty() && state.waiters.is_empty(),
        "{state:?}"
    );
    assert_eq!(state.ordered.len(), 2);
    // i's T11 ends: both pass their order, in arrival order: k holds press, j waits for it
    // behind k (two instances of one definition are not ordered between themselves).
    let applied = succeeded(&mut b, T0 + 40, "peerA", i, 1);
    assert_eq!(grants(&applied), vec![ticket(k, 1)]);
    let state = b.sync_state();
    assert_eq!(
        state.holders.iter().map(|h| h.ticket).collect::<Vec<_>>(),
        vec![ticket(k, 1)]
    );
    assert_eq!(
        state.waiters.iter().map(|w| w.ticket).collect::<Vec<_>>(),
        vec![ticket(j, 1)]
    );
    assert!(state.ordered.is_empty());
    // k's T21 ends and its node releases press (a hold ends only by its node's word or
    // suspicion): j's T21 is granted press.
    assert!(grants(&succeeded(&mut b, T0 + 50, "peerB", k, 1)).is_empty());
    let release = Message::EndSync(mobiwf_proto::EndSync {
        ticket: ticket(k, 1),
    });
    assert_eq!(
        grants(&from_node(&mut b, T0 + 51, "peerB", release)),
        vec![ticket(j, 1)]
    );
}

#[test]
fn a_document_is_resolved_against_the_deployed_definitions_with_every_problem_where_it_is() {
    let mut b = seeded(None);
    let bad = "WORKFLOW_DEFINITIONS P1 : P3;\nRELATIVE_ORDER {\n    T13 : T21;\n}\n";
    let err = apply_orderings(&mut b, "bad.pdl", bad)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("bad.pdl:1:"), "{err}");
    assert!(
        err.contains("no definition is deployed under the name P3"),
        "{err}"
    );
    assert!(err.contains("bad.pdl:3:"), "{err}");
    // The document in force is unchanged.
    assert_eq!(b.orderings_record().source, "seed.xml");
    let pdl = include_str!("../../../examples/orderings/seed.pdl");
    apply_orderings(&mut b, "seed.pdl", pdl).expect("applied");
    assert_eq!(b.orderings().orderings.len(), 1);
    assert_eq!(
        b.take_changes().orderings.map(|r| r.source),
        Some("seed.pdl".to_owned())
    );
}

#[test]
fn the_ordering_waiters_and_tickets_are_stored_with_the_manager_and_old_states_load() {
    let mut b = seeded(None);
    let (i, _) = start(&mut b, "P1");
    let (j, _) = start(&mut b, "P2");
    ask(&mut b, T0 + 20, "peerA", ticket(i, 1), None);
    ask(&mut b, T0 + 30, "peerB", ticket(j, 1), None);
    let changes = b.take_changes();
    let sync = changes.sync.expect("sync changed");
    // Through JSON, as the store keeps it.
    let json = serde_json::to_string(&sync).expect("encoded");
    let back: SyncRecord = serde_json::from_str(&json).expect("decoded");
    assert_eq!(back.ordered.len(), 1);
    assert_eq!(back.tickets.held.len(), 2);
    // A state stored before orderings loads with none.
    let old: SyncRecord = serde_json::from_str(r#"{"holders":[],"waiters":[]}"#).expect("old");
    assert!(old.ordered.is_empty() && old.tickets == crate::ordering::Tickets::default());
}
