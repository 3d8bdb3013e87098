//! A held try the engine kills releases its class only once the try is over (`crate::sync`):
//! when the executor tells its end or that its lease killed it, or a fence after the kill
//! when it never tells (a restart keeps the wait); a try without a class's grant releases at
//! once, as before. A held command's lease counts from when its request was asked, and a
//! grant that came after that lease ran out is not used: released, and asked for again.

use super::sync::{LEASE, asked, begins, ends, grant, leases, lost, pressing, reborn, ticket};
use super::*;
use mobiwf_proto::fence_ms;

/// Instance 1's pressing, granted at 2000 and running try 0.
fn running() -> (Engine, String) {
    let mut e = Engine::new();
    let d = pressing(1, None, "");
    asked(&mut e, 1, &d);
    assert_eq!(
        executes(&grant(&mut e, 2000, ticket(1, 1, 0))),
        vec![(1, 0)]
    );
    (e, d)
}

/// Try `attempt` of instance 1's activity 1 ended (failed), as the executor tells it.
fn try_ended(e: &mut Engine, attempt: u32) -> Result<Vec<Effect>, Refusal> {
    let input = Input::Finished(crate::Ended {
        written: Vec::new(),
        instance: InstanceId(1),
        activity: ActivityId(1),
        finish: crate::Finish::of(false, Some("killed".to_owned()), None),
        by: Finisher::Command,
        attempt,
    });
    e.apply(3200, input)
}

scenarios! {
    fn a_killed_holder_releases_its_class_once_its_try_ended_or_its_lease_killed_it() {
        for told in ["ended", "lost"] {
            let (mut e, _) = running();
            let fx = withdraw(&mut e, 3000, 1, &[1], "too slow");
            assert_eq!(kills(&fx), vec![(1, 0)]);
            assert!(ends(&fx).is_empty(), "released with the kill: {fx:?}");
            // A word about another try is not the killed one's end.
            assert!(try_ended(&mut e, 1).is_err());
            let fx = match told {
                "ended" => ended(&mut e, 3500, 1, 1, false, 0),
                _ => lost(&mut e, 3500, 1, 1, 0),
            };
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)], "{told}: {fx:?}");
            assert_eq!(state(&e, 1, 1), ActivityState::Failed);
            // Once: the same word again releases nothing more.
            assert!(try_ended(&mut e, 0).is_err());
            assert!(e.next_deadline().is_none(), "nothing left to wait for");
        }
    }

    fn a_killed_try_whose_end_is_never_told_releases_its_class_a_fence_after_the_kill() {
        let (mut e, d) = running();
        let fx = control(&mut e, 3000, 1, Control::Cancel);
        assert!(ends(&fx).is_empty(), "{fx:?}");
        let due = 3000 + fence_ms(LEASE);
        assert_eq!(e.next_deadline(), Some(due));
        assert!(ends(&tick(&mut e, due - 1)).is_empty());
        // A restart keeps the wait (the executor that followed the try is gone with it).
        let mut e = reborn(&e, 1, &d);
        assert!(e.resume().is_empty(), "a final activity's try is not followed again");
        assert_eq!(e.next_deadline(), Some(due));
        assert_eq!(ends(&tick(&mut e, due)), vec![ticket(1, 1, 0)]);
        assert!(e.next_deadline().is_none());
        // Its end, told late, releases nothing more.
        assert!(ends(&lost(&mut e, due + 1, 1, 1, 0)).is_empty());
    }

    fn a_holder_killed_on_its_time_out_releases_its_class_once_the_try_ended() {
        let mut e = Engine::new();
        let d = doc(1, &[A {
            id: 1,
            command: Some("work"),
            time_out: 5,
            class: Some("press"),
            ..A::default()
        }]);
        asked(&mut e, 1, &d);
        grant(&mut e, 2000, ticket(1, 1, 0));
        let fx = tick(&mut e, 7000);
        assert_eq!(kills(&fx), vec![(1, 0)]);
        assert_eq!(state(&e, 1, 1), ActivityState::Failed);
        assert!(ends(&fx).is_empty(), "{fx:?}");
        assert_eq!(ends(&ended(&mut e, 7100, 1, 1, false, 0)), vec![ticket(1, 1, 0)]);
    }

    fn a_holder_paused_with_its_try_killed_then_withdrawn_releases_once_the_try_ended() {
        let (mut e, _) = running();
        let pause = Input::Pause(mobiwf_proto::PauseOrder {
            instance: InstanceId(1),
            activity: ActivityId(1),
            action: mobiwf_proto::PauseAction::Pause { kill: true },
            by: "op".to_owned(),
        });
        assert_eq!(kills(&at(&mut e, 2500, pause)), vec![(1, 0)]);
        let fx = withdraw(&mut e, 3000, 1, &[1], "too slow");
        assert!(state(&e, 1, 1).is_final());
        assert!(ends(&fx).is_empty(), "{fx:?}");
        assert_eq!(ends(&ended(&mut e, 3100, 1, 1, false, 0)), vec![ticket(1, 1, 0)]);
    }

    fn a_killed_held_try_rerun_before_its_end_was_told_keeps_its_request_until_it_is() {
        for told in ["ended", "lost", "never"] {
            let (mut e, d) = running();
            assert_eq!(kills(&withdraw(&mut e, 3000, 1, &[1], "too slow")), vec![(1, 0)]);
            // The operator reruns it at once: the new run asks with round 1, while round 0,
            // whose killed try may still run, is not released.
            let rerun = Input::Rerun(mobiwf_proto::Rerun {
                instance: InstanceId(1),
                partition: PartitionId(1),
                activities: vec![ActivityId(1)],
                controls: 0,
                rerun: 0,
            });
            let fx = at(&mut e, 3100, rerun);
            assert!(ends(&fx).is_empty(), "{told}: released by the rerun: {fx:?}");
            assert_eq!(e.next_deadline(), Some(3000 + fence_ms(LEASE)), "{told}");
            // A late grant of round 0 again is not given back while its try may run.
            assert!(ends(&grant(&mut e, 3150, ticket(1, 1, 0))).is_empty(), "{told}");
            // Kept over a restart.
            let mut e = reborn(&e, 1, &d);
            e.resume();
            let fx = match told {
                "ended" => ended(&mut e, 3200, 1, 1, false, 0),
                "lost" => lost(&mut e, 3200, 1, 1, 0),
                _ => tick(&mut e, 3000 + fence_ms(LEASE)),
            };
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)], "{told}: {fx:?}");
            // Once, and the new run goes on untouched: granted, it runs try 1.
            assert!(ends(&lost(&mut e, 3300 + fence_ms(LEASE), 1, 1, 0)).is_empty());
            assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing, "{told}");
            let fx = grant(&mut e, 3400 + fence_ms(LEASE), ticket(1, 1, 1));
            assert_eq!(executes(&fx), vec![(1, 1)], "{told}");
        }
    }

    fn a_lingering_requests_fence_releases_it_alone_while_a_later_try_runs_under_the_new_one() {
        let (mut e, _) = running();
        withdraw(&mut e, 3000, 1, &[1], "too slow");
        let rerun = Input::Rerun(mobiwf_proto::Rerun {
            instance: InstanceId(1),
            partition: PartitionId(1),
            activities: vec![ActivityId(1)],
            controls: 0,
            rerun: 0,
        });
        at(&mut e, 3100, rerun);
        assert_eq!(executes(&grant(&mut e, 3200, ticket(1, 1, 1))), vec![(1, 1)]);
        // Try 1 is killed by a pause and try 2 runs on resumption, under round 1.
        let order = |action| {
            Input::Pause(mobiwf_proto::PauseOrder {
                instance: InstanceId(1),
                activity: ActivityId(1),
                action,
                by: "op".to_owned(),
            })
        };
        assert_eq!(kills(&at(&mut e, 3300, order(mobiwf_proto::PauseAction::Pause { kill: true }))), vec![(1, 1)]);
        assert_eq!(executes(&at(&mut e, 3400, order(mobiwf_proto::PauseAction::Resume))), vec![(1, 2)]);
        // A late tick past both fences releases round 0 only: try 2 runs under round 1.
        assert_eq!(ends(&tick(&mut e, 3300 + fence_ms(LEASE) + 10)), vec![ticket(1, 1, 0)]);
        assert_eq!(state(&e, 1, 1), ActivityState::Running);
        // Once it ends, round 1 goes too: try 1's fence passed already, so at the next tick.
        let done = 9000 + fence_ms(LEASE);
        assert!(ends(&ended(&mut e, done, 1, 1, true, 2)).is_empty());
        assert!(e.next_deadline().is_some_and(|at| at <= done));
        assert_eq!(ends(&tick(&mut e, done)), vec![ticket(1, 1, 1)]);
    }

    fn a_killed_try_without_a_class_releases_its_relative_order_at_once() {
        let mut e = Engine::new();
        let extra = "<ordered>1</ordered>";
        let d = doc(1, &[A { id: 1, command: Some("work"), extra, ..A::default() }]);
        deploy(&mut e, 1, 1, &d);
        grant(&mut e, 2000, ticket(1, 1, 0));
        // Only a class's grant fences: nothing to wait for.
        let fx = withdraw(&mut e, 3000, 1, &[1], "too slow");
        assert_eq!(kills(&fx), vec![(1, 0)]);
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
    }

    fn a_held_command_runs_under_a_lease_counted_from_when_its_request_was_asked() {
        let mut e = Engine::new();
        let d = pressing(1, None, "");
        // Asked at 1000 (the deployment), granted at 2000.
        asked(&mut e, 1, &d);
        let fx = grant(&mut e, 2000, ticket(1, 1, 0));
        let asked_at: Vec<u64> = fx
            .iter()
            .filter_map(|f| match f {
                Effect::Execute { asked_ms, .. } => Some(*asked_ms),
                _ => None,
            })
            .collect();
        assert_eq!(asked_at, vec![1000]);
        assert_eq!(leases(&fx), vec![Some(LEASE)]);
        // A restart follows it under the same lease, from the same time.
        let e = reborn(&e, 1, &d);
        let resumed = e.resume();
        assert!(matches!(resumed[..], [Effect::Execute { asked_ms: 1000, .. }]), "{resumed:?}");
        let key = RunKey { instance: InstanceId(1), partition: PartitionId(1) };
        assert_eq!(e.asked_ms(key, ActivityId(1)), 1000);
    }

    fn a_grant_that_came_after_its_lease_ran_out_is_released_and_asked_for_again() {
        let mut e = Engine::new();
        let d = pressing(1, None, "");
        asked(&mut e, 1, &d);
        let lapsed = |e: &mut Engine, now, ticket| {
            at(e, now, Input::SyncLapsed(mobiwf_proto::SyncGranted { ticket, lease_ms: LEASE }))
        };
        let fx = lapsed(&mut e, 9000, ticket(1, 1, 0));
        assert!(executes(&fx).is_empty(), "{fx:?}");
        assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
        assert_eq!(begins(&fx), vec![(ticket(1, 1, 1), "press".to_owned())]);
        assert_eq!(state(&e, 1, 1), ActivityState::Synchronizing);
        let key = RunKey { instance: InstanceId(1), partition: PartitionId(1) };
        assert_eq!(e.asked_ms(key, ActivityId(1)), 9000, "the new request counts from now");
        // The same lapsed grant again, or the old round's grant as fresh: released again,
        // nothing runs.
        for fx in [lapsed(&mut e, 9100, ticket(1, 1, 0)), grant(&mut e, 9200, ticket(1, 1, 0))] {
            assert!(executes(&fx).is_empty(), "{fx:?}");
            assert_eq!(ends(&fx), vec![ticket(1, 1, 0)]);
            assert!(begins(&fx).is_empty(), "{fx:?}");
        }
        // The new round's grant runs it.
        assert_eq!(executes(&grant(&mut e, 9500, ticket(1, 1, 1))), vec![(1, 0)]);
        // A lapsed word for the round it runs under changes nothing: its lease file rules.
        let fx = lapsed(&mut e, 9600, ticket(1, 1, 1));
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(state(&e, 1, 1), ActivityState::Running);
    }

    fn a_lapsed_grant_of_an_ordering_without_a_class_is_taken_as_it_fences_nothing() {
        let mut e = Engine::new();
        let extra = "<ordered>1</ordered>";
        let d = doc(1, &[A { id: 1, command: Some("work"), extra, ..A::default() }]);
        deploy(&mut e, 1, 1, &d);
        let granted = mobiwf_proto::SyncGranted { ticket: ticket(1, 1, 0), lease_ms: LEASE };
        let fx = at(&mut e, 9000, Input::SyncLapsed(granted));
        assert_eq!(executes(&fx), vec![(1, 0)]);
        assert!(ends(&fx).is_empty() && begins(&fx).is_empty(), "{fx:?}");
    }
}
