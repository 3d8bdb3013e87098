//! Transition coverage of the lifecycles (as temporalio/sdk-core's `transition_coverage`):
//! every scenario runs again, one after the other, each on a thread of its own whose recorders
//! collect the transitions it took; every transition of the activity's table and of the work
//! item copy's (`coverage_items`) must be reached, and none outside them.

use std::collections::BTreeSet;

use super::ALL_SCENARIOS;
use crate::coverage;
use crate::item_lifecycle;
use crate::lifecycle::{Event, Life};
use crate::lifecycle::{EventKind, StateKind, TRANSITIONS, Taken, transition};

#[test]
fn every_transition_of_the_table_is_taken_by_a_scenario_and_no_other() {
    let mut taken = BTreeSet::new();
    let mut copies_taken = BTreeSet::new();
    for (name, scenario) in ALL_SCENARIOS.iter().flat_map(|m| m.iter()) {
        let scenario = *scenario;
        let run = std::thread::Builder::new()
            .name((*name).to_owned())
            .spawn(move || {
                scenario();
                (
                    coverage::take::<Taken>(),
                    coverage::take::<item_lifecycle::Taken>(),
                )
            })
            .expect("thread");
        let (from_scenario, copies) = run
            .join()
            .unwrap_or_else(|_| panic!("scenario {name} failed"));
        taken.extend(from_scenario);
        copies_taken.extend(copies);
    }
    super::coverage_items::check(&copies_taken);
    let table: BTreeSet<_> = TRANSITIONS.iter().copied().collect();
    let never: Vec<_> = table.difference(&taken).collect();
    let outside: Vec<_> = taken.difference(&table).collect();
    assert!(never.is_empty(), "no scenario takes {never:?}");
    assert!(
        outside.is_empty(),
        "taken but not in the table: {outside:?}"
    );
}

/// One event of each kind, for the exhaustive check below.
fn events() -> Vec<Event> {
    let d = || "why".to_owned();
    vec![
        Event::Synchronize,
        Event::Admit,
        Event::Start,
        Event::Return,
        Event::Succeed { detail: None },
        Event::Fail { detail: d() },
        Event::TryFailed {
            at_ms: 5,
            note: d(),
        },
        Event::Retry,
        Event::Block { detail: d() },
        Event::Skip { detail: d() },
        Event::Withdraw { detail: d() },
        Event::Cancel { detail: d() },
        Event::Rerun,
    ]
}

/// One state of each kind.
fn states() -> Vec<Life> {
    vec![
        Life::NotReady,
        Life::Synchronizing,
        Life::Ready,
        Life::Running { attempt: 0 },
        Life::RetryWait {
            attempt: 1,
            at_ms: 5,
        },
        Life::Succeeded { detail: None },
        Life::Failed { detail: None },
        Life::Cancelled { detail: None },
        Life::Skipped { detail: None },
    ]
}

#[test]
fn the_transition_function_allows_exactly_the_table() {
    for from in states() {
        for event in events() {
            let (f, e): (StateKind, EventKind) = (from.kind(), event.kind());
            let row = TRANSITIONS.iter().find(|(tf, te, _)| (*tf, *te) == (f, e));
            match (transition(&from, event), row) {
                (Ok(to), Some((_, _, kind))) => assert_eq!(to.kind(), *kind, "{f:?} {e:?}"),
                (Err(_), None) => {}
                (got, row) => panic!("{f:?} {e:?}: {got:?}, table {row:?}"),
            }
        }
    }
    coverage::take::<Taken>();
}

#[test]
fn final_states_take_no_event_but_a_rerun_of_a_failure() {
    for from in states().into_iter().filter(Life::is_final) {
        for event in events() {
            let rerun = event == Event::Rerun
                && matches!(from, Life::Failed { .. } | Life::Cancelled { .. });
            assert_eq!(transition(&from, event).is_ok(), rerun, "{from:?}");
        }
    }
}

#[test]
fn lifecycle_md_shows_the_table() {
    let text = include_str!("../../../docs/lifecycles.md");
    let table = crate::lifecycle::table_markdown();
    // A header and a row per transition: an empty or cut table would be in any text.
    assert!(table.starts_with("| from | event | to |\n|---|---|---|\n"));
    assert_eq!(
        table.lines().count(),
        crate::lifecycle::TRANSITIONS.len() + 2
    );
    assert!(table.contains("| Failed | Rerun | NotReady |\n"));
    assert!(
        text.contains(&table),
        "docs/lifecycles.md's activity lifecycle is out of date; its table is:\n{}",
        crate::lifecycle::table_markdown()
    );
}
