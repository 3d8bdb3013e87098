//! Scenarios of orders: the controller's withdrawals and the operator's interrupt, resume and
//! cancel.

use super::*;

scenarios! {
fn a_withdrawn_running_activity_fails_without_a_word_and_its_command_is_killed() {
    let mut e = Engine::new();
    let d = doc(
        50,
        &[
            A {
                id: 1,
                command: Some("sleep 60"),
                adj: &[(2, "/local"), (9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(1, true)],
                adj: &[(8, "/remote/y")],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 50, 1, &d);
    let fx = withdraw(&mut e, 2000, 50, &[1], "partner P1 was too slow");
    assert_eq!(kills(&fx), vec![(1, 0)]);
    assert_eq!(state(&e, 50, 1), ActivityState::Failed);
    assert_eq!(
        detail(&e, 50, 1),
        "withdrawn by the controller: partner P1 was too slow"
    );
    // Nobody hears about activity 1 (the controller tells its successors elsewhere); its
    // local successor follows its contingency, -1, and tells its own successors.
    assert_eq!(
        notifies(&fx),
        vec![("/remote/y".to_owned(), 2, Outcome::Blocked)]
    );
    assert_eq!(reports(&fx), vec![(2, ActivityState::Cancelled)]);
    assert_eq!(
        result_of(&fx),
        Some(vec![
            (1, ActivityState::Failed),
            (2, ActivityState::Cancelled)
        ])
    );
    // Its killed command's end changes nothing.
    assert!(
        e.apply(
            2500,
            Input::Finished(crate::Ended { written: Vec::new(), instance: InstanceId(50), activity: ActivityId(1), finish: crate::Finish::Succeeded { detail: None, flag: None }, by: Finisher::Command, attempt: 0 })
        )
        .is_err()
    );
}

fn local_successors_of_a_withdrawn_activity_follow_its_contingency() {
    for (contingency, then) in [
        (-1, ActivityState::Cancelled),
        (0, ActivityState::Succeeded),
        (5, ActivityState::NotReady),
    ] {
        let mut e = Engine::new();
        let d = doc(
            51,
            &[
                A {
                    id: 1,
                    command: Some("sleep 60"),
                    contingency,
                    adj: &[(2, "/local")],
                    ..A::default()
                },
                A {
                    id: 2,
                    pre: &[(1, true)],
                    ..A::default()
                },
            ],
        );
        deploy(&mut e, 51, 1, &d);
        let fx = withdraw(&mut e, 2000, 51, &[1], "too slow");
        assert_eq!(state(&e, 51, 2), then, "contingency {contingency}");
        assert_eq!(reports(&fx), vec![], "contingency {contingency}");
        if contingency == 5 {
            substitute(&mut e, 3000, 51, 1, 5);
            notify_at(&mut e, 4000, 51, 5, Outcome::Succeeded);
            assert_eq!(state(&e, 51, 2), ActivityState::Succeeded);
        }
    }
}

fn a_withdrawal_that_comes_before_the_deployment_applies_when_it_comes() {
    let mut e = Engine::new();
    assert!(withdraw(&mut e, 500, 52, &[1], "too slow").is_empty());
    let d = doc(
        52,
        &[
            A {
                id: 1,
                command: Some("true"),
                adj: &[(9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    let fx = deploy(&mut e, 52, 1, &d);
    assert_eq!(executes(&fx), vec![(3, 0)], "activity 1 never starts");
    assert_eq!(state(&e, 52, 1), ActivityState::Failed);
    assert_eq!(detail(&e, 52, 1), "withdrawn by the controller: too slow");
    assert_eq!(notifies(&fx), vec![]);
}

fn a_withdrawn_activity_waiting_for_its_next_try_is_not_killed_and_not_tried_again() {
    let mut e = Engine::new();
    let d = doc(
        53,
        &[A {
            id: 1,
            command: Some("false"),
            retries: Some((2, 10)),
            ..A::default()
        }],
    );
    deploy(&mut e, 53, 1, &d);
    ended(&mut e, 2000, 53, 1, false, 0);
    let fx = withdraw(&mut e, 3000, 53, &[1], "too slow");
    assert_eq!(kills(&fx), vec![], "no command runs between tries");
    assert_eq!(state(&e, 53, 1), ActivityState::Failed);
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 12_000).is_empty());
}

// Operator control.

fn a_cancel_while_a_command_waits_for_its_next_try_cancels_it_without_a_kill() {
    let mut e = Engine::new();
    let d = doc(
        54,
        &[A {
            id: 1,
            command: Some("false"),
            retries: Some((2, 10)),
            ..A::default()
        }],
    );
    deploy(&mut e, 54, 1, &d);
    ended(&mut e, 2000, 54, 1, false, 0);
    let fx = control(&mut e, 3000, 54, Control::Cancel);
    assert_eq!(kills(&fx), vec![], "no command runs between tries");
    assert_eq!(state(&e, 54, 1), ActivityState::Cancelled);
    assert_eq!(result_of(&fx), Some(vec![(1, ActivityState::Cancelled)]));
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 12_000).is_empty());
}

fn an_interrupted_instance_starts_nothing_new_and_running_work_finishes() {
    let mut e = Engine::new();
    let d = doc(
        80,
        &[
            A {
                id: 2,
                command: Some("true"),
                pre: &[(1, false)],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                time_to_wait: 3,
                pre: &[(4, false)],
                ..A::default()
            },
            A {
                id: 5,
                command: Some("sleep 1"),
                adj: &[(6, "/remote/f")],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 80, 1, &d); // 5 runs
    assert!(control(&mut e, 1500, 80, Control::Interrupt).is_empty());
    assert!(notify_at(&mut e, 2000, 80, 1, Outcome::Succeeded).is_empty());
    assert_eq!(state(&e, 80, 2), ActivityState::NotReady);
    assert_eq!(
        e.next_deadline(),
        None,
        "no emergency start while interrupted"
    );
    assert!(tick(&mut e, 10_000).is_empty());
    assert_eq!(state(&e, 80, 3), ActivityState::NotReady);
    let fx = ended(&mut e, 11_000, 80, 5, true, 0);
    assert_eq!(state(&e, 80, 5), ActivityState::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/f".to_owned(), 5, Outcome::Succeeded)]
    );
}

fn a_resumed_instance_starts_what_is_ready_and_what_its_triggers_call_for() {
    let mut e = Engine::new();
    let d = doc(
        81,
        &[
            A {
                id: 2,
                command: Some("true"),
                pre: &[(1, false)],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                time_to_wait: 3,
                pre: &[(4, false)],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 81, 1, &d);
    control(&mut e, 1500, 81, Control::Interrupt);
    notify_at(&mut e, 2000, 81, 1, Outcome::Succeeded);
    let fx = control(&mut e, 10_000, 81, Control::Resume);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    assert_eq!(
        e.next_deadline(),
        Some(4000),
        "overdue: the daemon ticks at once"
    );
    let fx = tick(&mut e, 10_000);
    assert_eq!(executes(&fx), vec![(3, 0)]);
    assert!(
        e.record(InstanceId(81), ActivityId(3))
            .expect("record")
            .emergency
    );
}

fn an_interrupted_instance_does_not_try_a_failed_command_again_until_resumed() {
    for wait in [0, 5] {
        let mut e = Engine::new();
        let d = doc(
            82,
            &[A {
                id: 1,
                command: Some("false"),
                retries: Some((1, wait)),
                ..A::default()
            }],
        );
        deploy(&mut e, 82, 1, &d);
        control(&mut e, 1500, 82, Control::Interrupt);
        let fx = ended(&mut e, 2000, 82, 1, false, 0);
        assert_eq!(executes(&fx), vec![], "wait {wait}");
        assert_eq!(e.next_deadline(), None, "wait {wait}");
        assert!(tick(&mut e, 60_000).is_empty(), "wait {wait}");
        control(&mut e, 61_000, 82, Control::Resume);
        assert!(
            e.next_deadline().is_some_and(|d| d <= 61_000),
            "wait {wait}"
        );
        assert_eq!(executes(&tick(&mut e, 61_000)), vec![(1, 1)], "wait {wait}");
    }
}

fn cancel_ends_every_activity_kills_commands_and_sends_the_result_to_the_controller_only() {
    let mut e = Engine::new();
    let d = doc(
        83,
        &[
            A {
                id: 1,
                command: Some("sleep 60"),
                adj: &[(2, "/local"), (9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(1, true)],
                adj: &[(8, "/remote/y")],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 83, 1, &d);
    ended(&mut e, 1500, 83, 3, true, 0);
    let fx = control(&mut e, 2000, 83, Control::Cancel);
    assert_eq!(kills(&fx), vec![(1, 0)]);
    assert_eq!(notifies(&fx), vec![]);
    assert_eq!(reports(&fx), vec![]);
    assert_eq!(
        result_of(&fx),
        Some(vec![
            (1, ActivityState::Cancelled),
            (2, ActivityState::Cancelled),
            (3, ActivityState::Succeeded)
        ])
    );
    assert_eq!(
        detail(&e, 83, 2),
        "the instance was cancelled by an operator"
    );
    assert_eq!(e.next_deadline(), None);
}

fn a_partition_deployed_after_its_instance_was_cancelled_is_cancelled_at_once() {
    let mut e = Engine::new();
    control(&mut e, 500, 84, Control::Cancel);
    let fx = deploy(&mut e, 84, 1, &waits_for_remote_1(84));
    assert_eq!(executes(&fx), vec![]);
    assert_eq!(result_of(&fx), Some(vec![(2, ActivityState::Cancelled)]));
}

fn a_partition_deployed_while_its_instance_is_interrupted_waits_for_the_resumption() {
    let mut e = Engine::new();
    control(&mut e, 500, 85, Control::Interrupt);
    let d = doc(
        85,
        &[A {
            id: 1,
            command: Some("true"),
            ..A::default()
        }],
    );
    assert!(deploy(&mut e, 85, 1, &d).is_empty());
    assert_eq!(state(&e, 85, 1), ActivityState::NotReady);
    let fx = control(&mut e, 2000, 85, Control::Resume);
    assert_eq!(executes(&fx), vec![(1, 0)]);
}

fn an_emergency_start_that_finishes_at_once_is_reported_once() {
    let mut e = Engine::new();
    let d = doc(
        86,
        &[A {
            id: 2,
            time_to_wait: 5,
            pre: &[(1, false)],
            adj: &[(3, "/remote/c")],
            ..A::default()
        }],
    );
    deploy(&mut e, 86, 1, &d);
    let fx = tick(&mut e, 6000);
    assert_eq!(reports(&fx), vec![(2, ActivityState::Succeeded)]);
    assert!(
        e.record(InstanceId(86), ActivityId(2))
            .expect("record")
            .emergency
    );
}

fn an_interrupted_instance_stays_interrupted_after_a_restart() {
    let mut e = Engine::new();
    let d = doc(
        87,
        &[A {
            id: 2,
            command: Some("true"),
            time_to_wait: 5,
            pre: &[(1, false)],
            ..A::default()
        }],
    );
    deploy(&mut e, 87, 1, &d);
    control(&mut e, 2000, 87, Control::Interrupt);
    let mut e = restart(&mut e);
    assert_eq!(e.next_deadline(), None);
    assert!(notify_at(&mut e, 7000, 87, 1, Outcome::Succeeded).is_empty());
    let fx = control(&mut e, 8000, 87, Control::Resume);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn an_interrupt_overtaken_by_the_resumption_after_it_is_not_taken() {
    let mut e = Engine::new();
    let d = doc(
        88,
        &[A {
            id: 2,
            command: Some("true"),
            pre: &[(1, false)],
            ..A::default()
        }],
    );
    deploy(&mut e, 88, 1, &d);
    let numbered = |instance, action, order| {
        Input::Control(ControlInstance {
            instance: InstanceId(instance),
            action,
            order,
        })
    };
    // The operator interrupted (1) then resumed (2); the resumption arrives first.
    at(&mut e, 2000, numbered(88, Control::Resume, 2));
    assert!(at(&mut e, 2100, numbered(88, Control::Interrupt, 1)).is_empty());
    let fx = notify_at(&mut e, 3000, 88, 1, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)], "the instance runs: it was resumed last");
    // A newer interrupt is taken, and a cancel whatever its number.
    let mut e = Engine::new();
    deploy(&mut e, 88, 1, &d);
    at(&mut e, 2000, numbered(88, Control::Interrupt, 3));
    assert!(at(&mut e, 2100, numbered(88, Control::Resume, 2)).is_empty());
    assert!(notify_at(&mut e, 3000, 88, 1, Outcome::Succeeded).is_empty());
    at(&mut e, 3100, numbered(88, Control::Cancel, 1));
    assert_eq!(state(&e, 88, 2), ActivityState::Cancelled);
}
}
