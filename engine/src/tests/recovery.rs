//! Scenarios of backward and forward recovery on the node: compensations the controller asks
//! for (run once, answered, carried across a restart), and reruns (a failed activity and those
//! cancelled because of it wait again, the failed one's command runs in a new try, what was
//! heard of a remote one is forgotten), with restarts in between through the store's form.

use super::props::Store;
use super::*;

/// The engine a node restarted from `disk` builds, once what changed since the last commit
/// is written there.
fn restart_from(e: &mut Engine, disk: &mut Store) -> Engine {
    disk.commit(e.take_changes().expect("changes"));
    disk.load()
}

const UNDO: &str = "<compensation>echo undo</compensation>";

/// Activity 1 (a command, with a compensation) and its local successor 2, which has a
/// successor 9 on another partner; contingency -1.
fn chain(instance: u64) -> String {
    doc(
        instance,
        &[
            A {
                id: 1,
                command: Some("test -f ok"),
                extra: UNDO,
                adj: &[(2, "/local")],
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(1, true)],
                adj: &[(9, "/remote/b")],
                ..A::default()
            },
        ],
    )
}

fn compensate(e: &mut Engine, now_ms: u64, instance: u64, partition: u64, a: u64) -> Vec<Effect> {
    let input = Input::Compensate(mobiwf_proto::Compensate {
        instance: InstanceId(instance),
        partition: PartitionId(partition),
        activity: ActivityId(a),
    });
    at(e, now_ms, input)
}

fn compensation_ended(e: &mut Engine, now_ms: u64, instance: u64, a: u64, ok: bool) -> Vec<Effect> {
    let input = Input::CompensationEnded(mobiwf_proto::Compensated {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(a),
        succeeded: ok,
        detail: (!ok).then(|| "command exited with status 3".to_owned()),
    });
    at(e, now_ms, input)
}

fn rerun(e: &mut Engine, now_ms: u64, instance: u64, activities: &[u64]) -> Vec<Effect> {
    rerun_after(e, now_ms, instance, activities, 0)
}

/// A rerun decided after the instance's `controls`-th operator control.
fn rerun_after(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activities: &[u64],
    controls: u64,
) -> Vec<Effect> {
    let input = Input::Rerun(mobiwf_proto::Rerun {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activities: activities.iter().copied().map(ActivityId).collect(),
        controls,
        rerun: 0,
    });
    at(e, now_ms, input)
}

/// The compensation commands asked for: (activity, command).
fn compensations(effects: &[Effect]) -> Vec<(u64, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Compensate {
                activity, command, ..
            } => Some((activity.0, command.clone())),
            _ => None,
        })
        .collect()
}

/// What the controller was told of compensations: (activity, succeeded, detail).
fn answers(effects: &[Effect]) -> Vec<(u64, bool, Option<String>)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::Compensated(c) => Some((c.activity.0, c.succeeded, c.detail.clone())),
            _ => None,
        })
        .collect()
}

/// The operator's interrupt of `instance`, its `order`-th control.
fn interrupt(instance: u64, order: u64) -> Input {
    Input::Control(ControlInstance {
        instance: InstanceId(instance),
        action: Control::Interrupt,
        order,
    })
}

/// Whether this node holds `instance` interrupted.
fn interrupted(e: &Engine, instance: u64) -> bool {
    e.known(InstanceId(instance)).is_some_and(|k| k.interrupted)
}

scenarios! {
fn a_compensation_runs_once_and_its_end_is_told_to_the_controller() {
    let mut e = Engine::new();
    let fx = deploy(&mut e, 1, 1, &chain(1));
    assert_eq!(executes(&fx), vec![(1, 0)]);
    ended(&mut e, 1500, 1, 1, true, 0);
    assert_eq!(state(&e, 1, 2), ActivityState::Succeeded);

    let fx = compensate(&mut e, 5000, 1, 1, 1);
    assert_eq!(compensations(&fx), vec![(1, "echo undo".to_owned())]);
    assert!(answers(&fx).is_empty(), "told when it ends");
    // Asked again while it runs: it is not run twice.
    assert!(compensate(&mut e, 5100, 1, 1, 1).is_empty());

    let fx = compensation_ended(&mut e, 6000, 1, 1, true);
    assert_eq!(answers(&fx), vec![(1, true, None)]);
    // A second end changes nothing; asked again, the controller hears what happened.
    assert!(compensation_ended(&mut e, 6100, 1, 1, false).is_empty());
    let fx = compensate(&mut e, 6200, 1, 1, 1);
    assert!(compensations(&fx).is_empty());
    assert_eq!(answers(&fx), vec![(1, true, None)]);
    // The activity itself is what it was.
    assert_eq!(state(&e, 1, 1), ActivityState::Succeeded);
}

fn a_compensation_that_cannot_run_is_answered_at_once_with_why() {
    let mut e = Engine::new();
    deploy(&mut e, 2, 1, &chain(2));
    ended(&mut e, 1500, 2, 1, false, 0);
    assert_eq!(state(&e, 2, 1), ActivityState::Failed);
    let why = |fx: &[Effect]| answers(fx)[0].2.clone().unwrap_or_default();

    let fx = compensate(&mut e, 2000, 2, 1, 1);
    assert!(compensations(&fx).is_empty());
    assert_eq!(
        why(&fx),
        "activity 1 is failed here, not succeeded: there is nothing to undo"
    );
    let fx = compensate(&mut e, 2000, 2, 1, 2);
    assert!(why(&fx).contains("is cancelled here"), "{}", why(&fx));
    let fx = compensate(&mut e, 2000, 2, 1, 7);
    assert_eq!(why(&fx), "partition 1 of instance 2 has no activity 7");
    let fx = compensate(&mut e, 2000, 2, 4, 1);
    assert_eq!(why(&fx), "this node holds no partition 4 of instance 2");

    // A succeeded activity without a compensation.
    let mut e = Engine::new();
    deploy(&mut e, 3, 1, &waits_for_remote_1(3));
    notify_at(&mut e, 1500, 3, 1, Outcome::Succeeded);
    ended(&mut e, 1600, 3, 2, true, 0);
    let fx = compensate(&mut e, 2000, 3, 1, 2);
    assert_eq!(
        answers(&fx),
        vec![(
            2,
            false,
            Some("activity 2 has no <compensation> in its partition document".to_owned())
        )]
    );
}

fn a_compensation_under_way_is_carried_on_after_a_restart() {
    let mut e = Engine::new();
    deploy(&mut e, 4, 1, &chain(4));
    ended(&mut e, 1500, 4, 1, true, 0);
    compensate(&mut e, 5000, 4, 1, 1);
    let mut disk = Store::default();
    let mut e = restart_from(&mut e, &mut disk);
    assert_eq!(compensations(&e.resume()), vec![(1, "echo undo".to_owned())]);
    // Nothing else resumes: activity 1's command ended long ago.
    assert!(executes(&e.resume()).is_empty());
    let fx = compensation_ended(&mut e, 6000, 4, 1, false);
    assert_eq!(
        answers(&fx),
        vec![(1, false, Some("command exited with status 3".to_owned()))]
    );
    // Once it ended, a restart runs it no more and answers from what happened.
    let mut e = restart_from(&mut e, &mut disk);
    assert!(compensations(&e.resume()).is_empty());
    assert!(!answers(&compensate(&mut e, 7000, 4, 1, 1))[0].1);
}

fn a_rerun_runs_the_failed_activity_in_a_new_try_and_its_successors_wait_again() {
    let mut e = Engine::new();
    deploy(&mut e, 5, 1, &chain(5));
    let fx = ended(&mut e, 1500, 5, 1, false, 0);
    assert_eq!(state(&e, 5, 2), ActivityState::Cancelled);
    assert_eq!(notifies(&fx), vec![("/remote/b".to_owned(), 2, Outcome::Blocked)]);
    assert!(result_of(&fx).is_some());

    let fx = rerun(&mut e, 9000, 5, &[1, 2]);
    // Activity 1 runs again at once (it has no precondition), in try 1: a run directory the
    // executor has not seen; activity 2 waits for it again.
    assert_eq!(executes(&fx), vec![(1, 1)]);
    assert_eq!(state(&e, 5, 1), ActivityState::Running);
    assert_eq!(state(&e, 5, 2), ActivityState::NotReady);
    let rec = e.record(InstanceId(5), ActivityId(1)).expect("record");
    assert_eq!((rec.started_ms, rec.finished_ms, rec.detail), (Some(9000), None, None));
    assert!(result_of(&fx).is_none());

    // The end of the old try is not this one's: ignored.
    assert!(ended(&mut e, 9100, 5, 1, true, 0).is_empty());
    assert_eq!(state(&e, 5, 1), ActivityState::Running);

    let fx = ended(&mut e, 9500, 5, 1, true, 1);
    assert_eq!(state(&e, 5, 2), ActivityState::Succeeded);
    assert_eq!(notifies(&fx), vec![("/remote/b".to_owned(), 2, Outcome::Succeeded)]);
    assert_eq!(
        result_of(&fx),
        Some(vec![(1, ActivityState::Succeeded), (2, ActivityState::Succeeded)]),
        "the partition's result goes again"
    );
}

fn an_interrupt_given_before_a_rerun_and_arriving_after_it_is_overtaken() {
    let mut e = Engine::new();
    deploy(&mut e, 5, 1, &chain(5));
    ended(&mut e, 1500, 5, 1, false, 0);
    // The operator's interrupt (its first control) was on its way when the instance failed
    // and was rerun; it arrives after the rerun, which ended that interruption.
    let fx = rerun_after(&mut e, 9000, 5, &[1, 2], 1);
    assert_eq!(executes(&fx), vec![(1, 1)]);
    at(&mut e, 9100, interrupt(5, 1));
    assert!(!interrupted(&e, 5));
    // A later control is taken.
    at(&mut e, 9200, interrupt(5, 2));
    assert!(interrupted(&e, 5));
}


fn an_interrupt_given_after_a_rerun_was_decided_and_arriving_before_it_stands() {
    let mut e = Engine::new();
    deploy(&mut e, 5, 1, &chain(5));
    ended(&mut e, 1500, 5, 1, false, 0);
    // The rerun was decided after the first control; the operator's interrupt (the second)
    // came after that decision and reached the node before the rerun did.
    at(&mut e, 8000, interrupt(5, 2));
    assert!(interrupted(&e, 5));
    rerun_after(&mut e, 9000, 5, &[1, 2], 1);
    assert!(interrupted(&e, 5), "the later interrupt stands");
    // A rerun from a controller before control numbers (0) ends the interruption, as then.
    rerun_after(&mut e, 9100, 5, &[1, 2], 0);
    assert!(!interrupted(&e, 5));
}

fn a_rerun_forgets_the_end_heard_of_a_remote_activity() {
    let mut e = Engine::new();
    let d = doc(
        6,
        &[A {
            id: 2,
            command: Some("true"),
            pre: &[(1, false)],
            pre_time_out: &[(1, 5)],
            time_to_wait: 20,
            ..A::default()
        }],
    );
    deploy(&mut e, 6, 1, &d);
    let fx = notify_at(&mut e, 1500, 6, 1, Outcome::Blocked);
    assert_eq!(state(&e, 6, 2), ActivityState::Cancelled);
    assert!(result_of(&fx).is_some());

    let fx = rerun(&mut e, 60_000, 6, &[1, 2]);
    assert!(executes(&fx).is_empty(), "it waits for activity 1's new end");
    assert_eq!(state(&e, 6, 2), ActivityState::NotReady);
    // Its timers count from the rerun, not from the deployment long ago.
    assert!(tick(&mut e, 61_000).is_empty());
    assert_eq!(overdues(&tick(&mut e, 65_000)), vec![(2, 1, 5)]);
    let fx = notify_at(&mut e, 66_000, 6, 1, Outcome::Succeeded);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    ended(&mut e, 67_000, 6, 2, true, 0);
    assert_eq!(state(&e, 6, 2), ActivityState::Succeeded);
}

fn a_rerun_moves_the_timers_of_what_it_reruns_alone() {
    let mut e = Engine::new();
    // Activity 1 fails; activity 3 of the same partition waits for remote activity 4, overdue
    // 30 s after the deployment (at 1000).
    let d = doc(
        10,
        &[
            A { id: 1, command: Some("false"), ..A::default() },
            A { id: 3, command: Some("true"), pre: &[(4, false)], pre_time_out: &[(4, 30)], ..A::default() },
        ],
    );
    deploy(&mut e, 10, 1, &d);
    ended(&mut e, 1500, 10, 1, false, 0);
    assert_eq!(state(&e, 10, 3), ActivityState::NotReady);
    rerun(&mut e, 20_000, 10, &[1]);
    // Activity 3 was not rerun: its wait still counts from the deployment.
    assert_eq!(overdues(&tick(&mut e, 31_000)), vec![(3, 4, 30)]);
}

fn a_rerun_leaves_alone_what_did_not_fail_and_what_it_does_not_name() {
    let mut e = Engine::new();
    deploy(&mut e, 7, 1, &chain(7));
    ended(&mut e, 1500, 7, 1, true, 0);
    // Nothing failed: a rerun of it changes nothing.
    assert!(rerun(&mut e, 2000, 7, &[1, 2]).is_empty());
    assert_eq!(state(&e, 7, 1), ActivityState::Succeeded);

    let mut e = Engine::new();
    deploy(&mut e, 8, 1, &chain(8));
    ended(&mut e, 1500, 8, 1, false, 0);
    // Only activity 2 named: it waits, activity 1 stays failed.
    rerun(&mut e, 2000, 8, &[2]);
    assert_eq!(state(&e, 8, 1), ActivityState::Failed);
    assert_eq!(state(&e, 8, 2), ActivityState::Cancelled, "blocked again at once");
}

fn a_rerun_survives_a_restart_and_counts_tries_over_every_run() {
    let mut e = Engine::new();
    let d = doc(
        9,
        &[A {
            id: 1,
            command: Some("test -f ok"),
            retries: Some((1, 0)),
            ..A::default()
        }],
    );
    deploy(&mut e, 9, 1, &d);
    assert_eq!(executes(&ended(&mut e, 1500, 9, 1, false, 0)), vec![(1, 1)]);
    ended(&mut e, 1600, 9, 1, false, 1);
    assert_eq!(state(&e, 9, 1), ActivityState::Failed);

    let fx = rerun(&mut e, 5000, 9, &[1]);
    assert_eq!(executes(&fx), vec![(1, 2)], "two tries before: this is the third");
    let mut disk = Store::default();
    let mut e = restart_from(&mut e, &mut disk);
    assert_eq!(executes(&e.resume()), vec![(1, 2)]);
    // Its retries are its own again.
    assert_eq!(executes(&ended(&mut e, 5500, 9, 1, false, 2)), vec![(1, 3)]);
    let rec = e.record(InstanceId(9), ActivityId(1)).expect("record");
    assert_eq!(rec.retried, 1);
    ended(&mut e, 5600, 9, 1, true, 3);
    assert_eq!(state(&e, 9, 1), ActivityState::Succeeded);
    let e = restart_from(&mut e, &mut disk);
    assert!(e.resume().is_empty());
    assert_eq!(state(&e, 9, 1), ActivityState::Succeeded);
}

fn a_rerun_work_item_is_offered_again_at_a_newer_version() {
    use super::people::{claim, deploy_manual, directory, host, item, sent, tech, three};
    use mobiwf_proto::ItemAction;
    use mobiwf_xml_schema::Method;
    let people_3 = tech(Method::Fcfa);
    let mut e = host(directory(1, three()[..2].to_vec()));
    deploy_manual(&mut e, 1000, 1, (3, &people_3));
    claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let failed = ItemAction::Complete {
        succeeded: false,
        detail: Some("the valve is stuck".to_owned()),
        flag: None,
        data: Default::default(),
    };
    claim(&mut e, 3000, (1, 3), "alice", failed, Some("N1"));
    assert_eq!(state(&e, 1, 3), ActivityState::Failed);
    let closed = item(&e, 1, 3).version;

    let fx = e
        .apply(
            4000,
            Input::Rerun(mobiwf_proto::Rerun { instance: InstanceId(1), partition: PartitionId(1), activities: vec![ActivityId(3), ActivityId(43)], controls: 0, rerun: 0 }),
        )
        .expect("rerun");
    assert_eq!(state(&e, 1, 3), ActivityState::Ready);
    assert_eq!(state(&e, 1, 43), ActivityState::NotReady);
    // The devices held the closed item at `closed`: the new offer is newer, so they take it.
    let views = sent(&fx);
    assert!(!views.is_empty());
    assert!(views.iter().all(|v| v.version == closed + 1), "{views:?}");
    assert_eq!(views[0].offered, ["alice"]);
}

fn an_end_said_after_the_partner_s_rerun_outlives_this_node_s_rerun_arriving_later() {
    let mut e = Engine::new();
    deploy(&mut e, 7, 1, &waits_for_remote_1(7));
    notify_at(&mut e, 1500, 7, 1, Outcome::Blocked);
    assert_eq!(state(&e, 7, 2), ActivityState::Cancelled);
    // Rerun 1 names 1 and 2. Activity 1's node applied it first and said its new end at
    // once, which overtook this node's rerun: it replaces the end from before.
    let after = |outcome, n| mobiwf_proto::Notify {
        rerun: n,
        ..mobiwf_proto::Notify::new(InstanceId(7), ActivityId(1), outcome)
    };
    let told = |e: &mut Engine, now_ms, notify| {
        let input = Input::Notified(crate::Notified {
            from: None,
            notify,
            missing: Vec::new(),
        });
        at(e, now_ms, input)
    };
    told(&mut e, 2000, after(Outcome::Succeeded, 1));
    // A duplicate of the word from before the rerun changes nothing.
    told(&mut e, 2100, after(Outcome::Blocked, 0));
    let rerun_numbered = |e: &mut Engine, now_ms, n| {
        let input = Input::Rerun(mobiwf_proto::Rerun {
            instance: InstanceId(7),
            partition: PartitionId(1),
            activities: vec![ActivityId(1), ActivityId(2)],
            controls: 0,
            rerun: n,
        });
        at(e, now_ms, input)
    };
    // The rerun keeps the end said after it: activity 2 runs at once, not waiting for good.
    let fx = rerun_numbered(&mut e, 3000, 1);
    assert_eq!(executes(&fx), vec![(2, 0)]);
    // This node's notifies carry the rerun it applied.
    assert_eq!(e.known(InstanceId(7)).map(|k| k.rerun), Some(1));
    ended(&mut e, 4000, 7, 2, false, 0);
    assert_eq!(state(&e, 7, 2), ActivityState::Failed);
    // A later rerun forgets the end said before it.
    let fx = rerun_numbered(&mut e, 5000, 2);
    assert!(executes(&fx).is_empty(), "it waits for activity 1's new end");
    assert_eq!(state(&e, 7, 2), ActivityState::NotReady);
}
}
