//! Scenarios of the synchronization gate (`crate::sync`): an activity of a task class asks
//! for its class, runs once granted, fails when refused or when its grant's lease is lost,
//! and releases its class once, whichever way it ends; answers for an earlier round change
//! nothing; a restart keeps the round and the wait.

use super::*;
use mobiwf_proto::{BeginSync, EndSync, SyncGranted, SyncRefused, SyncTicket};

pub(super) const LEASE: u64 = 5000;

/// Activity 1 of class `press` runs `work` (then tells remote activity 2), with `extra`.
pub(super) fn pressing(instance: u64, retries: Option<(u32, u32)>, extra: &'static str) -> String {
    doc(
        instance,
        &[A {
            id: 1,
            command: Some("work"),
            adj: &[(2, "/remote/b")],
            retries,
            extra,
            class: Some("press"),
            ..A::default()
        }],
    )
}

pub(super) fn ticket(instance: u64, activity: u64, round: u32) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        round,
    }
}

pub(super) fn grant(e: &mut Engine, now_ms: u64, ticket: SyncTicket) -> Vec<Effect> {
    at(
        e,
        now_ms,
        Input::SyncGranted(SyncGranted {
            ticket,
            lease_ms: LEASE,
        }),
    )
}

fn refuse(e: &mut Engine, now_ms: u64, ticket: SyncTicket) -> Vec<Effect> {
    let detail = "synchronization failed: waited 60 s for class press".to_owned();
    at(
        e,
        now_ms,
        Input::SyncRefused(SyncRefused { ticket, detail }),
    )
}

pub(super) fn lost(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    attempt: u32,
) -> Vec<Effect> {
    let lost = crate::Lost {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        attempt,
    };
    at(e, now_ms, Input::SyncLost(lost))
}

/// The tickets asked for, with their class.
pub(super) fn begins(effects: &[Effect]) -> Vec<(SyncTicket, String)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::BeginSync(BeginSync { ticket, class, .. }) => Some((
                *ticket,
                class
                    .as_ref()
                    .map_or_else(String::new, |c| c.as_str().to_owned()),
            )),
            _ => None,
        })
        .collect()
}

/// The tickets released.
pub(super) fn ends(effects: &[Effect]) -> Vec<SyncTicket> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::EndSync(EndSync { ticket }) => Some(*ticket),
            _ => None,
        })
        .collect()
}

/// The leases of the commands started.
pub(super) fn leases(effects: &[Effect]) -> Vec<Option<u64>> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Execute { lease_ms, .. } => Some(*lease_ms),
            _ => None,
        })
        .collect()
}

/// The engine a restarted node builds from what this one holds of instance `instance`
/// (through JSON, as the store holds it), its runs' document being `document`.
pub(super) fn reborn(e: &Engine, instance: u64, document: &str) -> Engine {
    let runs = e
        .runs()
        .map(|r| {
            let state = serde_json::to_vec(r).expect("encoded");
            Run::from_stored(&state, Some(document.to_owned())).expect("stored run")
        })
        .collect();
    let known = e.known(InstanceId(instance)).map(|k| {
        let bytes = serde_json::to_vec(k).expect("encoded");
        (
            InstanceId(instance),
            serde_json::from_slice(&bytes).expect("known"),
        )
    });
    Engine::restore(runs, known.into_iter().collect())
}

/// Deploys `document` as instance `instance`, partition 1, and checks it asked for round 0.
pub(super) fn asked(e: &mut Engine, instance: u64, document: &str) {
    let fx = deploy(e, instance, 1, document);
    assert_eq!(
        begins(&fx),
        vec![(ticket(instance, 1, 0), "press".to_owned())]
    );
    assert!(executes(&fx).is_empty(), "{fx:?}");
    assert_eq!(state(e, instance, 1), ActivityState::Synchronizing);
}

scenarios! {
    fn an_activity_of_a_class_runs_only_once_granted_and_releases_its_class_when_it_ends() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        // Nothing else moves it: a tick, a restart's resume.
        assert!(tick(&mut e, 1500).is_empty());
        assert!(executes(&e.resume()).is_empty());

        let fx = grant(&mut e, 2000, ticket(1, 1, 0));
        assert_eq!(executes(&fx), vec![(1, 0)]);
        assert_eq!(leases(&fx), vec![Some(LEASE)]);
        assert!(ends(&fx).is_empty());
        // A repeated grant changes nothing.
        assert!(grant(&mut e, 2100, ticket(1, 1, 0)).is_empty());

        let fx = ended(&mut e, 3000, 1, 1, true, 0);
        assert_eq!(state(&e, 1, 1), ActivityState::Succeeded);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        assert_eq!(notifies(&fx).len(), 1);
        // Released once; a grant that comes after (its request reached the manager after the
        // release did) starts nothing and is given back.
        let fx = grant(&mut e, 3100, ticket(1, 1, 0));
        assert!(executes(&fx).is_empty());
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn an_activity_without_a_class_asks_nothing_and_runs_without_a_lease() {
        let mut e = Engine::new();
        let d = doc(1, &[A { id: 1, command: Some("work"), ..A::default() }]);
        let fx = deploy(&mut e, 1, 1, &d);
        assert_eq!(leases(&fx), vec![None]);
        let fx2 = ended(&mut e, 3000, 1, 1, true, 0);
        for fx in [&fx, &fx2] {
            assert!(begins(fx).is_empty() && ends(fx).is_empty(), "{fx:?}");
        }
        // Its stored run says nothing of classes.
        let changes = e.take_changes().expect("changes");
        let text = String::from_utf8(changes.runs[0].state.clone()).expect("utf-8");
        assert!(!text.contains("gates"), "{text}");
    }

    fn an_ordered_activity_without_a_class_asks_with_none_and_runs_without_a_lease() {
        let mut e = Engine::new();
        let extra = "<ordered>1</ordered>";
        let d = doc(1, &[A { id: 1, command: Some("work"), extra, ..A::default() }]);
        let fx = deploy(&mut e, 1, 1, &d);
        let asked: Vec<&Message> = to_controller(&fx)
            .into_iter()
            .filter(|m| matches!(m, Message::BeginSync(_)))
            .collect();
        let begin = BeginSync {
            ticket: ticket(1, 1, 0),
            class: None,
            pass: mobiwf_proto::Pass::FIRST,
        };
        assert_eq!(asked, vec![&Message::BeginSync(begin.clone())]);
        // On the wire it names no class.
        let wire = serde_json::to_string(&begin).expect("encoded");
        assert!(!wire.contains("class"), "{wire}");
        assert!(executes(&fx).is_empty(), "{fx:?}");
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);

        let fx = grant(&mut e, 2000, ticket(1, 1, 0));
        assert_eq!(executes(&fx), vec![(1, 0)]);
        assert_eq!(leases(&fx), vec![None]);
        // It runs under no lease: a word that one was lost changes nothing.
        assert!(lost(&mut e, 2500, 1, 1, 0).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Running);

        let fx = ended(&mut e, 3000, 1, 1, true, 0);
        assert_eq!(state(&e, 1, 1), ActivityState::Succeeded);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn a_refused_request_fails_the_activity_without_retries_and_its_contingency_applies() {
        let mut e = Engine::new();
        // Contingency 7: the controller is told at once, to place activity 7.
        let d = doc(1, &[A {
            id: 1,
            command: Some("work"),
            retries: Some((3, 0)),
            contingency: 7,
            class: Some("press"),
            ..A::default()
        }]);
        asked(&mut e, 1, &d);
        let fx = refuse(&mut e, 2000, ticket(1, 1, 0));
        assert_eq!(state(&e, 1, 1), ActivityState::Failed);
        assert!(detail(&e, 1, 1).starts_with("synchronization failed"), "{}", detail(&e, 1, 1));
        assert!(executes(&fx).is_empty());
        assert_eq!(reports(&fx), vec![(1, ActivityState::Failed)]);
        // The manager dropped the request: nothing to release.
        assert!(ends(&fx).is_empty(), "{fx:?}");
        assert!(result_of(&fx).is_some());
    }

    fn a_refusal_for_the_request_of_a_holder_or_of_an_earlier_round_changes_nothing() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        // Another round's refusal (none was asked with round 1).
        assert!(refuse(&mut e, 1500, ticket(1, 1, 1)).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        grant(&mut e, 2000, ticket(1, 1, 0));
        assert!(refuse(&mut e, 2100, ticket(1, 1, 0)).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Running);
    }

    fn an_activity_waiting_for_its_class_releases_it_when_withdrawn_or_cancelled() {
        for cancel in [true, false] {
            let mut e = Engine::new();
            asked(&mut e, 1, &pressing(1, None, ""));
            let fx = if cancel {
                control(&mut e, 2000, 1, Control::Cancel)
            } else {
                withdraw(&mut e, 2000, 1, &[1], "its partner did not answer")
            };
            assert!(state(&e, 1, 1).is_final());
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
            // A grant that crossed the release starts nothing and is given back.
            let fx = grant(&mut e, 2100, ticket(1, 1, 0));
            assert!(executes(&fx).is_empty());
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        }
    }

    fn a_holder_releases_its_class_when_it_fails_is_cancelled_withdrawn_or_its_instance_completes() {
        // How it ends → its state.
        let cases: [(&str, ActivityState); 4] = [
            ("fail", ActivityState::Failed),
            ("cancel", ActivityState::Cancelled),
            ("withdraw", ActivityState::Failed),
            ("complete", ActivityState::Cancelled),
        ];
        for (how, ends_in) in cases {
            let mut e = Engine::new();
            asked(&mut e, 1, &pressing(1, None, ""));
            grant(&mut e, 2000, ticket(1, 1, 0));
            let fx = match how {
                "fail" => ended(&mut e, 3000, 1, 1, false, 0),
                "cancel" => control(&mut e, 3000, 1, Control::Cancel),
                "withdraw" => withdraw(&mut e, 3000, 1, &[1], "too slow"),
                _ => at(&mut e, 3000, Input::Completed(mobiwf_proto::Completed {
                    instance: InstanceId(1),
                    by: ActivityId(9),
                })),
            };
            assert_eq!(state(&e, 1, 1), ends_in, "{how}");
            let fx = if how == "fail" {
                fx
            } else {
                // Its try is killed: the class is released once that try's end is told.
                assert_eq!(kills(&fx), vec![(1, 0)], "{how}");
                assert!(ends(&fx).is_empty(), "{how}: released with the kill: {fx:?}");
                ended(&mut e, 3100, 1, 1, false, 0)
            };
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)], "{how}: {fx:?}");
        }
    }

    fn a_holder_keeps_its_class_between_tries_and_its_next_try_runs_under_the_same_lease() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, Some((1, 10)), ""));
        grant(&mut e, 2000, ticket(1, 1, 0));
        let fx = ended(&mut e, 3000, 1, 1, false, 0);
        assert!(ends(&fx).is_empty(), "{fx:?}");
        let fx = tick(&mut e, 13_000);
        assert_eq!(executes(&fx), vec![(1, 1)]);
        assert_eq!(leases(&fx), vec![Some(LEASE)]);
        let fx = ended(&mut e, 14_000, 1, 1, true, 1);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn a_manual_holder_that_runs_too_long_releases_its_class() {
        let mut e = Engine::new();
        let d = doc(1, &[A {
            id: 1,
            extra: "<kind>manual</kind>",
            time_out: 5,
            class: Some("press"),
            ..A::default()
        }]);
        asked(&mut e, 1, &d);
        grant(&mut e, 2000, ticket(1, 1, 0));
        assert_eq!(state(&e, 1, 1), ActivityState::Ready);
        let fx = tick(&mut e, 7000);
        assert_eq!(state(&e, 1, 1), ActivityState::Failed);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn a_lost_lease_fails_the_holder_once_without_retries() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, Some((3, 0)), ""));
        grant(&mut e, 2000, ticket(1, 1, 0));
        // The word about another try changes nothing.
        assert!(lost(&mut e, 2500, 1, 1, 1).is_empty());
        let fx = lost(&mut e, 3000, 1, 1, 0);
        assert_eq!(state(&e, 1, 1), ActivityState::Failed);
        assert!(detail(&e, 1, 1).starts_with(crate::SYNC_LOST), "{}", detail(&e, 1, 1));
        assert!(executes(&fx).is_empty(), "no retry: {fx:?}");
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        // Said again (after a restart, the run directory says the same): nothing more.
        assert!(lost(&mut e, 3100, 1, 1, 0).is_empty());
        // The killed command's exit, if it comes, is too late.
        assert!(finished(&mut e, 1, 1, false, Finisher::Command).is_err());
    }

    fn a_lease_lost_while_paused_fails_the_try_once_resumed() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        grant(&mut e, 2000, ticket(1, 1, 0));
        let pause = Input::Pause(mobiwf_proto::PauseOrder {
            instance: InstanceId(1),
            activity: ActivityId(1),
            action: mobiwf_proto::PauseAction::Pause { kill: false },
            by: "op".to_owned(),
        });
        at(&mut e, 2500, pause);
        // Its command, running on while paused, is killed by its lease: held as its end.
        assert!(lost(&mut e, 3000, 1, 1, 0).is_empty());
        assert!(matches!(super::pause::life(&e, 1, 1), crate::Life::Paused { .. }));
        let resume = Input::Pause(mobiwf_proto::PauseOrder {
            instance: InstanceId(1),
            activity: ActivityId(1),
            action: mobiwf_proto::PauseAction::Resume,
            by: "op".to_owned(),
        });
        let fx = at(&mut e, 4000, resume);
        assert_eq!(state(&e, 1, 1), ActivityState::Failed, "not running with nothing behind it");
        assert!(detail(&e, 1, 1).contains(crate::SYNC_LOST), "{}", detail(&e, 1, 1));
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn a_persons_activity_whose_lease_ran_out_fails_offered_or_taken() {
        use super::people::{claim, directory, host, holders, tech, three, with_extensions};
        for taken in [false, true] {
            let mut e = host(directory(1, three()));
            let plain = doc(1, &[A {
                id: 3,
                extra: "<kind>manual</kind>",
                class: Some("press"),
                ..A::default()
            }]);
            let people = tech(mobiwf_xml_schema::Method::Fcfa);
            let d = with_extensions(&plain, &[(3, &people)]);
            let fx = deploy(&mut e, 1, 1, &d);
            assert_eq!(begins(&fx), vec![(ticket(1, 3, 0), "press".to_owned())]);
            let key = RunKey { instance: InstanceId(1), partition: PartitionId(1) };
            assert_eq!(e.person_lease(key, ActivityId(3)), None, "not granted yet");
            grant(&mut e, 2000, ticket(1, 3, 0));
            assert_eq!(state(&e, 1, 3), ActivityState::Ready);
            assert_eq!(e.person_lease(key, ActivityId(3)), Some(LEASE));
            if taken {
                claim(&mut e, 2500, (1, 3), "alice", mobiwf_proto::ItemAction::Select, Some("N1"));
                assert_eq!(state(&e, 1, 3), ActivityState::Running);
                assert!(holders(&e, 1, 3)[0].is_some());
                assert_eq!(e.person_lease(key, ActivityId(3)), Some(LEASE));
            }
            // A person's activity has no tries: whatever try the word names.
            let fx = lost(&mut e, 3000, 1, 3, 7);
            assert_eq!(state(&e, 1, 3), ActivityState::Failed, "taken: {taken}");
            assert!(detail(&e, 1, 3).starts_with(crate::SYNC_LOST), "{}", detail(&e, 1, 3));
            assert_eq!(ends(&fx), vec![ticket(1, 3, 0)]);
            assert_eq!(e.person_lease(key, ActivityId(3)), None);
            assert!(lost(&mut e, 3100, 1, 3, 0).is_empty());
        }
    }

    fn a_lost_lease_of_a_command_without_a_grant_changes_nothing() {
        let mut e = Engine::new();
        let d = doc(1, &[A { id: 1, command: Some("work"), ..A::default() }]);
        deploy(&mut e, 1, 1, &d);
        assert!(lost(&mut e, 3000, 1, 1, 0).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Running);
    }

    fn a_rerun_asks_again_with_the_next_round_and_ignores_answers_for_the_earlier_one() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        grant(&mut e, 2000, ticket(1, 1, 0));
        let fx = ended(&mut e, 3000, 1, 1, false, 0);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        let rerun = Input::Rerun(mobiwf_proto::Rerun {
            instance: InstanceId(1),
            partition: PartitionId(1),
            activities: vec![ActivityId(1)],
            controls: 0,
            rerun: 0,
        });
        let fx = at(&mut e, 4000, rerun);
        assert_eq!(begins(&fx), vec![(ticket(1, 1, 1), "press".to_owned())]);
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        // The earlier round's grant (its request reached the manager again, late) is given
        // back at once; its refusal changes nothing.
        assert_eq!(ends(&grant(&mut e, 4100, ticket(1, 1, 0))), vec![ticket(1, 1, 0)]);
        assert!(refuse(&mut e, 4200, ticket(1, 1, 0)).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        let fx = grant(&mut e, 4300, ticket(1, 1, 1));
        // The rerun's try has a run directory of its own.
        assert_eq!(executes(&fx), vec![(1, 1)]);
        let fx = ended(&mut e, 5000, 1, 1, true, 1);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 1)]);
    }

    fn a_restart_keeps_the_round_and_the_wait() {
        let mut e = Engine::new();
        let d = pressing(1, None, "");
        asked(&mut e, 1, &d);
        let mut e = reborn(&e, 1, &d);
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        assert!(e.resume().is_empty(), "the request is in the outbox already");
        let fx = grant(&mut e, 2000, ticket(1, 1, 0));
        assert_eq!(executes(&fx), vec![(1, 0)]);
        // Restarted while it runs: its command is run again (the executor runs it once)
        // under the same lease; its end releases the same ticket.
        let mut e = reborn(&e, 1, &d);
        assert_eq!(leases(&e.resume()), vec![Some(LEASE)]);
        let fx = ended(&mut e, 3000, 1, 1, true, 0);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        // A rerun after a restart still counts on.
        let e = reborn(&e, 1, &d);
        let gate = e.runs().next().and_then(|r| r.progress(ActivityId(1))).map(|p| p.gate.clone());
        assert_eq!(gate, Some(crate::Gate { rounds: 1, ..crate::Gate::default() }));
    }

    fn an_interrupted_instance_asks_nothing_and_takes_a_grant_only_once_resumed() {
        let mut e = Engine::new();
        // Interrupted before it could ask: it does not ask until resumed.
        control(&mut e, 500, 2, Control::Interrupt);
        let fx = deploy(&mut e, 2, 1, &pressing(2, None, ""));
        assert!(begins(&fx).is_empty());
        let fx = control(&mut e, 1500, 2, Control::Resume);
        assert_eq!(begins(&fx), vec![(ticket(2, 1, 0), "press".to_owned())]);

        // Interrupted while it waits: the grant is kept, the activity starts when resumed.
        let mut e = Engine::new();
        let d = pressing(1, None, "");
        asked(&mut e, 1, &d);
        control(&mut e, 1500, 1, Control::Interrupt);
        let fx = grant(&mut e, 2000, ticket(1, 1, 0));
        assert!(executes(&fx).is_empty(), "{fx:?}");
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        let mut e = reborn(&e, 1, &d);
        let fx = control(&mut e, 3000, 1, Control::Resume);
        assert_eq!(executes(&fx), vec![(1, 0)]);
        assert_eq!(leases(&fx), vec![Some(LEASE)]);
    }

    fn an_interrupted_instance_cancelled_releases_what_it_waited_for() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        control(&mut e, 1500, 1, Control::Interrupt);
        grant(&mut e, 2000, ticket(1, 1, 0));
        let fx = control(&mut e, 2500, 1, Control::Cancel);
        assert_eq!(state(&e, 1, 1), ActivityState::Cancelled);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn an_activity_on_a_path_not_taken_never_asks() {
        let mut e = Engine::new();
        // Activity 1 waits for remote 5, which is blocked: 1 is cancelled, never asks.
        let d = doc(1, &[A { id: 1, pre: &[(5, false)], class: Some("press"), ..A::default() }]);
        assert!(begins(&deploy(&mut e, 1, 1, &d)).is_empty());
        let fx = notified(&mut e, 1, 5, Outcome::Blocked);
        assert_eq!(state(&e, 1, 1), ActivityState::Cancelled);
        assert!(begins(&fx).is_empty() && ends(&fx).is_empty(), "{fx:?}");
    }

    fn answers_for_a_partition_or_an_instance_not_here_change_nothing() {
        let mut e = Engine::new();
        asked(&mut e, 1, &pressing(1, None, ""));
        let elsewhere = SyncTicket { partition: PartitionId(2), ..ticket(1, 1, 0) };
        assert!(grant(&mut e, 2000, elsewhere).is_empty());
        assert!(grant(&mut e, 2000, ticket(9, 1, 0)).is_empty());
        assert!(refuse(&mut e, 2000, ticket(1, 4, 0)).is_empty());
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
    }
}

#[test]
fn a_request_is_stored_beside_the_records_and_a_run_stored_before_task_classes_loads() {
    let mut e = Engine::new();
    asked(&mut e, 1, &pressing(1, None, ""));
    grant(&mut e, 2000, ticket(1, 1, 0));
    let changes = e.take_changes().expect("changes");
    let stored = &changes.runs[0];
    let json: serde_json::Value = serde_json::from_slice(&stored.state).expect("json");
    assert_eq!(
        json["gates"],
        serde_json::json!({"1": {"rounds": 1, "open": {"round": 0, "lease_ms": LEASE, "asked_ms": 1000}}})
    );
    // The same run as a version before task classes wrote it: no gates, nothing open.
    let mut old = json.clone();
    old.as_object_mut().expect("object").remove("gates");
    let bytes = serde_json::to_vec(&old).expect("bytes");
    let run = Run::from_stored(&bytes, stored.document.clone()).expect("an old run loads");
    let p = run.progress(ActivityId(1)).expect("activity 1");
    assert_eq!(p.gate, crate::Gate::default());
    assert_eq!(p.life(), &Life::Running { attempt: 0 });
}
