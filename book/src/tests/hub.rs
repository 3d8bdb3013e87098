//! Hub routing (the centralized comparison) against peer-to-peer routing.

use super::*;

const HUB: &str = "/ip4/127.0.0.1/tcp/9/p2p/hub";

scenarios! {
    fn under_hub_routing_every_adjacent_is_the_controller_and_it_relays_notifications() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ])
        .with_routing(Routing::Hub {
            address: HUB.to_owned(),
        });
        let applied = submit(&mut b, PAPER).expect("submit");
        for (_, _, document) in deployed(&applied) {
            let doc = mobiwf_xml_schema::load_partition(document.as_bytes())
                .expect("a valid partition document")
                .value;
            let remote: Vec<String> = doc
                .activities
                .iter()
                .flat_map(|a| a.adjacents.iter())
                .filter(|adj| !doc.activities.iter().any(|a| a.id == adj.id))
                .map(|adj| adj.location.clone())
                .collect();
            assert!(!remote.is_empty(), "{document}");
            assert!(remote.iter().all(|l| l == HUB), "{remote:?}");
        }
        // A2 (17, on P1) finished: its remote successor A4 (19) is on P2, and only P2 hears.
        let notify = |activity| Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(activity), Outcome::Succeeded));
        let relayed = from_node(&mut b, T0, "peerA", notify(17));
        assert_eq!(sent(&relayed), vec![("peerB".to_owned(), notify(17))]);
        // A4 (19, on P2) finished: A3 (18) waits for it on P1.
        let relayed = from_node(&mut b, T0, "peerB", notify(19));
        assert_eq!(sent(&relayed), vec![("peerA".to_owned(), notify(19))]);
        // Only the node that runs an activity speaks for it.
        let refused = b.apply(
            T0,
            Input::FromNode {
                peer: NodeId::new("peerB"),
                message: notify(17),
            },
        );
        assert!(
            matches!(refused, Err(BookError::NotYours { .. })),
            "{refused:?}"
        );
    }

    fn under_peer_to_peer_routing_adjacents_are_the_partners() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        let applied = submit(&mut b, PAPER).expect("submit");
        let documents: String = deployed(&applied).into_iter().map(|d| d.2).collect();
        assert!(!documents.contains(HUB));
        assert!(documents.contains(&addr("peerA")) && documents.contains(&addr("peerB")));
    }

    fn under_hub_routing_a_node_running_both_partitions_is_told_too_and_p2p_refuses_relays() {
        // One node with every skill: it runs P1's partition and P2's.
        let mut b = book_with(&[node("peerA", "P1", &[1, 2, 3])]).with_routing(Routing::Hub {
            address: HUB.to_owned(),
        });
        submit(&mut b, PAPER).expect("submit");
        let notify = Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(17), Outcome::Succeeded));
        // A2 (17) is in partition 1; A4 (19), waiting for it, in partition 2 on the same node.
        let relayed = from_node(&mut b, T0, "peerA", notify.clone());
        assert_eq!(sent(&relayed), vec![("peerA".to_owned(), notify.clone())]);

        let mut p2p = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut p2p, PAPER).expect("submit");
        let refused = p2p.apply(
            T0,
            Input::FromNode {
                peer: NodeId::new("peerA"),
                message: notify,
            },
        );
        assert!(
            matches!(refused, Err(BookError::Unexpected("notify"))),
            "{refused:?}"
        );
    }
}
