//! Submission, placement and the paper's workflow running to its end.

use super::*;
use mobiwf_proto::Report;

scenarios! {
    fn the_paper_goes_to_the_nodes_named_like_its_partners_and_completes() {
        let mut b = book_with(&[
            node("peerB", "P2", &[1, 3]),
            node("peerA", "P1", &[1, 2, 3]),
        ]);
        let applied = submit(&mut b, PAPER).expect("submit");
        assert_eq!(applied.instance, Some(InstanceId(1)));
        let d = deploys(&applied);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].0.as_str(), d[0].1), ("peerA", 1));
        assert_eq!((d[1].0.as_str(), d[1].1), ("peerB", 2));
        // The documents carry the instance id, the start time and the nodes' libp2p addresses.
        assert!(d[0].2.contains("<workflow id=\"1\">"), "{}", d[0].2);
        assert!(
            d[0].2.contains("<startTime>2007/3/10 16:19:34</startTime>"),
            "{}",
            d[0].2
        );
        assert!(
            d[0].2.contains("<ip>/ip4/127.0.0.1/tcp/1/p2p/peerB</ip>"),
            "{}",
            d[0].2
        );
        assert!(
            d[1].2.contains("<ip>/ip4/127.0.0.1/tcp/1/p2p/peerA</ip>"),
            "{}",
            d[1].2
        );

        for p in [1, 2] {
            b.apply(
                8,
                Input::Delivered {
                    instance: InstanceId(1),
                    partition: PartitionId(p),
                    refused: None,
                },
            )
            .expect("delivered");
        }
        assert_eq!(
            b.instance(InstanceId(1)).expect("instance").state(),
            InstanceState::Running
        );
        let report = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(17, ActivityState::Succeeded),
        });
        let err = b
            .apply(
                9,
                Input::FromNode {
                    peer: NodeId::new("peerB"),
                    message: report.clone(),
                },
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("does not run partition 1"),
            "{err}"
        );
        b.apply(
            9,
            Input::FromNode {
                peer: NodeId::new("peerA"),
                message: report,
            },
        )
        .expect("report");
        let a2 = &b.instance(InstanceId(1)).expect("instance").activities[1];
        assert_eq!(
            (a2.id, a2.state(), a2.node.as_ref().map(NodeName::as_str)),
            (ActivityId(17), ActivityState::Succeeded, Some("P1"))
        );
        result(
            &mut b,
            1,
            1,
            [16, 17, 18]
                .map(|a| record(a, ActivityState::Succeeded))
                .to_vec(),
        );
        assert_eq!(
            b.instance(InstanceId(1)).expect("instance").state(),
            InstanceState::Running
        );
        result(
            &mut b,
            1,
            2,
            [19, 20]
                .map(|a| record(a, ActivityState::Succeeded))
                .to_vec(),
        );
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Succeeded);
        assert_eq!(inst.finished_ms, Some(9));
        assert!(
            inst.activities
                .iter()
                .all(|a| a.state() == ActivityState::Succeeded)
        );
    }

    fn a_failure_that_blocks_fails_the_instance_and_a_released_one_does_not() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut b, PAPER).expect("submit");
        submit(&mut b, PAPER).expect("submit");
        // A2 (17) has contingency 0: its failure releases its successors.
        result(
            &mut b,
            1,
            1,
            vec![
                record(16, ActivityState::Succeeded),
                record(17, ActivityState::Failed),
                record(18, ActivityState::Succeeded),
            ],
        );
        result(
            &mut b,
            1,
            2,
            [19, 20]
                .map(|a| record(a, ActivityState::Succeeded))
                .to_vec(),
        );
        assert_eq!(
            b.instance(InstanceId(1)).expect("instance").state(),
            InstanceState::Succeeded
        );
        // A1 (16) has contingency -1.
        result(
            &mut b,
            2,
            1,
            vec![
                record(16, ActivityState::Failed),
                record(17, ActivityState::Cancelled),
                record(18, ActivityState::Cancelled),
            ],
        );
        result(
            &mut b,
            2,
            2,
            [19, 20]
                .map(|a| record(a, ActivityState::Cancelled))
                .to_vec(),
        );
        assert_eq!(
            b.instance(InstanceId(2)).expect("instance").state(),
            InstanceState::Failed
        );
    }

    fn a_refused_partition_fails_the_instance_with_the_reason() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        submit(&mut b, PAPER).expect("submit");
        b.apply(
            3,
            Input::Delivered {
                instance: InstanceId(1),
                partition: PartitionId(2),
                refused: Some("bad".to_owned()),
            },
        )
        .expect("delivered");
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Failed);
        assert_eq!(inst.detail.as_deref(), Some("partition 2 was refused: bad"));
    }

    fn partners_without_a_node_go_to_nodes_with_the_skills() {
        let mut b = book_with(&[
            node("peerX", "laptop", &[1, 3]),
            node("peerY", "gateway", &[1, 2, 3]),
        ]);
        let d = deploys(&submit(&mut b, PAPER).expect("submit"));
        // Partition 1 needs skills 1 (and its activities' types); partition 2 goes to the other,
        // least loaded node that has its skills.
        assert_eq!(d.len(), 2);
        assert_ne!(d[0].0, d[1].0, "two nodes share the work: {d:?}");
    }

    fn submissions_that_cannot_run_are_refused_with_what_to_do() {
        let mut empty = Book::new();
        let err = submit(&mut empty, PAPER).unwrap_err();
        assert!(err.to_string().contains("no node is registered"), "{err}");

        let mut b = book_with(&[node("peerX", "laptop", &[2])]);
        let err = submit(&mut b, PAPER).unwrap_err();
        assert!(err.to_string().contains("needs skills [1]"), "{err}");
        assert!(
            err.to_string().contains("mobiwf-node run --name P1"),
            "{err}"
        );

        let err = submit(
            &mut b,
            "<workflow id=\"1\"><activities><activity id=\"x\"/></activities></workflow>",
        )
        .unwrap_err();
        assert!(err.to_string().starts_with("wf.xml:1:"), "{err}");
        assert_eq!(b.instances().count(), 0);
    }

    fn a_workflow_without_partitions_is_partitioned_with_few_crossing_edges() {
        let start = PAPER.find("<partitions>").expect("partitions");
        let end = PAPER.find("</partners>").expect("partners") + "</partners>".len();
        let bare = format!("{}{}", &PAPER[..start], &PAPER[end..]);
        let mut b = book_with(&[
            node("peerA", "a", &[1, 2, 3]),
            node("peerB", "b", &[1, 2, 3]),
        ]);
        let d = deploys(&submit(&mut b, &bare).expect("submit"));
        // A chain whose nodes can all do everything stays on one node: no edge crosses.
        assert_eq!(d.len(), 1, "{d:?}");
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert!(
            inst.activities
                .iter()
                .all(|a| a.node.as_ref().map(NodeName::as_str) == Some("a"))
        );
    }

    fn reports_about_unknown_instances_are_refused() {
        let mut b = Book::new();
        let err = b
            .apply(
                1,
                Input::FromNode {
                    peer: NodeId::new("x"),
                    message: Message::Report(Report {
                        instance: InstanceId(7),
                        partition: PartitionId(1),
                        record: record(1, ActivityState::Succeeded),
                    }),
                },
            )
            .unwrap_err();
        assert_eq!(err, BookError::UnknownInstance(InstanceId(7)));
    }

    fn times_are_written_as_the_paper_writes_them() {
        assert_eq!(format_time(0), "1970/1/1 00:00:00");
        assert_eq!(format_time(1_173_543_574_000), "2007/3/10 16:19:34");
        assert_eq!(format_time(951_782_400_000), "2000/2/29 00:00:00");
    }

    fn a_late_old_registration_does_not_replace_a_newer_one() {
        let mut b = Book::new();
        let mut new = node("peerA", "P1", &[1]);
        new.seq = 5;
        b.apply(1, Input::Register(new)).expect("register");
        let mut old = node("peerA", "old-name", &[9]);
        old.seq = 2;
        b.apply(2, Input::Register(old)).expect("register");
        let n: Vec<&NodeInfo> = b.nodes().collect();
        assert_eq!((n[0].name.as_str(), n[0].seq), ("P1", 5));
    }

    fn a_partition_given_up_before_its_node_acknowledged_it_does_not_keep_the_instance_deploying() {
        let mut b = three_nodes();
        submit(&mut b, &chain(0)).expect("submit");
        let delivered = Input::Delivered {
            instance: InstanceId(1),
            partition: PartitionId(2),
            refused: None,
        };
        b.apply(T0 + 500, delivered).expect("delivered");
        assert_eq!(state_of(&b), InstanceState::Deploying);
        // P1 never acknowledged partition 1, and never will.
        suspect(&mut b, T0 + 1000, "peerA");
        assert_eq!(state_of(&b), InstanceState::Running);
    }

    fn a_definition_submitted_again_is_placed_as_the_first_time_and_bad_ones_still_say_why() {
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2, 3]),
            node("peerB", "P2", &[1, 3]),
        ]);
        let first = deploys(&submit(&mut b, PAPER).expect("first"));
        let again = deploys(&submit(&mut b, PAPER).expect("again"));
        assert_eq!(first.len(), again.len());
        for (f, a) in first.iter().zip(&again) {
            assert_eq!((&f.0, f.1), (&a.0, a.1));
            assert_eq!(
                f.2.replace("<workflow id=\"1\">", "<workflow id=\"2\">"),
                a.2
            );
        }
        let broken = PAPER.replace(
            "<preconditionId>16</preconditionId>",
            "<preconditionId>99</preconditionId>",
        );
        for _ in 0..2 {
            let err = submit(&mut b, &broken).expect_err("unknown precondition");
            assert!(err.to_string().contains("wf.xml:"), "{err}");
        }
    }
}
