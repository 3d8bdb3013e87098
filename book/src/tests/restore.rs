//! A book rebuilt from its stored changes, and what the failure detector watches.

use super::*;

/// The definitions as the controller reads them back after a restart: parsed again from the
/// XML it keeps.
pub(super) fn parsed(
    definitions: &[(InstanceId, Vec<u8>)],
) -> Vec<(
    InstanceId,
    std::sync::Arc<mobiwf_xml_schema::WorkflowDefinition>,
)> {
    definitions
        .iter()
        .map(|(id, xml)| {
            let def = mobiwf_xml_schema::load_definition(xml).expect("definition");
            (*id, std::sync::Arc::new(def.value))
        })
        .collect()
}

/// The book rebuilt from `changes` as the controller does after a restart: instances through
/// their JSON, definitions parsed again, the history's events, the people side through its
/// JSON.
pub(super) fn rebuilt(changes: Changes) -> Book {
    let json = serde_json::to_string(&changes.instances).expect("ser");
    let instances: Vec<Instance> = serde_json::from_str(&json).expect("de");
    let definitions = parsed(&changes.definitions);
    let events = changes
        .history
        .iter()
        .map(|(id, _, e)| (*id, e.clone()))
        .collect();
    let book = Book::restore(
        changes.nodes,
        instances,
        definitions,
        History::restore(events),
        changes.last_instance,
    );
    match changes.people {
        Some(people) => {
            let json = serde_json::to_string(&people).expect("ser");
            let people: PeopleRecord = serde_json::from_str(&json).expect("de");
            let directory = people.directory().expect("stored directory");
            book.with_people(directory, people.last_request)
        }
        None => book,
    }
}

scenarios! {
    fn changes_restore_the_same_book() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut b, PAPER).expect("submit");
        let changes = b.take_changes();
        let restored = rebuilt(changes);
        assert_eq!(restored.history(InstanceId(1)), b.history(InstanceId(1)));
        assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
        assert_eq!(restored.directory(), b.directory());
        assert_eq!(restored.directory().devices.len(), 2);
        let mut restored = restored;
        assert_eq!(
            submit(&mut restored, PAPER).expect("submit").instance,
            Some(InstanceId(2))
        );
        assert!(b.take_changes().instances.is_empty());
    }

    fn a_book_restored_from_its_changes_is_the_same_and_still_places_contingency_activities() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        suspect(&mut b, T0 + 1000, "peerB");
        let changes = b.take_changes();
        let mut restored = rebuilt(changes);
        assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
        assert_eq!(restored.history(InstanceId(1)), b.history(InstanceId(1)));
        assert_eq!(restored.watched(), b.watched());
        let applied = report_failure(&mut restored, T0 + 2000, 1, 1, "peerA");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1, "{:?}", sent(&applied));
        assert_eq!(
            d[0].0, "peerC",
            "not on P1 where 1 failed, nor on suspected P2"
        );
    }

    fn the_failure_detector_watches_nodes_with_unfinished_partitions_and_suspected_ones() {
        let mut b = three_nodes();
        let peers = |b: &Book| -> Vec<(String, bool)> {
            b.watched()
                .into_iter()
                .map(|w| (w.peer.to_string(), w.suspected))
                .collect()
        };
        assert!(peers(&b).is_empty());
        submit(&mut b, &chain(-1)).expect("submit");
        assert_eq!(
            peers(&b),
            vec![("peerA".to_owned(), false), ("peerB".to_owned(), false)]
        );
        partition_result(
            &mut b,
            T0 + 1000,
            2,
            vec![record(2, ActivityState::Succeeded)],
        );
        assert_eq!(peers(&b), vec![("peerA".to_owned(), false)]);
        suspect(&mut b, T0 + 2000, "peerC");
        assert_eq!(
            peers(&b),
            vec![("peerA".to_owned(), false), ("peerC".to_owned(), true)]
        );
        b.apply(
            T0 + 3000,
            Input::Answering {
                peer: NodeId::new("peerC"),
            },
        )
        .expect("answering");
        assert_eq!(peers(&b), vec![("peerA".to_owned(), false)]);
    }
}
