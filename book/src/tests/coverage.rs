//! Transition coverage: every transition the lifecycle tables allow is exercised by some
//! scenario, every scenario takes only allowed ones (the transition functions refuse the
//! others), and `docs/lifecycles.md` shows the tables as they are.

use std::collections::BTreeSet;

use crate::lifecycle::coverage::Taken;
use crate::lifecycle::tables::{ACTIVITY, INSTANCE, PARTITION};
use crate::lifecycle::{Kind, Transition};

/// A table's row in words: (from, event, to, cause).
type Row = (&'static str, &'static str, &'static str, &'static str);

fn rows<S: Kind, E: Kind>(table: &[Transition<S, E>]) -> Vec<Row> {
    table
        .iter()
        .map(|t| {
            let (from, event, to) = t.names();
            (from, event, to, t.cause)
        })
        .collect()
}

/// Each lifecycle's table, in words.
fn tables() -> [(&'static str, Vec<Row>); 3] {
    [
        ("activity", rows(ACTIVITY)),
        ("partition", rows(PARTITION)),
        ("instance", rows(INSTANCE)),
    ]
}

/// Runs every scenario sequentially, each on a thread of its own (its own recorder).
fn taken_by_scenarios() -> BTreeSet<Taken> {
    let mut all = BTreeSet::new();
    for (name, scenario) in super::ALL_SCENARIOS.iter().flat_map(|m| m.iter()) {
        let scenario = *scenario;
        let taken = std::thread::Builder::new()
            .name((*name).to_owned())
            .spawn(move || {
                scenario();
                crate::lifecycle::coverage::taken()
            })
            .expect("spawn")
            .join()
            .unwrap_or_else(|_| panic!("scenario {name} failed"));
        all.extend(taken);
    }
    all
}

#[test]
fn every_allowed_transition_is_exercised_by_a_scenario() {
    let taken = taken_by_scenarios();
    let mut missing = Vec::new();
    for (lifecycle, table) in tables() {
        for (from, event, to, _) in table {
            if !taken.contains(&(lifecycle, from, event, to)) {
                missing.push(format!("{lifecycle}: {from} --{event}--> {to}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "allowed but never exercised by a scenario:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_tables_list_each_transition_once() {
    for (lifecycle, table) in tables() {
        let mut seen = BTreeSet::new();
        for (from, event, to, _) in table {
            assert!(
                seen.insert((from, event, to)),
                "{lifecycle}: {from} --{event}--> {to} listed twice"
            );
        }
    }
}

/// The tables as `docs/lifecycles.md` shows them.
pub(crate) fn markdown(lifecycle: &str, table: &[Row]) -> String {
    let mut s =
        format!("#### {lifecycle}\n\n| from | event | to | what causes it |\n|---|---|---|---|\n");
    for (from, event, to, cause) in table {
        s += &format!("| {from} | {event} | {to} | {cause} |\n");
    }
    s
}

#[test]
fn lifecycle_md_shows_the_tables() {
    let md = include_str!("../../../docs/lifecycles.md");
    for (lifecycle, table) in tables() {
        let expected = markdown(lifecycle, &table);
        assert!(
            md.contains(&expected),
            "docs/lifecycles.md does not show the {lifecycle} table as it is; it should read:\n{expected}"
        );
    }
}
