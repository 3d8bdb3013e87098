//! Loops (the SERIAL_NO of *A lightweight workflow engine based on a relational structure* (He,
//! Li, Jiao, Liu), §3.2.3): the end of a loop that succeeds with its flag starts a new pass of
//! the body here and on the other partners of it, peer to peer; a word from an earlier pass does
//! not count; after `max` passes the flag fails the end; a restart keeps the passes.

use super::*;
use mobiwf_proto::{NewPass, Pass};

/// Partition 1 on /remote/p1: 1, then 2 (the loop's head), which partition 2 waits for.
fn head_side() -> String {
    doc(
        70,
        &[
            A {
                id: 1,
                command: Some("start"),
                adj: &[(2, "local")],
                ..A::default()
            },
            A {
                id: 2,
                command: Some("draft"),
                pre: &[(1, true)],
                adj: &[(3, "/remote/p2")],
                ..A::default()
            },
        ],
    )
}

/// Partition 2 on /remote/p2: 3 ends the loop back to 2 (`again`, at most 3 passes), then 4.
fn end_side() -> String {
    doc(
        70,
        &[
            A {
                id: 3,
                command: Some("review"),
                pre: &[(2, false)],
                adj: &[(4, "local")],
                extra: r#"<loop to="2" while="again" max="3"><member id="2" ip="/remote/p1"/><member id="3" ip="/remote/p2"/></loop>"#,
                ..A::default()
            },
            A {
                id: 4,
                command: Some("publish"),
                pre: &[(3, true)],
                ..A::default()
            },
        ],
    )
}

/// The command of `activity` ended with `flag` on try `attempt`.
fn flagged(e: &mut Engine, now_ms: u64, activity: u64, attempt: u32, flag: &str) -> Vec<Effect> {
    let input = Input::Finished(crate::Ended {
        written: Vec::new(),
        instance: InstanceId(70),
        activity: ActivityId(activity),
        finish: crate::Finish::Succeeded {
            detail: None,
            flag: Some(flag.to_owned()),
        },
        by: Finisher::Command,
        attempt,
    });
    at(e, now_ms, input)
}

/// The messages of `effects` sent to partners, with where they go.
fn sent(effects: &[Effect]) -> Vec<(String, Message)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Partner(loc),
                message,
            } => Some((loc.to_string(), message.clone())),
            _ => None,
        })
        .collect()
}

/// The new passes among `effects`, with where they go.
fn new_passes(effects: &[Effect]) -> Vec<(String, NewPass)> {
    sent(effects)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::NewPass(p) => Some((to, p)),
            _ => None,
        })
        .collect()
}

/// Gives `e` what a partner sent it.
fn deliver(e: &mut Engine, now_ms: u64, message: Message) -> Vec<Effect> {
    let input = match message {
        Message::Notify(notify) => Input::Notified(crate::Notified {
            from: None,
            notify,
            missing: Vec::new(),
        }),
        Message::NewPass(new_pass) => Input::NewPass(crate::Passed {
            from: None,
            new_pass,
            missing: Vec::new(),
        }),
        other => panic!("not a partner's word: {other:?}"),
    };
    at(e, now_ms, input)
}

fn pass_of(e: &Engine, activity: u64) -> Pass {
    e.record(InstanceId(70), ActivityId(activity))
        .expect("record")
        .pass
}

/// Both partitions deployed; the first pass of 1 and 2 done: what 2's node sent.
fn first_pass() -> (Engine, Engine, Vec<Effect>) {
    let (mut p1, mut p2) = (Engine::new(), Engine::new());
    deploy(&mut p1, 70, 1, &head_side());
    deploy(&mut p2, 70, 2, &end_side());
    ended(&mut p1, 1100, 70, 1, true, 0);
    let fx = ended(&mut p1, 1200, 70, 2, true, 0);
    (p1, p2, fx)
}

/// The one word of `effects` to a partner.
fn only_word(effects: &[Effect]) -> Message {
    let words = sent(effects);
    assert_eq!(words.len(), 1, "{words:?}");
    words.into_iter().map(|(_, m)| m).next().expect("one word")
}

scenarios! {
    fn a_loop_runs_its_body_again_across_partners_until_its_flag_changes() {
        let (mut p1, mut p2, fx) = first_pass();
        let mut word = only_word(&fx);
        for pass in 1..=3u32 {
            let fx = deliver(&mut p2, 2000 * u64::from(pass), word);
            assert_eq!(executes(&fx), vec![(3, pass - 1)], "pass {pass}");
            assert_eq!(pass_of(&p2, 3), Pass(pass));
            if pass == 3 {
                // Another flag ends the loop: what follows goes on, nobody hears of a pass.
                let fx = flagged(&mut p2, 2000 * u64::from(pass) + 10, 3, pass - 1, "done");
                assert!(new_passes(&fx).is_empty());
                assert_eq!(state(&p2, 70, 3), ActivityState::Succeeded);
                assert_eq!(executes(&fx), vec![(4, 0)]);
                break;
            }
            let fx = flagged(&mut p2, 2000 * u64::from(pass) + 10, 3, pass - 1, "again");
            // The end waits again, as the next pass; its successor does not go on.
            assert_eq!(state(&p2, 70, 3), ActivityState::NotReady);
            assert_eq!(pass_of(&p2, 3), Pass(pass + 1));
            assert_eq!(state(&p2, 70, 4), ActivityState::NotReady);
            assert!(executes(&fx).is_empty());
            let passes = new_passes(&fx);
            assert_eq!(passes.len(), 1, "only the head's partner is told");
            let (to, np) = passes.into_iter().next().expect("a new pass");
            assert_eq!(to, "/remote/p1");
            assert_eq!((np.by, np.pass), (ActivityId(3), Pass(pass + 1)));
            assert_eq!(np.activities, vec![ActivityId(2), ActivityId(3)]);
            let fx = deliver(&mut p1, 2000 * u64::from(pass) + 20, Message::NewPass(np));
            // The head starts over (its precondition outside the body still holds), in a run
            // directory of its own.
            assert_eq!(executes(&fx), vec![(2, pass)]);
            assert_eq!(pass_of(&p1, 2), Pass(pass + 1));
            assert_eq!(pass_of(&p1, 1), Pass::FIRST);
            let fx = ended(&mut p1, 2000 * u64::from(pass) + 30, 70, 2, true, pass);
            word = only_word(&fx);
            let Message::Notify(n) = &word else { panic!("{word:?}") };
            assert_eq!(n.pass, Pass(pass + 1), "the notification names its pass");
        }
    }

    fn a_word_from_an_earlier_pass_does_not_count() {
        let (mut p1, mut p2, fx) = first_pass();
        let first = only_word(&fx);
        deliver(&mut p2, 2000, first.clone());
        let fx = flagged(&mut p2, 2010, 3, 0, "again");
        // The first pass's notification again (a late copy): the end does not start.
        let late = deliver(&mut p2, 2020, first);
        assert!(executes(&late).is_empty());
        assert_eq!(state(&p2, 70, 3), ActivityState::NotReady);
        let (_, np) = new_passes(&fx).into_iter().next().expect("a new pass");
        let fx = deliver(&mut p1, 2030, Message::NewPass(np.clone()));
        let fx = ended(&mut p1, 2040, 70, 2, true, executes(&fx)[0].1);
        let fresh = only_word(&fx);
        // The new pass told again changes nothing: what it started stays started.
        assert!(executes(&deliver(&mut p1, 2045, Message::NewPass(np))).is_empty());
        assert_eq!(executes(&deliver(&mut p2, 2050, fresh)), vec![(3, 1)]);
    }

    fn a_word_of_a_later_pass_before_its_new_pass_counts() {
        // Three partners: 2 (head, on p1) → 5 (on p3) → 3 (end, on p2). The end tells p1 and
        // p3 of the new pass; p1's next word reaches p3 before the end's new pass does.
        let middle = doc(
            70,
            &[A {
                id: 5,
                command: Some("check"),
                pre: &[(2, false)],
                adj: &[(3, "/remote/p2")],
                ..A::default()
            }],
        );
        let (mut p1, _, fx) = first_pass();
        let mut p3 = Engine::new();
        deploy(&mut p3, 70, 3, &middle);
        let Message::Notify(first) = only_word(&fx) else { panic!("a notification") };
        assert_eq!(executes(&deliver(&mut p3, 2000, Message::Notify(first))), vec![(5, 0)]);
        ended(&mut p3, 2010, 70, 5, true, 0);
        let np = NewPass {
            instance: InstanceId(70),
            by: ActivityId(3),
            pass: Pass(2),
            activities: vec![ActivityId(2), ActivityId(5), ActivityId(3)],
            data: Vec::new(),
            files: Vec::new(),
            holder: None,
        };
        let fx = deliver(&mut p1, 2020, Message::NewPass(np.clone()));
        let fx = ended(&mut p1, 2030, 70, 2, true, executes(&fx)[0].1);
        // Pass 2's word comes first: kept; 5 has not started pass 2 yet.
        assert!(executes(&deliver(&mut p3, 2040, only_word(&fx))).is_empty());
        assert_eq!(state(&p3, 70, 5), ActivityState::Succeeded);
        // The new pass comes: 5 runs on the word it already has.
        assert_eq!(executes(&deliver(&mut p3, 2050, Message::NewPass(np))), vec![(5, 1)]);
        assert_eq!(pass_of(&p3, 5), Pass(2));
    }

    fn a_loop_that_ran_its_passes_fails_its_end() {
        let (mut p1, mut p2, fx) = first_pass();
        let mut word = only_word(&fx);
        for pass in 1..=3u32 {
            deliver(&mut p2, 2000 * u64::from(pass), word);
            let fx = flagged(&mut p2, 2000 * u64::from(pass) + 10, 3, pass - 1, "again");
            if pass == 3 {
                assert_eq!(state(&p2, 70, 3), ActivityState::Failed);
                assert_eq!(detail(&p2, 70, 3), "loop ran its 3 passes");
                // Contingency -1: what follows is cancelled, and the controller hears of it.
                assert_eq!(state(&p2, 70, 4), ActivityState::Cancelled);
                assert!(new_passes(&fx).is_empty());
                assert!(result_of(&fx).is_some());
                break;
            }
            let (_, np) = new_passes(&fx).into_iter().next().expect("a new pass");
            let fx = deliver(&mut p1, 2000 * u64::from(pass) + 20, Message::NewPass(np));
            let fx = ended(&mut p1, 2000 * u64::from(pass) + 30, 70, 2, true, executes(&fx)[0].1);
            // The head's partition ended each pass: it reports its result again.
            assert!(result_of(&fx).is_some(), "pass {}", pass + 1);
            word = only_word(&fx);
        }
    }

    fn a_restart_in_the_middle_of_a_loop_keeps_the_passes() {
        let (mut p1, mut p2, fx) = first_pass();
        let first = only_word(&fx);
        deliver(&mut p2, 2000, first.clone());
        let fx = flagged(&mut p2, 2010, 3, 0, "again");
        let (_, np) = new_passes(&fx).into_iter().next().expect("a new pass");
        deliver(&mut p1, 2020, Message::NewPass(np));
        let mut p1 = restart(&mut p1);
        let mut p2 = restart(&mut p2);
        assert_eq!(pass_of(&p2, 3), Pass(2));
        assert_eq!(pass_of(&p1, 2), Pass(2));
        // Still stale after the restart; the head's second try ends and counts.
        assert!(executes(&deliver(&mut p2, 2030, first)).is_empty());
        let fx = ended(&mut p1, 2040, 70, 2, true, 1);
        assert_eq!(executes(&deliver(&mut p2, 2050, only_word(&fx))), vec![(3, 1)]);
    }

    fn a_released_failure_in_the_body_runs_again_in_the_next_pass() {
        // All on one node: 1, then 2 (contingency 0: its failure releases 3), 3 ends the loop.
        let document = doc(
            70,
            &[
                A { id: 1, command: Some("start"), adj: &[(2, "local")], ..A::default() },
                A {
                    id: 2,
                    command: Some("draft"),
                    contingency: 0,
                    pre: &[(1, true)],
                    adj: &[(3, "local")],
                    ..A::default()
                },
                A {
                    id: 3,
                    command: Some("review"),
                    pre: &[(2, true)],
                    extra: r#"<loop to="2" while="again" max="2"><member id="2" ip="/remote/p1"/><member id="3" ip="/remote/p1"/></loop>"#,
                    ..A::default()
                },
            ],
        );
        let mut e = Engine::new();
        deploy(&mut e, 70, 1, &document);
        ended(&mut e, 1100, 70, 1, true, 0);
        let fx = ended(&mut e, 1200, 70, 2, false, 0);
        assert_eq!(executes(&fx), vec![(3, 0)]);
        let fx = flagged(&mut e, 1300, 3, 0, "again");
        // Both body activities are here: nobody else is told.
        assert!(new_passes(&fx).is_empty());
        assert_eq!(executes(&fx), vec![(2, 1)]);
        assert_eq!((pass_of(&e, 2), pass_of(&e, 3)), (Pass(2), Pass(2)));
    }

    fn a_withdrawal_names_its_pass_and_a_later_pass_still_runs() {
        // The controller gave up on the head's partition and decided the head's first pass
        // failed; the loop ran on elsewhere. Its withdrawal comes first, then the new pass.
        let (mut p1, _, _) = first_pass();
        let fx = withdraw(&mut p1, 1300, 70, &[2], "partner stopped answering");
        assert!(kills(&fx).is_empty(), "the first pass is over here");
        let fx = deliver(&mut p1, 1400, Message::NewPass(head_pass(2)));
        assert_eq!(executes(&fx), vec![(2, 1)], "the second pass is not withdrawn");
        assert_eq!(pass_of(&p1, 2), Pass(2));
        assert_eq!(state(&p1, 70, 2), ActivityState::Running);
        // A withdrawal of the second pass withdraws it.
        let fx = withdraw_in(&mut p1, 1500, 2, Pass(2));
        assert_eq!(kills(&fx), vec![(2, 1)]);
        assert_eq!(state(&p1, 70, 2), ActivityState::Failed);
        // A late copy of the first pass's withdrawal, after a third pass began, withdraws
        // nothing.
        let fx = deliver(&mut p1, 1600, Message::NewPass(head_pass(3)));
        assert_eq!(executes(&fx), vec![(2, 2)]);
        let fx = withdraw(&mut p1, 1700, 70, &[2], "partner stopped answering");
        assert!(kills(&fx).is_empty());
        assert_eq!((state(&p1, 70, 2), pass_of(&p1, 2)), (ActivityState::Running, Pass(3)));
    }

    fn a_pass_that_began_before_this_node_ended_its_own_begins_once_it_does() {
        // The head still runs its first pass, which the controller decided (failed, its
        // successors released): the loop's new pass comes before the withdrawal.
        let mut p1 = Engine::new();
        deploy(&mut p1, 70, 1, &head_side());
        let fx = ended(&mut p1, 1100, 70, 1, true, 0);
        assert_eq!(executes(&fx), vec![(2, 0)]);
        let fx = deliver(&mut p1, 1200, Message::NewPass(head_pass(2)));
        assert!(executes(&fx).is_empty(), "the first pass is left to run");
        assert_eq!(pass_of(&p1, 2), Pass::FIRST);
        // The withdrawal of the first pass ends it, and the second begins at once.
        let fx = withdraw(&mut p1, 1300, 70, &[2], "partner stopped answering");
        assert_eq!(kills(&fx), vec![(2, 0)]);
        assert_eq!(executes(&fx), vec![(2, 1)]);
        assert_eq!((state(&p1, 70, 2), pass_of(&p1, 2)), (ActivityState::Running, Pass(2)));
        // Its end is told to the loop's end, naming the second pass.
        let fx = ended(&mut p1, 1400, 70, 2, true, 1);
        let Message::Notify(n) = only_word(&fx) else { panic!("{fx:?}") };
        assert_eq!(n.pass, Pass(2));
    }

    fn a_head_cancelled_by_a_decided_end_begins_the_loop_s_next_pass() {
        // The controller gave up on the head's partition and decided its first pass failed
        // (contingency 0 let the loop's end run on), then told its node that 1, outside the
        // body, blocks: the head there was cancelled, not withdrawn. The end asks for a
        // second pass: it begins, hears 1 anew, and the end hears of it in pass 2.
        let mut p1 = Engine::new();
        deploy(&mut p1, 70, 1, &lone_head());
        notify_at(&mut p1, 1100, 70, 1, Outcome::Blocked);
        assert_eq!(state(&p1, 70, 2), ActivityState::Cancelled);
        let fx = deliver(&mut p1, 1200, Message::NewPass(head_pass(2)));
        assert_eq!((state(&p1, 70, 2), pass_of(&p1, 2)), (ActivityState::Cancelled, Pass(2)));
        let Message::Notify(n) = only_word(&fx) else { panic!("{fx:?}") };
        assert_eq!((n.activity, n.outcome, n.pass), (ActivityId(2), Outcome::Blocked, Pass(2)));
        // An operator's cancel ends every pass: a new pass told afterwards begins none.
        let mut p1 = Engine::new();
        deploy(&mut p1, 70, 1, &lone_head());
        control(&mut p1, 1100, 70, Control::Cancel);
        let fx = deliver(&mut p1, 1200, Message::NewPass(head_pass(2)));
        assert!(sent(&fx).is_empty(), "{fx:?}");
        assert_eq!((state(&p1, 70, 2), pass_of(&p1, 2)), (ActivityState::Cancelled, Pass::FIRST));
    }
}

/// Partition 1 on /remote/p1: only 2, the loop's head, which waits for 1 of another partner.
fn lone_head() -> String {
    doc(
        70,
        &[A {
            id: 2,
            command: Some("draft"),
            pre: &[(1, false)],
            adj: &[(3, "/remote/p2")],
            ..A::default()
        }],
    )
}

/// The loop's end tells the head's node that pass `pass` began.
fn head_pass(pass: u32) -> NewPass {
    NewPass {
        instance: InstanceId(70),
        by: ActivityId(3),
        pass: Pass(pass),
        activities: vec![ActivityId(2), ActivityId(3)],
        data: Vec::new(),
        files: Vec::new(),
        holder: None,
    }
}

/// The controller withdraws `activity` of instance 70 in `pass`.
fn withdraw_in(e: &mut Engine, now_ms: u64, activity: u64, pass: Pass) -> Vec<Effect> {
    let input = Input::Withdraw(mobiwf_proto::Withdraw {
        instance: InstanceId(70),
        partition: PartitionId(1),
        activities: vec![ActivityId(activity)],
        reason: "partner stopped answering".to_owned(),
        passes: [(ActivityId(activity), pass)].into_iter().collect(),
    });
    at(e, now_ms, input)
}
