//! Forward recovery in the book: an operator reruns a failed activity of a failed instance;
//! it and the activities cancelled because of it wait again, the instance runs on from its
//! stored state, and the failed activity's node hears of its rerun last.

use super::restore::rebuilt;
use super::*;
use mobiwf_proto::Rerun;

/// 1 (P1) → 2 (P2, contingency `c2`) → 3 (P1) → 4 (P1); 5 (P1) waits for 1 only.
fn line(c2: i64) -> String {
    wf(
        &[
            act(1, -1, &[]),
            act(2, c2, &[1]),
            act(3, -1, &[2]),
            act(4, -1, &[3]),
            act(5, -1, &[1]),
        ],
        &[(1, 1, 30, &[1, 3, 4, 5]), (2, 2, 0, &[2])],
    )
}

/// [`line`] submitted, activity 2 failed on P2: 3 and 4 cancelled, 1 and 5 succeeded; with
/// `c2` 0, 3 and 4 succeeded, and 5 failed.
fn failed_at_2(c2: i64) -> Book {
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    submit(&mut b, &line(c2)).expect("submit");
    let blocked = |id: u64| ActivityRecord {
        detail: Some("precondition 2 failed or was cancelled".to_owned()),
        ..record(id, ActivityState::Cancelled)
    };
    partition_result(&mut b, T0 + 20, 2, vec![failed(2, "exit status 1")]);
    let (three, four) = if c2 == -1 {
        (blocked(3), blocked(4))
    } else {
        (
            record(3, ActivityState::Succeeded),
            record(4, ActivityState::Succeeded),
        )
    };
    partition_result(
        &mut b,
        T0 + 30,
        1,
        vec![
            record(1, ActivityState::Succeeded),
            three,
            four,
            if c2 == -1 {
                record(5, ActivityState::Succeeded)
            } else {
                failed(5, "exit status 4")
            },
        ],
    );
    b
}

fn rerun(b: &mut Book, now_ms: u64, activity: u64) -> Result<Applied, BookError> {
    let input = Input::Rerun {
        instance: InstanceId(1),
        activity: ActivityId(activity),
    };
    b.apply(now_ms, input)
}

/// The reruns among the messages: (to, partition, activities).
fn reruns(applied: &Applied) -> Vec<(String, u64, Vec<u64>)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Rerun(Rerun {
                partition,
                activities,
                ..
            }) => Some((to, partition.0, activities.iter().map(|a| a.0).collect())),
            _ => None,
        })
        .collect()
}

/// 1 (P1) → 2 (P1) → 3 (P2) → 4 (P1): activity 2 failed, 3 and 4 were cancelled because of
/// it; the instance failed.
fn across_and_back() -> Book {
    let xml = wf(
        &[
            act(1, -1, &[]),
            act(2, -1, &[1]),
            act(3, -1, &[2]),
            act(4, -1, &[3]),
        ],
        &[(1, 1, 0, &[1, 2, 4]), (2, 2, 0, &[3])],
    );
    let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
    submit(&mut b, &xml).expect("submit");
    let blocked = |id: u64, by: u64| ActivityRecord {
        detail: Some(format!("precondition {by} failed or was cancelled")),
        ..record(id, ActivityState::Cancelled)
    };
    let p1 = vec![
        record(1, ActivityState::Succeeded),
        failed(2, "exit status 1"),
        blocked(4, 3),
    ];
    partition_result(&mut b, T0 + 20, 2, vec![blocked(3, 2)]);
    partition_result(&mut b, T0 + 30, 1, p1);
    b
}

/// The notifications among the messages: (to, activity, outcome).
fn notifies(applied: &Applied) -> Vec<(String, u64, Outcome)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Notify(n) => Some((to, n.activity.0, n.outcome)),
            _ => None,
        })
        .collect()
}

fn acknowledged(b: &mut Book, now_ms: u64, partition: u64) -> Applied {
    let input = Input::RerunDelivered {
        instance: InstanceId(1),
        partition: PartitionId(partition),
    };
    b.apply(now_ms, input).expect("rerun delivered")
}

scenarios! {
    fn a_rerun_puts_the_failed_activity_and_those_it_cancelled_back_and_the_instance_succeeds() {
        let mut b = failed_at_2(-1);
        assert_eq!(state_of(&b), InstanceState::Failed);
        let fx = rerun(&mut b, T0 + 1000, 2).expect("rerun");
        assert_eq!(state_of(&b), InstanceState::Running);
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!((inst.detail.clone(), inst.finished_ms), (None, None));
        for id in [2, 3, 4] {
            let a = activity(&b, id);
            assert_eq!(
                (a.state(), a.finished_ms, a.detail),
                (ActivityState::NotReady, None, None),
                "activity {id}"
            );
        }
        assert_eq!(activity(&b, 1).state(), ActivityState::Succeeded);
        assert_eq!(activity(&b, 5).state(), ActivityState::Succeeded);
        assert_eq!(
            partition_view(&b, 1).deadline_ms,
            Some(T0 + 1000 + 30_000),
            "its timeOut counts from the rerun"
        );
        assert!(!partition_view(&b, 1).is_finished() && !partition_view(&b, 2).is_finished());
        assert!(story(&b).contains(&Event::Rerun {
            activity: l(2),
            with: vec![l(3), l(4)],
        }));
        // The partition of 3 and 4 first; the failed activity's once P1 acknowledged.
        assert_eq!(reruns(&fx), vec![("peerA".to_owned(), 1, vec![2, 3, 4])]);
        let fx = acknowledged(&mut b, T0 + 1100, 1);
        assert_eq!(reruns(&fx), vec![("peerB".to_owned(), 2, vec![2, 3, 4])]);
        assert!(reruns(&acknowledged(&mut b, T0 + 1150, 2)).is_empty());

        partition_result(&mut b, T0 + 1200, 2, vec![record(2, ActivityState::Succeeded)]);
        assert_eq!(state_of(&b), InstanceState::Running);
        partition_result(
            &mut b,
            T0 + 1300,
            1,
            [1, 3, 4, 5]
                .into_iter()
                .map(|a| record(a, ActivityState::Succeeded))
                .collect(),
        );
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_rerun_is_refused_with_the_reason_when_it_does_not_apply() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        submit(&mut b, &line(-1)).expect("submit");
        let why = |r: Result<Applied, BookError>| r.expect_err("refused").to_string();
        assert_eq!(
            why(rerun(&mut b, T0 + 10, 2)),
            "instance 1 is deploying: only a failed instance is rerun"
        );
        let mut b = failed_at_2(-1);
        assert_eq!(
            why(rerun(&mut b, T0 + 100, 1)),
            "N1 (1) of instance 1 is succeeded: only a failed activity is rerun"
        );
        assert_eq!(
            why(rerun(&mut b, T0 + 100, 3)),
            "N3 (3) of instance 1 is cancelled: only a failed activity is rerun"
        );
        assert_eq!(
            why(rerun(&mut b, T0 + 100, 9)),
            "instance 1 has no activity 9"
        );
        assert!(rerun(&mut b, T0 + 100, 2).is_ok());
        assert_eq!(
            why(rerun(&mut b, T0 + 200, 2)),
            "instance 1 is running: only a failed instance is rerun"
        );
        // A failure that released its successors (contingency 0) is not rerun; the one
        // that failed the instance is.
        let mut b = failed_at_2(0);
        assert_eq!(state_of(&b), InstanceState::Failed);
        assert_eq!(
            why(rerun(&mut b, T0 + 100, 2)),
            "N2 (2) of instance 1 failed with contingency 0: its successors did not wait for \
             it, so it is not rerun; rerun the activity that failed with contingency -1"
        );
        let fx = rerun(&mut b, T0 + 100, 5).expect("rerun");
        assert_eq!(reruns(&fx), vec![("peerA".to_owned(), 1, vec![5])]);
    }

    fn a_compensating_instance_is_not_rerun() {
        let xml = line(-1);
        let mut def = mobiwf_xml_schema::load_definition(xml.as_bytes())
            .expect("definition")
            .value;
        def.activities[0].compensation = Some("echo undo".to_owned());
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        submit(&mut b, &mobiwf_xml_schema::write_definition(&def)).expect("submit");
        partition_result(&mut b, T0 + 20, 2, vec![failed(2, "exit status 1")]);
        partition_result(
            &mut b,
            T0 + 30,
            1,
            vec![
                record(1, ActivityState::Succeeded),
                record(3, ActivityState::Cancelled),
                record(4, ActivityState::Cancelled),
                record(5, ActivityState::Succeeded),
            ],
        );
        assert_eq!(state_of(&b), InstanceState::Compensating);
        let refused = rerun(&mut b, T0 + 100, 2).expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "instance 1 is compensating: its compensations have started (backward recovery), \
             so it is not rerun"
        );
    }

    fn a_rerun_survives_a_restart_and_a_given_up_partition_is_not_waited_for() {
        let mut b = failed_at_2(-1);
        rerun(&mut b, T0 + 1000, 2).expect("rerun");
        let mut restored = rebuilt(b.take_changes());
        assert_eq!(restored.instance(InstanceId(1)), b.instance(InstanceId(1)));
        let fx = acknowledged(&mut restored, T0 + 1100, 1);
        assert_eq!(reruns(&fx), vec![("peerB".to_owned(), 2, vec![2, 3, 4])]);

        // P1 stops answering before it acknowledged: its partition is given up, and the
        // failed activity's node is sent its rerun without waiting.
        let mut b = failed_at_2(-1);
        rerun(&mut b, T0 + 1000, 2).expect("rerun");
        let fx = suspect(&mut b, T0 + 2000, "peerA");
        assert_eq!(reruns(&fx), vec![("peerB".to_owned(), 2, vec![2, 3, 4])]);
    }

    fn a_rerun_alone_on_its_partition_goes_at_once() {
        let mut b = book_with(&[node("peerA", "P1", &[1, 2]), node("peerB", "P2", &[1, 2])]);
        submit(&mut b, &chain(-1)).expect("submit");
        partition_result(&mut b, T0 + 20, 1, vec![failed(1, "exit status 1")]);
        let cancelled = ActivityRecord {
            detail: Some("precondition 1 failed or was cancelled".to_owned()),
            ..record(2, ActivityState::Cancelled)
        };
        partition_result(&mut b, T0 + 30, 2, vec![cancelled]);
        assert_eq!(state_of(&b), InstanceState::Failed);
        let fx = rerun(&mut b, T0 + 100, 1).expect("rerun");
        assert_eq!(reruns(&fx), vec![("peerB".to_owned(), 2, vec![1, 2])]);
        let fx = acknowledged(&mut b, T0 + 200, 2);
        assert_eq!(reruns(&fx), vec![("peerA".to_owned(), 1, vec![1, 2])]);
    }

    fn a_decided_end_of_an_activity_rerun_reaches_a_node_only_after_it_acknowledged_its_rerun() {
        let mut b = across_and_back();
        assert_eq!(state_of(&b), InstanceState::Failed);
        let fx = rerun(&mut b, T0 + 1000, 2).expect("rerun");
        assert_eq!(reruns(&fx), vec![("peerB".to_owned(), 2, vec![2, 3, 4])]);
        // P2 stops answering before it acknowledged: the controller decides 3 failed and
        // sends P1 its rerun; P1 would forget 3's end if it came first (the outbox keeps no
        // order), so it waits for P1's acknowledgement.
        let fx = suspect(&mut b, T0 + 2000, "peerB");
        assert_eq!(activity(&b, 3).state(), ActivityState::Failed);
        assert_eq!(reruns(&fx), vec![("peerA".to_owned(), 1, vec![2, 3, 4])]);
        assert_eq!(notifies(&fx), vec![]);
        // Held back in the stored state: a restarted controller sends it all the same.
        let mut b = rebuilt(b.take_changes());
        let fx = acknowledged(&mut b, T0 + 2100, 1);
        assert_eq!(
            notifies(&fx),
            vec![("peerA".to_owned(), 3, Outcome::Blocked)]
        );
        let inst = b.instance(InstanceId(1)).expect("instance");
        assert_eq!(inst.rerun, None, "every rerun acknowledged");
        assert_eq!(notifies(&acknowledged(&mut b, T0 + 2200, 1)), vec![]);
        // P1 runs 2 again, hears that 3 failed, and cancels 4: the instance ends.
        let cancelled = ActivityRecord {
            detail: Some("precondition 3 failed or was cancelled".to_owned()),
            ..record(4, ActivityState::Cancelled)
        };
        let p1 = vec![
            record(1, ActivityState::Succeeded),
            record(2, ActivityState::Succeeded),
            cancelled,
        ];
        partition_result(&mut b, T0 + 3000, 1, p1);
        assert_eq!(state_of(&b), InstanceState::Failed);
    }

    fn a_decided_end_goes_at_once_to_a_node_that_acknowledged_its_rerun() {
        let mut b = across_and_back();
        rerun(&mut b, T0 + 1000, 2).expect("rerun");
        let fx = acknowledged(&mut b, T0 + 1100, 2);
        assert_eq!(reruns(&fx), vec![("peerA".to_owned(), 1, vec![2, 3, 4])]);
        acknowledged(&mut b, T0 + 1200, 1);
        let fx = suspect(&mut b, T0 + 2000, "peerB");
        assert_eq!(
            notifies(&fx),
            vec![("peerA".to_owned(), 3, Outcome::Blocked)]
        );
    }
}
