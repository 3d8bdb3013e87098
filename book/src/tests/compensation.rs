//! Backward recovery in the book: a cancelled or failed instance runs its succeeded
//! activities' compensations one at a time, the last to end first, each on its node; it ends
//! `compensated`, or `compensation_failed` naming the one that failed; a restart in between
//! carries on without asking twice.

use super::restore::rebuilt;
use super::*;
use mobiwf_proto::{Compensate, Compensated, Millis, Report};

/// 1 (P1) → 2 (P2) → 3 (P1) → 4 (P2), each with a compensation but those in `without`.
fn four(without: &[u64]) -> String {
    let xml = wf(
        &[
            act(1, -1, &[]),
            act(2, -1, &[1]),
            act(3, -1, &[2]),
            act(4, -1, &[3]),
        ],
        &[(1, 1, 0, &[1, 3]), (2, 2, 0, &[2, 4])],
    );
    let mut def = mobiwf_xml_schema::load_definition(xml.as_bytes())
        .expect("definition")
        .value;
    for a in def
        .activities
        .iter_mut()
        .filter(|a| !without.contains(&a.id.0))
    {
        a.compensation = Some(format!("echo N{} >> undone", a.id));
    }
    mobiwf_xml_schema::write_definition(&def)
}

/// Activity `id` ended in `state` at `us` microseconds on its node.
fn ended_at(id: u64, state: ActivityState, us: u64) -> ActivityRecord {
    ActivityRecord {
        finished_us: Some(us),
        finished_ms: Some(Millis::from_micros(us).as_u64()),
        ..record(id, state)
    }
}

/// Submits [`four`] on P1 (peerA) and P2 (peerB), both partitions acknowledged.
fn running(without: &[u64]) -> Book {
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    submit(&mut b, &four(without)).expect("submit");
    for p in [1, 2] {
        let input = Input::Delivered {
            instance: InstanceId(1),
            partition: PartitionId(p),
            refused: None,
        };
        b.apply(T0 + 10, input).expect("delivered");
    }
    b
}

/// Activities 1 to 3 succeeded (at 100, 200, 300 µs after `T0`), then the operator cancels;
/// 4 is cancelled on P2. Gives what the last partition result did. `compensable`: some of
/// them have compensations (the instance is not settled until every partition reported).
fn cancelled_after_three(b: &mut Book, compensable: bool) -> Applied {
    let at = |n: u64| Millis(T0).as_micros() + n;
    let report = |b: &mut Book, p: u64, peer: &str, id: u64, us: u64| {
        let message = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(p),
            record: ended_at(id, ActivityState::Succeeded, us),
        });
        from_node(b, T0 + 20, peer, message);
    };
    report(b, 1, "peerA", 1, at(100));
    report(b, 2, "peerB", 2, at(200));
    report(b, 1, "peerA", 3, at(300));
    let input = Input::Control {
        instance: InstanceId(1),
        action: Control::Cancel,
    };
    b.apply(T0 + 30, input).expect("cancel");
    assert_eq!(state_of(b), InstanceState::Cancelled);
    let settled = b.instance(InstanceId(1)).expect("i").is_settled();
    assert_eq!(
        settled, !compensable,
        "settled before the partitions reported"
    );
    let cancelled = ActivityRecord {
        detail: Some(CANCELLED_BY_OPERATOR.to_owned()),
        ..record(4, ActivityState::Cancelled)
    };
    partition_result(
        b,
        T0 + 40,
        1,
        vec![
            ended_at(1, ActivityState::Succeeded, at(100)),
            ended_at(3, ActivityState::Succeeded, at(300)),
        ],
    );
    assert_eq!(state_of(b), InstanceState::Cancelled, "P2 has not reported");
    partition_result(
        b,
        T0 + 50,
        2,
        vec![ended_at(2, ActivityState::Succeeded, at(200)), cancelled],
    )
}

/// The compensations asked for: (to, partition, activity).
fn asked(applied: &Applied) -> Vec<(String, u64, u64)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Compensate(Compensate {
                partition,
                activity,
                ..
            }) => Some((to, partition.0, activity.0)),
            _ => None,
        })
        .collect()
}

/// A node's answer about the compensation of `activity` of `partition`.
fn answer(b: &mut Book, now_ms: u64, partition: u64, activity: u64, ok: bool) -> Applied {
    let peer = peer_of(b, 1, partition);
    let message = Message::Compensated(Compensated {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        activity: ActivityId(activity),
        succeeded: ok,
        detail: (!ok).then(|| "command exited with status 2".to_owned()),
    });
    from_node(b, now_ms, &peer, message)
}

scenarios! {
    fn a_cancelled_instance_compensates_its_succeeded_activities_last_first() {
        let mut b = running(&[]);
        let last = cancelled_after_three(&mut b, true);
        assert_eq!(state_of(&b), InstanceState::Compensating);
        assert_eq!(asked(&last), vec![("peerA".to_owned(), 1, 3)]);
        let inst = b.instance(InstanceId(1)).expect("instance");
        let c = inst.compensation.clone().expect("compensation");
        assert_eq!(c.order, vec![ActivityId(3), ActivityId(2), ActivityId(1)]);
        assert!(!inst.is_settled());

        // One at a time: the next only once the one before succeeded.
        let fx = answer(&mut b, T0 + 60, 1, 3, true);
        assert_eq!(asked(&fx), vec![("peerB".to_owned(), 2, 2)]);
        // The same answer again, or one about another activity, changes nothing.
        assert!(asked(&answer(&mut b, T0 + 61, 1, 3, true)).is_empty());
        assert!(asked(&answer(&mut b, T0 + 62, 1, 1, true)).is_empty());
        assert_eq!(state_of(&b), InstanceState::Compensating);
        let fx = answer(&mut b, T0 + 70, 2, 2, true);
        assert_eq!(asked(&fx), vec![("peerA".to_owned(), 1, 1)]);
        let fx = answer(&mut b, T0 + 80, 1, 1, true);
        assert!(asked(&fx).is_empty());
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Compensated);
        assert!(inst.is_settled());
        assert_eq!(inst.finished_ms, Some(T0 + 80));
        assert_eq!(inst.detail.as_deref(), Some("cancelled by an operator"));
        let told: Vec<Event> = story(&b)
            .into_iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::Compensating { .. }
                        | Event::CompensationDone { .. }
                        | Event::InstanceEnded { .. }
                )
            })
            .collect();
        assert_eq!(
            told,
            vec![
                Event::Compensating { activity: l(3) },
                Event::CompensationDone { activity: l(3) },
                Event::Compensating { activity: l(2) },
                Event::CompensationDone { activity: l(2) },
                Event::Compensating { activity: l(1) },
                Event::CompensationDone { activity: l(1) },
                Event::InstanceEnded {
                    state: InstanceState::Compensated,
                    detail: Some("cancelled by an operator".to_owned()),
                },
            ]
        );
        // An answer after the end changes nothing.
        assert!(answer(&mut b, T0 + 90, 1, 1, false).effects.is_empty());
        assert_eq!(state_of(&b), InstanceState::Compensated);
    }

    fn a_failed_compensation_stops_the_rest_and_the_instance_says_which() {
        let mut b = running(&[]);
        let at = |n: u64| Millis(T0).as_micros() + n;
        partition_result(
            &mut b,
            T0 + 20,
            2,
            vec![
                ended_at(2, ActivityState::Succeeded, at(200)),
                ended_at(4, ActivityState::Cancelled, at(400)),
            ],
        );
        // Activity 3 failed with contingency -1: the instance fails, then compensates.
        let last = partition_result(
            &mut b,
            T0 + 30,
            1,
            vec![
                ended_at(1, ActivityState::Succeeded, at(100)),
                failed(3, "exit status 1"),
            ],
        );
        assert_eq!(state_of(&b), InstanceState::Compensating);
        assert_eq!(asked(&last), vec![("peerB".to_owned(), 2, 2)]);
        let fx = answer(&mut b, T0 + 40, 2, 2, false);
        assert!(asked(&fx).is_empty(), "the first failure stops the rest");
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::CompensationFailed);
        assert_eq!(
            inst.detail.as_deref(),
            Some(
                "the compensation of N2 (2) on P2 failed: command exited with status 2 \
                 (compensating because N3 (3) on P1 failed: exit status 1)"
            )
        );
        let c = inst.compensation.clone().expect("compensation");
        assert_eq!((c.done, c.failed.map(|f| f.0)), (0, Some(ActivityId(2))));
        assert!(story(&b).contains(&Event::CompensationFailed {
            activity: l(2),
            reason: "command exited with status 2".to_owned(),
        }));
    }

    fn ends_at_the_same_time_compensate_the_larger_id_first_and_those_without_one_are_left() {
        let mut b = running(&[2]);
        let same = Millis(T0).as_micros() + 500;
        partition_result(
            &mut b,
            T0 + 20,
            2,
            vec![
                ended_at(2, ActivityState::Succeeded, same),
                ended_at(4, ActivityState::Failed, same + 1),
            ],
        );
        let last = partition_result(
            &mut b,
            T0 + 30,
            1,
            vec![
                ended_at(1, ActivityState::Succeeded, same),
                ended_at(3, ActivityState::Succeeded, same),
            ],
        );
        assert_eq!(asked(&last), vec![("peerA".to_owned(), 1, 3)]);
        let c = b.instance(InstanceId(1)).and_then(|i| i.compensation.clone());
        assert_eq!(
            c.expect("compensation").order,
            vec![ActivityId(3), ActivityId(1)],
            "2 has no compensation; 3 before 1 on a tie"
        );
    }

    fn an_instance_with_nothing_to_compensate_ends_as_before() {
        let mut b = running(&[1, 2, 3, 4]);
        let last = cancelled_after_three(&mut b, false);
        assert!(asked(&last).is_empty());
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.state(), InstanceState::Cancelled);
        assert_eq!(inst.compensation, None);
        assert!(inst.is_settled());
    }

    fn a_restart_in_the_middle_carries_on_without_asking_twice() {
        let mut b = running(&[]);
        cancelled_after_three(&mut b, true);
        answer(&mut b, T0 + 60, 1, 3, true);
        let mut restored = rebuilt(b.take_changes());
        assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
        assert_eq!(restored.history(InstanceId(1)), b.history(InstanceId(1)));
        // The answer about 3 again (a node's outbox delivering once more) asks nothing.
        assert!(asked(&answer(&mut restored, T0 + 65, 1, 3, true)).is_empty());
        let fx = answer(&mut restored, T0 + 70, 2, 2, true);
        assert_eq!(asked(&fx), vec![("peerA".to_owned(), 1, 1)]);
        answer(&mut restored, T0 + 80, 1, 1, true);
        assert_eq!(
            restored.instance(InstanceId(1)).expect("i").state(),
            InstanceState::Compensated
        );
    }

    fn a_compensating_instance_takes_no_operator_control() {
        let mut b = running(&[]);
        cancelled_after_three(&mut b, true);
        for action in [Control::Cancel, Control::Interrupt, Control::Resume] {
            let input = Input::Control {
                instance: InstanceId(1),
                action,
            };
            let refused = b.apply(T0 + 60, input).expect_err("refused");
            assert!(refused.to_string().contains("is compensating"), "{refused}");
        }
    }
}
