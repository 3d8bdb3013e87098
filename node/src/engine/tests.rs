//! Scenario tests of the partition engine: documents in, effects out, no I/O.

use super::*;
use mobiwf_runtime::wire::{ActivityState, Message, Outcome};

const PARTITION_1: &str = include_str!("../../../examples/paper/partition-1.xml");
const PARTITION_2: &str = include_str!("../../../examples/paper/partition-2.xml");

/// One activity of a test document.
struct A {
    id: u64,
    extra: &'static str,
    contingency: i64,
    pre: &'static [(u64, bool)],
    adj: &'static [(u64, &'static str)],
}

fn doc(instance: u64, acts: &[A]) -> String {
    let mut s = format!("<workflow id=\"{instance}\"><activities>");
    for a in acts {
        s += &format!(
            "<activity id=\"{}\"><nameActivity>N{}</nameActivity><status>0</status>\
             <responseImmediate>{}</responseImmediate><timeToWait>0</timeToWait>\
             <contingencyActivityId>{}</contingencyActivityId>{}<preconditions>",
            a.id,
            a.id,
            u8::from(a.adj.iter().any(|(_, l)| l.starts_with("/remote"))),
            a.contingency,
            a.extra
        );
        for (p, local) in a.pre {
            s += &format!(
                "<precondition id=\"{p}\"><status>0</status><local>{}</local><timeOut>0</timeOut></precondition>",
                u8::from(*local)
            );
        }
        s += "</preconditions><adjacents>";
        for (id, loc) in a.adj {
            s += &format!("<adjacent id=\"{id}\"><ip>{loc}</ip></adjacent>");
        }
        s += "</adjacents></activity>";
    }
    s + "</activities></workflow>"
}

fn deploy(e: &mut Engine, instance: u64, partition: u64, document: &str) -> Vec<Effect> {
    e.apply(
        1000,
        Input::Deploy {
            instance,
            partition,
            document: document.to_owned(),
        },
    )
    .expect("deploy")
}

fn notified(e: &mut Engine, instance: u64, activity: u64, outcome: Outcome) -> Vec<Effect> {
    e.apply(
        2000,
        Input::Notified {
            instance,
            activity,
            outcome,
        },
    )
    .expect("notified")
}

fn finished(
    e: &mut Engine,
    instance: u64,
    activity: u64,
    ok: bool,
    by: Finisher,
) -> Result<Vec<Effect>, Refusal> {
    e.apply(
        3000,
        Input::Finished {
            instance,
            activity,
            succeeded: ok,
            detail: (!ok).then(|| "exit status 1".to_owned()),
            by,
            attempt: 0,
        },
    )
}

fn notifies(effects: &[Effect]) -> Vec<(String, u64, Outcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Partner(loc),
                message:
                    Message::Notify {
                        activity, outcome, ..
                    },
            } => Some((loc.clone(), *activity, *outcome)),
            _ => None,
        })
        .collect()
}

fn to_controller(effects: &[Effect]) -> Vec<&Message> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Controller,
                message,
            } => Some(message),
            _ => None,
        })
        .collect()
}

fn state(e: &Engine, instance: u64, activity: u64) -> ActivityState {
    e.record(instance, activity).expect("record").state
}

#[test]
fn paper_partition_1_runs_until_it_needs_a4_then_finishes_on_its_notification() {
    let mut e = Engine::new();
    let fx = deploy(&mut e, 18, 1, PARTITION_1);
    // A1 and A2 have no command: they succeed at once. A2 notifies A4's partner directly.
    assert_eq!(
        notifies(&fx),
        vec![("139.82.3.146".to_owned(), 17, Outcome::Succeeded)]
    );
    assert!(
        matches!(to_controller(&fx)[..], [Message::Report { record, .. }] if record.activity == 17)
    );
    assert_eq!(state(&e, 18, 18), ActivityState::Waiting);

    let fx = notified(&mut e, 18, 19, Outcome::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("139.82.3.146".to_owned(), 18, Outcome::Succeeded)]
    );
    let ctl = to_controller(&fx);
    assert_eq!(ctl.len(), 2, "{ctl:?}");
    match ctl[1] {
        Message::PartitionResult {
            instance,
            partition,
            activities,
        } => {
            assert_eq!((*instance, *partition), (18, 1));
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

#[test]
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
        Some(Message::PartitionResult { .. })
    ));
}

#[test]
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

#[test]
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
        }],
    );
    let fx = deploy(&mut e, 5, 1, &d);
    assert_eq!(
        fx,
        vec![Effect::Execute {
            key: RunKey {
                instance: 5,
                partition: 1
            },
            activity: 1,
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

#[test]
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
            },
            A {
                id: 2,
                extra: "",
                contingency: -1,
                pre: &[(1, true)],
                adj: &[(3, "/remote/c")],
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
        Some(Message::PartitionResult { activities, .. }) => {
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

#[test]
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
                adj: &[(2, "/local")],
            },
            A {
                id: 2,
                extra: "",
                contingency: -1,
                pre: &[(1, true)],
                adj: &[],
            },
        ],
    );
    deploy(&mut e, 7, 1, &d);
    finished(&mut e, 7, 1, false, Finisher::Command).expect("finish");
    assert_eq!(state(&e, 7, 2), ActivityState::Succeeded);
}

#[test]
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
        }],
    );
    deploy(&mut e, 8, 1, &d);
    notified(&mut e, 8, 1, Outcome::Blocked);
    assert_eq!(state(&e, 8, 2), ActivityState::Cancelled);
}

#[test]
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
        }],
    );
    assert!(deploy(&mut e, 9, 1, &d).is_empty());
    let items = e.worklist();
    assert_eq!(items.len(), 1);
    assert_eq!(
        (items[0].instance, items[0].activity, items[0].kind.as_str()),
        (9, 1, "manual")
    );
    let err = finished(&mut e, 9, 1, true, Finisher::Command).unwrap_err();
    assert!(err.to_string().contains("person"), "{err}");
    let fx = finished(&mut e, 9, 1, true, Finisher::Person).expect("complete");
    assert!(matches!(
        to_controller(&fx)[..],
        [Message::PartitionResult { .. }]
    ));
    assert!(e.worklist().is_empty());
    let unknown = finished(&mut e, 9, 42, true, Finisher::Person).unwrap_err();
    assert_eq!(
        unknown,
        Refusal::UnknownActivity {
            instance: 9,
            activity: 42
        }
    );
}

#[test]
fn bad_documents_are_refused_without_changing_anything() {
    let mut e = Engine::new();
    let err = e
        .apply(
            0,
            Input::Deploy {
                instance: 1,
                partition: 1,
                document: "<workflow id=\"1\"><nope/></workflow>".to_owned(),
            },
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("instance-1-partition-1.xml:1:"),
        "{err}"
    );
    let err = e
        .apply(
            0,
            Input::Deploy {
                instance: 2,
                partition: 1,
                document: PARTITION_1.to_owned(),
            },
        )
        .unwrap_err();
    assert_eq!(
        err,
        Refusal::WrongInstance {
            instance: 2,
            found: 18
        }
    );
    assert_eq!(e.runs().count(), 0);
    assert!(e.take_changes().runs.is_empty());
}

#[test]
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
        }],
    );
    deploy(&mut e, 10, 1, &d);
    notified(&mut e, 10, 7, Outcome::Succeeded);
    let changes = e.take_changes();
    assert_eq!(changes.runs.len(), 1);
    let runs: Vec<Run> = changes
        .runs
        .into_iter()
        .map(|r| {
            serde_json::from_str::<Run>(&serde_json::to_string(&r).expect("ser"))
                .expect("de")
                .reload()
                .expect("reload")
        })
        .collect();
    let restored = Engine::restore(runs, changes.known);
    assert_eq!(restored.resume().len(), 1);
    assert_eq!(state(&restored, 10, 1), ActivityState::Running);
}

#[test]
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
        }],
    );
    let err = e
        .apply(
            0,
            Input::Deploy {
                instance: 11,
                partition: 1,
                document: other,
            },
        )
        .unwrap_err();
    assert_eq!(
        err,
        Refusal::Conflict {
            instance: 11,
            partition: 1
        }
    );
}

#[test]
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
        }],
    );
    let d = d.replace("<timeToWait>0</timeToWait>", "<timeToWait>5</timeToWait>");
    deploy(&mut e, 12, 1, &d); // at 1000 ms
    assert_eq!(e.next_deadline(), Some(6000));
    assert!(e.apply(5999, Input::Tick).expect("tick").is_empty());
    assert_eq!(state(&e, 12, 2), ActivityState::Waiting);

    // The deadline is kept across a restart: it counts from the stored deployment time.
    let changes = e.take_changes();
    let runs = changes
        .runs
        .into_iter()
        .map(|r| r.reload().expect("reload"))
        .collect();
    let mut e = Engine::restore(runs, changes.known);
    assert_eq!(e.next_deadline(), Some(6000));

    let fx = e.apply(6000, Input::Tick).expect("tick");
    assert!(
        fx.iter()
            .any(|f| matches!(f, Effect::Execute { activity: 2, .. })),
        "{fx:?}"
    );
    match to_controller(&fx)[..] {
        [Message::Report { record, .. }] => {
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
    assert!(e.record(12, 2).expect("record").emergency);
}

#[test]
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
            },
            A {
                id: 3,
                extra: "<timeOut>1</timeOut><kind>manual</kind>",
                contingency: -1,
                pre: &[],
                adj: &[],
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
        fx.iter().any(|f| matches!(f, Effect::Kill { key, activity: 1, attempt: 0, .. }
            if *key == RunKey { instance: 13, partition: 1 })),
        "{fx:?}"
    );
    let rec = e.record(13, 1).expect("record");
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
