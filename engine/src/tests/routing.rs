//! Activity kinds and routing (*A lightweight workflow engine based on a relational structure*
//! (He, Li, Jiao, Liu), §3.2): routes by completion flag skip the successors not routed to, and
//! skipping propagates along a dead path; or-merges start on the first predecessor (or the first
//! with a flag), vote merges on N successes; a dummy passes at once; a completion activity cancels
//! the rest of its instance.

use super::*;
use mobiwf_proto::{Completed, Control};

/// 1 (command) routes `approved` → 2, otherwise → 3; 2 and 3 have 1 as precondition (2 also
/// on /remote/b); 4 waits for 2 and 3 with `merge`.
fn branch(merge: &'static str) -> String {
    doc(
        50,
        &[
            A {
                id: 1,
                command: Some("decide"),
                extra: r#"<routes><route flag="approved"><to>2</to></route><route><to>3</to></route></routes>"#,
                adj: &[(2, "local"), (3, "local"), (6, "/remote/b")],
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(1, true)],
                ..A::default()
            },
            A {
                id: 3,
                pre: &[(1, true)],
                ..A::default()
            },
            A {
                id: 4,
                pre: &[(2, true), (3, true)],
                extra: merge,
                ..A::default()
            },
        ],
    )
}

fn ended_with_flag(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    flag: &str,
) -> Vec<Effect> {
    let input = Input::Finished(crate::Ended {
        written: Vec::new(),
        instance: InstanceId(instance),
        activity: ActivityId(activity),
        finish: crate::Finish::Succeeded {
            detail: None,
            flag: Some(flag.to_owned()),
        },
        by: Finisher::Command,
        attempt: 0,
    });
    at(e, now_ms, input)
}

scenarios! {
    fn a_flag_takes_its_route_and_the_other_branch_is_skipped() {
        let mut e = Engine::new();
        deploy(&mut e, 50, 1, &branch(""));
        let fx = ended_with_flag(&mut e, 1500, 50, 1, "approved");
        assert_eq!(state(&e, 50, 2), ActivityState::Succeeded);
        assert_eq!(state(&e, 50, 3), ActivityState::Skipped);
        assert!(detail(&e, 50, 3).contains("path not taken"), "{}", detail(&e, 50, 3));
        // An and-merge of a taken and a skipped branch is on a dead path too.
        assert_eq!(state(&e, 50, 4), ActivityState::Skipped);
        let rec = e.record(InstanceId(50), ActivityId(1)).expect("record");
        assert_eq!(rec.flag.as_deref(), Some("approved"));
        // The remote successor hears the flag and where the route led.
        let told: Vec<_> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Send {
                    message: Message::Notify(mobiwf_proto::Notify { flag, routed, .. }),
                    ..
                } => Some((flag.clone(), routed.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            told,
            [(Some("approved".to_owned()), Some(vec![ActivityId(2)]))]
        );
    }

    fn an_or_merge_goes_on_with_the_branch_taken() {
        let mut e = Engine::new();
        deploy(&mut e, 50, 1, &branch("<merge>or</merge>"));
        ended_with_flag(&mut e, 1500, 50, 1, "rejected");
        assert_eq!(state(&e, 50, 2), ActivityState::Skipped);
        assert_eq!(state(&e, 50, 3), ActivityState::Succeeded);
        assert_eq!(state(&e, 50, 4), ActivityState::Succeeded);
    }

    fn a_remote_route_that_led_elsewhere_skips_the_successor_here() {
        let mut e = Engine::new();
        let d = doc(
            51,
            &[A {
                id: 6,
                pre: &[(1, false)],
                ..A::default()
            }],
        );
        deploy(&mut e, 51, 2, &d);
        let fx = at(
            &mut e,
            1500,
            Input::Notified(crate::Notified { from: None, notify: mobiwf_proto::Notify { pass: Default::default(), rerun: 0, instance: InstanceId(51), activity: ActivityId(1), outcome: Outcome::Succeeded, entered: StateSet::EMPTY, flag: Some("rejected".to_owned()), routed: Some(vec![ActivityId(3)]), data: Vec::new(), files: Vec::new(), holder: None }, missing: Vec::new() }),
        );
        assert_eq!(state(&e, 51, 6), ActivityState::Skipped);
        assert_eq!(result_of(&fx), Some(vec![(6, ActivityState::Skipped)]));
    }

    fn an_or_merge_on_a_flag_waits_for_that_flag() {
        let mut e = Engine::new();
        let d = doc(
            52,
            &[
                A {
                    id: 1,
                    command: Some("a"),
                    ..A::default()
                },
                A {
                    id: 2,
                    command: Some("b"),
                    ..A::default()
                },
                A {
                    id: 3,
                    pre: &[(1, true), (2, true)],
                    extra: r#"<merge flag="found">or</merge>"#,
                    ..A::default()
                },
            ],
        );
        deploy(&mut e, 52, 1, &d);
        ended(&mut e, 1500, 52, 1, true, 0);
        assert_eq!(state(&e, 52, 3), ActivityState::NotReady, "1 ended without the flag");
        ended_with_flag(&mut e, 1600, 52, 2, "found");
        assert_eq!(state(&e, 52, 3), ActivityState::Succeeded);
    }

    fn a_vote_merge_starts_on_enough_successes_and_ignores_the_rest() {
        let voters = || {
            doc(
                53,
                &[
                    A { id: 1, command: Some("a"), ..A::default() },
                    A { id: 2, command: Some("b"), ..A::default() },
                    A { id: 3, command: Some("c"), ..A::default() },
                    A {
                        id: 4,
                        pre: &[(1, true), (2, true), (3, true)],
                        extra: r#"<merge votes="2">vote</merge>"#,
                        ..A::default()
                    },
                ],
            )
        };
        let mut e = Engine::new();
        deploy(&mut e, 53, 1, &voters());
        ended(&mut e, 1500, 53, 1, true, 0);
        assert_eq!(state(&e, 53, 4), ActivityState::NotReady, "one vote of two");
        ended(&mut e, 1600, 53, 2, true, 0);
        assert_eq!(state(&e, 53, 4), ActivityState::Succeeded);
        ended(&mut e, 1700, 53, 3, false, 0);
        assert_eq!(state(&e, 53, 4), ActivityState::Succeeded, "a later vote changes nothing");
        // Two failures of three: two votes can no longer come.
        let mut e = Engine::new();
        deploy(&mut e, 53, 1, &voters());
        ended(&mut e, 1500, 53, 1, false, 0);
        assert_eq!(state(&e, 53, 4), ActivityState::NotReady);
        ended(&mut e, 1600, 53, 2, false, 0);
        assert_eq!(state(&e, 53, 4), ActivityState::Cancelled);
        assert!(detail(&e, 53, 4).contains("fewer than the 2 votes"), "{}", detail(&e, 53, 4));
    }

    fn a_dummy_passes_at_once() {
        let mut e = Engine::new();
        let d = doc(
            54,
            &[A {
                id: 1,
                extra: "<kind>dummy</kind>",
                ..A::default()
            }],
        );
        let fx = deploy(&mut e, 54, 1, &d);
        assert_eq!(state(&e, 54, 1), ActivityState::Succeeded);
        assert!(executes(&fx).is_empty());
    }

    fn a_completion_activity_cancels_the_rest_of_its_instance() {
        let mut e = Engine::new();
        let d = doc(
            55,
            &[
                A {
                    id: 1,
                    command: Some("long"),
                    ..A::default()
                },
                A {
                    id: 2,
                    command: Some("quick"),
                    extra: "<completion>true</completion>",
                    ..A::default()
                },
                A {
                    id: 3,
                    pre: &[(1, true)],
                    ..A::default()
                },
            ],
        );
        deploy(&mut e, 55, 1, &d);
        let fx = ended(&mut e, 1500, 55, 2, true, 0);
        assert_eq!(state(&e, 55, 1), ActivityState::Cancelled);
        assert_eq!(state(&e, 55, 3), ActivityState::Cancelled);
        assert!(detail(&e, 55, 1).contains("completed by its completion activity 2"));
        assert_eq!(kills(&fx), [(1, 0)], "its command is stopped");
        // The controller hears at once, then the partition's result.
        assert_eq!(reports(&fx), [(2, ActivityState::Succeeded)]);
        assert!(result_of(&fx).is_some());
        // The controller's word for the same instance changes nothing more.
        let again = at(
            &mut e,
            1600,
            Input::Completed(Completed {
                instance: InstanceId(55),
                by: ActivityId(2),
            }),
        );
        assert!(again.is_empty());
        let _ = control(&mut e, 1700, 55, Control::Cancel);
    }

    fn a_person_s_flag_must_be_a_flag() {
        let mut e = Engine::new();
        let d = doc(
            56,
            &[A {
                id: 1,
                extra: "<kind>manual</kind>",
                ..A::default()
            }],
        );
        deploy(&mut e, 56, 1, &d);
        let finish = |flag: &str| Input::Finished(crate::Ended { written: Vec::new(), instance: InstanceId(56), activity: ActivityId(1), finish: crate::Finish::Succeeded { detail: None, flag: Some(flag.to_owned()) }, by: Finisher::Person, attempt: 0 });
        let err = e.apply(2000, finish("two words")).unwrap_err();
        assert!(err.to_string().contains("' '"), "{err}");
        assert_eq!(state(&e, 56, 1), ActivityState::Ready, "nothing changed");
        at(&mut e, 2100, finish("ok"));
        assert_eq!(state(&e, 56, 1), ActivityState::Succeeded);
    }

    fn a_command_s_bad_flag_fails_its_activity() {
        let mut e = Engine::new();
        deploy(&mut e, 50, 1, &branch(""));
        ended_with_flag(&mut e, 1500, 50, 1, "not a flag");
        assert_eq!(state(&e, 50, 1), ActivityState::Failed);
        assert!(detail(&e, 50, 1).contains("flag file"), "{}", detail(&e, 50, 1));
    }

    fn the_controller_s_word_of_completion_cancels_what_runs_here() {
        let mut e = Engine::new();
        let d = doc(
            57,
            &[
                A {
                    id: 1,
                    command: Some("long"),
                    ..A::default()
                },
                A {
                    id: 2,
                    pre: &[(9, false)],
                    ..A::default()
                },
            ],
        );
        deploy(&mut e, 57, 1, &d);
        let fx = at(
            &mut e,
            1500,
            Input::Completed(Completed {
                instance: InstanceId(57),
                by: ActivityId(9),
            }),
        );
        assert_eq!(state(&e, 57, 1), ActivityState::Cancelled);
        assert_eq!(state(&e, 57, 2), ActivityState::Cancelled);
        assert!(detail(&e, 57, 2).contains("completed by its completion activity 9"));
        assert_eq!(kills(&fx), [(1, 0)]);
        assert!(result_of(&fx).is_some(), "the partition is done");
    }
}
