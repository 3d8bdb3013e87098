//! Scenario tests of the partition engine: documents in, effects out, no I/O.

use super::*;
use mobiwf_proto::{ActivityId, InstanceId, PartitionId};
use mobiwf_proto::{ActivityState, Message, Outcome};

const PARTITION_1: &str = include_str!("../../examples/paper/partition-1.xml");
const PARTITION_2: &str = include_str!("../../examples/paper/partition-2.xml");

/// One activity of a test document; `..A::default()` for what a test does not care about
/// (contingency -1, no command, no timers, no retries).
struct A {
    id: u64,
    /// More child elements, as XML (`<kind>manual</kind>`).
    extra: &'static str,
    contingency: i64,
    /// (precondition, local).
    pre: &'static [(u64, bool)],
    /// (adjacent, location); a location starting with `/remote` is another partner.
    adj: &'static [(u64, &'static str)],
    /// `<command>`.
    command: Option<&'static str>,
    /// The activity's `<timeOut>`, seconds.
    time_out: u32,
    /// `<timeToWait>`, seconds.
    time_to_wait: u32,
    /// `<retries>`: (count, wait in seconds).
    retries: Option<(u32, u32)>,
    /// (precondition, `timeOut` in seconds) for preconditions that have one.
    pre_time_out: &'static [(u64, u32)],
}

impl Default for A {
    fn default() -> A {
        A {
            id: 0,
            extra: "",
            contingency: -1,
            pre: &[],
            adj: &[],
            command: None,
            time_out: 0,
            time_to_wait: 0,
            retries: None,
            pre_time_out: &[],
        }
    }
}

fn doc(instance: u64, acts: &[A]) -> String {
    let mut s = format!("<workflow id=\"{instance}\"><activities>");
    for a in acts {
        let mut extra = a.extra.to_owned();
        if a.time_out > 0 {
            extra += &format!("<timeOut>{}</timeOut>", a.time_out);
        }
        if let Some(command) = a.command {
            extra += &format!("<command>{command}</command>");
        }
        if let Some((count, wait)) = a.retries {
            extra += &format!("<retries><count>{count}</count><wait>{wait}</wait></retries>");
        }
        s += &format!(
            "<activity id=\"{}\"><nameActivity>N{}</nameActivity><status>0</status>\
             <responseImmediate>{}</responseImmediate><timeToWait>{}</timeToWait>\
             <contingencyActivityId>{}</contingencyActivityId>{extra}<preconditions>",
            a.id,
            a.id,
            u8::from(a.adj.iter().any(|(_, l)| l.starts_with("/remote"))),
            a.time_to_wait,
            a.contingency,
        );
        for (p, local) in a.pre {
            let time_out = a
                .pre_time_out
                .iter()
                .find(|(id, _)| id == p)
                .map_or(0, |(_, t)| *t);
            s += &format!(
                "<precondition id=\"{p}\"><status>0</status><local>{}</local>\
                 <timeOut>{time_out}</timeOut></precondition>",
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
            instance: InstanceId(instance),
            partition: PartitionId(partition),
            document: document.to_owned(),
        },
    )
    .expect("deploy")
}

fn notified(e: &mut Engine, instance: u64, activity: u64, outcome: Outcome) -> Vec<Effect> {
    e.apply(
        2000,
        Input::Notified {
            instance: InstanceId(instance),
            activity: ActivityId(activity),
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
            instance: InstanceId(instance),
            activity: ActivityId(activity),
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
            } => Some((loc.clone(), activity.0, *outcome)),
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
    e.record(InstanceId(instance), ActivityId(activity))
        .expect("record")
        .state
}

fn detail(e: &Engine, instance: u64, activity: u64) -> String {
    let rec = e
        .record(InstanceId(instance), ActivityId(activity))
        .expect("record");
    rec.detail.clone().unwrap_or_default()
}

/// Applies an input at a time of the virtual clock (ms).
fn at(e: &mut Engine, now_ms: u64, input: Input) -> Vec<Effect> {
    e.apply(now_ms, input).expect("applied")
}

fn tick(e: &mut Engine, now_ms: u64) -> Vec<Effect> {
    at(e, now_ms, Input::Tick)
}

fn notify_at(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    outcome: Outcome,
) -> Vec<Effect> {
    let input = Input::Notified {
        instance: InstanceId(instance),
        activity: ActivityId(activity),
        outcome,
    };
    at(e, now_ms, input)
}

/// Try `attempt` of an activity's command ended.
fn ended(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    ok: bool,
    attempt: u32,
) -> Vec<Effect> {
    let input = Input::Finished {
        instance: InstanceId(instance),
        activity: ActivityId(activity),
        succeeded: ok,
        detail: (!ok).then(|| "exit status 1".to_owned()),
        by: Finisher::Command,
        attempt,
    };
    at(e, now_ms, input)
}

fn substitute(e: &mut Engine, now_ms: u64, instance: u64, replaced: u64, by: u64) -> Vec<Effect> {
    let input = Input::Substitute {
        instance: InstanceId(instance),
        replaced: ActivityId(replaced),
        by: ActivityId(by),
    };
    at(e, now_ms, input)
}

fn withdraw(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activities: &[u64],
    reason: &str,
) -> Vec<Effect> {
    let input = Input::Withdraw {
        instance: InstanceId(instance),
        activities: activities.iter().copied().map(ActivityId).collect(),
        reason: reason.to_owned(),
    };
    at(e, now_ms, input)
}

fn control(e: &mut Engine, now_ms: u64, instance: u64, action: Control) -> Vec<Effect> {
    let instance = InstanceId(instance);
    at(e, now_ms, Input::Control { instance, action })
}

/// (activity, attempt) of each command started.
fn executes(effects: &[Effect]) -> Vec<(u64, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Execute {
                activity, attempt, ..
            } => Some((activity.0, *attempt)),
            _ => None,
        })
        .collect()
}

/// (activity, attempt) of each command killed.
fn kills(effects: &[Effect]) -> Vec<(u64, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Kill {
                activity, attempt, ..
            } => Some((activity.0, *attempt)),
            _ => None,
        })
        .collect()
}

/// (activity, state) of each immediate report to the controller.
fn reports(effects: &[Effect]) -> Vec<(u64, ActivityState)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::Report { record, .. } => Some((record.activity.0, record.state)),
            _ => None,
        })
        .collect()
}

/// The states in the partition result sent, if one was.
fn result_of(effects: &[Effect]) -> Option<Vec<(u64, ActivityState)>> {
    to_controller(effects).into_iter().find_map(|m| match m {
        Message::PartitionResult { activities, .. } => {
            Some(activities.iter().map(|r| (r.activity.0, r.state)).collect())
        }
        _ => None,
    })
}

/// (waiting, precondition, timeOut) of each overdue report.
fn overdues(effects: &[Effect]) -> Vec<(u64, u64, u32)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::Overdue {
                waiting,
                precondition,
                time_out_secs,
                ..
            } => Some((waiting.0, precondition.0, *time_out_secs)),
            _ => None,
        })
        .collect()
}

/// The engine a restarted node builds from what the first one wrote (through JSON, as the
/// store holds it). Call it once per engine: it writes what changed since the start.
fn restart(e: &mut Engine) -> Engine {
    let changes = e.take_changes();
    let runs = changes
        .runs
        .into_iter()
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
        .collect();
    let known = changes
        .known
        .into_iter()
        .map(|(i, k)| {
            let json = serde_json::to_string(&k).expect("ser");
            (i, serde_json::from_str(&json).expect("de"))
        })
        .collect();
    Engine::restore(runs, known)
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
        matches!(to_controller(&fx)[..], [Message::Report { record, .. }] if record.activity == ActivityId(17))
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
            ..A::default()
        }],
    );
    let fx = deploy(&mut e, 5, 1, &d);
    assert_eq!(
        fx,
        vec![Effect::Execute {
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
            ..A::default()
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
            ..A::default()
        }],
    );
    assert!(deploy(&mut e, 9, 1, &d).is_empty());
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
        [Message::PartitionResult { .. }]
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

#[test]
fn bad_documents_are_refused_without_changing_anything() {
    let mut e = Engine::new();
    let err = e
        .apply(
            0,
            Input::Deploy {
                instance: InstanceId(1),
                partition: PartitionId(1),
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
                instance: InstanceId(2),
                partition: PartitionId(1),
                document: PARTITION_1.to_owned(),
            },
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
            ..A::default()
        }],
    );
    deploy(&mut e, 10, 1, &d);
    notified(&mut e, 10, 7, Outcome::Succeeded);
    let changes = e.take_changes();
    assert_eq!(changes.runs.len(), 1);
    let runs: Vec<Run> = changes
        .runs
        .into_iter()
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
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
            Input::Deploy {
                instance: InstanceId(11),
                partition: PartitionId(1),
                document: other,
            },
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
            ..A::default()
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
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
        .collect();
    let mut e = Engine::restore(runs, changes.known);
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
    assert!(
        e.record(InstanceId(12), ActivityId(2))
            .expect("record")
            .emergency
    );
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

// Retries (MISSION F2): a failed try is tried again after the wait, then the activity fails.

#[test]
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

#[test]
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

#[test]
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

#[test]
fn a_time_out_during_a_try_kills_that_try_and_counts_as_a_failed_try() {
    let mut e = Engine::new();
    let d = doc(
        23,
        &[A {
            id: 1,
            command: Some("sleep 60"),
            time_out: 2,
            retries: Some((1, 3)),
            ..A::default()
        }],
    );
    deploy(&mut e, 23, 1, &d); // at 1000
    assert_eq!(e.next_deadline(), Some(3000));
    let fx = tick(&mut e, 3000);
    assert_eq!(kills(&fx), vec![(1, 0)]);
    assert_eq!(executes(&fx), vec![], "the next try waits 3 s");
    let rec = e.record(InstanceId(23), ActivityId(1)).expect("record");
    assert_eq!((rec.state, rec.retried), (ActivityState::Running, 1));
    assert_eq!(
        rec.detail.as_deref(),
        Some("try 1 of 2 failed: ran longer than its timeOut of 2 s")
    );
    assert_eq!(
        e.next_deadline(),
        Some(6000),
        "the timeOut does not run while waiting"
    );
    assert_eq!(executes(&tick(&mut e, 6000)), vec![(1, 1)]);
    assert_eq!(
        e.next_deadline(),
        Some(8000),
        "the new try has its own timeOut"
    );
    let fx = tick(&mut e, 8000);
    assert_eq!(kills(&fx), vec![(1, 1)]);
    assert_eq!(state(&e, 23, 1), ActivityState::Failed);
    assert_eq!(detail(&e, 23, 1), "ran longer than its timeOut of 2 s");
    assert_eq!(result_of(&fx), Some(vec![(1, ActivityState::Failed)]));
}

#[test]
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

// Contingency (MISSION P6, F1).

#[test]
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

#[test]
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

#[test]
fn a_failure_with_a_contingency_activity_is_reported_at_once_and_notifies_nobody() {
    let mut e = Engine::new();
    deploy(&mut e, 32, 1, &contingency_doc(32));
    let fx = ended(&mut e, 3000, 32, 1, false, 0);
    assert_eq!(notifies(&fx), vec![], "the successors wait for activity 5");
    assert_eq!(reports(&fx), vec![(1, ActivityState::Failed)]);
    assert_eq!(result_of(&fx), None, "activity 2 still waits");
    assert_eq!(state(&e, 32, 2), ActivityState::Waiting);
}

#[test]
fn local_successors_of_a_replaced_activity_run_on_the_contingency_activitys_word() {
    let mut e = Engine::new();
    deploy(&mut e, 33, 1, &contingency_doc(33));
    ended(&mut e, 3000, 33, 1, false, 0);
    assert!(substitute(&mut e, 4000, 33, 1, 5).is_empty());
    assert_eq!(state(&e, 33, 2), ActivityState::Waiting);
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

#[test]
fn the_contingency_activitys_word_may_come_before_the_substitution() {
    let mut e = Engine::new();
    deploy(&mut e, 34, 1, &contingency_doc(34));
    ended(&mut e, 3000, 34, 1, false, 0);
    assert!(notify_at(&mut e, 4000, 34, 5, Outcome::Succeeded).is_empty());
    let fx = substitute(&mut e, 5000, 34, 1, 5);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

#[test]
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

#[test]
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
    assert_eq!(state(&e, 36, 2), ActivityState::Waiting);
    let fx = notify_at(&mut e, 7000, 36, 6, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

// Late word: what comes about a replaced activity after its substitution.

/// Activity 2 waits for activity 1 of another partner.
fn waits_for_remote_1(instance: u64) -> String {
    doc(
        instance,
        &[A {
            id: 2,
            command: Some("true"),
            pre: &[(1, false)],
            ..A::default()
        }],
    )
}

#[test]
fn a_word_about_a_replaced_activity_after_the_substitution_is_kept_as_late_and_starts_nothing() {
    let mut e = Engine::new();
    deploy(&mut e, 40, 1, &waits_for_remote_1(40));
    substitute(&mut e, 2000, 40, 1, 5);
    assert!(notify_at(&mut e, 3000, 40, 1, Outcome::Succeeded).is_empty());
    let known = e.known(InstanceId(40)).expect("known");
    assert_eq!(known.late.get(&ActivityId(1)), Some(&Outcome::Succeeded));
    assert!(!known.heard.contains_key(&ActivityId(1)));
    assert_eq!(state(&e, 40, 2), ActivityState::Waiting);
    assert_eq!(
        executes(&notify_at(&mut e, 4000, 40, 5, Outcome::Succeeded)),
        vec![(2, 0)]
    );
    assert!(notify_at(&mut e, 5000, 40, 1, Outcome::Succeeded).is_empty());
    assert!(notify_at(&mut e, 5000, 40, 5, Outcome::Succeeded).is_empty());
}

#[test]
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

#[test]
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
            Input::Finished {
                instance: InstanceId(50),
                activity: ActivityId(1),
                succeeded: true,
                detail: None,
                by: Finisher::Command,
                attempt: 0,
            }
        )
        .is_err()
    );
}

#[test]
fn local_successors_of_a_withdrawn_activity_follow_its_contingency() {
    for (contingency, then) in [
        (-1, ActivityState::Cancelled),
        (0, ActivityState::Succeeded),
        (5, ActivityState::Waiting),
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

#[test]
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

#[test]
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

// Precondition timeOut (MISSION P5): the controller hears of a remote precondition too slow to
// come, once.

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

#[test]
fn a_remote_precondition_not_heard_within_its_time_out_is_reported_overdue_once() {
    let mut e = Engine::new();
    deploy(&mut e, 60, 1, &overdue_doc(60)); // at 1000
    assert_eq!(e.next_deadline(), Some(11_000));
    assert!(tick(&mut e, 10_999).is_empty());
    let fx = tick(&mut e, 11_000);
    assert_eq!(overdues(&fx), vec![(2, 1, 10)]);
    assert_eq!(
        state(&e, 60, 2),
        ActivityState::Waiting,
        "the controller decides"
    );
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 20_000).is_empty());
    // The word comes after all: it counts.
    notify_at(&mut e, 21_000, 60, 1, Outcome::Succeeded);
    let fx = notify_at(&mut e, 21_000, 60, 3, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
}

#[test]
fn an_overdue_precondition_is_reported_once_across_a_restart() {
    let mut e = Engine::new();
    deploy(&mut e, 61, 1, &overdue_doc(61));
    assert_eq!(overdues(&tick(&mut e, 11_000)), vec![(2, 1, 10)]);
    let mut e = restart(&mut e);
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 30_000).is_empty());
}

#[test]
fn no_overdue_when_the_notification_came_in_time() {
    let mut e = Engine::new();
    deploy(&mut e, 62, 1, &overdue_doc(62));
    notify_at(&mut e, 10_000, 62, 1, Outcome::Succeeded);
    assert_eq!(state(&e, 62, 2), ActivityState::Waiting, "it waits for 3");
    assert_eq!(e.next_deadline(), None);
    assert!(tick(&mut e, 11_000).is_empty());
}

// Timers survive a restart: they count from stored times.

#[test]
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

#[test]
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

#[test]
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

// Operator control.

#[test]
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
    assert_eq!(state(&e, 80, 2), ActivityState::Waiting);
    assert_eq!(
        e.next_deadline(),
        None,
        "no emergency start while interrupted"
    );
    assert!(tick(&mut e, 10_000).is_empty());
    assert_eq!(state(&e, 80, 3), ActivityState::Waiting);
    let fx = ended(&mut e, 11_000, 80, 5, true, 0);
    assert_eq!(state(&e, 80, 5), ActivityState::Succeeded);
    assert_eq!(
        notifies(&fx),
        vec![("/remote/f".to_owned(), 5, Outcome::Succeeded)]
    );
}

#[test]
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

#[test]
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

#[test]
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

#[test]
fn a_partition_deployed_after_its_instance_was_cancelled_is_cancelled_at_once() {
    let mut e = Engine::new();
    control(&mut e, 500, 84, Control::Cancel);
    let fx = deploy(&mut e, 84, 1, &waits_for_remote_1(84));
    assert_eq!(executes(&fx), vec![]);
    assert_eq!(result_of(&fx), Some(vec![(2, ActivityState::Cancelled)]));
}

#[test]
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
    assert_eq!(state(&e, 85, 1), ActivityState::Waiting);
    let fx = control(&mut e, 2000, 85, Control::Resume);
    assert_eq!(executes(&fx), vec![(1, 0)]);
}

#[test]
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

#[test]
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

#[test]
fn records_keep_start_and_end_to_the_microsecond() {
    let mut e = Engine::new();
    let document = doc(
        1,
        &[
            A {
                id: 1,
                pre: &[(9, false)],
                adj: &[(2, "/remote/b")],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    e.apply_us(
        1_000_123,
        Input::Deploy {
            instance: InstanceId(1),
            partition: PartitionId(1),
            document,
        },
    )
    .expect("deploy");
    // Activity 3 starts at deployment and waits for its command.
    let three = e
        .record(InstanceId(1), ActivityId(3))
        .expect("record")
        .clone();
    assert_eq!(
        (three.started_ms, three.started_us, three.finished_us),
        (Some(1000), Some(1_000_123), None)
    );
    // Activity 1 (no command) starts and finishes when its precondition's word comes.
    e.apply_us(
        2_345_678,
        Input::Notified {
            instance: InstanceId(1),
            activity: ActivityId(9),
            outcome: Outcome::Succeeded,
        },
    )
    .expect("notified");
    let one = e
        .record(InstanceId(1), ActivityId(1))
        .expect("record")
        .clone();
    assert_eq!(
        (one.started_us, one.finished_us, one.finished_ms),
        (Some(2_345_678), Some(2_345_678), Some(2345))
    );
    // An input applied to the millisecond records whole milliseconds.
    let rec = |e: &Engine| {
        e.record(InstanceId(1), ActivityId(3))
            .expect("record")
            .clone()
    };
    e.apply(
        5000,
        Input::Finished {
            instance: InstanceId(1),
            activity: ActivityId(3),
            succeeded: true,
            detail: None,
            by: Finisher::Command,
            attempt: 0,
        },
    )
    .expect("finished");
    assert_eq!(rec(&e).finished_us, Some(5_000_000));
}

#[test]
fn a_runs_document_is_handed_over_once_and_its_later_changes_come_without_it() {
    let mut e = Engine::new();
    deploy(&mut e, 18, 1, PARTITION_1);
    let first = e.take_changes();
    assert_eq!(first.runs.len(), 1);
    let document = first.runs[0]
        .document
        .clone()
        .expect("a new run's document");
    assert_eq!(document, PARTITION_1);
    assert!(
        !String::from_utf8_lossy(&first.runs[0].state).contains("<workflow"),
        "the state is stored without the document"
    );

    notified(&mut e, 18, 19, Outcome::Succeeded);
    let later = e.take_changes();
    assert_eq!(later.runs.len(), 1);
    assert_eq!(later.runs[0].document, None);
    let err = Run::from_stored(&later.runs[0].state, None).expect_err("no document");
    assert!(err.contains("document is missing"), "{err}");
    let run = Run::from_stored(&later.runs[0].state, Some(document)).expect("restored");
    assert_eq!(
        run.records(),
        e.runs().next().expect("the run").records(),
        "the restored run is the run"
    );
}
