//! Scenarios of timers: `timeToWait` emergency starts, activity `timeOut`s, overdue remote
//! preconditions, and timers across restarts.

use super::*;
use mobiwf_proto::Report;

/// Activity 2 waits for activity 1 of another partner at most 10 s, and for activity 3.
fn overdue_doc(instance: u64) -> String {
    doc(
        instance,
        &[A {
            id: 2,
            command: Some("true"),
            pre: &[(1, false), (3, false)],
            pre_time_out: &[(1, 10)],
            ..A::default()
        }],
    )
}

scenarios! {
fn time_to_wait_starts_a_waiting_activity_as_an_emergency_and_tells_the_controller() {
    let mut e = Engine::new();
    let d = doc(
        12,
        &[A {
            id: 2,
            extra: "<command>true</command>",
            contingency: -1,
            pre: &[(1, false)],
            adj: &[],
            ..A::default()
        }],
    );
    let d = d.replace("<timeToWait>0</timeToWait>", "<timeToWait>5</timeToWait>");
    deploy(&mut e, 12, 1, &d); // at 1000 ms
    assert_eq!(e.next_deadline(), Some(6000));
    assert!(e.apply(5999, Input::Tick).expect("tick").is_empty());
    assert_eq!(state(&e, 12, 2), ActivityState::NotReady);

    // The deadline is kept across a restart: it counts from the stored deployment time.
    let changes = e.take_changes().expect("changes");
    let runs = changes
        .runs
        .into_iter()
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
        .collect();
    let mut e = Engine::restore(runs, decode_known(changes.known));
    assert_eq!(e.next_deadline(), Some(6000));

    let fx = e.apply(6000, Input::Tick).expect("tick");
    assert!(
        fx.iter().any(|f| matches!(
            f,
            Effect::Execute {
                activity: ActivityId(2),
                ..
            }
        )),
        "{fx:?}"
    );
    match to_controller(&fx)[..] {
        [Message::Report(Report { record, .. })] => {
            assert!(
                record.emergency && record.state == ActivityState::Running,
                "{record:?}"
            );
        }
        ref other => panic!("expected one report, got {other:?}"),
    }
    assert_eq!(e.next_deadline(), None);
    // The late notification changes nothing.
    assert!(notified(&mut e, 12, 1, Outcome::Succeeded).is_empty());
    assert!(
        e.record(InstanceId(12), ActivityId(2))
            .expect("record")
            .emergency
    );
}

fn an_activity_that_runs_longer_than_its_time_out_fails_and_its_command_is_killed() {
    let mut e = Engine::new();
    let d = doc(
        13,
        &[
            A {
                id: 1,
                extra: "<timeOut>2</timeOut><command>sleep 60</command>",
                contingency: 0,
                pre: &[],
                adj: &[(2, "/remote/b")],
                ..A::default()
            },
            A {
                id: 3,
                extra: "<timeOut>1</timeOut><kind>manual</kind>",
                contingency: -1,
                pre: &[],
                adj: &[],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 13, 1, &d); // at 1000 ms: both start
    assert_eq!(e.next_deadline(), Some(2000), "the manual one has 1 s");
    let fx = e.apply(2000, Input::Tick).expect("tick");
    assert_eq!(state(&e, 13, 3), ActivityState::Failed);
    assert!(
        !fx.iter().any(|f| matches!(f, Effect::Kill { .. })),
        "nothing to kill: {fx:?}"
    );
    assert_eq!(e.next_deadline(), Some(3000));
    let fx = e.apply(3000, Input::Tick).expect("tick");
    assert!(
        fx.iter().any(
            |f| matches!(f, Effect::Kill { key, activity: ActivityId(1), attempt: 0, .. }
            if *key == RunKey { instance: InstanceId(13), partition: PartitionId(1) })
        ),
        "{fx:?}"
    );
    let rec = e.record(InstanceId(13), ActivityId(1)).expect("record");
    assert_eq!(rec.state, ActivityState::Failed);
    assert_eq!(
        rec.detail.as_deref(),
        Some("ran longer than its timeOut of 2 s")
    );
    // Contingency 0: the successor elsewhere is released.
    assert_eq!(
        notifies(&fx),
        vec![("/remote/b".to_owned(), 1, Outcome::Released)]
    );
    // The killed command's exit comes later and changes nothing.
    assert!(finished(&mut e, 13, 1, false, Finisher::Command).is_err());
    assert_eq!(e.next_deadline(), None);
}

// Retries: a failed try is tried again after the wait, then the activity fails. Precondition
// timeOut: the controller hears of a remote precondition too slow to come, once.

fn a_remote_precondition_not_heard_within_its_time_out_is_reported_overdue_once() {
    let mut e = Engine::new();
    deploy(&mut e, 60, 1, &overdue_doc(60)); // at 1000
    assert_eq!(e.next_deadline(), Some(11_000));
    assert!(tick(&mut e, 10_999).is_empty());
    let fx = tick(&mut e, 11_000);
    assert_eq!(overdues(&fx), vec![(2, 1, 10)]);
    assert_eq!(
        state(&e, 60, 2),
        ActivityState::NotReady,
        "the controller decides"
    );
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 20_000).is_empty());
    // The word comes after all: it counts.
    notify_at(&mut e, 21_000, 60, 1, Outcome::Succeeded);
    let fx = notify_at(&mut e, 21_000, 60, 3, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

fn an_overdue_precondition_is_reported_once_across_a_restart() {
    let mut e = Engine::new();
    deploy(&mut e, 61, 1, &overdue_doc(61));
    assert_eq!(overdues(&tick(&mut e, 11_000)), vec![(2, 1, 10)]);
    let mut e = restart(&mut e);
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 30_000).is_empty());
}

fn no_overdue_when_the_notification_came_in_time() {
    let mut e = Engine::new();
    deploy(&mut e, 62, 1, &overdue_doc(62));
    notify_at(&mut e, 10_000, 62, 1, Outcome::Succeeded);
    assert_eq!(state(&e, 62, 2), ActivityState::NotReady, "it waits for 3");
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 11_000).is_empty());
}

// Timers survive a restart: they count from stored times.

fn timers_fire_at_their_stored_deadlines_after_a_restart() {
    let mut e = Engine::new();
    let d = doc(
        70,
        &[
            A {
                // Emergency start at 1000 + 4 s.
                id: 1,
                command: Some("true"),
                time_to_wait: 4,
                pre: &[(90, false)],
                ..A::default()
            },
            A {
                // Runs from 1000; too long at 1000 + 6 s.
                id: 2,
                command: Some("sleep 60"),
                time_out: 6,
                ..A::default()
            },
            A {
                // Fails at 3000; tried again at 3000 + 8 s.
                id: 3,
                command: Some("false"),
                retries: Some((1, 8)),
                ..A::default()
            },
            A {
                // Overdue at 1000 + 12 s.
                id: 4,
                command: Some("true"),
                pre: &[(91, false)],
                pre_time_out: &[(91, 12)],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 70, 1, &d);
    ended(&mut e, 3000, 70, 3, false, 0);
    // The node restarts at 4000.
    let mut e = restart(&mut e);
    assert_eq!(e.next_deadline(), Some(5000));
    assert_eq!(executes(&tick(&mut e, 5000)), vec![(1, 0)]);
    assert!(
        e.record(InstanceId(70), ActivityId(1))
            .expect("record")
            .emergency
    );
    assert_eq!(e.next_deadline(), Some(7000));
    assert_eq!(kills(&tick(&mut e, 7000)), vec![(2, 0)]);
    assert_eq!(e.next_deadline(), Some(11_000));
    assert_eq!(executes(&tick(&mut e, 11_000)), vec![(3, 1)]);
    assert_eq!(e.next_deadline(), Some(13_000));
    assert_eq!(overdues(&tick(&mut e, 13_000)), vec![(4, 91, 12)]);
    assert_eq!(e.next_deadline(), None);
}

fn timers_due_at_the_same_tick_start_an_activity_once() {
    let mut e = Engine::new();
    let d = doc(
        71,
        &[
            A {
                id: 1,
                time_to_wait: 5,
                pre: &[(90, false)],
                adj: &[(2, "/local")],
                ..A::default()
            },
            A {
                id: 2,
                time_to_wait: 5,
                pre: &[(1, true)],
                adj: &[(3, "/remote/c")],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 71, 1, &d);
    // Activity 1 starts on its trigger and succeeds at once: activity 2 is ready and runs,
    // its own trigger has nothing left to do.
    let fx = tick(&mut e, 6000);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/c".to_owned(), 2, Outcome::Succeeded)]
    );
    assert!(
        !e.record(InstanceId(71), ActivityId(2))
            .expect("record")
            .emergency
    );
    assert_eq!(
        reports(&fx),
        vec![(1, ActivityState::Succeeded), (2, ActivityState::Succeeded)]
    );
}

fn two_timers_of_one_activity_due_at_one_tick_both_fire() {
    let mut e = Engine::new();
    let d = doc(
        72,
        &[A {
            id: 2,
            command: Some("true"),
            time_to_wait: 20,
            pre: &[(1, false)],
            pre_time_out: &[(1, 10)],
            ..A::default()
        }],
    );
    deploy(&mut e, 72, 1, &d);
    // The node was down from before 11 000 until 30 000: both the overdue report and the
    // emergency start are due.
    let fx = tick(&mut e, 30_000);
    assert_eq!(overdues(&fx), vec![(2, 1, 10)]);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    assert_eq!(e.next_deadline(), None);
}
}
