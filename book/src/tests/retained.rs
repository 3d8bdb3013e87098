//! Settled instances leave the book and come back on demand: let go once their changes are taken,
//! unknown to inputs until recalled, then exactly as they were, their history numbered on.

use super::*;
use mobiwf_proto::PartitionResult;

/// The book's changes as the store keeps them: each instance as its JSON says.
fn stored(changes: &Changes, id: InstanceId) -> (Instance, Vec<HistoryEvent>) {
    let inst = changes
        .instances
        .iter()
        .find(|i| i.id == id)
        .expect("instance changed");
    let json = serde_json::to_string(inst).expect("ser");
    let events = changes
        .history
        .iter()
        .filter(|(i, _, _)| *i == id)
        .map(|(_, _, e)| e.clone())
        .collect();
    (serde_json::from_str(&json).expect("de"), events)
}

scenarios! {
    fn a_settled_instance_leaves_the_book_and_is_recalled_as_it_was() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut b, PAPER).expect("submit");
        submit(&mut b, PAPER).expect("submit");
        let cancel = |id| Input::Control {
            instance: InstanceId(id),
            action: Control::Cancel,
        };
        b.apply(T0 + 1000, cancel(1)).expect("cancel");
        let changes = b.take_changes();
        let (inst, events) = stored(&changes, InstanceId(1));
        assert!(inst.is_settled());
        assert_eq!(inst.summary().state, InstanceState::Cancelled);
        assert!(inst.summary().settled);
        let before = b.history(InstanceId(1)).expect("history").to_vec();

        // Only the settled one goes; the live one stays.
        let gone = b.evict_settled([InstanceId(1), InstanceId(2)]);
        assert_eq!(gone, vec![InstanceId(1)]);
        assert!(!b.holds(InstanceId(1)) && b.holds(InstanceId(2)));
        assert_eq!(b.resident(), 1);
        assert!(b.instance(InstanceId(1)).is_none());
        assert_eq!(
            b.apply(T0 + 2000, cancel(1)).unwrap_err(),
            BookError::UnknownInstance(InstanceId(1))
        );
        assert_eq!(cancel(1).instance(), Some(InstanceId(1)));
        assert_eq!(Input::Tick.instance(), None);

        // Recalled, it is what it was, and inputs about it apply as before.
        let recall = Input::Recall(Box::new(Recalled {
            instance: inst.clone(),
            definition: Some(PAPER.as_bytes().to_vec()),
            history: events,
        }));
        b.apply(T0 + 2000, recall).expect("recall");
        assert_eq!(b.instance(InstanceId(1)), Some(&inst));
        assert_eq!(b.history(InstanceId(1)), Some(before.as_slice()));
        assert_eq!(
            b.apply(T0 + 2000, cancel(1)).unwrap_err(),
            BookError::NotNow {
                instance: InstanceId(1),
                state: "cancelled",
                action: "cancel",
            }
        );
        // A late word of its node is recorded after the stored events.
        from_node(
            &mut b,
            T0 + 3000,
            "peerA",
            Message::PartitionResult(PartitionResult {
                instance: InstanceId(1),
                partition: PartitionId(1),
                activities: Vec::new(),
            }),
        );
        let changes = b.take_changes();
        let positions: Vec<usize> = changes
            .history
            .iter()
            .filter(|(i, _, _)| *i == InstanceId(1))
            .map(|(_, n, _)| *n)
            .collect();
        assert!(positions.iter().all(|n| *n >= before.len()), "{positions:?}");
        // Once its changes are taken, it goes again.
        assert_eq!(b.evict_settled([InstanceId(1)]), vec![InstanceId(1)]);
        assert_eq!(b.resident(), 1);
    }

    fn an_instance_with_changes_not_taken_is_not_let_go() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut b, PAPER).expect("submit");
        b.apply(
            T0 + 1000,
            Input::Control {
                instance: InstanceId(1),
                action: Control::Cancel,
            },
        )
        .expect("cancel");
        assert!(b.evict_settled([InstanceId(1)]).is_empty());
        b.take_changes();
        assert_eq!(b.evict_settled([InstanceId(1)]), vec![InstanceId(1)]);
    }
}
