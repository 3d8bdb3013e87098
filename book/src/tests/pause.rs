//! Pausing one activity: the operator's order goes to its node, the node's word moves the
//! activity (paused, resumed) and the history keeps who and when; what the book knows cannot
//! be paused or resumed is refused at once; a word its node said before the latest one
//! applied moves nothing; a paused activity still ends, is given up or cancelled like any
//! other.

use super::*;
use mobiwf_proto::{PauseAction, PauseOrder, PauseOutcome, PauseReport, Report};

const PAUSE: PauseAction = PauseAction::Pause { kill: false };

/// Chain 1 (P1, peerA) → 2 (P2, peerB), submitted.
fn chain_book() -> Book {
    let mut b = three_nodes();
    submit(&mut b, &chain(-1)).expect("submit");
    b
}

fn order(b: &mut Book, activity: u64, action: PauseAction) -> Result<Applied, BookError> {
    b.apply(
        T0 + 100,
        Input::Pause {
            instance: InstanceId(1),
            activity: ActivityId(activity),
            action,
            by: "op".to_owned(),
        },
    )
}

/// Activity 1's node (peerA) says what became of a pause or resumption, at `at_ms`.
fn told(b: &mut Book, at_ms: u64, by: &str, outcome: PauseOutcome) -> Applied {
    let message = Message::PauseReport(PauseReport {
        instance: InstanceId(1),
        activity: ActivityId(1),
        by: by.to_owned(),
        at_ms,
        outcome,
        pass: mobiwf_proto::Pass::FIRST,
    });
    from_node(b, at_ms, "peerA", message)
}

fn paused() -> PauseOutcome {
    paused_in(ActivityState::Running)
}

/// Paused while it was `state`.
fn paused_in(state: ActivityState) -> PauseOutcome {
    PauseOutcome::Paused {
        state,
        killed: false,
        clock_stopped: false,
    }
}

fn resumed(state: ActivityState) -> PauseOutcome {
    PauseOutcome::Resumed { state, moved_ms: 0 }
}

/// Activity 1's node reports it `state`.
fn says(b: &mut Book, at_ms: u64, state: ActivityState) {
    let message = Message::Report(Report {
        instance: InstanceId(1),
        partition: PartitionId(1),
        record: record(1, state),
    });
    from_node(b, at_ms, "peerA", message);
}

fn is_paused(b: &Book) -> bool {
    matches!(activity(b, 1).lifecycle(), ActivityLifecycle::Paused { .. })
}

scenarios! {
    fn an_operators_pause_goes_to_the_activitys_node_and_its_word_pauses_and_resumes_it() {
        let mut b = chain_book();
        says(&mut b, T0 + 50, ActivityState::Running);
        let applied = order(&mut b, 1, PauseAction::Pause { kill: true }).expect("asked");
        let asked = Message::Pause(PauseOrder {
            instance: InstanceId(1),
            activity: ActivityId(1),
            action: PauseAction::Pause { kill: true },
            by: "op".to_owned(),
        });
        assert_eq!(sent(&applied), [("peerA".to_owned(), asked)]);
        assert!(!is_paused(&b), "not until its node says so");

        told(&mut b, T0 + 200, "op", paused());
        assert_eq!(
            activity(&b, 1).lifecycle(),
            ActivityLifecycle::Paused {
                under: Undecided::Running,
                pause: PausedBy { by: "op".to_owned(), since_ms: T0 + 200 },
            }
        );
        assert_eq!(activity(&b, 1).state(), ActivityState::Running);
        // Stored and read back paused.
        let inst = b.instance(InstanceId(1)).expect("instance");
        let json = serde_json::to_string(inst).expect("json");
        assert!(json.contains(r#""paused":{"by":"op","since_ms":"#), "{json}");
        let back: Instance = serde_json::from_str(&json).expect("loads");
        assert_eq!(back.activities[0].lifecycle(), activity(&b, 1).lifecycle());

        told(&mut b, T0 + 300, "op", resumed(ActivityState::Running));
        assert_eq!(activity(&b, 1).lifecycle(), ActivityLifecycle::Running);
        let story = story(&b);
        assert!(story.contains(&Event::PauseAsked { action: PauseAction::Pause { kill: true }, by: "op".to_owned() }));
        assert!(story.contains(&Event::Pause { by: "op".to_owned(), outcome: paused() }));
        assert!(story.contains(&Event::Pause { by: "op".to_owned(), outcome: resumed(ActivityState::Running) }));
    }

    fn a_word_said_before_the_latest_one_applied_moves_nothing() {
        let mut b = chain_book();
        says(&mut b, T0 + 50, ActivityState::Running);
        // The node paused it (a holder), resumed it, and paused it again (the operator); the
        // resumption's word arrives last.
        told(&mut b, T0 + 200, "u0", paused());
        told(&mut b, T0 + 400, "op", paused_in(ActivityState::Ready));
        told(&mut b, T0 + 300, "u0", resumed(ActivityState::Running));
        assert!(is_paused(&b), "paused on its node: {:?}", activity(&b, 1).lifecycle());
        // Stored and read back with its latest word's time: a later resumption moves it.
        let inst = b.instance(InstanceId(1)).expect("instance");
        let json = serde_json::to_string(inst).expect("json");
        let back: Instance = serde_json::from_str(&json).expect("loads");
        assert_eq!(back.activities[0].pause_word_ms, Some(T0 + 400));
        order(&mut b, 1, PauseAction::Resume).expect("the operator resumes it through its node");
        told(&mut b, T0 + 500, "op", resumed(ActivityState::Ready));
        assert!(!is_paused(&b));
        // A pause said before that resumption, arriving after it, leaves it resumed.
        told(&mut b, T0 + 450, "u0", paused());
        assert!(!is_paused(&b));
        let story = story(&b);
        let late = Event::Pause { by: "u0".to_owned(), outcome: resumed(ActivityState::Running) };
        assert!(story.contains(&late), "the history keeps a stale word");
    }

    fn a_holder_pauses_an_offered_or_selected_item_and_a_late_word_leaves_it_paused() {
        let mut b = chain_book();
        says(&mut b, T0 + 50, ActivityState::Ready);
        told(&mut b, T0 + 200, "alice", paused_in(ActivityState::Ready));
        assert!(matches!(activity(&b, 1).lifecycle(), ActivityLifecycle::Paused { under: Undecided::Waiting, .. }));
        // Its start, said before the pause, comes after it.
        says(&mut b, T0 + 150, ActivityState::Running);
        assert!(matches!(activity(&b, 1).lifecycle(), ActivityLifecycle::Paused { under: Undecided::Running, .. }));
        told(&mut b, T0 + 300, "alice", resumed(ActivityState::Ready));
        assert_eq!(activity(&b, 1).lifecycle(), ActivityLifecycle::Waiting);
        assert_eq!(activity(&b, 1).state(), ActivityState::Ready);
    }

    fn a_paused_activity_ends_as_its_node_says() {
        for end in [ActivityState::Succeeded, ActivityState::Failed] {
            let mut b = chain_book();
            says(&mut b, T0 + 50, ActivityState::Running);
            told(&mut b, T0 + 200, "op", paused());
            // Its end, taken when it was resumed, before the word of the resumption.
            says(&mut b, T0 + 300, end);
            assert_eq!(activity(&b, 1).state(), end);
            told(&mut b, T0 + 300, "op", resumed(ActivityState::Running));
            assert_eq!(activity(&b, 1).state(), end, "a final state stays");
        }
    }

    fn a_paused_activity_is_given_up_or_cancelled_like_any_other() {
        let mut b = chain_book();
        told(&mut b, T0 + 200, "op", paused());
        suspect(&mut b, T0 + 1000, "peerA");
        assert_eq!(activity(&b, 1).state(), ActivityState::Failed);

        let mut b = chain_book();
        told(&mut b, T0 + 200, "op", paused());
        let input = Input::Control { instance: InstanceId(1), action: Control::Cancel };
        b.apply(T0 + 300, input).expect("cancel");
        assert!(matches!(activity(&b, 1).lifecycle(), ActivityLifecycle::CancelledByOperator { .. }));
    }

    fn a_paused_activity_a_predecessor_blocks_is_cancelled_when_its_partition_is_given_up() {
        // 1 → 2 on P1 (peerA), 3 after 2 on P2 (peerB); 2 paused before its start.
        let mut b = three_nodes();
        let acts = [act(1, -1, &[]), act(2, -1, &[1]), act(3, -1, &[2])];
        submit(&mut b, &wf(&acts, &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3])])).expect("submit");
        let message = Message::PauseReport(PauseReport {
            instance: InstanceId(1),
            activity: ActivityId(2),
            by: "op".to_owned(),
            at_ms: T0 + 200,
            outcome: paused_in(ActivityState::Ready),
            pass: mobiwf_proto::Pass::FIRST,
        });
        from_node(&mut b, T0 + 200, "peerA", message);
        assert!(matches!(activity(&b, 2).lifecycle(), ActivityLifecycle::Paused { under: Undecided::Waiting, .. }));

        let applied = suspect(&mut b, T0 + 1000, "peerA");
        assert_eq!(activity(&b, 1).state(), ActivityState::Failed);
        assert_eq!(activity(&b, 2).state(), ActivityState::Cancelled, "not left paused for good");
        // Activity 3's node hears that 2 will never end well: it does not wait for good.
        let told_b = sent(&applied).into_iter().any(|(to, m)| {
            to == "peerB" && matches!(&m, Message::Notify(n) if n.activity == ActivityId(2))
        });
        assert!(told_b, "{:?}", sent(&applied));
    }

    fn a_paused_activity_a_successor_waited_too_long_for_is_overdue_all_the_same() {
        let mut b = chain_book();
        says(&mut b, T0 + 50, ActivityState::Running);
        told(&mut b, T0 + 200, "op", paused());
        let overdue = Message::Overdue(mobiwf_proto::Overdue {
            instance: InstanceId(1),
            waiting: ActivityId(2),
            precondition: ActivityId(1),
            time_out_secs: 10,
        });
        from_node(&mut b, T0 + 300, "peerB", overdue);
        assert!(matches!(
            activity(&b, 1).lifecycle(),
            ActivityLifecycle::Overdue { under: Undecided::Running, .. }
        ));
    }

    fn what_the_book_knows_cannot_be_paused_or_resumed_is_refused_with_what_to_do() {
        let mut b = chain_book();
        let err = order(&mut b, 1, PauseAction::Resume).expect_err("not paused");
        assert!(matches!(&err, BookError::Pause(why) if why.contains("not paused")), "{err}");
        let err = order(&mut b, 5, PAUSE).expect_err("no such activity");
        assert!(err.to_string().contains("no such activity"), "{err}");
        told(&mut b, T0 + 200, "op", paused());
        let err = order(&mut b, 1, PAUSE).expect_err("paused already");
        assert!(err.to_string().contains("mobiwf-controller resume 1 1"), "{err}");
        order(&mut b, 1, PauseAction::Resume).expect("a paused one is resumed");
        says(&mut b, T0 + 300, ActivityState::Succeeded);
        let err = order(&mut b, 1, PAUSE).expect_err("succeeded");
        assert!(err.to_string().contains("it is succeeded"), "{err}");
        let err = b
            .apply(T0 + 400, Input::Pause { instance: InstanceId(9), activity: ActivityId(1), action: PAUSE, by: "op".into() })
            .expect_err("no instance");
        assert!(matches!(err, BookError::UnknownInstance(_)));
    }

    fn a_nodes_refusal_is_kept_in_the_history_and_changes_nothing() {
        let mut b = chain_book();
        order(&mut b, 1, PAUSE).expect("asked");
        let refused = PauseOutcome::Refused { reason: "it is not_ready, not ready or running".to_owned() };
        told(&mut b, T0 + 200, "op", refused.clone());
        assert_eq!(activity(&b, 1).lifecycle(), ActivityLifecycle::Waiting);
        assert!(story(&b).contains(&Event::Pause { by: "op".to_owned(), outcome: refused }));
        // Only the node that runs it speaks of it.
        let message = Message::PauseReport(PauseReport {
            instance: InstanceId(1),
            activity: ActivityId(1),
            by: "op".to_owned(),
            at_ms: T0,
            outcome: paused(),
            pass: mobiwf_proto::Pass::FIRST,
        });
        let input = Input::FromNode { peer: NodeId::new("peerB"), message };
        assert!(matches!(b.apply(T0 + 300, input), Err(BookError::NotYours { .. })));
    }
}
