//! Transition coverage: every transition the lifecycle tables allow is exercised by some
//! scenario, every scenario takes only allowed ones (the transition functions refuse the
//! others), and `docs/lifecycles.md` shows the tables as they are.

use std::collections::BTreeSet;

use crate::lifecycle::Transition;
use crate::lifecycle::coverage::Taken;
use crate::lifecycle::tables::{ACTIVITY, INSTANCE, PARTITION};

const TABLES: [(&str, &[Transition]); 3] = [
    ("activity", ACTIVITY),
    ("partition", PARTITION),
    ("instance", INSTANCE),
];

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
    for (lifecycle, table) in TABLES {
        for t in table {
            if !taken.contains(&(lifecycle, t.from, t.event, t.to)) {
                missing.push(format!("{lifecycle}: {} --{}--> {}", t.from, t.event, t.to));
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
    for (lifecycle, table) in TABLES {
        let mut seen = BTreeSet::new();
        for t in table {
            assert!(
                seen.insert((t.from, t.event, t.to)),
                "{lifecycle}: {} --{}--> {} listed twice",
                t.from,
                t.event,
                t.to
            );
        }
    }
}

/// The tables as `docs/lifecycles.md` shows them.
pub(crate) fn markdown(lifecycle: &str, table: &[Transition]) -> String {
    let mut s =
        format!("#### {lifecycle}\n\n| from | event | to | what causes it |\n|---|---|---|---|\n");
    for t in table {
        s += &format!("| {} | {} | {} | {} |\n", t.from, t.event, t.to, t.cause);
    }
    s
}

#[test]
fn lifecycle_md_shows_the_tables() {
    let md = include_str!("../../../docs/lifecycles.md");
    for (lifecycle, table) in TABLES {
        let expected = markdown(lifecycle, table);
        assert!(
            md.contains(&expected),
            "docs/lifecycles.md does not show the {lifecycle} table as it is; it should read:\n{expected}"
        );
    }
}
