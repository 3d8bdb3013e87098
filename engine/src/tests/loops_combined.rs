//! Loops combined with time, task classes and pausing on the node: a new pass counts the
//! waiting timers of its body from its own start (`timeToWait`, preconditions' `timeOut`s), and
//! leaves those of the activities outside the body in the same run counted from the deployment,
//! across a restart too; a classed activity of the body asks for its class again in each pass,
//! as a new round naming its pass; a pause of a later pass names it to the controller.

use super::*;
use mobiwf_proto::{
    BeginSync, EndSync, NewPass, Pass, PauseAction, PauseOrder, PauseReport, SyncGranted,
    SyncTicket,
};

/// A second, in ms.
const SEC: u64 = 1000;

/// The loop of partition 2 back to 2 (on /remote/p1): `again`, at most 3 passes.
const LOOP: &str = r#"<loop to="2" while="again" max="3"><member id="2" ip="/remote/p1"/><member id="3" ip="/remote/p2"/></loop>"#;

/// Partition 2 on /remote/p2: 3 ends the loop; it waits for 2 at most 100 s (then it is
/// overdue) and starts anyway after 200 s. 4, after it and outside the loop, starts anyway
/// 120 s after the deployment.
fn timed_end() -> String {
    doc(
        70,
        &[
            A {
                id: 3,
                command: Some("review"),
                pre: &[(2, false)],
                pre_time_out: &[(2, 100)],
                time_to_wait: 200,
                adj: &[(4, "local")],
                extra: LOOP,
                ..A::default()
            },
            A {
                id: 4,
                command: Some("publish"),
                pre: &[(3, true)],
                time_to_wait: 120,
                ..A::default()
            },
        ],
    )
}

/// Partition 1 on /remote/p1: 1, then 2 (the loop's head, of `class` if any), which the end
/// on /remote/p2 waits for.
fn head(class: Option<&'static str>) -> String {
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
                class,
                ..A::default()
            },
        ],
    )
}

/// Try `attempt` of 3's command ended with `flag`.
fn flagged(e: &mut Engine, now_ms: u64, attempt: u32, flag: &str) -> Vec<Effect> {
    let input = Input::Finished(crate::Ended {
        written: Vec::new(),
        instance: InstanceId(70),
        activity: ActivityId(3),
        finish: crate::Finish::Succeeded {
            detail: None,
            flag: Some(flag.to_owned()),
        },
        by: Finisher::Command,
        attempt,
    });
    at(e, now_ms, input)
}

/// The end's node tells the head's that pass `pass` began.
fn new_pass(e: &mut Engine, now_ms: u64, pass: u32) -> Vec<Effect> {
    let new_pass = NewPass {
        instance: InstanceId(70),
        by: ActivityId(3),
        pass: Pass(pass),
        activities: vec![ActivityId(2), ActivityId(3)],
        data: Vec::new(),
        files: Vec::new(),
        holder: None,
    };
    let input = Input::NewPass(crate::Passed {
        from: None,
        new_pass,
        missing: Vec::new(),
    });
    at(e, now_ms, input)
}

/// The requests for a class among `effects`: (round, pass).
fn requests(effects: &[Effect]) -> Vec<(u32, Pass)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::BeginSync(BeginSync { ticket, pass, .. }) => Some((ticket.round, *pass)),
            _ => None,
        })
        .collect()
}

fn ticket(round: u32) -> SyncTicket {
    SyncTicket {
        instance: InstanceId(70),
        partition: PartitionId(1),
        activity: ActivityId(2),
        round,
    }
}

fn grant(e: &mut Engine, now_ms: u64, round: u32) -> Vec<Effect> {
    let granted = SyncGranted {
        ticket: ticket(round),
        lease_ms: 5000,
    };
    at(e, now_ms, Input::SyncGranted(granted))
}

/// The pauses and resumptions told to the controller: the pass each names.
fn pause_passes(effects: &[Effect]) -> Vec<Pass> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::PauseReport(PauseReport { pass, .. }) => Some(*pass),
            _ => None,
        })
        .collect()
}

fn order(e: &mut Engine, now_ms: u64, action: PauseAction) -> Vec<Effect> {
    let order = PauseOrder {
        instance: InstanceId(70),
        activity: ActivityId(2),
        action,
        by: "op".to_owned(),
    };
    at(e, now_ms, Input::Pause(order))
}

scenarios! {
    fn a_new_pass_counts_its_body_s_waiting_timers_from_its_start_and_no_other_s() {
        let mut e = Engine::new();
        deploy(&mut e, 70, 2, &timed_end());
        // Deployed at 1 s: 3 is overdue at 101 s, starts anyway at 201 s; 4 at 121 s.
        assert_eq!(e.next_deadline(), Some(101 * SEC));
        assert_eq!(executes(&notify_at(&mut e, 2 * SEC, 70, 2, Outcome::Succeeded)), vec![(3, 0)]);
        let fx = flagged(&mut e, 50 * SEC, 0, "again");
        assert_eq!(state(&e, 70, 3), ActivityState::NotReady);
        assert_eq!(new_pass_of(&fx), Some(Pass(2)));
        // The second pass began at 50 s: 3 is overdue at 150 s and starts anyway at 250 s; 4,
        // outside the body, still starts anyway 120 s after the deployment.
        assert_eq!(e.next_deadline(), Some(121 * SEC));
        let mut e = restart(&mut e);
        assert_eq!(e.next_deadline(), Some(121 * SEC), "a restart keeps when the pass began");
        assert_eq!(executes(&tick(&mut e, 121 * SEC)), vec![(4, 0)]);
        assert_eq!(e.next_deadline(), Some(150 * SEC));
        assert!(overdues(&tick(&mut e, 150 * SEC - 1)).is_empty());
        assert_eq!(overdues(&tick(&mut e, 150 * SEC)), vec![(3, 2, 100)]);
        assert_eq!(e.next_deadline(), Some(250 * SEC));
        assert_eq!(executes(&tick(&mut e, 250 * SEC)), vec![(3, 1)]);
    }

    fn a_classed_activity_asks_again_in_each_pass_as_a_new_round_naming_it() {
        let mut e = Engine::new();
        deploy(&mut e, 70, 1, &head(Some("press")));
        let fx = ended(&mut e, 1100, 70, 1, true, 0);
        assert_eq!(requests(&fx), vec![(0, Pass::FIRST)]);
        assert_eq!(executes(&grant(&mut e, 1150, 0)), vec![(2, 0)]);
        let fx = ended(&mut e, 1200, 70, 2, true, 0);
        let released = to_controller(&fx).into_iter().any(|m| {
            matches!(m, Message::EndSync(EndSync { ticket: t }) if *t == ticket(0))
        });
        assert!(released, "the first pass releases its round at its end: {fx:?}");
        // The next pass asks again, as round 1, naming pass 2; it runs only once granted.
        let fx = new_pass(&mut e, 2000, 2);
        assert_eq!(requests(&fx), vec![(1, Pass(2))]);
        assert!(executes(&fx).is_empty());
        assert_eq!(state(&e, 70, 2), ActivityState::Synchronizing);
        assert!(executes(&grant(&mut e, 2010, 0)).is_empty(), "the first round's grant is stale");
        assert_eq!(executes(&grant(&mut e, 2020, 1)), vec![(2, 1)]);
    }

    fn a_pause_of_a_later_pass_names_it() {
        let mut e = Engine::new();
        deploy(&mut e, 70, 1, &head(None));
        ended(&mut e, 1100, 70, 1, true, 0);
        let paused = order(&mut e, 1150, PauseAction::Pause { kill: false });
        assert_eq!(pause_passes(&paused), vec![Pass::FIRST]);
        assert_eq!(pause_passes(&order(&mut e, 1160, PauseAction::Resume)), vec![Pass::FIRST]);
        ended(&mut e, 1200, 70, 2, true, 0);
        assert_eq!(executes(&new_pass(&mut e, 2000, 2)), vec![(2, 1)]);
        let paused = order(&mut e, 2100, PauseAction::Pause { kill: false });
        assert_eq!(pause_passes(&paused), vec![Pass(2)]);
        assert_eq!(pause_passes(&order(&mut e, 2200, PauseAction::Resume)), vec![Pass(2)]);
    }
}

/// The pass a new pass among `effects` starts, if one does.
fn new_pass_of(effects: &[Effect]) -> Option<Pass> {
    effects.iter().find_map(|e| match e {
        Effect::Send {
            message: Message::NewPass(np),
            ..
        } => Some(np.pass),
        _ => None,
    })
}
