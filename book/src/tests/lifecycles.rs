//! Scenarios that exercise the lifecycle transitions the topic scenarios do not reach: node
//! reports in unusual orders, overdue activities meeting every other event, acknowledgements
//! and refusals after the controller gave up, an operator's control while results come in.
//! Each says what the book does today.

use super::*;
use mobiwf_proto::{Overdue, Report};

fn ack(b: &mut Book, now_ms: u64, partition: u64) {
    let input = Input::Delivered {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        refused: None,
    };
    b.apply(now_ms, input).expect("delivered");
}

fn refuse(b: &mut Book, now_ms: u64, partition: u64) {
    let input = Input::Delivered {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        refused: Some("no room".to_owned()),
    };
    b.apply(now_ms, input).expect("refused");
}

/// The node of `partition` reports `activity` in `state`, with `detail`.
fn say(
    b: &mut Book,
    now_ms: u64,
    partition: u64,
    activity: u64,
    state: ActivityState,
    detail: Option<&str>,
) {
    let peer = peer_of(b, 1, partition);
    let record = ActivityRecord {
        detail: detail.map(str::to_owned),
        ..record(activity, state)
    };
    let message = Message::Report(Report {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        record,
    });
    from_node(b, now_ms, &peer, message);
}

fn control(b: &mut Book, now_ms: u64, action: Control) {
    let input = Input::Control {
        instance: InstanceId(1),
        action,
    };
    b.apply(now_ms, input).expect("control");
}

/// `waiting`'s node says it waited too long for `precondition`.
fn overdue(b: &mut Book, now_ms: u64, waiting: u64, precondition: u64) {
    let peer = peer_of(b, 1, partition_of(b, waiting));
    let message = Message::Overdue(Overdue {
        instance: InstanceId(1),
        waiting: ActivityId(waiting),
        precondition: ActivityId(precondition),
        time_out_secs: 10,
    });
    from_node(b, now_ms, &peer, message);
}

fn partition_of(b: &Book, id: u64) -> u64 {
    activity(b, id).partition.expect("placed").0
}

fn lc(b: &Book, id: u64) -> ActivityLifecycle {
    activity(b, id).lifecycle()
}

/// 1 then 3 on P1 (partition 1), 2 after 3 on P2 (partition 2); failures block.
fn one_three_two() -> String {
    wf(
        &[act(1, -1, &[]), act(3, -1, &[1]), act(2, -1, &[3])],
        &[(1, 1, 0, &[1, 3]), (2, 2, 0, &[2])],
    )
}

use ActivityState::{Cancelled, Failed, NotReady as Waiting, Running, Skipped, Succeeded};

scenarios! {
    fn a_nodes_words_are_taken_in_any_order_until_final_and_results_may_come_twice() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        ack(&mut b, T0 + 1, 1);
        ack(&mut b, T0 + 2, 2);
        assert_eq!(state_of(&b), InstanceState::Running);
        say(&mut b, T0 + 10, 1, 1, Running, None);
        say(&mut b, T0 + 11, 1, 1, Running, None);
        say(&mut b, T0 + 12, 1, 1, Waiting, None);
        assert_eq!(lc(&b, 1), ActivityLifecycle::Waiting);
        say(&mut b, T0 + 13, 1, 1, Waiting, None);
        say(&mut b, T0 + 14, 1, 1, Running, None);
        say(&mut b, T0 + 15, 1, 1, Succeeded, None);
        say(&mut b, T0 + 16, 2, 2, Running, None);
        say(&mut b, T0 + 17, 2, 2, Failed, Some("exit status 1"));
        assert_eq!(activity(&b, 2).state(), Failed);
        partition_result(&mut b, T0 + 20, 1, vec![record(1, Succeeded)]);
        partition_result(&mut b, T0 + 21, 1, vec![record(1, Succeeded)]);
        assert_eq!(partition_view(&b, 1).lifecycle(), PartitionLifecycle::Finished);
        partition_result(&mut b, T0 + 22, 2, vec![failed(2, "exit status 1")]);
        assert_eq!(state_of(&b), InstanceState::Failed);
    }

    fn a_running_activity_its_node_cancels_is_cancelled() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        say(&mut b, T0 + 10, 2, 2, Running, None);
        say(&mut b, T0 + 11, 2, 2, Cancelled, Some("precondition 1 failed"));
        assert_eq!(lc(&b, 2), ActivityLifecycle::Cancelled);
    }

    fn an_overdue_running_activity_stays_overdue_until_the_grace_runs_out() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        say(&mut b, T0 + 10, 1, 1, Running, None);
        overdue(&mut b, T0 + 11_000, 2, 1);
        assert!(matches!(lc(&b, 1), ActivityLifecycle::Overdue { under: Undecided::Running, .. }));
        say(&mut b, T0 + 12_000, 1, 1, Running, None);
        assert!(matches!(lc(&b, 1), ActivityLifecycle::Overdue { .. }));
        b.apply(T0 + 11_000 + OVERDUE_GRACE_MS, Input::Tick).expect("tick");
        assert_eq!(activity(&b, 1).state(), Failed);
        assert_eq!(activity(&b, 1).overdue(), None);
    }

    fn an_overdue_activity_its_node_reports_ended_ends_as_its_node_says() {
        for (state, detail) in [
            (Failed, Some("exit status 1")),
            (Cancelled, Some("precondition failed")),
            (Skipped, Some("on a path not taken: precondition 9 was skipped")),
            (Failed, Some(CANCELLED_BY_OPERATOR)),
        ] {
            let mut b = three_nodes();
            submit(&mut b, &chain(-1)).expect("submit");
            overdue(&mut b, T0 + 11_000, 2, 1);
            say(&mut b, T0 + 12_000, 1, 1, state, detail);
            let a1 = activity(&b, 1);
            assert_eq!((a1.state(), a1.detail.as_deref()), (state, detail));
            assert!(a1.overdue().is_some(), "the timer stays until the tick drops it");
            b.apply(T0 + 13_000, Input::Tick).expect("tick");
            assert_eq!(activity(&b, 1).overdue(), None);
        }
    }

    fn a_given_up_partition_fails_or_cancels_its_running_and_overdue_activities() {
        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        overdue(&mut b, T0 + 11_000, 2, 3);
        suspect(&mut b, T0 + 12_000, "peerA");
        assert_eq!(activity(&b, 3).state(), Cancelled, "1 blocks it");

        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        overdue(&mut b, T0 + 11_000, 2, 1);
        suspect(&mut b, T0 + 12_000, "peerA");
        assert_eq!(activity(&b, 1).state(), Failed);

        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        say(&mut b, T0 + 10, 1, 1, Running, None);
        say(&mut b, T0 + 11, 1, 3, Running, None);
        suspect(&mut b, T0 + 12_000, "peerA");
        // 3 started: its preconditions held on its node, so it fails with its partition.
        assert_eq!((activity(&b, 1).state(), activity(&b, 3).state()), (Failed, Failed));
    }

    fn an_operators_cancel_ends_running_and_overdue_activities_and_their_nodes_words_are_taken() {
        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        ack(&mut b, T0 + 1, 1);
        ack(&mut b, T0 + 2, 2);
        say(&mut b, T0 + 10, 1, 1, Running, None);
        overdue(&mut b, T0 + 11_000, 2, 3);
        control(&mut b, T0 + 12_000, Control::Cancel);
        assert_eq!(state_of(&b), InstanceState::Cancelled);
        for id in [1, 2, 3] {
            assert_eq!(
                lc(&b, id),
                ActivityLifecycle::CancelledByOperator { state: Cancelled },
                "{id}"
            );
        }
        say(&mut b, T0 + 13_000, 1, 1, Succeeded, None);
        say(&mut b, T0 + 13_001, 1, 3, Failed, Some(CANCELLED_BY_OPERATOR));
        say(&mut b, T0 + 13_002, 1, 3, Cancelled, Some("precondition failed"));
        say(&mut b, T0 + 13_003, 2, 2, Failed, Some("exit status 2"));
        assert_eq!(
            (activity(&b, 1).state(), activity(&b, 2).state(), activity(&b, 3).state()),
            (Succeeded, Failed, Cancelled)
        );
    }

    fn an_activity_its_node_skipped_before_an_operators_cancel_ends_skipped() {
        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        control(&mut b, T0 + 12_000, Control::Cancel);
        say(&mut b, T0 + 13_000, 2, 2, Skipped, Some("on a path not taken"));
        assert_eq!(lc(&b, 2), ActivityLifecycle::Skipped);
    }

    fn a_node_may_end_an_activity_with_the_operators_words() {
        let mut b = three_nodes();
        submit(&mut b, &one_three_two()).expect("submit");
        say(&mut b, T0 + 10, 1, 1, Failed, Some(CANCELLED_BY_OPERATOR));
        say(&mut b, T0 + 11, 1, 3, Running, None);
        say(&mut b, T0 + 12, 1, 3, Cancelled, Some(CANCELLED_BY_OPERATOR));
        say(&mut b, T0 + 13, 1, 3, Cancelled, Some(CANCELLED_BY_OPERATOR));
        assert_eq!(
            lc(&b, 3),
            ActivityLifecycle::CancelledByOperator { state: Cancelled }
        );
    }

    fn an_overdue_contingency_activity_not_placed_is_withdrawn_when_the_grace_runs_out() {
        let mut b = three_nodes();
        submit(&mut b, &chain(9)).expect("submit");
        overdue(&mut b, T0 + 11_000, 2, 9);
        assert!(matches!(lc(&b, 9), ActivityLifecycle::Overdue { under: Undecided::Unplaced, .. }));
        b.apply(T0 + 13_000, Input::Tick).expect("tick");
        assert_eq!(activity(&b, 9).state(), Failed);
    }

    fn a_contingency_activity_that_runs_already_blocks_the_failed_ones_successors() {
        let mut b = three_nodes();
        let def = wf(
            &[act(1, 3, &[]), act(2, -1, &[1]), act(3, -1, &[])],
            &[(1, 1, 0, &[1]), (2, 2, 0, &[2, 3])],
        );
        submit(&mut b, &def).expect("submit");
        report_failure(&mut b, T0 + 10, 1, 1, "peerA");
        assert_eq!(
            lc(&b, 1),
            ActivityLifecycle::Failed { replaced: Replacement::InUse }
        );
        assert!(story(&b).contains(&Event::ContingencyInUse {
            contingency: l(3),
            failed: l(1)
        }));
    }

    fn acknowledgements_refusals_and_results_after_the_controller_gave_up_are_kept() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        suspect(&mut b, T0 + 10, "peerA");
        ack(&mut b, T0 + 11, 1);
        assert!(partition_view(&b, 1).is_deployed());
        refuse(&mut b, T0 + 12, 1);
        assert!(!partition_view(&b, 1).is_deployed());
        assert_eq!(state_of(&b), InstanceState::Failed);

        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        ack(&mut b, T0 + 1, 1);
        suspect(&mut b, T0 + 10, "peerA");
        partition_result(&mut b, T0 + 20, 1, vec![record(1, Succeeded)]);
        partition_result(&mut b, T0 + 21, 1, vec![record(1, Succeeded)]);
        assert!(matches!(
            partition_view(&b, 1).lifecycle(),
            PartitionLifecycle::LateResult { .. }
        ));
    }

    fn a_refusal_after_an_acknowledgement_fails_a_running_instance() {
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        ack(&mut b, T0 + 1, 1);
        ack(&mut b, T0 + 2, 2);
        refuse(&mut b, T0 + 3, 1);
        assert_eq!(partition_view(&b, 1).lifecycle(), PartitionLifecycle::Sent);
        assert_eq!(state_of(&b), InstanceState::Failed);
    }

    fn an_interrupted_instance_can_be_refused_resumed_cancelled_or_end() {
        // Refused while interrupted.
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        control(&mut b, T0 + 1, Control::Interrupt);
        refuse(&mut b, T0 + 2, 1);
        assert_eq!(state_of(&b), InstanceState::Failed);
        // Running, interrupted, resumed (running again), interrupted, cancelled.
        let mut b = three_nodes();
        submit(&mut b, &chain(-1)).expect("submit");
        ack(&mut b, T0 + 1, 1);
        ack(&mut b, T0 + 2, 2);
        control(&mut b, T0 + 3, Control::Interrupt);
        control(&mut b, T0 + 4, Control::Resume);
        assert_eq!(state_of(&b), InstanceState::Running);
        control(&mut b, T0 + 5, Control::Interrupt);
        control(&mut b, T0 + 6, Control::Cancel);
        assert_eq!(state_of(&b), InstanceState::Cancelled);
        // Results while interrupted: it ends.
        for (second, end) in [(Succeeded, InstanceState::Succeeded), (Cancelled, InstanceState::Failed)] {
            let mut b = three_nodes();
            submit(&mut b, &chain(-1)).expect("submit");
            control(&mut b, T0 + 1, Control::Interrupt);
            let first = if second == Succeeded { record(1, Succeeded) } else { failed(1, "exit 1") };
            partition_result(&mut b, T0 + 2, 1, vec![first]);
            partition_result(&mut b, T0 + 3, 2, vec![record(2, second)]);
            assert_eq!(state_of(&b), end);
        }
    }
}
