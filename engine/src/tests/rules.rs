//! Dependency rules and task states: a rule over local and remote activities' states lets
//! its activity go on or cancels it; partners tell each other exactly the states a rule
//! there names; manual work is ready while offered and running once taken.

use super::*;
use crate::tests::people::{claim, deploy_manual, directory, host, tech, three, with_extensions};
use mobiwf_proto::{Control, ItemAction};
use mobiwf_xml_schema::Method;

const OR_RULE: &str =
    r#"<or><term activity="1" state="FAILED"/><term activity="2" state="succeeded"/></or>"#;
const AND_RULE: &str =
    r#"<and><term activity="1" state="FAILED"/><term activity="2" state="SUCCEEDED"/></and>"#;

/// Activities 1 and 2 run commands; 3 (no command) depends on `rule` over them.
fn three_with(rule: &'static str) -> String {
    doc(
        40,
        &[
            A {
                id: 1,
                command: Some("one"),
                ..A::default()
            },
            A {
                id: 2,
                command: Some("two"),
                ..A::default()
            },
            A {
                id: 3,
                depends: Some(rule),
                ..A::default()
            },
        ],
    )
}

/// The states sent in `StateChanged` messages: (location, activity, states).
fn state_changes(effects: &[Effect]) -> Vec<(String, u64, Vec<ActivityState>)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Partner(loc),
                message:
                    Message::StateChanged(mobiwf_proto::StateChanged {
                        activity, entered, ..
                    }),
            } => Some((loc.to_string(), activity.0, entered.iter().collect())),
            _ => None,
        })
        .collect()
}

scenarios! {
    fn an_or_rule_runs_its_activity_when_the_first_fails() {
        let mut e = Engine::new();
        deploy(&mut e, 40, 1, &three_with(OR_RULE));
        assert_eq!(state(&e, 40, 3), ActivityState::NotReady);
        ended(&mut e, 1500, 40, 1, false, 0);
        assert_eq!(state(&e, 40, 3), ActivityState::Succeeded);
        let rec = e.record(InstanceId(40), ActivityId(3)).expect("record");
        // It passed synchronizing and ready to run, in the same millisecond: the record keeps
        // the start only, which implies the others.
        assert_eq!(
            (rec.synchronized_ms, rec.ready_ms, rec.started_ms),
            (None, None, Some(1500))
        );
        let entered = StateSet::of_record(&rec);
        assert!(entered.contains(ActivityState::Synchronizing) && entered.contains(ActivityState::Ready));
        assert_eq!(state(&e, 40, 2), ActivityState::Running, "2 goes on regardless");
    }

    fn an_and_rule_that_can_no_longer_hold_cancels_its_activity() {
        let mut e = Engine::new();
        deploy(&mut e, 40, 1, &three_with(AND_RULE));
        ended(&mut e, 1500, 40, 2, false, 0);
        assert_eq!(state(&e, 40, 3), ActivityState::Cancelled);
        assert!(
            detail(&e, 40, 3).contains("and(1→FAILED, 2→SUCCEEDED) can no longer hold"),
            "{}",
            detail(&e, 40, 3)
        );
        // The same rule holds when 1 fails and 2 succeeds.
        let mut e = Engine::new();
        deploy(&mut e, 40, 1, &three_with(AND_RULE));
        ended(&mut e, 1500, 40, 1, false, 0);
        assert_eq!(state(&e, 40, 3), ActivityState::NotReady, "2 has not ended");
        ended(&mut e, 1600, 40, 2, true, 0);
        assert_eq!(state(&e, 40, 3), ActivityState::Succeeded);
    }

    fn a_remote_term_waits_for_the_partner_s_word_about_running() {
        let mut e = Engine::new();
        let d = doc(
            41,
            &[A {
                id: 2,
                depends: Some(r#"<term activity="1" state="RUNNING"/>"#),
                command: Some("two"),
                ..A::default()
            }],
        );
        deploy(&mut e, 41, 2, &d);
        let input = |entered: StateSet| Input::StateChanged(crate::Changed { from: None, change: mobiwf_proto::StateChanged { pass: Default::default(), instance: InstanceId(41), activity: ActivityId(1), entered } });
        let ready = StateSet::EMPTY
            .with(ActivityState::NotReady)
            .with(ActivityState::Synchronizing)
            .with(ActivityState::Ready);
        assert!(at(&mut e, 1500, input(ready)).is_empty());
        assert_eq!(state(&e, 41, 2), ActivityState::NotReady);
        let fx = at(&mut e, 1600, input(ready.with(ActivityState::Running)));
        assert_eq!(executes(&fx), [(2, 0)]);
        // The same word again is no news.
        assert!(at(&mut e, 1700, input(ready.with(ActivityState::Running))).is_empty());
    }

    fn a_notification_that_ends_a_rule_s_activity_without_running_cancels_the_waiter() {
        let mut e = Engine::new();
        let d = doc(
            42,
            &[A {
                id: 2,
                depends: Some(r#"<term activity="1" state="running"/>"#),
                ..A::default()
            }],
        );
        deploy(&mut e, 42, 2, &d);
        let entered = StateSet::EMPTY
            .with(ActivityState::NotReady)
            .with(ActivityState::Cancelled);
        let fx = at(
            &mut e,
            1500,
            Input::Notified(crate::Notified { from: None, notify: mobiwf_proto::Notify { pass: Default::default(), rerun: 0, instance: InstanceId(42), activity: ActivityId(1), outcome: Outcome::Blocked, entered, flag: None, routed: None, data: Vec::new(), files: Vec::new(), holder: None }, missing: Vec::new() }),
        );
        assert_eq!(state(&e, 42, 2), ActivityState::Cancelled);
        assert!(result_of(&fx).is_some(), "the partition is done");
    }

    fn partners_hear_only_the_states_their_rules_name() {
        let mut e = Engine::new();
        // 1 runs a command; /remote/b's rule names its RUNNING, /remote/c only waits for its
        // end (a precondition), /remote/d's rule names its SUCCEEDED.
        let d = doc(
            43,
            &[A {
                id: 1,
                command: Some("one"),
                adj: &[(7, "/remote/b"), (8, "/remote/c"), (9, "/remote/d")],
                adj_states: &[(7, "RUNNING"), (9, "SUCCEEDED")],
                ..A::default()
            }],
        );
        let fx = deploy(&mut e, 43, 1, &d);
        let running = vec![
            ActivityState::NotReady,
            ActivityState::Synchronizing,
            ActivityState::Ready,
            ActivityState::Running,
        ];
        assert_eq!(state_changes(&fx), [("/remote/b".to_owned(), 1, running.clone())]);
        let fx = ended(&mut e, 1500, 43, 1, true, 0);
        assert!(state_changes(&fx).is_empty(), "the end goes with the notifications");
        let told: Vec<(String, Vec<ActivityState>)> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Send {
                    to: Target::Partner(loc),
                    message: Message::Notify(mobiwf_proto::Notify { entered, .. }),
                } => Some((loc.to_string(), entered.iter().collect())),
                _ => None,
            })
            .collect();
        let mut ended = running;
        ended.push(ActivityState::Succeeded);
        assert_eq!(
            told,
            [
                ("/remote/b".to_owned(), ended.clone()),
                ("/remote/c".to_owned(), Vec::new()),
                ("/remote/d".to_owned(), ended),
            ]
        );
    }

    fn an_end_with_no_outcome_yet_still_reaches_the_rules() {
        let mut e = Engine::new();
        // 1 fails with contingency activity 5: its successors wait for 5, but a rule that
        // names 1 hears of its failure.
        let d = doc(
            44,
            &[A {
                id: 1,
                command: Some("one"),
                contingency: 5,
                adj: &[(7, "/remote/b"), (8, "/remote/c")],
                adj_states: &[(7, "FAILED")],
                ..A::default()
            }],
        );
        deploy(&mut e, 44, 1, &d);
        let fx = ended(&mut e, 1500, 44, 1, false, 0);
        assert!(notifies(&fx).is_empty());
        let changes = state_changes(&fx);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].0, "/remote/b");
        assert!(changes[0].2.contains(&ActivityState::Failed));
    }

    fn manual_work_is_ready_while_offered_and_running_once_selected() {
        let people = tech(Method::Fcfa);
        let mut e = host(directory(1, three()));
        deploy_manual(&mut e, 1000, 1, (3, &people));
        assert_eq!(state(&e, 1, 3), ActivityState::Ready);
        claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
        assert_eq!(state(&e, 1, 3), ActivityState::Running);
        claim(&mut e, 2100, (1, 3), "alice", ItemAction::Release, Some("N1"));
        assert_eq!(state(&e, 1, 3), ActivityState::Ready, "offered again");
        let rec = e.record(InstanceId(1), ActivityId(3)).expect("record");
        assert_eq!(rec.ready_ms, Some(1000), "ready since the first offer");
        // Cancelled while offered.
        control(&mut e, 2200, 1, Control::Cancel);
        assert_eq!(state(&e, 1, 3), ActivityState::Cancelled);
    }

    fn a_local_rule_on_running_follows_the_selection_of_a_work_item() {
        let mut e = host(directory(1, three()));
        let document = doc(
            2,
            &[
                A {
                    id: 3,
                    extra: "<kind>manual</kind>",
                    ..A::default()
                },
                A {
                    id: 9,
                    command: Some("notify the office"),
                    depends: Some(r#"<term activity="3" state="RUNNING"/>"#),
                    ..A::default()
                },
            ],
        );
        let document = with_extensions(&document, &[(3, &tech(Method::Fcfa))]);
        at(
            &mut e,
            1000,
            Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(2), partition: PartitionId(1), document, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
        );
        assert_eq!(state(&e, 2, 9), ActivityState::NotReady);
        let fx = claim(&mut e, 2000, (2, 3), "alice", ItemAction::Select, Some("N1"));
        assert_eq!(state(&e, 2, 3), ActivityState::Running);
        assert_eq!(executes(&fx), [(9, 0)], "9 starts when 3 is taken up");
    }

    fn no_work_is_taken_up_while_the_instance_is_interrupted() {
        // A work item: alice's select is refused while the instance is held.
        let mut e = host(directory(1, three()));
        deploy_manual(&mut e, 1000, 1, (3, &tech(Method::Fcfa)));
        control(&mut e, 1500, 1, Control::Interrupt);
        let fx = claim(&mut e, 2000, (1, 3), "alice", ItemAction::Select, Some("N1"));
        assert!(format!("{fx:?}").contains("interrupted"), "{fx:?}");
        assert_eq!(state(&e, 1, 3), ActivityState::Ready);
        control(&mut e, 2100, 1, Control::Resume);
        claim(&mut e, 2200, (1, 3), "alice", ItemAction::Select, Some("N1"));
        assert_eq!(state(&e, 1, 3), ActivityState::Running);
        // The node's worklist: a person cannot take it up and finish it either.
        let mut e = Engine::new();
        let d = doc(
            58,
            &[A {
                id: 1,
                extra: "<kind>manual</kind>",
                ..A::default()
            }],
        );
        deploy(&mut e, 58, 1, &d);
        control(&mut e, 1500, 58, Control::Interrupt);
        let err = finished(&mut e, 58, 1, true, Finisher::Person).unwrap_err();
        assert!(err.to_string().contains("interrupted"), "{err}");
        assert_eq!(state(&e, 58, 1), ActivityState::Ready);
        control(&mut e, 1600, 58, Control::Resume);
        finished(&mut e, 58, 1, true, Finisher::Person).expect("completed");
        assert_eq!(state(&e, 58, 1), ActivityState::Succeeded);
    }
}
