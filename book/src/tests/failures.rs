//! Failure handling: suspected partners, contingency activities, late words.

use super::*;
use mobiwf_proto::{Location, Report, Substitute, Withdraw};

/// Like `chain(9)`, but contingency activity 9 has its own contingency activity 8.
fn chain_of_contingencies() -> String {
    wf(
        &[act(1, 9, &[]), act(2, -1, &[1]), spare(9, 8), spare(8, -1)],
        &[(1, 1, 0, &[1]), (2, 2, 0, &[2])],
    )
}

scenarios! {
    fn a_given_up_activity_its_node_said_started_fails_rather_than_being_cancelled() {
        let mut b = three_nodes();
        let xml = wf(
            &[act(1, -1, &[]), act(2, -1, &[1]), act(3, -1, &[2])],
            &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3])],
        );
        submit(&mut b, &xml).expect("submit");
        // P1 said A2 started (so A1's end let it start, though that word did not come).
        let started = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(2, ActivityState::Running),
        });
        from_node(&mut b, T0 + 500, "peerA", started);
        assert_eq!(activity(&b, 2).state(), ActivityState::Running);
        suspect(&mut b, T0 + 1000, "peerA");
        let a2 = activity(&b, 2);
        assert_eq!((a2.state(), a2.detail.as_deref()), (ActivityState::Failed, Some(WHY)));
    }

    fn a_suspected_nodes_unfinished_partitions_are_abandoned_and_withdrawn_from_it() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert_eq!(partition_view(&b, 1).abandoned(), Some(WHY));
        assert_eq!(partition_view(&b, 2).abandoned(), None);
        let a1 = activity(&b, 1);
        assert_eq!(
            (a1.state(), a1.detail.as_deref()),
            (ActivityState::Failed, Some(WHY))
        );
        assert_eq!(
            sent(&applied),
            vec![
                (
                    "peerA".to_owned(),
                    Message::Withdraw(Withdraw {
                        instance: InstanceId(1),
                        partition: PartitionId(1),
                        activities: vec![ActivityId(1)],
                        reason: WHY.to_owned(),
                        passes: std::collections::BTreeMap::new(),
                    })
                ),
                // Contingency -1: the successor elsewhere is blocked.
                (
                    "peerB".to_owned(),
                    Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(1), Outcome::Blocked))
                ),
            ]
        );
        let story = story(&b);
        let given_up = Event::GivenUp {
            partition: PartitionId(1),
            reason: WHY.to_owned(),
        };
        assert!(story.contains(&given_up), "{story:?}");
        let failed = Event::Decided {
            activity: l(1),
            state: ActivityState::Failed,
            reason: WHY.to_owned(),
        };
        assert!(story.contains(&failed), "{story:?}");
        // Suspected twice: nothing more happens.
        assert!(sent(&suspect(&mut b, T0 + 2000, "peerA")).is_empty());
    }

    fn a_suspected_nodes_activity_with_contingency_zero_releases_its_successors_elsewhere() {
        let mut b = three_nodes();
        submit(&mut b, &chain(0)).expect("submit");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert!(sent(&applied).contains(&(
            "peerB".to_owned(),
            Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(1), Outcome::Released))
        )));
        partition_result(
            &mut b,
            T0 + 2000,
            2,
            vec![record(2, ActivityState::Succeeded)],
        );
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_suspected_nodes_activity_with_a_contingency_runs_it_on_another_node_with_the_skill() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        // peerB has partition 2 to run; spare (peerC) has nothing: it gets partition 3.
        let d = deployed(&applied);
        assert_eq!(d.len(), 1, "{d:?}");
        let (to, partition, document) = &d[0];
        assert_eq!((to.as_str(), *partition), ("peerC", 3));
        let doc = mobiwf_xml_schema::load_partition(document.as_bytes())
            .expect("a valid partition document")
            .value;
        assert_eq!(doc.workflow_id.0, 1);
        assert_eq!(doc.activities.len(), 1);
        let x = &doc.activities[0];
        assert_eq!(x.id.0, 9);
        assert!(x.response_immediate);
        assert_eq!(
            x.adjacents
                .iter()
                .map(|a| (a.id.0, a.location.clone()))
                .collect::<Vec<_>>(),
            vec![(2, addr("peerB"))]
        );
        assert!(sent(&applied).contains(&(
            "peerB".to_owned(),
            Message::Substitute(Substitute {
                instance: InstanceId(1),
                replaced: ActivityId(1),
                by: ActivityId(9),
                location: Location::parse(addr("peerC")).unwrap(),
            })
        )));
        assert!(
            !sent(&applied)
                .iter()
                .any(|(_, m)| matches!(m, Message::Notify(_))),
            "the successors wait for activity 9"
        );
        let (a1, a9) = (activity(&b, 1), activity(&b, 9));
        assert_eq!(a1.replaced_by(), Some(ActivityId(9)));
        assert_eq!(
            (
                a9.partition,
                a9.node.as_ref().map(NodeName::as_str),
                a9.stands_for
            ),
            (Some(PartitionId(3)), Some("spare"), Some(ActivityId(1)))
        );
        assert_eq!(partition_view(&b, 3).stands_for, Some(ActivityId(1)));

        partition_result(
            &mut b,
            T0 + 2000,
            2,
            vec![record(2, ActivityState::Succeeded)],
        );
        assert!(!state_of(&b).is_final(), "activity 9 runs");
        partition_result(
            &mut b,
            T0 + 3000,
            3,
            vec![record(9, ActivityState::Succeeded)],
        );
        assert_eq!(state_of(&b), InstanceState::Succeeded);
        let story = story(&b);
        let ended = |e: &Event, id: u64, how: ActivityState| matches!(e, Event::Ended { activity, state, .. } if activity.id == ActivityId(id) && *state == how);
        type Step<'a> = (&'a str, &'a dyn Fn(&Event) -> bool);
        let steps: [Step; 8] = [
            ("partition 1 given up", &|e| {
                matches!(
                    e,
                    Event::GivenUp {
                        partition: PartitionId(1),
                        ..
                    }
                )
            }),
            (
                "N1 (1) failed",
                &|e| matches!(e, Event::Decided { activity, state: ActivityState::Failed, .. } if *activity == l(1)),
            ),
            ("N9 runs on spare in place of N1", &|e| {
                *e == Event::ContingencyPlaced {
                    contingency: l(9),
                    on: NodeName::new("spare"),
                    failed: l(1),
                }
            }),
            ("N2 (2) succeeded", &|e| {
                ended(e, 2, ActivityState::Succeeded)
            }),
            ("partition 2 finished", &|e| {
                *e == Event::PartitionFinished {
                    partition: PartitionId(2),
                }
            }),
            ("N9 (9) succeeded", &|e| {
                ended(e, 9, ActivityState::Succeeded)
            }),
            ("partition 3 finished", &|e| {
                *e == Event::PartitionFinished {
                    partition: PartitionId(3),
                }
            }),
            ("instance succeeded", &|e| {
                matches!(
                    e,
                    Event::InstanceEnded {
                        state: InstanceState::Succeeded,
                        ..
                    }
                )
            }),
        ];
        for (step, what) in steps {
            assert!(story.iter().any(what), "{step:?} not in {story:?}");
        }
    }

    fn without_a_node_with_the_skill_the_contingency_activity_waits_for_one_to_register() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1])]);
        submit(&mut b, &chain(9)).expect("submit");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert!(deployed(&applied).is_empty());
        let waiting = "waiting for an available partner with skill 2 to run it in place of N1 (1)";
        assert_eq!(activity(&b, 9).detail.as_deref(), Some(waiting));
        let awaiting = Event::AwaitingPartner {
            skill: ActivityTypeId(2),
            failed: l(1),
        };
        assert!(story(&b).contains(&awaiting));
        // Its successor's result does not end the instance: activity 9 has yet to run.
        partition_result(
            &mut b,
            T0 + 2000,
            2,
            vec![record(2, ActivityState::Cancelled)],
        );
        assert!(!state_of(&b).is_final());
        // A node without the skill changes nothing; one with it gets activity 9.
        let applied = b
            .apply(T0 + 3000, Input::Register(node("peerD", "other", &[1])))
            .expect("register");
        assert!(deployed(&applied).is_empty());
        let applied = b
            .apply(T0 + 4000, Input::Register(node("peerC", "spare", &[2])))
            .expect("register");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0.as_str(), d[0].1), ("peerC", 3));
        assert_eq!(activity(&b, 9).detail, None);
    }

    fn a_reported_failure_with_a_contingency_places_it_on_another_node_than_the_failed_ones() {
        // Both nodes have one partition to run; by name P1 would come first, but activity 1
        // failed there.
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        submit(&mut b, &chain(9)).expect("submit");
        let applied = report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].0, "peerB");
        assert_eq!(activity(&b, 1).detail.as_deref(), Some("exit status 1"));
        assert!(sent(&applied).contains(&(
            "peerB".to_owned(),
            Message::Substitute(Substitute {
                instance: InstanceId(1),
                replaced: ActivityId(1),
                by: ActivityId(9),
                location: Location::parse(addr("peerB")).unwrap(),
            })
        )));
        assert!(
            !sent(&applied).iter().any(|(to, _)| to == "peerA"),
            "the failed activity's node is left alone: {:?}",
            sent(&applied)
        );
    }

    fn a_contingency_activity_that_fails_and_blocks_fails_the_instance_with_its_reason() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        partition_result(&mut b, T0 + 1500, 1, vec![failed(1, "exit status 1")]);
        partition_result(&mut b, T0 + 2000, 3, vec![failed(9, "disk full")]);
        assert!(!state_of(&b).is_final(), "activity 2 is not over");
        partition_result(
            &mut b,
            T0 + 3000,
            2,
            vec![record(2, ActivityState::Cancelled)],
        );
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Failed);
        assert_eq!(
            inst.detail.as_deref(),
            Some("N9 (9) on spare failed: disk full")
        );
    }

    fn a_contingency_activity_that_fails_with_its_own_contingency_places_that_one_in_turn() {
        let mut b = three_nodes();
        submit(&mut b, &chain_of_contingencies()).expect("submit");
        report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        assert_eq!(
            activity(&b, 9).node.as_ref().map(NodeName::as_str),
            Some("spare")
        );
        let applied = report_failure(&mut b, T0 + 2000, 9, 3, "peerC");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1, "{:?}", sent(&applied));
        assert_ne!(d[0].0, "peerC", "not where activity 9 failed");
        assert_eq!(d[0].1, 4);
        assert!(
            d[0].2.contains(&format!("<ip>{}</ip>", addr("peerB"))),
            "{}",
            d[0].2
        );
        let location = addr(&d[0].0);
        assert!(sent(&applied).contains(&(
            "peerB".to_owned(),
            Message::Substitute(Substitute {
                instance: InstanceId(1),
                replaced: ActivityId(9),
                by: ActivityId(8),
                location: Location::parse(location).unwrap(),
            })
        )));
        let a8 = activity(&b, 8);
        assert_eq!(
            (a8.partition, a8.stands_for),
            (Some(PartitionId(4)), Some(ActivityId(9)))
        );
        partition_result(&mut b, T0 + 2500, 1, vec![failed(1, "exit status 1")]);
        partition_result(&mut b, T0 + 2600, 3, vec![failed(9, "exit status 1")]);
        partition_result(
            &mut b,
            T0 + 3000,
            4,
            vec![record(8, ActivityState::Succeeded)],
        );
        partition_result(
            &mut b,
            T0 + 4000,
            2,
            vec![record(2, ActivityState::Succeeded)],
        );
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_chained_contingency_activity_waits_for_what_the_one_before_it_waited_for() {
        // 10 (P1) → 1 (P2, contingency 9, then 8) → 2 (P1).
        let def = wf(
            &[
                act(10, -1, &[]),
                act(1, 9, &[10]),
                act(2, -1, &[1]),
                spare(9, 8),
                spare(8, -1),
            ],
            &[(1, 1, 0, &[10, 2]), (2, 2, 0, &[1])],
        );
        let mut b = book_with(&[
            node("peerA", "P1", &[1, 2]),
            node("peerB", "P2", &[1, 2]),
            node("peerC", "spare", &[2]),
            node("peerD", "spare2", &[2]),
        ]);
        submit(&mut b, &def).expect("submit");
        // P2 goes silent before activity 1 could start: activity 9 waits for 10 in its place.
        suspect(&mut b, T0 + 1000, "peerB");
        let a9 = activity(&b, 9);
        assert_eq!(
            (a9.node.as_ref().map(NodeName::as_str), a9.awaits.clone()),
            (Some("spare"), vec![ActivityId(10)])
        );
        // Its node goes silent too, before 10 finished: activity 8 waits for 10 as well.
        let applied = suspect(&mut b, T0 + 2000, "peerC");
        let d = deployed(&applied);
        assert_eq!(d.len(), 1, "{:?}", sent(&applied));
        assert_eq!(d[0].0, "peerD");
        assert!(d[0].2.contains("<precondition id=\"10\">"), "{}", d[0].2);
        assert_eq!(activity(&b, 8).awaits, vec![ActivityId(10)]);
        // When 10 is done, the controller relays it to activity 8's node.
        let applied = from_node(
            &mut b,
            T0 + 3000,
            "peerA",
            Message::Report(Report {
                instance: InstanceId(1),
                partition: PartitionId(1),
                record: record(10, ActivityState::Succeeded),
            }),
        );
        assert_eq!(
            sent(&applied),
            vec![(
                "peerD".to_owned(),
                Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(10), Outcome::Succeeded))
            )]
        );
    }

    fn a_late_success_from_an_abandoned_partition_is_recorded_and_ignored() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        suspect(&mut b, T0 + 1000, "peerA");
        let applied = partition_result(
            &mut b,
            T0 + 5000,
            1,
            vec![record(1, ActivityState::Succeeded)],
        );
        assert!(sent(&applied).is_empty());
        let a1 = activity(&b, 1);
        assert_eq!(
            (a1.state(), a1.detail.as_deref()),
            (ActivityState::Failed, Some(WHY))
        );
        let story = story(&b);
        let late = Event::LateWord {
            activity: l(1),
            state: ActivityState::Succeeded,
            on: Some(NodeName::new("P1")),
            decided: ActivityState::Failed,
            reason: WHY.to_owned(),
        };
        assert!(story.contains(&late), "{story:?}");
        let late_result = Event::LateResult {
            partition: PartitionId(1),
        };
        assert!(story.contains(&late_result), "{story:?}");
    }

    fn a_contingency_activity_whose_node_is_suspected_fails_and_its_own_contingency_applies() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        assert_eq!(
            activity(&b, 9).node.as_ref().map(NodeName::as_str),
            Some("spare")
        );
        let applied = suspect(&mut b, T0 + 2000, "peerC");
        let why = "partner spare stopped answering (no answer to 3 probes)";
        assert_eq!(activity(&b, 9).state(), ActivityState::Failed);
        assert_eq!(partition_view(&b, 3).abandoned(), Some(why));
        // Activity 9 blocks when it fails: activity 2, which waits for it, is told so.
        assert_eq!(
            sent(&applied),
            vec![
                (
                    "peerC".to_owned(),
                    Message::Withdraw(Withdraw {
                        instance: InstanceId(1),
                        partition: PartitionId(3),
                        activities: vec![ActivityId(9)],
                        reason: why.to_owned(),
                        passes: std::collections::BTreeMap::new(),
                    })
                ),
                (
                    "peerB".to_owned(),
                    Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(9), Outcome::Blocked))
                ),
            ]
        );
        partition_result(&mut b, T0 + 3000, 1, vec![failed(1, "exit status 1")]);
        partition_result(
            &mut b,
            T0 + 4000,
            2,
            vec![record(2, ActivityState::Cancelled)],
        );
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Failed);
        assert_eq!(
            inst.detail.as_deref(),
            Some(&*format!("N9 (9) on spare failed: {why}"))
        );
    }

    fn a_given_up_partition_cancels_what_its_blocking_failure_blocks_there_transitively() {
        // P1 runs 1 (-1) → 2 (contingency 0, waits for 1); P2 runs 3 (waits for 2).
        let mut b = three_nodes();
        let xml = wf(
            &[act(1, -1, &[]), act(2, 0, &[1]), act(3, -1, &[2])],
            &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3])],
        );
        submit(&mut b, &xml).expect("submit");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert_eq!(activity(&b, 1).state(), ActivityState::Failed);
        // 2 never started: its predecessor blocks it, so it is cancelled, not failed with its own
        // contingency 0 (which would release 3).
        assert_eq!(activity(&b, 2).state(), ActivityState::Cancelled);
        assert!(sent(&applied).contains(&(
            "peerB".to_owned(),
            Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(2), Outcome::Blocked))
        )));
        partition_result(
            &mut b,
            T0 + 2000,
            2,
            vec![record(3, ActivityState::Cancelled)],
        );
        assert_eq!(state_of(&b), InstanceState::Failed);
    }
}
