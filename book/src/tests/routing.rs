//! The richer process model at the controller: skipped activities, a completion activity
//! that ends the instance, cancellations a dependency rule made (no failure of the
//! instance), and the task states a node reports (history).

use super::*;
use mobiwf_proto::{CANCELLED_BY_RULE, Completed, Report, completed_reason};

/// 1 on P1 (partition 1) → 2 on P2 (partition 2); 1 is a completion activity when asked.
fn two(completion: bool) -> String {
    let xml = wf(
        &[act(1, -1, &[]), act(2, -1, &[1])],
        &[(1, 1, 0, &[1]), (2, 2, 0, &[2])],
    );
    if completion {
        xml.replacen(
            "<nameActivity>N1</nameActivity>",
            "<nameActivity>N1</nameActivity><completion>true</completion>",
            1,
        )
    } else {
        xml
    }
}

fn ended_as(activity: u64, state: ActivityState, detail: &str) -> ActivityRecord {
    let mut r = record(activity, state);
    r.detail = Some(detail.to_owned());
    r
}

scenarios! {
    fn a_skipped_activity_is_no_failure_of_its_instance() {
        let mut b = three_nodes();
        submit(&mut b, &two(false)).expect("submit");
        partition_result(&mut b, T0 + 100, 1, vec![record(1, ActivityState::Succeeded)]);
        let skipped = ended_as(2, ActivityState::Skipped, "precondition 1 is on a path not taken");
        partition_result(&mut b, T0 + 200, 2, vec![skipped]);
        assert_eq!(activity(&b, 2).state(), ActivityState::Skipped);
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn a_cancellation_by_a_rule_is_no_failure_of_its_instance() {
        let mut b = three_nodes();
        submit(&mut b, &two(false)).expect("submit");
        partition_result(&mut b, T0 + 100, 1, vec![record(1, ActivityState::Succeeded)]);
        let why = format!("{CANCELLED_BY_RULE} 1→FAILED can no longer hold");
        partition_result(&mut b, T0 + 200, 2, vec![ended_as(2, ActivityState::Cancelled, &why)]);
        assert_eq!(state_of(&b), InstanceState::Succeeded);
        // A cancellation for another reason still is.
        let mut b = three_nodes();
        submit(&mut b, &two(false)).expect("submit");
        partition_result(&mut b, T0 + 100, 1, vec![record(1, ActivityState::Succeeded)]);
        let cancelled = ended_as(2, ActivityState::Cancelled, "precondition 9 failed or was cancelled");
        partition_result(&mut b, T0 + 200, 2, vec![cancelled]);
        assert_eq!(state_of(&b), InstanceState::Failed);
    }

    fn a_completion_activity_completes_the_instance_on_every_node() {
        let mut b = three_nodes();
        submit(&mut b, &two(true)).expect("submit");
        let report = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(1, ActivityState::Succeeded),
        });
        let applied = from_node(&mut b, T0 + 100, "peerA", report);
        let completed: Vec<String> = sent(&applied)
            .into_iter()
            .filter(|(_, m)| matches!(m, Message::Completed(Completed { by, .. }) if *by == ActivityId(1)))
            .map(|(to, _)| to)
            .collect();
        assert_eq!(completed, ["peerA", "peerB"]);
        assert!(story(&b).contains(&Event::Completed { activity: l(1) }));
        // The result repeats the word: nobody is told twice.
        let again = partition_result(&mut b, T0 + 150, 1, vec![record(1, ActivityState::Succeeded)]);
        assert!(!sent(&again).iter().any(|(_, m)| matches!(m, Message::Completed(_))));
        let cancelled = ended_as(2, ActivityState::Cancelled, &completed_reason(ActivityId(1)));
        partition_result(&mut b, T0 + 200, 2, vec![cancelled]);
        assert_eq!(state_of(&b), InstanceState::Succeeded);
    }

    fn the_states_an_activity_waited_in_are_in_the_history() {
        let mut b = three_nodes();
        submit(&mut b, &two(false)).expect("submit");
        let mut r = record(1, ActivityState::Succeeded);
        (r.synchronized_ms, r.ready_ms, r.started_ms) = (Some(2), Some(3), Some(5));
        partition_result(&mut b, T0 + 100, 1, vec![r]);
        let story = story(&b);
        assert!(story.contains(&Event::Synchronizing { activity: l(1) }), "{story:?}");
        assert!(story.contains(&Event::Ready { activity: l(1) }), "{story:?}");
        // Passed on in the same millisecond: only the start shows.
        let mut b = three_nodes();
        submit(&mut b, &two(false)).expect("submit");
        let mut r = record(1, ActivityState::Succeeded);
        (r.synchronized_ms, r.ready_ms) = (Some(5), Some(5));
        partition_result(&mut b, T0 + 100, 1, vec![r]);
        let story = self::story(&b);
        assert!(!story.iter().any(|e| matches!(e, Event::Ready { .. } | Event::Synchronizing { .. })), "{story:?}");
    }

    fn hub_routing_relays_rule_states_to_the_rule_s_node() {
        // 2 on P2 depends on 1 (P1) running.
        let xml = two(false).replacen(
            "<preconditionId>1</preconditionId>",
            "",
            1,
        );
        let xml = xml.replacen(
            "<nameActivity>N2</nameActivity>",
            r#"<nameActivity>N2</nameActivity><depends><term activity="1" state="RUNNING"/></depends>"#,
            1,
        );
        let mut b = three_nodes().with_routing(Routing::Hub {
            address: "/ip4/127.0.0.1/tcp/9/p2p/hub".to_owned(),
        });
        submit(&mut b, &xml).expect("submit");
        let running = mobiwf_proto::StateSet::EMPTY
            .with(ActivityState::NotReady)
            .with(ActivityState::Running);
        let word = Message::StateChanged(mobiwf_proto::StateChanged {
            pass: Default::default(),
            instance: InstanceId(1),
            activity: ActivityId(1),
            entered: running,
        });
        let relayed = from_node(&mut b, T0 + 100, "peerA", word.clone());
        assert_eq!(sent(&relayed), vec![("peerB".to_owned(), word)]);
    }

    fn a_partition_is_told_who_runs_the_activities_its_rules_name() {
        // 2 on P2 depends on 1 (P1) running, with no precondition.
        let xml = two(false).replacen("<preconditionId>1</preconditionId>", "", 1);
        let xml = xml.replacen(
            "<nameActivity>N2</nameActivity>",
            r#"<nameActivity>N2</nameActivity><depends><term activity="1" state="RUNNING"/></depends>"#,
            1,
        );
        let mut b = three_nodes();
        let told = told_runs_on(&submit(&mut b, &xml).expect("submit"));
        assert_eq!(told[&1], vec![(1, "peerA".to_owned())]);
        assert_eq!(told[&2], vec![(1, "peerA".to_owned()), (2, "peerB".to_owned())]);
    }

    fn a_failure_the_controller_decides_reaches_the_rules_that_name_it() {
        // 1 on P1 has contingency activity 9; 2 on P2 depends on 1 failing.
        let xml = wf(
            &[act(1, 9, &[]), act(2, -1, &[]), spare(9, -1)],
            &[(1, 1, 0, &[1]), (2, 2, 0, &[2])],
        )
        .replacen(
            "<nameActivity>N2</nameActivity>",
            r#"<nameActivity>N2</nameActivity><depends><term activity="1" state="FAILED"/></depends>"#,
            1,
        );
        let mut b = three_nodes();
        submit(&mut b, &xml).expect("submit");
        // P1 stops answering: its partition is given up and 1 fails; its successors would wait
        // for 9, but the rule on P2 hears of the failure now.
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        let told: Vec<(String, Message)> = sent(&applied)
            .into_iter()
            .filter(|(_, m)| matches!(m, Message::StateChanged(_)))
            .collect();
        let failed = mobiwf_proto::StateSet::EMPTY
            .with(ActivityState::NotReady)
            .with(ActivityState::Failed);
        assert_eq!(
            told,
            [(
                "peerB".to_owned(),
                Message::StateChanged(mobiwf_proto::StateChanged {
                    pass: Default::default(),
                    instance: InstanceId(1),
                    activity: ActivityId(1),
                    entered: failed,
                })
            )]
        );
    }
}
