//! Scenarios of plain execution: the paper's partitions, commands, notifications, the
//! worklist, refused documents.

use super::*;
use mobiwf_proto::{PartitionResult, Report};

scenarios! {
fn paper_partition_1_runs_until_it_needs_a4_then_finishes_on_its_notification() {
    let mut e = Engine::new();
    let fx = deploy(&mut e, 18, 1, PARTITION_1);
    // A1 and A2 have no command: they succeed at once. A2 notifies A4's partner directly.
    assert_eq!(
        notifies(&fx),
        vec![("139.82.3.146".to_owned(), 17, Outcome::Succeeded)]
    );
    assert!(
        matches!(to_controller(&fx)[..], [Message::Report(Report { record, .. })] if record.activity == ActivityId(17))
    );
    assert_eq!(state(&e, 18, 18), ActivityState::NotReady);

    let fx = notified(&mut e, 18, 19, Outcome::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("139.82.3.146".to_owned(), 18, Outcome::Succeeded)]
    );
    let ctl = to_controller(&fx);
    assert_eq!(ctl.len(), 2, "{ctl:?}");
    match ctl[1] {
        Message::PartitionResult(PartitionResult {
            instance,
            partition,
            activities,
        }) => {
            assert_eq!((*instance, *partition), (InstanceId(18), PartitionId(1)));
            assert!(
                activities
                    .iter()
                    .all(|r| r.state == ActivityState::Succeeded)
            );
            assert_eq!(activities.len(), 3);
        }
        other => panic!("expected the partition result, got {other:?}"),
    }
}

fn paper_partition_2_waits_for_a2_and_a3() {
    let mut e = Engine::new();
    assert!(deploy(&mut e, 18, 2, PARTITION_2).is_empty());
    let fx = notified(&mut e, 18, 17, Outcome::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("139.82.2.149".to_owned(), 19, Outcome::Succeeded)]
    );
    let fx = notified(&mut e, 18, 18, Outcome::Succeeded);
    assert!(matches!(
        to_controller(&fx).last(),
        Some(Message::PartitionResult(_))
    ));
}

fn a_notification_before_the_deployment_is_kept_and_duplicates_change_nothing() {
    let mut e = Engine::new();
    assert!(notified(&mut e, 18, 17, Outcome::Succeeded).is_empty());
    assert!(notified(&mut e, 18, 17, Outcome::Succeeded).is_empty());
    let fx = deploy(&mut e, 18, 2, PARTITION_2);
    assert_eq!(notifies(&fx).len(), 1, "A4 ran on the early notification");
    assert!(
        deploy(&mut e, 18, 2, PARTITION_2).is_empty(),
        "a second deployment is a duplicate"
    );
    assert!(
        notified(&mut e, 18, 17, Outcome::Blocked).is_empty(),
        "the first word stands"
    );
}

fn a_command_runs_once_and_its_exit_decides() {
    let mut e = Engine::new();
    let d = doc(
        5,
        &[A {
            id: 1,
            extra: "<command>true</command>",
            contingency: -1,
            pre: &[],
            adj: &[(2, "/remote/b")],
            ..A::default()
        }],
    );
    let fx = deploy(&mut e, 5, 1, &d);
    assert_eq!(
        fx,
        vec![Effect::Execute {
            reads: Vec::new(), writes: Vec::new(), lease_ms: None, asked_ms: 0,
            key: RunKey {
                instance: InstanceId(5),
                partition: PartitionId(1)
            },
            activity: ActivityId(1),
            attempt: 0,
            command: "true".to_owned()
        }]
    );
    assert_eq!(state(&e, 5, 1), ActivityState::Running);
    let err = finished(&mut e, 5, 1, true, Finisher::Person).unwrap_err();
    assert!(err.to_string().contains("automatic"), "{err}");
    let fx = finished(&mut e, 5, 1, true, Finisher::Command).expect("finish");
    assert_eq!(
        notifies(&fx),
        vec![("/remote/b".to_owned(), 1, Outcome::Succeeded)]
    );
    let again = finished(&mut e, 5, 1, true, Finisher::Command).unwrap_err();
    assert!(
        again.to_string().contains("succeeded, not running"),
        "{again}"
    );
}

fn failure_with_contingency_minus_one_cancels_successors_transitively() {
    let mut e = Engine::new();
    let d = doc(
        6,
        &[
            A {
                id: 1,
                extra: "<command>false</command>",
                contingency: -1,
                pre: &[],
                adj: &[(2, "/local")],
                ..A::default()
            },
            A {
                id: 2,
                extra: "",
                contingency: -1,
                pre: &[(1, true)],
                adj: &[(3, "/remote/c")],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 6, 1, &d);
    let fx = finished(&mut e, 6, 1, false, Finisher::Command).expect("finish");
    assert_eq!(state(&e, 6, 1), ActivityState::Failed);
    assert_eq!(state(&e, 6, 2), ActivityState::Cancelled);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/c".to_owned(), 2, Outcome::Blocked)]
    );
    match to_controller(&fx).last() {
        Some(Message::PartitionResult(PartitionResult { activities, .. })) => {
            assert_eq!(activities[0].detail.as_deref(), Some("exit status 1"));
            assert!(
                activities[1]
                    .detail
                    .as_deref()
                    .unwrap_or("")
                    .contains("precondition 1")
            );
        }
        other => panic!("expected a partition result, got {other:?}"),
    }
}

fn failure_with_contingency_zero_releases_successors() {
    let mut e = Engine::new();
    let d = doc(
        7,
        &[
            A {
                id: 1,
                extra: "<command>false</command>",
                contingency: 0,
                pre: &[],
                adj: &[(2, "/local"), (3, "/remote/c")],
                ..A::default()
            },
            A {
                id: 2,
                extra: "",
                contingency: -1,
                pre: &[(1, true)],
                adj: &[],
                ..A::default()
            },
        ],
    );
    deploy(&mut e, 7, 1, &d);
    let fx = finished(&mut e, 7, 1, false, Finisher::Command).expect("finish");
    assert_eq!(state(&e, 7, 1), ActivityState::Failed);
    assert_eq!(state(&e, 7, 2), ActivityState::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/c".to_owned(), 1, Outcome::Released)]
    );
}

fn a_remote_blocked_precondition_cancels() {
    let mut e = Engine::new();
    let d = doc(
        8,
        &[A {
            id: 2,
            extra: "",
            contingency: -1,
            pre: &[(1, false)],
            adj: &[],
            ..A::default()
        }],
    );
    deploy(&mut e, 8, 1, &d);
    notified(&mut e, 8, 1, Outcome::Blocked);
    assert_eq!(state(&e, 8, 2), ActivityState::Cancelled);
}

fn manual_work_waits_on_the_worklist_for_a_person() {
    let mut e = Engine::new();
    let d = doc(
        9,
        &[A {
            id: 1,
            extra: "<kind>manual</kind>",
            contingency: -1,
            pre: &[],
            adj: &[],
            ..A::default()
        }],
    );
    // Ready on the node's worklist: the controller is told so.
    assert_eq!(reports(&deploy(&mut e, 9, 1, &d)), [(1, ActivityState::Ready)]);
    let items = e.worklist();
    assert_eq!(items.len(), 1);
    assert_eq!(
        (items[0].instance, items[0].activity, items[0].kind.as_str()),
        (InstanceId(9), ActivityId(1), "manual")
    );
    let err = finished(&mut e, 9, 1, true, Finisher::Command).unwrap_err();
    assert!(err.to_string().contains("person"), "{err}");
    let fx = finished(&mut e, 9, 1, true, Finisher::Person).expect("complete");
    assert!(matches!(
        to_controller(&fx)[..],
        [Message::PartitionResult(_)]
    ));
    assert!(e.worklist().is_empty());
    let unknown = finished(&mut e, 9, 42, true, Finisher::Person).unwrap_err();
    assert_eq!(
        unknown,
        Refusal::UnknownActivity {
            instance: InstanceId(9),
            activity: ActivityId(42)
        }
    );
}

fn bad_documents_are_refused_without_changing_anything() {
    let mut e = Engine::new();
    let err = e
        .apply(
            0,
            Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(1), partition: PartitionId(1), document: "<workflow id=\"1\"><nope/></workflow>".to_owned(), responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("instance-1-partition-1.xml:1:"),
        "{err}"
    );
    let err = e
        .apply(
            0,
            Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(2), partition: PartitionId(1), document: PARTITION_1.to_owned(), responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
        )
        .unwrap_err();
    assert_eq!(
        err,
        Refusal::WrongInstance {
            instance: InstanceId(2),
            found: InstanceId(18)
        }
    );
    assert_eq!(e.runs().count(), 0);
    assert!(e.take_changes().expect("changes").runs.is_empty());
}

fn restored_from_its_changes_it_resumes_running_commands() {
    let mut e = Engine::new();
    let d = doc(
        10,
        &[A {
            id: 1,
            extra: "<command>sleep 1</command>",
            contingency: -1,
            pre: &[(7, false)],
            adj: &[],
            ..A::default()
        }],
    );
    deploy(&mut e, 10, 1, &d);
    notified(&mut e, 10, 7, Outcome::Succeeded);
    let changes = e.take_changes().expect("changes");
    assert_eq!(changes.runs.len(), 1);
    let runs: Vec<Run> = changes
        .runs
        .into_iter()
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
        .collect();
    let restored = Engine::restore(runs, decode_known(changes.known));
    assert_eq!(restored.resume().len(), 1);
    assert_eq!(state(&restored, 10, 1), ActivityState::Running);
}

fn a_different_document_for_a_known_run_is_refused_and_one_partner_is_notified_once() {
    let mut e = Engine::new();
    let d = doc(
        11,
        &[A {
            id: 1,
            extra: "",
            contingency: -1,
            pre: &[],
            adj: &[(2, "/remote/b"), (3, "/remote/b")],
            ..A::default()
        }],
    );
    let fx = deploy(&mut e, 11, 1, &d);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/b".to_owned(), 1, Outcome::Succeeded)]
    );
    let other = doc(
        11,
        &[A {
            id: 5,
            extra: "",
            contingency: -1,
            pre: &[],
            adj: &[],
            ..A::default()
        }],
    );
    let err = e
        .apply(
            0,
            Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(11), partition: PartitionId(1), document: other, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
        )
        .unwrap_err();
    assert_eq!(
        err,
        Refusal::Conflict {
            instance: InstanceId(11),
            partition: PartitionId(1)
        }
    );
}
}
