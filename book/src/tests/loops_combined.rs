//! Loops combined with task classes and pausing at the controller: the book hears of a loop's
//! next pass first from a request for its class or a pause, which name the pass. A request of
//! a later pass starts it in the activity's view and takes the class again, as a new round,
//! even after its partition reported the earlier pass (a finished partition runs again), and
//! the holders, waiters and their words name the pass; an operator's pause of a body activity
//! the book knows final goes to its node while the loop may run again, and the node's word of
//! a later pass pauses that pass, on a partition given up on too (its node may run that pass);
//! once the loop ended, it is refused.

use super::*;
use crate::history::Event;
use mobiwf_proto::{BeginSync, EndSync, Pass, PauseAction, PauseOrder, PauseOutcome, PauseReport};
use mobiwf_proto::{SyncGranted, SyncTicket};
use mobiwf_xml_schema::ClassName;

const CLASSES: &str =
    r#"<classes><class id="press"><conflicts>press</conflicts></class></classes>"#;

/// 1 and 2 (class `press`) on P1 (peerA), 3 (the end of a loop back to 2, flag `again`, at
/// most 3 passes) and 4 on P2 (peerB).
fn looping() -> String {
    wf(
        &[
            act(1, -1, &[]),
            act(2, -1, &[1]),
            act(3, -1, &[2]),
            act(4, -1, &[3]),
        ],
        &[(1, 1, 0, &[1, 2]), (2, 2, 0, &[3, 4])],
    )
    .replacen(
        "<nameActivity>N2</nameActivity>",
        "<nameActivity>N2</nameActivity><class>press</class>",
        1,
    )
    .replacen(
        "<nameActivity>N3</nameActivity>",
        r#"<nameActivity>N3</nameActivity><loop to="2" while="again" max="3"/>"#,
        1,
    )
}

/// The class document applied and two instances of the loop submitted.
fn plant() -> Book {
    let mut b = three_nodes();
    let classes = mobiwf_xml_schema::load_classes(CLASSES.as_bytes())
        .expect("valid classes")
        .value;
    let input = Input::Classes {
        document: CLASSES.to_owned(),
        classes,
    };
    b.apply(T0, input).expect("classes");
    for _ in 0..2 {
        submit(&mut b, &looping()).expect("submit");
    }
    b
}

fn ticket(instance: u64, round: u32) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(2),
        round,
    }
}

/// Activity 2 of `instance` asks for the press in `pass`, as round `round`.
fn ask(b: &mut Book, at: u64, instance: u64, round: u32, pass: u32) -> Applied {
    let message = Message::BeginSync(BeginSync {
        ticket: ticket(instance, round),
        class: Some(ClassName::from("press")),
        pass: Pass(pass),
    });
    from_node(b, at, "peerA", message)
}

fn granted(applied: &Applied) -> Vec<SyncTicket> {
    sent(applied)
        .into_iter()
        .filter_map(|(_, m)| match m {
            Message::SyncGranted(SyncGranted { ticket, .. }) => Some(ticket),
            _ => None,
        })
        .collect()
}

fn in_pass(activity: u64, state: ActivityState, pass: u32) -> ActivityRecord {
    ActivityRecord {
        pass: Pass(pass),
        ..record(activity, state)
    }
}

/// Activity 2's node saying it paused the loop's second pass, at `T0 + 400`.
fn paused_in_pass_two(killed: bool) -> Message {
    Message::PauseReport(PauseReport {
        instance: InstanceId(1),
        activity: ActivityId(2),
        by: "op".to_owned(),
        at_ms: T0 + 400,
        outcome: PauseOutcome::Paused {
            state: ActivityState::Running,
            killed,
            clock_stopped: false,
        },
        pass: Pass(2),
    })
}

/// Activity 2 of instance 1 in `pass`, as history events name it.
fn two_in(pass: u32) -> crate::Label {
    crate::Label {
        pass: Pass(pass),
        ..l(2)
    }
}

/// Instance 1's first pass of 1 and 2 reported over (partition 1 finished), and 3 succeeded
/// with `flag` (partition 2 still runs: 4 waits).
fn first_pass_over(b: &mut Book, flag: &str) {
    let done = |id| record(id, ActivityState::Succeeded);
    partition_result(b, T0 + 100, 1, vec![done(1), done(2)]);
    let end = ActivityRecord {
        flag: Some(flag.to_owned()),
        ..done(3)
    };
    let report = Message::Report(Report {
        instance: InstanceId(1),
        partition: PartitionId(2),
        record: end,
    });
    from_node(b, T0 + 150, "peerB", report);
}

/// The operator pauses or resumes activity 2 of instance 1.
fn order(b: &mut Book, action: PauseAction) -> Result<Applied, BookError> {
    let input = Input::Pause {
        instance: InstanceId(1),
        activity: ActivityId(2),
        action,
        by: "op".to_owned(),
    };
    b.apply(T0 + 300, input)
}

scenarios! {
    fn a_request_of_a_later_pass_starts_it_and_takes_the_class_again() {
        let mut b = plant();
        assert_eq!(granted(&ask(&mut b, T0 + 10, 1, 0, 1)), vec![ticket(1, 0)]);
        from_node(&mut b, T0 + 90, "peerA", Message::EndSync(EndSync { ticket: ticket(1, 0) }));
        first_pass_over(&mut b, "again");
        assert!(partition_view(&b, 1).is_over(), "the first pass's result came");

        // The second pass asks before any report of it: the book starts it, then grants.
        assert_eq!(granted(&ask(&mut b, T0 + 200, 1, 1, 2)), vec![ticket(1, 1)]);
        let two = activity(&b, 2);
        assert_eq!((two.pass, two.state().is_final()), (Pass(2), false));
        let story = story(&b);
        assert!(story.contains(&Event::NewPass { activity: two_in(2) }), "{story:?}");
        let class = ClassName::from("press");
        let grant = Event::SyncGranted { activity: two_in(2), class };
        assert!(story.contains(&grant), "{story:?}");

        // The other instance's first pass waits behind it, and the words name the pass.
        assert!(granted(&ask(&mut b, T0 + 210, 2, 0, 1)).is_empty());
        let view = b.sync_view();
        assert_eq!((view.holders[0].pass, view.holders[0].round), (Pass(2), 1));
        assert_eq!(view.waiters[0].request.pass, Pass::FIRST);
        assert_eq!(view.waiters[0].behind_text, "held by instance 1's N2 (2#2) (class press)");
        let json = serde_json::to_value(&view).expect("json");
        assert_eq!(json["holders"][0]["pass"], 2);
        assert!(json["waiters"][0].get("pass").is_none(), "the first pass is left out: {json}");

        // Its release at the end of the pass lets the waiter in.
        let released = Message::EndSync(EndSync { ticket: ticket(1, 1) });
        assert_eq!(granted(&from_node(&mut b, T0 + 300, "peerA", released)), vec![ticket(2, 0)]);
    }

    fn an_operator_pauses_a_body_activity_in_a_pass_the_book_has_not_heard_of() {
        let mut b = plant();
        first_pass_over(&mut b, "again");
        assert_eq!(activity(&b, 2).state(), ActivityState::Succeeded);
        // Its node knows whether it runs again: the order goes there.
        let applied = order(&mut b, PauseAction::Pause { kill: false }).expect("sent to its node");
        let orders: Vec<Message> = sent(&applied).into_iter().map(|(_, m)| m).collect();
        assert!(
            matches!(&orders[..], [Message::Pause(PauseOrder { activity: ActivityId(2), .. })]),
            "{orders:?}"
        );
        let paused = paused_in_pass_two(false);
        from_node(&mut b, T0 + 400, "peerA", paused);
        let two = activity(&b, 2);
        assert_eq!(two.pass, Pass(2));
        assert!(matches!(two.lifecycle(), ActivityLifecycle::Paused { .. }), "{two:?}");
        order(&mut b, PauseAction::Resume).expect("a paused pass is resumed through its node");
    }

    fn a_later_pass_on_a_given_up_partition_is_paused_and_resumed_through_its_node() {
        let mut b = plant();
        // peerA stops answering after 1's end: partition 1 is given up, 2's first pass decided
        // failed, and the loop runs on (3 asks for another pass); peerA, back, may run it.
        let one = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: record(1, ActivityState::Succeeded),
        });
        from_node(&mut b, T0 + 50, "peerA", one);
        suspect(&mut b, T0 + 100, "peerA");
        assert!(partition_view(&b, 1).abandoned().is_some());
        let end = ActivityRecord {
            flag: Some("again".to_owned()),
            ..record(3, ActivityState::Succeeded)
        };
        let report = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(2),
            record: end,
        });
        from_node(&mut b, T0 + 150, "peerB", report);
        let applied = order(&mut b, PauseAction::Pause { kill: true }).expect("sent to peerA");
        assert!(matches!(&sent(&applied)[..], [(to, Message::Pause(_))] if to.as_str() == "peerA"));
        let paused = paused_in_pass_two(true);
        from_node(&mut b, T0 + 400, "peerA", paused);
        let two = activity(&b, 2);
        assert!(matches!(two.lifecycle(), ActivityLifecycle::Paused { .. }), "{two:?} {:?}", story(&b));
        // Only its node can resume what it paused: the loop would wait for good otherwise.
        let applied = order(&mut b, PauseAction::Resume).expect("sent to peerA");
        assert!(matches!(&sent(&applied)[..], [(to, Message::Pause(_))] if to.as_str() == "peerA"));
    }

    fn a_pause_of_a_body_activity_is_refused_once_its_loop_ended() {
        let mut b = plant();
        first_pass_over(&mut b, "done");
        let err = order(&mut b, PauseAction::Pause { kill: false }).expect_err("the loop ended");
        assert!(err.to_string().contains("it is succeeded"), "{err}");
        // A word of the first pass about a pause after its end changes nothing.
        let late = Message::PauseReport(PauseReport {
            instance: InstanceId(1),
            activity: ActivityId(2),
            by: "op".to_owned(),
            at_ms: T0 + 400,
            outcome: PauseOutcome::Refused { reason: "it is succeeded".to_owned() },
            pass: Pass::FIRST,
        });
        from_node(&mut b, T0 + 400, "peerA", late);
        assert_eq!(activity(&b, 2).pass, Pass::FIRST);
    }

    fn a_word_of_an_earlier_pass_than_the_book_knows_is_stale() {
        let mut b = plant();
        first_pass_over(&mut b, "again");
        let running = Message::Report(Report {
            instance: InstanceId(1),
            partition: PartitionId(1),
            record: ActivityRecord {
                finished_ms: None,
                ..in_pass(2, ActivityState::Running, 2)
            },
        });
        from_node(&mut b, T0 + 200, "peerA", running);
        let late = Message::PauseReport(PauseReport {
            instance: InstanceId(1),
            activity: ActivityId(2),
            by: "op".to_owned(),
            at_ms: T0 + 300,
            outcome: PauseOutcome::Paused {
                state: ActivityState::Running,
                killed: false,
                clock_stopped: false,
            },
            pass: Pass::FIRST,
        });
        from_node(&mut b, T0 + 300, "peerA", late);
        let two = activity(&b, 2);
        assert_eq!((two.pass, two.state()), (Pass(2), ActivityState::Running));
        assert!(!matches!(two.lifecycle(), ActivityLifecycle::Paused { .. }), "{two:?}");
    }
}
