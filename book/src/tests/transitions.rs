//! The transition functions driven directly, for what the scenarios cannot tell apart: a
//! word the table would let through from the wrong state, and the table's own check.

use crate::lifecycle::{
    ActivityEvent, ActivityEventKind, ActivityKind, ActivityLifecycle, check, tables::ACTIVITY,
};
use mobiwf_proto::ActivityState;

#[test]
fn after_an_operators_cancel_only_a_final_word_of_the_node_is_taken() {
    let cancelled = ActivityLifecycle::CancelledByOperator {
        state: ActivityState::Cancelled,
    };
    for state in [
        ActivityState::NotReady,
        ActivityState::Synchronizing,
        ActivityState::Ready,
        ActivityState::Running,
    ] {
        for by_operator in [false, true] {
            let said = ActivityEvent::NodeSays { state, by_operator };
            assert!(
                cancelled.clone().transition(&said).is_err(),
                "{state:?} (by the operator: {by_operator}) after the cancel"
            );
        }
    }
    let said = ActivityEvent::NodeSays {
        state: ActivityState::Succeeded,
        by_operator: false,
    };
    assert_eq!(
        cancelled.transition(&said),
        Ok(ActivityLifecycle::Succeeded)
    );
}

#[test]
fn the_table_check_takes_only_a_listed_triple() {
    let listed = ACTIVITY[0];
    assert!(check("activity", ACTIVITY, (listed.from, listed.event, listed.to)).is_ok());
    // Each part is in some row, but no row has all three.
    use ActivityEventKind as E;
    use ActivityKind as S;
    for triple in [
        (S::Waiting, E::NodeSays, S::Replaced),
        (S::Waiting, E::StandInPlaced, S::Waiting),
        (S::Failed, E::NodeSays, S::Waiting),
    ] {
        let refusal = check("activity", ACTIVITY, triple).expect_err("not listed");
        assert_eq!(
            (refusal.from, refusal.event),
            (triple.0.name(), triple.1.name())
        );
    }
}

#[test]
fn an_overdue_activity_keeps_under_it_what_its_node_says_until_the_grace_runs_out() {
    use crate::lifecycle::{Grace, Undecided};
    let grace = Grace {
        at_ms: 5000,
        reason: "waited too long".to_owned(),
    };
    let overdue = |under| ActivityLifecycle::Overdue {
        under,
        grace: grace.clone(),
    };
    let says = |state| ActivityEvent::NodeSays {
        state,
        by_operator: false,
    };
    for (under, state, then) in [
        // A contingency activity not placed stays so.
        (
            Undecided::Unplaced,
            ActivityState::Ready,
            Undecided::Unplaced,
        ),
        (
            Undecided::Unplaced,
            ActivityState::Running,
            Undecided::Running,
        ),
        (Undecided::Waiting, ActivityState::Ready, Undecided::Waiting),
        (
            Undecided::Waiting,
            ActivityState::Running,
            Undecided::Running,
        ),
        (
            Undecided::Running,
            ActivityState::NotReady,
            Undecided::Waiting,
        ),
    ] {
        let to = overdue(under).transition(&says(state));
        assert_eq!(to, Ok(overdue(then)), "{under:?} then {state:?}");
    }
    // When the grace runs out, it is withdrawn from where it stands.
    assert_eq!(
        overdue(Undecided::Unplaced).transition(&ActivityEvent::GraceOver),
        Ok(ActivityLifecycle::Unplaced)
    );
    assert_eq!(
        overdue(Undecided::Waiting).transition(&ActivityEvent::GraceOver),
        Ok(ActivityLifecycle::Waiting)
    );
}

/// An activity view on partition 1 in `state`, overdue when `overdue` says so.
fn view(state: ActivityState, overdue: Option<(u64, &str)>) -> crate::ActivityView {
    serde_json::from_value(serde_json::json!({
        "id": 1, "name": "a", "partition": 1, "node": "N1", "state": state,
        "started_ms": null, "finished_ms": null, "detail": null, "contingency": -1,
        "overdue": overdue,
    }))
    .expect("an activity view")
}

#[test]
fn waiting_again_keeps_the_state_its_node_said_before_the_start() {
    let mut a = view(ActivityState::Ready, Some((5000, "waited too long")));
    assert_eq!(
        a.step(&ActivityEvent::GraceOver),
        Ok(ActivityLifecycle::Waiting)
    );
    assert_eq!((a.state(), a.overdue()), (ActivityState::Ready, None));
}

#[test]
fn a_partition_is_over_once_finished_or_given_up() {
    use crate::lifecycle::PartitionLifecycle as P;
    let reason = || "gone".to_owned();
    for (p, over, given_up) in [
        (P::Sent, false, false),
        (P::Deployed, false, false),
        (P::Finished, true, false),
        (
            P::GivenUp {
                reason: reason(),
                acknowledged: true,
            },
            true,
            true,
        ),
        (P::LateResult { reason: reason() }, true, true),
    ] {
        assert_eq!((p.is_over(), p.is_given_up()), (over, given_up), "{p:?}");
    }
}

#[test]
fn a_partition_given_up_remembers_whether_its_node_acknowledged_it() {
    use crate::lifecycle::{PartitionEvent as E, PartitionLifecycle as P};
    let given_up = |acknowledged| P::GivenUp {
        reason: "gone".to_owned(),
        acknowledged,
    };
    let give_up = E::GiveUp("gone".to_owned());
    assert_eq!(P::Sent.transition(&give_up), Ok(given_up(false)));
    assert_eq!(P::Deployed.transition(&give_up), Ok(given_up(true)));
    assert_eq!(
        given_up(false).transition(&E::Acknowledged),
        Ok(given_up(true))
    );
    assert_eq!(given_up(true).transition(&E::Refused), Ok(given_up(false)));
}
