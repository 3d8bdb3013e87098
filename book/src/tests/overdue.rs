//! Time: partition `timeOut`s and overdue preconditions.

use super::*;
use crate::lifecycle::{ActivityLifecycle, Undecided};
use mobiwf_proto::{Overdue, Report, Withdraw};

/// Node P2 says that activity 2 waited longer than 10 s for activity 1.
fn overdue_1_for_2(b: &mut Book, now_ms: u64) -> Applied {
    let overdue = Message::Overdue(Overdue {
        instance: InstanceId(1),
        waiting: ActivityId(2),
        precondition: ActivityId(1),
        time_out_secs: 10,
    });
    from_node(b, now_ms, "peerB", overdue)
}

scenarios! {
    fn a_partition_past_its_time_out_is_given_up_at_its_deadline_and_not_before() {
        let mut b = three_nodes();
        let def = wf(
            &[act(1, -1, &[]), act(2, -1, &[1])],
            &[(1, 1, 30, &[1]), (2, 2, 0, &[2])],
        );
        submit(&mut b, &def).expect("submit");
        assert_eq!(b.next_deadline(), Some(T0 + 30_000));
        let early = b.apply(T0 + 29_999, Input::Tick).expect("tick");
        assert!(early.effects.is_empty());
        assert_eq!(partition_view(&b, 1).abandoned(), None);
        let applied = b.apply(T0 + 30_000, Input::Tick).expect("tick");
        let why = "partition 1 did not finish within its timeOut of 30 s";
        assert_eq!(partition_view(&b, 1).abandoned(), Some(why));
        assert_eq!(activity(&b, 1).detail.as_deref(), Some(why));
        assert_eq!(
            sent(&applied)[0],
            (
                "peerA".to_owned(),
                Message::Withdraw(Withdraw {
                    instance: InstanceId(1),
                    partition: PartitionId(1),
                    activities: vec![ActivityId(1)],
                    reason: why.to_owned(),
                    passes: std::collections::BTreeMap::new(),
                })
            )
        );
        assert_eq!(b.next_deadline(), None);
    }

    fn an_overdue_precondition_whose_outcome_is_known_is_sent_again_to_the_waiting_node() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        from_node(
            &mut b,
            T0 + 1000,
            "peerA",
            Message::Report(Report {
                instance: InstanceId(1),
                partition: PartitionId(1),
                record: record(1, ActivityState::Succeeded),
            }),
        );
        let overdue = Message::Overdue(Overdue {
            instance: InstanceId(1),
            waiting: ActivityId(2),
            precondition: ActivityId(1),
            time_out_secs: 10,
        });
        let applied = from_node(&mut b, T0 + 11_000, "peerB", overdue.clone());
        assert_eq!(
            sent(&applied),
            vec![(
                "peerB".to_owned(),
                Message::Notify(mobiwf_proto::Notify::new(InstanceId(1), ActivityId(1), Outcome::Succeeded))
            )]
        );
        assert!(story(&b).iter().any(|e| matches!(
            e,
            Event::Overdue {
                then: OverdueThen::Resent,
                ..
            }
        )));
        // Only the node of the waiting activity may say so.
        let err = b
            .apply(
                T0 + 11_000,
                Input::FromNode {
                    peer: NodeId::new("peerA"),
                    message: overdue,
                },
            )
            .unwrap_err();
        assert!(matches!(err, BookError::NotYours { .. }), "{err}");
    }

    fn an_overdue_precondition_whose_outcome_is_unknown_is_withdrawn_after_a_grace_period() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        let applied = overdue_1_for_2(&mut b, T0 + 11_000);
        assert!(sent(&applied).is_empty(), "its partner may still report it");
        assert_eq!(b.next_deadline(), Some(T0 + 11_000 + OVERDUE_GRACE_MS));
        // Said again before the decision: the deadline stays.
        overdue_1_for_2(&mut b, T0 + 12_000);
        assert_eq!(b.next_deadline(), Some(T0 + 11_000 + OVERDUE_GRACE_MS));
        let early = b.apply(T0 + 12_999, Input::Tick).expect("tick");
        assert!(early.effects.is_empty());
        assert_eq!(activity(&b, 1).state(), ActivityState::NotReady);

        let applied = b.apply(T0 + 13_000, Input::Tick).expect("tick");
        let why = "N2 (2) on P2 waited more than 10 s (its precondition timeOut) for N1 (1)";
        let msgs = sent(&applied);
        assert_eq!(
            msgs[0],
            (
                "peerA".to_owned(),
                Message::Withdraw(Withdraw {
                    instance: InstanceId(1),
                    partition: PartitionId(1),
                    activities: vec![ActivityId(1)],
                    reason: why.to_owned(),
                    passes: std::collections::BTreeMap::new(),
                })
            )
        );
        let a1 = activity(&b, 1);
        assert_eq!(
            (a1.state(), a1.detail.as_deref()),
            (ActivityState::Failed, Some(why))
        );
        // Its contingency applies: activity 9 runs elsewhere.
        assert_eq!(deployed(&applied).len(), 1, "{msgs:?}");
        assert_eq!(
            activity(&b, 9).node.as_ref().map(NodeName::as_str),
            Some("spare")
        );
        assert_eq!(
            partition_view(&b, 1).abandoned(),
            None,
            "only the activity is withdrawn"
        );
        assert_eq!(b.next_deadline(), None);
    }

    fn an_overdue_precondition_its_partner_reports_during_the_grace_period_is_not_withdrawn() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        overdue_1_for_2(&mut b, T0 + 11_000);
        from_node(
            &mut b,
            T0 + 12_000,
            "peerA",
            Message::Report(Report {
                instance: InstanceId(1),
                partition: PartitionId(1),
                record: record(1, ActivityState::Succeeded),
            }),
        );
        let applied = b.apply(T0 + 13_000, Input::Tick).expect("tick");
        assert!(sent(&applied).is_empty(), "{:?}", sent(&applied));
        assert_eq!(activity(&b, 1).state(), ActivityState::Succeeded);
        assert_eq!(b.next_deadline(), None);
    }

    fn an_overdue_precondition_that_failed_is_waited_for_through_its_contingency_activity() {
        let mut b = book_with(&[node("peerA", "P1", &[1]), node("peerB", "P2", &[1])]);
        submit(&mut b, &chain(9)).expect("submit");
        report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        let applied = overdue_1_for_2(&mut b, T0 + 11_000);
        assert!(sent(&applied).is_empty());
        assert!(story(&b).iter().any(|e| matches!(
            e,
            Event::Overdue {
                then: OverdueThen::NotPlacedYet,
                ..
            }
        )));
        let applied = b
            .apply(T0 + 12_000, Input::Register(node("peerC", "spare", &[2])))
            .expect("register");
        assert_eq!(deployed(&applied).len(), 1);
        let applied = overdue_1_for_2(&mut b, T0 + 20_000);
        assert!(sent(&applied).is_empty());
        assert!(
            story(&b).iter().any(|e| matches!(
                e,
                Event::Overdue { precondition, then: OverdueThen::StandIn { by }, .. }
                    if *precondition == l(1) && *by == l(9)
            )),
            "{:?}",
            story(&b)
        );
        assert_eq!(b.next_deadline(), None, "nothing to withdraw");
    }

    fn a_stand_in_withdrawn_before_it_was_asked_for_refuses_its_placement_and_it_is_reported() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        let def = wf(
            &[act(1, 9, &[]), act(2, -1, &[1]), spare(9, 8), spare(8, -1)],
            &[(1, 1, 0, &[1]), (2, 2, 0, &[2])],
        );
        submit(&mut b, &def).expect("submit");
        // P2 waited too long for 9, a stand-in nobody asked for: withdrawn after the grace,
        // 8 in its place.
        let overdue = Message::Overdue(Overdue {
            instance: InstanceId(1),
            waiting: ActivityId(2),
            precondition: ActivityId(9),
            time_out_secs: 10,
        });
        from_node(&mut b, T0 + 1000, "peerB", overdue);
        b.apply(T0 + 1000 + OVERDUE_GRACE_MS, Input::Tick)
            .expect("tick");
        let replaced = ActivityLifecycle::Failed {
            replaced: Replacement::By(ActivityId(8)),
        };
        assert_eq!(activity(&b, 9).lifecycle(), replaced);
        assert_eq!(b.take_refused_transitions(), Refusals::default());
        // Then 1 fails, and its contingency is 9: placing it is refused, and said so.
        report_failure(&mut b, T0 + 5000, 1, 1, "peerA");
        let refused = b.take_refused_transitions();
        let placed = Refusal {
            lifecycle: "activity",
            from: "replaced",
            event: "placed",
        };
        assert_eq!(refused.counts, BTreeMap::from([(placed.clone(), 1)]));
        assert_eq!(
            refused.latest.into_iter().collect::<Vec<_>>(),
            vec![RefusedTransition {
                instance: InstanceId(1),
                subject: Subject::Activity(ActivityId(9)),
                refusal: placed,
            }]
        );
        assert_eq!(activity(&b, 9).lifecycle(), replaced, "nothing changed");
    }

    fn a_stand_in_placed_during_its_overdue_grace_waits_there_and_restores_the_same() {
        let mut b = book_with(&[node("peerA", "P1", &[1]), node("peerB", "P2", &[1])]);
        submit(&mut b, &chain(9)).expect("submit");
        report_failure(&mut b, T0 + 1000, 1, 1, "peerA");
        // P2 waited too long for 9, the stand-in nobody can run yet.
        let overdue = Message::Overdue(Overdue {
            instance: InstanceId(1),
            waiting: ActivityId(2),
            precondition: ActivityId(9),
            time_out_secs: 10,
        });
        from_node(&mut b, T0 + 11_000, "peerB", overdue);
        assert!(
            matches!(
                activity(&b, 9).lifecycle(),
                ActivityLifecycle::Overdue { under: Undecided::Unplaced, .. }
            ),
            "{:?}",
            activity(&b, 9).lifecycle()
        );
        let applied = b
            .apply(T0 + 12_000, Input::Register(node("peerC", "spare", &[2])))
            .expect("register");
        assert_eq!(deployed(&applied).len(), 1);
        let nine = activity(&b, 9);
        assert_eq!(nine.node.as_ref().map(NodeName::as_str), Some("spare"));
        assert!(
            matches!(
                nine.lifecycle(),
                ActivityLifecycle::Overdue { under: Undecided::Waiting, .. }
            ),
            "{:?}",
            nine.lifecycle()
        );
        let again = super::restore::rebuilt(b.take_changes());
        assert_eq!(again.instance(InstanceId(1)), b.instance(InstanceId(1)));
    }
}
