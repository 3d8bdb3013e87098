//! Scenarios of failures: retries, contingencies (-1, 0, x), substitutions and late words.

use super::*;

/// Activity 1 fails with contingency activity 5; activity 2 waits for it here, and 9 on
/// another partner.
fn contingency_doc(instance: u64) -> String {
    doc(
        instance,
        &[
            A {
                id: 1,
                command: Some("false"),
                contingency: 5,
                adj: &[(2, "/local"), (9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 2,
                command: Some("true"),
                pre: &[(1, true)],
                ..A::default()
            },
        ],
    )
}

scenarios! {
fn a_failed_command_is_tried_again_after_its_wait() {
    let mut e = Engine::new();
    let d = doc(
        20,
        &[A {
            id: 1,
            command: Some("false"),
            retries: Some((2, 5)),
            adj: &[(2, "/remote/b")],
            ..A::default()
        }],
    );
    assert_eq!(executes(&deploy(&mut e, 20, 1, &d)), vec![(1, 0)]); // at 1000
    let fx = ended(&mut e, 3000, 20, 1, false, 0);
    assert!(fx.is_empty(), "nobody hears of a try that failed: {fx:?}");
    let rec = e.record(InstanceId(20), ActivityId(1)).expect("record");
    assert_eq!((rec.state, rec.retried), (ActivityState::Running, 1));
    assert_eq!(
        rec.detail.as_deref(),
        Some("try 1 of 3 failed: exit status 1")
    );
    assert_eq!(e.next_deadline(), Some(8000), "3000 + 5 s");
    assert!(tick(&mut e, 7999).is_empty());
    assert_eq!(executes(&tick(&mut e, 8000)), vec![(1, 1)]);
    assert_eq!(e.next_deadline(), None);
    ended(&mut e, 9000, 20, 1, false, 1);
    assert_eq!(e.next_deadline(), Some(14_000));
    assert_eq!(executes(&tick(&mut e, 14_000)), vec![(1, 2)]);
    let fx = ended(&mut e, 15_000, 20, 1, true, 2);
    let rec = e.record(InstanceId(20), ActivityId(1)).expect("record");
    assert_eq!((rec.state, rec.retried), (ActivityState::Succeeded, 2));
    assert_eq!(
        notifies(&fx),
        vec![("/remote/b".to_owned(), 1, Outcome::Succeeded)]
    );
}

fn with_a_zero_wait_the_next_try_starts_at_once() {
    let mut e = Engine::new();
    let d = doc(
        21,
        &[A {
            id: 1,
            command: Some("false"),
            retries: Some((3, 0)),
            ..A::default()
        }],
    );
    deploy(&mut e, 21, 1, &d);
    assert_eq!(
        executes(&ended(&mut e, 3000, 21, 1, false, 0)),
        vec![(1, 1)]
    );
    assert_eq!(
        executes(&ended(&mut e, 3100, 21, 1, false, 1)),
        vec![(1, 2)]
    );
    assert_eq!(e.next_deadline(), None);
    assert_eq!(
        e.record(InstanceId(21), ActivityId(1))
            .expect("record")
            .retried,
        2
    );
}

fn after_the_last_try_the_activity_fails_and_its_contingency_applies() {
    let mut e = Engine::new();
    let d = doc(
        22,
        &[
            A {
                id: 1,
                command: Some("false"),
                retries: Some((1, 0)),
                contingency: 0,
                adj: &[(2, "/local"), (3, "/remote/c")],
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(1, true)],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 22, 1, &d);
    ended(&mut e, 3000, 22, 1, false, 0);
    let fx = ended(&mut e, 4000, 22, 1, false, 1);
    let rec = e.record(InstanceId(22), ActivityId(1)).expect("record");
    assert_eq!(
        (rec.state, rec.retried, rec.detail.as_deref()),
        (ActivityState::Failed, 1, Some("exit status 1"))
    );
    assert_eq!(executes(&fx), vec![], "no third try");
    assert_eq!(
        notifies(&fx),
        vec![("/remote/c".to_owned(), 1, Outcome::Released)]
    );
    assert_eq!(state(&e, 22, 2), ActivityState::Succeeded, "released");
    assert_eq!(
        result_of(&fx),
        Some(vec![
            (1, ActivityState::Failed),
            (2, ActivityState::Succeeded)
        ])
    );
}

fn a_time_out_during_a_try_kills_that_try_and_counts_as_a_failed_try() {
    let mut e = Engine::new();
    let d = doc(
        23,
        &[A {
            id: 1,
            command: Some("sleep 60"),
            time_out: 2,
            retries: Some((1, 1)),
            ..A::default()
        }],
    );
    deploy(&mut e, 23, 1, &d); // at 1000
    assert_eq!(e.next_deadline(), Some(3000));
    let fx = tick(&mut e, 3000);
    assert_eq!(kills(&fx), vec![(1, 0)]);
    assert_eq!(executes(&fx), vec![], "the next try waits 1 s");
    let rec = e.record(InstanceId(23), ActivityId(1)).expect("record");
    assert_eq!((rec.state, rec.retried), (ActivityState::Running, 1));
    assert_eq!(
        rec.detail.as_deref(),
        Some("try 1 of 2 failed: ran longer than its timeOut of 2 s")
    );
    assert_eq!(
        e.next_deadline(),
        Some(4000),
        "the timeOut does not run while waiting"
    );
    assert_eq!(executes(&tick(&mut e, 4000)), vec![(1, 1)]);
    assert_eq!(
        e.next_deadline(),
        Some(6000),
        "the new try has its own timeOut"
    );
    let fx = tick(&mut e, 6000);
    assert_eq!(kills(&fx), vec![(1, 1)]);
    assert_eq!(state(&e, 23, 1), ActivityState::Failed);
    assert_eq!(detail(&e, 23, 1), "ran longer than its timeOut of 2 s");
    assert_eq!(result_of(&fx), Some(vec![(1, ActivityState::Failed)]));
}

fn the_end_of_an_earlier_try_is_ignored() {
    let mut e = Engine::new();
    let d = doc(
        24,
        &[A {
            id: 1,
            command: Some("sleep 60"),
            time_out: 2,
            retries: Some((1, 0)),
            adj: &[(2, "/remote/b")],
            ..A::default()
        }],
    );
    deploy(&mut e, 24, 1, &d);
    let fx = tick(&mut e, 3000);
    assert_eq!((kills(&fx), executes(&fx)), (vec![(1, 0)], vec![(1, 1)]));
    // The killed try 0 says it succeeded after all: too late, try 1 runs.
    assert!(ended(&mut e, 3500, 24, 1, true, 0).is_empty());
    assert_eq!(state(&e, 24, 1), ActivityState::Running);
    let fx = ended(&mut e, 4000, 24, 1, true, 1);
    assert_eq!(state(&e, 24, 1), ActivityState::Succeeded);
    assert_eq!(notifies(&fx).len(), 1);
}

// Contingency.

fn contingency_minus_one_cancels_successors_over_several_levels_and_blocks_remote_ones() {
    let mut e = Engine::new();
    let d = doc(
        30,
        &[
            A {
                id: 1,
                command: Some("false"),
                adj: &[(2, "/local"), (9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 2,
                // Even a successor that would release its own successors is cancelled: it
                // never ran, so it did not fail.
                contingency: 0,
                pre: &[(1, true)],
                adj: &[(3, "/local"), (8, "/remote/y")],
                ..A::default()
            },
            A {
                id: 3,
                pre: &[(2, true)],
                adj: &[(7, "/remote/z")],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 30, 1, &d);
    let fx = ended(&mut e, 3000, 30, 1, false, 0);
    assert_eq!(
        [1, 2, 3].map(|a| state(&e, 30, a)),
        [
            ActivityState::Failed,
            ActivityState::Cancelled,
            ActivityState::Cancelled
        ]
    );
    assert_eq!(
        notifies(&fx),
        vec![
            ("/remote/x".to_owned(), 1, Outcome::Blocked),
            ("/remote/y".to_owned(), 2, Outcome::Blocked),
            ("/remote/z".to_owned(), 3, Outcome::Blocked),
        ]
    );
    assert_eq!(detail(&e, 30, 3), "precondition 2 failed or was cancelled");
    assert!(result_of(&fx).is_some());
}

fn a_blocked_remote_precondition_cancels_every_local_level_after_it() {
    let mut e = Engine::new();
    let d = doc(
        31,
        &[
            A {
                id: 2,
                command: Some("true"),
                pre: &[(1, false)],
                adj: &[(3, "/local")],
                ..A::default()
            },
            A {
                id: 3,
                pre: &[(2, true)],
                adj: &[(4, "/local"), (9, "/remote/x")],
                ..A::default()
            },
            A {
                id: 4,
                pre: &[(3, true)],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 31, 1, &d);
    let fx = notify_at(&mut e, 2000, 31, 1, Outcome::Blocked);
    assert_eq!(executes(&fx), vec![]);
    assert!(
        [2, 3, 4]
            .iter()
            .all(|&a| state(&e, 31, a) == ActivityState::Cancelled)
    );
    assert_eq!(
        notifies(&fx),
        vec![("/remote/x".to_owned(), 3, Outcome::Blocked)]
    );
}

fn a_failure_with_a_contingency_activity_is_reported_at_once_and_notifies_nobody() {
    let mut e = Engine::new();
    deploy(&mut e, 32, 1, &contingency_doc(32));
    let fx = ended(&mut e, 3000, 32, 1, false, 0);
    assert_eq!(notifies(&fx), vec![], "the successors wait for activity 5");
    assert_eq!(reports(&fx), vec![(1, ActivityState::Failed)]);
    assert_eq!(result_of(&fx), None, "activity 2 still waits");
    assert_eq!(state(&e, 32, 2), ActivityState::NotReady);
}

fn local_successors_of_a_replaced_activity_run_on_the_contingency_activitys_word() {
    let mut e = Engine::new();
    deploy(&mut e, 33, 1, &contingency_doc(33));
    ended(&mut e, 3000, 33, 1, false, 0);
    assert!(substitute(&mut e, 4000, 33, 1, 5).is_empty());
    assert_eq!(state(&e, 33, 2), ActivityState::NotReady);
    let fx = notify_at(&mut e, 5000, 33, 5, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    let fx = ended(&mut e, 6000, 33, 2, true, 0);
    assert_eq!(
        result_of(&fx),
        Some(vec![
            (1, ActivityState::Failed),
            (2, ActivityState::Succeeded)
        ])
    );
}

fn the_contingency_activitys_word_may_come_before_the_substitution() {
    let mut e = Engine::new();
    deploy(&mut e, 34, 1, &contingency_doc(34));
    ended(&mut e, 3000, 34, 1, false, 0);
    assert!(notify_at(&mut e, 4000, 34, 5, Outcome::Succeeded).is_empty());
    let fx = substitute(&mut e, 5000, 34, 1, 5);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn a_contingency_activity_that_fails_and_blocks_cancels_the_successors() {
    let mut e = Engine::new();
    deploy(&mut e, 35, 1, &contingency_doc(35));
    ended(&mut e, 3000, 35, 1, false, 0);
    substitute(&mut e, 4000, 35, 1, 5);
    let fx = notify_at(&mut e, 5000, 35, 5, Outcome::Blocked);
    assert_eq!(executes(&fx), vec![]);
    assert_eq!(state(&e, 35, 2), ActivityState::Cancelled);
    assert_eq!(detail(&e, 35, 2), "precondition 1 failed or was cancelled");
    assert!(result_of(&fx).is_some());
}

fn a_chain_of_substitutions_is_followed_to_its_end() {
    let mut e = Engine::new();
    deploy(&mut e, 36, 1, &contingency_doc(36));
    ended(&mut e, 3000, 36, 1, false, 0);
    substitute(&mut e, 4000, 36, 1, 5);
    // Activity 5 failed in turn; its own contingency activity 6 runs in its place.
    assert!(substitute(&mut e, 5000, 36, 5, 6).is_empty());
    assert_eq!(
        e.known(InstanceId(36))
            .expect("known")
            .stand_in(ActivityId(1)),
        Some(ActivityId(6))
    );
    assert!(notify_at(&mut e, 6000, 36, 5, Outcome::Blocked).is_empty());
    assert_eq!(state(&e, 36, 2), ActivityState::NotReady);
    let fx = notify_at(&mut e, 7000, 36, 6, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

// Late word: what comes about a replaced activity after its substitution.

fn a_word_about_a_replaced_activity_after_the_substitution_is_kept_as_late_and_starts_nothing() {
    let mut e = Engine::new();
    deploy(&mut e, 40, 1, &waits_for_remote_1(40));
    substitute(&mut e, 2000, 40, 1, 5);
    assert!(notify_at(&mut e, 3000, 40, 1, Outcome::Succeeded).is_empty());
    let known = e.known(InstanceId(40)).expect("known");
    assert_eq!(known.late.get(&ActivityId(1)), Some(&Outcome::Succeeded));
    assert!(!known.heard.contains_key(&ActivityId(1)));
    assert_eq!(state(&e, 40, 2), ActivityState::NotReady);
    assert_eq!(
        executes(&notify_at(&mut e, 4000, 40, 5, Outcome::Succeeded)),
        vec![(2, 0)]
    );
    assert!(notify_at(&mut e, 5000, 40, 1, Outcome::Succeeded).is_empty());
    assert!(notify_at(&mut e, 5000, 40, 5, Outcome::Succeeded).is_empty());
}

fn a_word_before_the_substitution_started_the_successor_and_the_contingency_word_starts_nothing() {
    let mut e = Engine::new();
    deploy(&mut e, 41, 1, &waits_for_remote_1(41));
    assert_eq!(
        executes(&notify_at(&mut e, 2000, 41, 1, Outcome::Succeeded)),
        vec![(2, 0)]
    );
    assert!(substitute(&mut e, 3000, 41, 1, 5).is_empty());
    assert!(notify_at(&mut e, 4000, 41, 5, Outcome::Succeeded).is_empty());
    assert_eq!(state(&e, 41, 2), ActivityState::Running);
    ended(&mut e, 5000, 41, 2, true, 0);
    assert_eq!(state(&e, 41, 2), ActivityState::Succeeded);
}

// Withdrawal: the controller decided that an activity failed.
}
