//! The table a chaos run prints at its end: the faults injected by kind, the instances
//! submitted and how they ended, what the faults cost them (end-to-end times by what was going
//! on while they ran; the hostile peers' connections), the effects checked, and the
//! violations (each listed below the table). Pure: built from counts and the verdict.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::cost::{Connections, Latency, Phase};
use crate::schedule::FaultKind;
use crate::verdict::Verdict;

/// What the run did, besides the verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// The seed.
    pub seed: u64,
    /// Faults injected, by kind.
    pub faults: BTreeMap<FaultKind, usize>,
    /// Submissions that gave an instance id.
    pub submitted: usize,
    /// Submissions that failed or timed out (the controller down or stalled).
    pub refused: usize,
    /// Completions of work items a node acknowledged to the person.
    pub completions: usize,
    /// The mesh ran one node in a network namespace.
    pub namespaced: bool,
    /// The end-to-end times of the instances that succeeded, by the faults on while they ran.
    pub latency: BTreeMap<Phase, Latency>,
    /// The hostile peers' connections.
    pub hostile: Connections,
}

/// The table, then every violation on a line of its own.
pub fn render(tally: &Tally, verdict: &Verdict) -> String {
    let mut out = String::new();
    let mut row = |what: &str, value: String| {
        let _ = writeln!(out, "  {what:<56} {value:>13}");
    };
    row("seed", tally.seed.to_string());
    row(
        "node in a network namespace",
        if tally.namespaced { "yes" } else { "no" }.to_owned(),
    );
    for kind in FaultKind::ALL {
        let n = tally.faults.get(&kind).copied().unwrap_or(0);
        row(&format!("fault: {kind}"), n.to_string());
    }
    row(
        "faults injected",
        tally.faults.values().sum::<usize>().to_string(),
    );
    row(
        "instances submitted (an id returned)",
        tally.submitted.to_string(),
    );
    row(
        "submissions refused or timed out",
        tally.refused.to_string(),
    );
    for phase in Phase::ALL {
        let l = tally.latency.get(&phase).copied().unwrap_or_default();
        row(
            &format!("end-to-end ms p50 / p99, {} ({})", phase.name(), l.count),
            format!("{} / {}", l.p50_ms, l.p99_ms),
        );
    }
    row(
        "hostile connections opened / closed by the daemon",
        format!("{} / {}", tally.hostile.opened, tally.hostile.closed),
    );
    for (workflow, n) in &verdict.by_workflow {
        row(&format!("instances of {workflow}"), n.to_string());
    }
    for (state, n) in &verdict.by_state {
        row(&format!("instances {state}"), n.to_string());
    }
    row(
        "work items completed by a person (acknowledged)",
        tally.completions.to_string(),
    );
    row(
        "completions checked against the controller",
        verdict.completions_checked.to_string(),
    );
    row("marks read (command effects)", verdict.marks.to_string());
    row(
        "effects checked (instance, activity)",
        verdict.effects_checked.to_string(),
    );
    row(
        "effects in partitions given up (late words, by design)",
        verdict.ran_given_up.to_string(),
    );
    row(
        "nodes given up by the controller (suspicions)",
        verdict.suspicions.to_string(),
    );
    row("violations", verdict.violations.len().to_string());
    for v in &verdict.violations {
        let _ = writeln!(out, "VIOLATION: {v}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_every_kind_and_lists_the_violations() {
        let mut tally = Tally {
            seed: 7,
            submitted: 3,
            ..Tally::default()
        };
        tally.faults.insert(FaultKind::CutLink, 2);
        tally.latency.insert(
            Phase::Hostile,
            Latency {
                count: 4,
                p50_ms: 900,
                p99_ms: 2_400,
            },
        );
        tally.hostile = Connections {
            opened: 800,
            closed: 700,
        };
        let verdict = Verdict {
            violations: vec!["instance 1 activity 16 try 1 ran 2 times".to_owned()],
            ..Verdict::default()
        };
        let text = render(&tally, &verdict);
        for kind in FaultKind::ALL {
            assert!(text.contains(&kind.to_string()), "{text}");
        }
        assert!(
            text.lines()
                .any(|l| l.contains("faults injected") && l.ends_with(" 2"))
        );
        assert!(
            text.lines()
                .any(|l| l.contains("violations") && l.ends_with(" 1"))
        );
        assert!(text.contains("VIOLATION: instance 1 activity 16 try 1 ran 2 times"));
        assert!(
            text.lines()
                .any(|l| l.contains("hostile peers only (4)") && l.ends_with(" 900 / 2400"))
        );
        assert!(text.lines().any(|l| l.contains("no fault (0)")));
        assert!(
            text.lines()
                .any(|l| l.contains("hostile connections") && l.ends_with(" 800 / 700"))
        );
    }
}
