//! The synchronization manager through the book: a definition naming an unknown class is
//! refused; requests granted, waiting and refused with their messages to the node running
//! the partition and their history; who may ask; the releases the controller makes itself
//! (an instance cancelled, a partition given up on a suspected node, an activity decided
//! failed); the class document's changes; a restart keeps holders and waiters.

use super::*;
use crate::history::Event;
use mobiwf_proto::{BeginSync, EndSync, SyncGranted, SyncRefused, SyncTicket};
use mobiwf_xml_schema::{ClassDocument, ClassName};

const CLASSES: &str = r#"<classes>
  <class id="press"><conflicts>press drill</conflicts><maxWait>10</maxWait></class>
  <class id="drill"/>
</classes>"#;

/// `xml` with activity `id`'s class set to `class`.
fn classed(xml: &str, classes: &[(u64, &str)]) -> String {
    let mut xml = xml.to_owned();
    for (id, class) in classes {
        let name = format!("<nameActivity>N{id}</nameActivity>");
        xml = xml.replace(&name, &format!("{name}<class>{class}</class>"));
    }
    xml
}

/// Activities 1 (press), 2 (press) and 3 (drill), unordered, all in partition 1 on P1.
fn shop() -> String {
    let acts = [act(1, -1, &[]), act(2, -1, &[]), act(3, -1, &[])];
    classed(
        &wf(&acts, &[(1, 1, 0, &[1, 2, 3])]),
        &[(1, "press"), (2, "press"), (3, "drill")],
    )
}

/// One press activity (1) in partition 1 on partner `partner`.
pub(super) fn one_press(partner: u64) -> String {
    classed(
        &wf(&[act(1, -1, &[])], &[(1, partner, 0, &[1])]),
        &[(1, "press")],
    )
}

fn apply_classes(b: &mut Book, text: &str) -> Result<Applied, BookError> {
    let classes = mobiwf_xml_schema::load_classes(text.as_bytes())
        .expect("valid classes")
        .value;
    b.apply(
        T0,
        Input::Classes {
            document: text.to_owned(),
            classes,
        },
    )
}

/// P1 (peerA) and P2 (peerB), the classes applied.
pub(super) fn plant() -> Book {
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    apply_classes(&mut b, CLASSES).expect("classes");
    b
}

pub(super) fn ticket(instance: u64, activity: u64, round: u32) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        round,
    }
}

pub(super) fn ask(b: &mut Book, at: u64, peer: &str, t: SyncTicket, class: &str) -> Applied {
    let message = Message::BeginSync(BeginSync {
        ticket: t,
        class: Some(ClassName::from(class)),
        pass: mobiwf_proto::Pass::FIRST,
    });
    from_node(b, at, peer, message)
}

pub(super) fn release(b: &mut Book, at: u64, peer: &str, t: SyncTicket) -> Applied {
    from_node(b, at, peer, Message::EndSync(EndSync { ticket: t }))
}

/// The grants among the messages: (to, ticket).
pub(super) fn grants(applied: &Applied) -> Vec<(String, SyncTicket)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::SyncGranted(SyncGranted { ticket, lease_ms }) => {
                assert_eq!(lease_ms, crate::DEFAULT_LEASE_MS);
                Some((to, ticket))
            }
            _ => None,
        })
        .collect()
}

/// The refusals among the messages: (to, ticket, detail).
fn refusals(applied: &Applied) -> Vec<(String, SyncTicket, String)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::SyncRefused(SyncRefused { ticket, detail }) => Some((to, ticket, detail)),
            _ => None,
        })
        .collect()
}

pub(super) fn holders(b: &Book) -> Vec<SyncTicket> {
    b.sync_state().holders.iter().map(|e| e.ticket).collect()
}

fn waiters(b: &Book) -> Vec<SyncTicket> {
    b.sync_state().waiters.iter().map(|e| e.ticket).collect()
}

/// The synchronization events of instance `id`'s history, as (activity, kind).
pub(super) fn sync_events(b: &Book, id: u64) -> Vec<(u64, &'static str)> {
    b.history(InstanceId(id))
        .unwrap_or_default()
        .iter()
        .filter_map(|e| {
            let kind = match &e.what {
                Event::SyncWaiting { .. } => "waiting",
                Event::SyncGranted { .. } => "granted",
                Event::SyncRefused { .. } => "refused",
                Event::SyncReleased { .. } => "released",
                _ => return None,
            };
            Some((e.activity.map_or(0, |a| a.0), kind))
        })
        .collect()
}

scenarios! {
    fn a_definition_naming_a_class_the_controller_does_not_have_is_refused() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2])]);
        let err = submit(&mut b, &shop()).expect_err("no class document yet");
        let text = err.to_string();
        assert!(text.contains("activity 1 names class press"), "{text}");
        assert!(text.contains("activity 3 names class drill"), "{text}");
        assert!(text.contains("mobiwf-controller classes apply FILE"), "{text}");
        assert!(b.instance(InstanceId(1)).is_none());
        apply_classes(&mut b, CLASSES).expect("classes");
        submit(&mut b, &shop()).expect("now it is known");
    }

    fn requests_are_granted_wait_and_are_granted_in_turn_when_released() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        let first = ask(&mut b, T0 + 1, "peerA", ticket(1, 1, 0), "press");
        assert_eq!(grants(&first), [("peerA".to_owned(), ticket(1, 1, 0))]);
        // A second press and a drill wait; the same request again is granted again.
        assert!(grants(&ask(&mut b, T0 + 2, "peerA", ticket(1, 2, 0), "press")).is_empty());
        assert!(grants(&ask(&mut b, T0 + 3, "peerA", ticket(1, 3, 0), "drill")).is_empty());
        let again = ask(&mut b, T0 + 4, "peerA", ticket(1, 1, 0), "press");
        assert_eq!(grants(&again), [("peerA".to_owned(), ticket(1, 1, 0))]);
        assert_eq!(waiters(&b), [ticket(1, 2, 0), ticket(1, 3, 0)]);
        // An older round's release frees nothing.
        let stale = release(&mut b, T0 + 5, "peerA", ticket(1, 1, 7));
        assert!(grants(&stale).is_empty());
        assert_eq!(holders(&b), [ticket(1, 1, 0)]);
        // The press ends: the second press (first in line) goes; the drill still waits.
        let next = release(&mut b, T0 + 6, "peerA", ticket(1, 1, 0));
        assert_eq!(grants(&next), [("peerA".to_owned(), ticket(1, 2, 0))]);
        assert_eq!(waiters(&b), [ticket(1, 3, 0)]);
        let last = release(&mut b, T0 + 7, "peerA", ticket(1, 2, 0));
        assert_eq!(grants(&last), [("peerA".to_owned(), ticket(1, 3, 0))]);
        assert_eq!(
            sync_events(&b, 1),
            [
                (1, "granted"),
                (2, "waiting"),
                (3, "waiting"),
                (1, "released"),
                (2, "granted"),
                (2, "released"),
                (3, "granted"),
            ]
        );
        let Some(Event::SyncWaiting { behind, .. }) = b
            .history(InstanceId(1))
            .and_then(|h| h.iter().find(|e| e.activity == Some(ActivityId(3))))
            .map(|e| e.what.clone())
        else {
            panic!("the drill's wait is in the history");
        };
        assert_eq!(behind.len(), 2, "behind the holder and the earlier press: {behind:?}");
    }

    fn only_the_node_running_the_partition_asks_and_only_for_its_class() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        let from = |peer: &str, class: &str| Input::FromNode {
            peer: NodeId::new(peer),
            message: Message::BeginSync(BeginSync {
                ticket: ticket(1, 1, 0),
                class: Some(class.into()),
                pass: mobiwf_proto::Pass::FIRST,
            }),
        };
        let err = b.apply(T0, from("peerB", "press")).expect_err("not its partition");
        assert!(matches!(err, BookError::NotYours { .. }), "{err}");
        let err = b.apply(T0, from("peerA", "drill")).expect_err("not its class");
        assert!(err.to_string().contains("has class press, not class drill"), "{err}");
        let end = Input::FromNode {
            peer: NodeId::new("peerB"),
            message: Message::EndSync(EndSync {
                ticket: ticket(1, 1, 0),
            }),
        };
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        assert!(b.apply(T0, end).is_err(), "another node cannot release it");
        assert_eq!(holders(&b), [ticket(1, 1, 0)]);
    }

    fn a_waiter_past_its_class_wait_is_refused_on_tick_saying_who_held_the_class() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        ask(&mut b, T0 + 1_000, "peerA", ticket(1, 2, 0), "press");
        assert_eq!(b.next_deadline(), Some(T0 + 11_000), "press waits 10 s");
        let early = b.apply(T0 + 10_999, Input::Tick).expect("tick");
        assert!(refusals(&early).is_empty());
        let late = b.apply(T0 + 11_000, Input::Tick).expect("tick");
        let got = refusals(&late);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].0.as_str(), got[0].1), ("peerA", ticket(1, 2, 0)));
        assert_eq!(
            got[0].2,
            "synchronization failed: waited 10 s for class press, held by instance 1's N1 (1) \
             (class press)"
        );
        assert!(waiters(&b).is_empty());
        assert_eq!(sync_events(&b, 1).last(), Some(&(2, "refused")));
    }

    fn a_cancelled_instance_releases_its_holds_once_its_node_stopped_them_and_another_is_granted()
    {
        let mut b = plant();
        submit(&mut b, &one_press(1)).expect("first");
        submit(&mut b, &one_press(2)).expect("second");
        submit(&mut b, &one_press(2)).expect("third");
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        ask(&mut b, T0, "peerB", ticket(2, 1, 0), "press");
        ask(&mut b, T0, "peerB", ticket(3, 1, 0), "press");
        assert_eq!(waiters(&b), [ticket(2, 1, 0), ticket(3, 1, 0)]);
        let cancel = |id| Input::Control {
            instance: InstanceId(id),
            action: Control::Cancel,
        };
        // A waiter of a cancelled instance leaves at once: nothing runs under a wait.
        b.apply(T0 + 3, cancel(3)).expect("cancel the third");
        assert_eq!(waiters(&b), [ticket(2, 1, 0)]);
        // The holder's command runs until its node carries the cancel out: the class is
        // held until that node releases it.
        let cancelled = b.apply(T0 + 5, cancel(1)).expect("cancel the first");
        assert!(grants(&cancelled).is_empty(), "{:?}", sent(&cancelled));
        assert_eq!(holders(&b), [ticket(1, 1, 0)]);
        let released = release(&mut b, T0 + 6, "peerA", ticket(1, 1, 0));
        assert_eq!(grants(&released), [("peerB".to_owned(), ticket(2, 1, 0))]);
        assert_eq!(holders(&b), [ticket(2, 1, 0)]);
        assert_eq!(sync_events(&b, 1), [(1, "granted"), (1, "released")]);
    }

    fn a_suspected_holders_partitions_given_up_free_its_class() {
        let mut b = plant();
        submit(&mut b, &one_press(1)).expect("first");
        submit(&mut b, &one_press(2)).expect("second");
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        ask(&mut b, T0, "peerB", ticket(2, 1, 0), "press");
        // Suspected after the waiter's 10 s ran out, but before a tick refused it: freed in
        // the same input, it is granted, not refused.
        let applied = suspect(&mut b, T0 + 20_000 - 1, "peerA");
        assert!(refusals(&applied).is_empty());
        assert_eq!(grants(&applied), [("peerB".to_owned(), ticket(2, 1, 0))]);
        let released = b.history(InstanceId(1)).unwrap_or_default().iter().find_map(|e| {
            match &e.what {
                Event::SyncReleased { why, held, .. } => Some((why.clone(), *held)),
                _ => None,
            }
        });
        let (why, held) = released.expect("released");
        assert!(held);
        assert!(why.contains("node P1 is suspected"), "{why}");
    }

    fn a_request_of_an_activity_the_controller_decided_is_refused() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        report_failure(&mut b, T0, 1, 1, "peerA");
        let applied = ask(&mut b, T0 + 1, "peerA", ticket(1, 1, 0), "press");
        let got = refusals(&applied);
        assert_eq!(got.len(), 1, "{:?}", sent(&applied));
        assert!(got[0].2.contains("the activity is failed"), "{}", got[0].2);
        assert!(holders(&b).is_empty());
    }

    fn a_class_document_leaving_out_a_class_in_use_is_refused_and_a_wider_one_grants() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        let err = apply_classes(&mut b, r#"<classes><class id="press"/></classes>"#)
            .expect_err("drill is named by instance 1");
        assert!(err.to_string().contains("names class drill"), "{err}");
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        ask(&mut b, T0, "peerA", ticket(1, 3, 0), "drill");
        assert_eq!(waiters(&b), [ticket(1, 3, 0)]);
        // Press and drill no longer conflict: the drill is granted at once.
        let looser = r#"<classes><class id="press"><conflicts>press</conflicts></class>
            <class id="drill"/></classes>"#;
        let applied = apply_classes(&mut b, looser).expect("applied");
        assert_eq!(grants(&applied), [("peerA".to_owned(), ticket(1, 3, 0))]);
        assert_eq!(b.classes().classes.len(), 2);
    }

    fn holders_and_waiters_survive_a_restart() {
        let mut b = plant();
        submit(&mut b, &shop()).expect("submitted");
        ask(&mut b, T0, "peerA", ticket(1, 1, 0), "press");
        ask(&mut b, T0 + 1, "peerA", ticket(1, 2, 0), "press");
        let changes = b.take_changes();
        let classes = changes.classes.clone().expect("the document is stored");
        let state = changes.sync.clone().expect("the manager is stored");
        // Stored as JSON and read back, as the controller's store does.
        let state: SyncRecord =
            serde_json::from_slice(&serde_json::to_vec(&state).expect("encode")).expect("decode");
        let nodes: Vec<NodeInfo> = b.nodes().cloned().collect();
        let instances: Vec<Instance> = b.instances().cloned().collect();
        let def = Arc::new(
            mobiwf_xml_schema::load_definition(shop().as_bytes())
                .expect("valid")
                .value,
        );
        let parsed: ClassDocument = classes.classes().expect("reads back");
        let mut again = Book::restore(
            nodes,
            instances,
            vec![(InstanceId(1), def)],
            History::default(),
            InstanceId(1),
        )
        .with_sync(classes, parsed, state);
        assert_eq!(holders(&again), [ticket(1, 1, 0)]);
        assert_eq!(waiters(&again), [ticket(1, 2, 0)]);
        assert!(again.take_changes().sync.is_none(), "nothing changed yet");
        let next = release(&mut again, T0 + 2, "peerA", ticket(1, 1, 0));
        assert_eq!(grants(&next), [("peerA".to_owned(), ticket(1, 2, 0))]);
        let view = again.sync_view();
        assert_eq!(view.holders.len(), 1);
        assert_eq!(view.holders[0].name, "N2");
    }
}
