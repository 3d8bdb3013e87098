//! Scenarios of pausing one activity (`crate::pause`): an operator's order on an automatic
//! activity, with and without killing its command; a person pausing the item they selected;
//! the `timeOut` and the `<deadline>` (when `<pauseStopsDeadline>` says so) moved by the paused
//! time; what is refused; a cancel or a withdrawal of a paused activity; restarts.

use mobiwf_proto::{ItemAction, PauseAction, PauseOrder, PauseOutcome, PauseReport, Verdict};
use mobiwf_xml_schema::Method;

use super::deadlines::{HOUR, deadlines, deploy_due, due_in, org};
use super::people::*;
use super::*;
use crate::lifecycle::{Life, PausedFrom};

/// An operator's order on activity `activity` of instance 1.
fn order(e: &mut Engine, now_ms: u64, activity: u64, action: PauseAction) -> Vec<Effect> {
    at(
        e,
        now_ms,
        Input::Pause(PauseOrder {
            instance: InstanceId(1),
            activity: ActivityId(activity),
            action,
            by: "op".to_owned(),
        }),
    )
}

const PAUSE: PauseAction = PauseAction::Pause { kill: false };
const KILL: PauseAction = PauseAction::Pause { kill: true };

/// What the node told the controller of pauses: (who, outcome).
fn pause_reports(fx: &[Effect]) -> Vec<(String, PauseOutcome)> {
    to_controller(fx)
        .into_iter()
        .filter_map(|m| match m {
            Message::PauseReport(PauseReport { by, outcome, .. }) => {
                Some((by.clone(), outcome.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The reason of the one refusal told.
fn refused(fx: &[Effect]) -> String {
    match &pause_reports(fx)[..] {
        [(_, PauseOutcome::Refused { reason })] => reason.clone(),
        other => panic!("one refusal expected, got {other:?}"),
    }
}

pub(super) fn life(e: &Engine, instance: u64, activity: u64) -> Life {
    let key = e
        .run_of(InstanceId(instance), ActivityId(activity))
        .expect("run");
    e.runs[&key]
        .life(ActivityId(activity))
        .expect("life")
        .clone()
}

/// Instance 1: automatic activity 1 with a command and a `timeOut` of `time_out` s, deployed
/// at 1000 ms: it runs (try 0).
fn running(time_out: u32) -> Engine {
    let mut e = Engine::new();
    let d = doc(
        1,
        &[A {
            id: 1,
            command: Some("work"),
            time_out,
            ..A::default()
        }],
    );
    assert_eq!(executes(&deploy(&mut e, 1, 1, &d)), [(1, 0)]);
    e
}

scenarios! {
fn a_paused_command_runs_on_and_its_end_is_held_until_it_is_resumed() {
    let mut e = running(0);
    let fx = order(&mut e, 2000, 1, PAUSE);
    assert!(kills(&fx).is_empty(), "not killed unless asked");
    assert_eq!(
        pause_reports(&fx),
        [("op".to_owned(), PauseOutcome::Paused { state: ActivityState::Running, killed: false, clock_stopped: false })]
    );
    assert_eq!(life(&e, 1, 1), Life::Paused { resume: PausedFrom::Running { attempt: 0 }, since_ms: 2000 });
    assert_eq!(state(&e, 1, 1), ActivityState::Running, "the wire shows where it goes back to");

    let fx = ended(&mut e, 3000, 1, 1, true, 0);
    assert!(result_of(&fx).is_none(), "its end is held");
    assert!(matches!(life(&e, 1, 1), Life::Paused { .. }));
    // Held across a restart of the node.
    let mut e = restart(&mut e);
    assert!(matches!(life(&e, 1, 1), Life::Paused { .. }));

    let fx = order(&mut e, 4000, 1, PauseAction::Resume);
    assert_eq!(
        pause_reports(&fx),
        [("op".to_owned(), PauseOutcome::Resumed { state: ActivityState::Running, moved_ms: 0 })]
    );
    assert_eq!(state(&e, 1, 1), ActivityState::Succeeded, "the held end is taken");
    assert!(result_of(&fx).is_some());
}

fn a_pause_with_kill_kills_the_command_and_the_resumption_runs_a_new_try() {
    let mut e = running(0);
    let fx = order(&mut e, 2000, 1, KILL);
    assert_eq!(kills(&fx), [(1, 0)]);
    assert_eq!(life(&e, 1, 1), Life::Paused { resume: PausedFrom::Killed { attempt: 0 }, since_ms: 2000 });
    // The killed try's exit changes nothing.
    ended(&mut e, 2100, 1, 1, false, 0);
    let mut e = restart(&mut e);
    assert_eq!(life(&e, 1, 1), Life::Paused { resume: PausedFrom::Killed { attempt: 0 }, since_ms: 2000 });
    // The kill may have been lost with the node (written, not carried out): asked again.
    assert_eq!(kills(&e.resume()), [(1, 0)]);

    let fx = order(&mut e, 3000, 1, PauseAction::Resume);
    assert_eq!(executes(&fx), [(1, 1)], "a try of its own (its run directory)");
    let rec = e.record(InstanceId(1), ActivityId(1)).expect("record");
    assert_eq!((rec.state, rec.retried, rec.started_ms), (ActivityState::Running, 0, Some(3000)), "its retries untouched");
    ended(&mut e, 3500, 1, 1, true, 1);
    assert_eq!(state(&e, 1, 1), ActivityState::Succeeded);
}

fn the_timeout_of_a_paused_activity_waits_and_moves_by_the_paused_time() {
    let mut e = running(10);
    assert_eq!(e.next_deadline(), Some(11_000));
    order(&mut e, 2000, 1, PAUSE);
    assert_eq!(e.next_deadline(), None, "no timer while paused");
    assert!(tick(&mut e, 20_000).is_empty());
    order(&mut e, 7000, 1, PauseAction::Resume);
    assert_eq!(e.next_deadline(), Some(16_000), "five seconds paused");
    let fx = tick(&mut e, 16_000);
    assert_eq!(kills(&fx), [(1, 0)]);
    assert_eq!(state(&e, 1, 1), ActivityState::Failed);
}

fn what_cannot_be_paused_or_resumed_is_refused_with_what_to_do() {
    let mut e = Engine::new();
    let d = doc(1, &[
        A { id: 1, command: Some("work"), retries: Some((1, 60)), ..A::default() },
        A { id: 2, pre: &[(1, true)], command: Some("next"), ..A::default() },
    ]);
    deploy(&mut e, 1, 1, &d);
    assert!(refused(&order(&mut e, 1500, 2, PAUSE)).contains("not ready or running"));
    assert!(refused(&order(&mut e, 1500, 1, PauseAction::Resume)).contains("not paused"));
    assert!(refused(&order(&mut e, 1500, 7, PAUSE)).contains("no activity 7"));
    order(&mut e, 1600, 1, PAUSE);
    assert!(refused(&order(&mut e, 1700, 1, PAUSE)).contains("paused already"));
    order(&mut e, 1800, 1, PauseAction::Resume);
    ended(&mut e, 1900, 1, 1, false, 0);
    assert!(refused(&order(&mut e, 2000, 1, PAUSE)).contains("next try"));
    ended(&mut e, 2000, 1, 1, true, 0);
    let fx = tick(&mut e, 61_900);
    assert_eq!(executes(&fx), [(1, 1)]);
    ended(&mut e, 62_000, 1, 1, true, 1);
    assert!(refused(&order(&mut e, 62_100, 1, PAUSE)).contains("succeeded"));
}

fn a_paused_activity_is_cancelled_or_withdrawn_like_any_other() {
    let mut e = running(0);
    order(&mut e, 2000, 1, PAUSE);
    let fx = control(&mut e, 2100, 1, Control::Cancel);
    assert_eq!(kills(&fx), [(1, 0)], "its command ran on: killed");
    assert_eq!(state(&e, 1, 1), ActivityState::Cancelled);

    let mut e = running(0);
    order(&mut e, 2000, 1, KILL);
    let fx = withdraw(&mut e, 2100, 1, &[1], "gone");
    assert!(kills(&fx).is_empty(), "killed already");
    assert_eq!(state(&e, 1, 1), ActivityState::Failed);
}

fn an_offered_item_is_paused_by_an_operator_and_nobody_takes_it_meanwhile() {
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &tech(Method::Fcfa)));
    let fx = order(&mut e, 1100, 3, PAUSE);
    assert_eq!(life(&e, 1, 3), Life::Paused { resume: PausedFrom::Ready, since_ms: 1100 });
    assert!(!sent(&fx).is_empty(), "its devices see it paused");
    let fx = claim(&mut e, 1200, (1, 3), "alice", ItemAction::Select, Some("N1"));
    assert!(matches!(verdict(&fx), Some(Verdict::Invalid { reason }) if reason.contains("paused")));
    order(&mut e, 1300, 3, PauseAction::Resume);
    assert_eq!(life(&e, 1, 3), Life::Ready);
    let fx = claim(&mut e, 1400, (1, 3), "alice", ItemAction::Select, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
}

fn the_holder_pauses_a_selected_item_which_stays_theirs_and_resumes_it() {
    let mut e = host(directory(1, three()));
    deploy_manual(&mut e, 1000, 1, (3, &tech(Method::Fcfa)));
    claim(&mut e, 1100, (1, 3), "alice", ItemAction::Select, Some("N1"));
    let fx = claim(&mut e, 1200, (1, 3), "bob", ItemAction::Pause, Some("N2"));
    assert!(matches!(verdict(&fx), Some(Verdict::Forbidden { .. })), "only its holder");

    let fx = claim(&mut e, 1300, (1, 3), "alice", ItemAction::Pause, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(pause_reports(&fx), [("alice".to_owned(), PauseOutcome::Paused { state: ActivityState::Running, killed: false, clock_stopped: false })]);
    assert_eq!(holders(&e, 1, 3), [Some(("alice".to_owned(), None))], "she keeps it");
    assert_eq!(life(&e, 1, 3), Life::Paused { resume: PausedFrom::Running { attempt: 0 }, since_ms: 1300 });

    let done = ItemAction::Complete { succeeded: true, detail: None, flag: None, data: Default::default() };
    let fx = claim(&mut e, 1400, (1, 3), "alice", done.clone(), Some("N1"));
    assert!(matches!(verdict(&fx), Some(Verdict::Invalid { reason }) if reason.contains("resume it first")));
    let fx = claim(&mut e, 1450, (1, 3), "alice", ItemAction::Release, Some("N1"));
    assert!(matches!(verdict(&fx), Some(Verdict::Invalid { .. })));

    let fx = claim(&mut e, 1500, (1, 3), "alice", ItemAction::Resume, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(pause_reports(&fx), [("alice".to_owned(), PauseOutcome::Resumed { state: ActivityState::Running, moved_ms: 0 })]);
    let fx = claim(&mut e, 1600, (1, 3), "alice", done, Some("N1"));
    assert_eq!(verdict(&fx), Some(Verdict::Done));
    assert_eq!(state(&e, 1, 3), ActivityState::Succeeded);
}

fn a_deadline_that_pause_stops_moves_by_the_paused_time_and_fires_nothing_meanwhile() {
    let mut e = host(org());
    let mut disk = Disk::default();
    let people = mobiwf_xml_schema::People { pause_stops_deadline: true, ..due_in(20, Method::Fcfa) };
    deploy_due(&mut e, 1000, 1, &people, true);
    claim(&mut e, 1100, (1, 3), "alice", ItemAction::Select, Some("N1"));
    assert_eq!(e.next_deadline(), Some(1000 + 8 * HOUR), "12 hours left");
    let fx = claim(&mut e, 1200, (1, 3), "alice", ItemAction::Pause, Some("N1"));
    assert_eq!(pause_reports(&fx), [("alice".to_owned(), PauseOutcome::Paused { state: ActivityState::Running, killed: false, clock_stopped: true })]);
    assert_eq!(e.next_deadline(), None, "its clock stopped");
    let mut e = disk.restart(&mut e);
    assert_eq!(e.next_deadline(), None, "stopped across a restart");
    assert!(deadlines(&tick(&mut e, 1000 + 30 * HOUR)).is_empty());

    let fx = claim(&mut e, 1200 + 10 * HOUR, (1, 3), "alice", ItemAction::Resume, Some("N1"));
    assert_eq!(pause_reports(&fx), [("alice".to_owned(), PauseOutcome::Resumed { state: ActivityState::Running, moved_ms: 10 * HOUR })]);
    let due = item(&e, 1, 3).due.expect("due");
    assert_eq!(due.at_ms, 1000 + 30 * HOUR, "moved by the ten hours paused");
    assert_eq!(e.next_deadline(), Some(1000 + 18 * HOUR));
    let fx = tick(&mut e, 1000 + 18 * HOUR);
    assert_eq!(deadlines(&fx), [(12, vec!["alice".to_owned()])]);
}

fn a_deadline_that_pause_does_not_stop_runs_on() {
    let mut e = host(org());
    deploy_due(&mut e, 1000, 1, &due_in(20, Method::Fcfa), true);
    claim(&mut e, 1100, (1, 3), "alice", ItemAction::Select, Some("N1"));
    claim(&mut e, 1200, (1, 3), "alice", ItemAction::Pause, Some("N1"));
    let fx = tick(&mut e, 1000 + 8 * HOUR);
    assert_eq!(deadlines(&fx), [(12, vec!["alice".to_owned()])]);
    let fx = claim(&mut e, 1000 + 9 * HOUR, (1, 3), "alice", ItemAction::Resume, Some("N1"));
    assert!(matches!(&pause_reports(&fx)[..], [(_, PauseOutcome::Resumed { moved_ms: 0, .. })]));
    assert_eq!(item(&e, 1, 3).due.expect("due").at_ms, 1000 + 20 * HOUR);
}
}
