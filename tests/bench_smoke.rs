//! The benchmark harness, run small (`mobiwf-bench --smoke`) on the debug binaries: every
//! workload and mode runs to the end and the report holds real figures. Timings are not
//! checked (tests never assert on speed); the shape of the traffic is: under hub routing the
//! controller relays notifications, peer to peer it never sees one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use mobiwf_tests::{binary, scratch};

/// The line of the report listing the controller's messages per instance for `workload` and
/// `mode`.
fn messages_line<'a>(report: &'a str, workload: &str, mode: &str) -> &'a str {
    let section = report
        .split("\n## ")
        .find(|s| s.starts_with(&format!("`{workload}`")))
        .unwrap_or_else(|| panic!("no section for {workload} in:\n{report}"));
    section
        .lines()
        .find(|l| l.starts_with(&format!("- controller messages per instance, {mode} ")))
        .unwrap_or_else(|| panic!("no {mode} message line for {workload} in:\n{section}"))
}

#[test]
fn a_smoke_run_measures_every_workload_in_both_modes_and_writes_the_report() {
    let bench = binary("mobiwf-bench").unwrap();
    let bin_dir = bench.parent().unwrap().to_owned();
    binary("mobiwf-controller").unwrap();
    let dir = scratch("bench-smoke").unwrap();
    let out = dir.join("BENCHMARKS.md");
    let output = Command::new(&bench)
        .args(["--smoke", "--no-temporal", "--no-restate", "--out"])
        .arg(&out)
        .arg("--bin-dir")
        .arg(&bin_dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "mobiwf-bench failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = std::fs::read_to_string(&out).unwrap();
    for heading in [
        "## The floor",
        "## `chain10`",
        "## `paper`",
        "## `fanout`",
        "## Delivery after a link returns",
        "## Targets",
    ] {
        assert!(report.contains(heading), "{heading} missing:\n{report}");
    }
    for workload in ["chain10", "paper", "fanout"] {
        let p2p = messages_line(&report, workload, "p2p");
        let hub = messages_line(&report, workload, "hub");
        assert!(!p2p.contains("notify"), "{p2p}");
        assert!(hub.contains("notify"), "{hub}");
        for line in [p2p, hub] {
            assert!(
                line.contains("deploy") && line.contains("partition_result"),
                "{line}"
            );
            assert!(!line.contains(" 0 hop samples"), "{line}");
        }
    }
    // Every hop of chain10 crosses partners: 9 per instance, 5 instances one at a time.
    assert!(
        messages_line(&report, "chain10", "p2p").contains("45 hop samples"),
        "{report}"
    );
    for baseline in ["Temporal", "Restate"] {
        assert!(
            report.contains(&format!("{baseline} baseline skipped: left out")),
            "{report}"
        );
    }
    for kind in ["at its old address", "on another port"] {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("| {kind}")))
            .unwrap_or_else(|| panic!("no row for P2 back {kind}:\n{report}"));
        assert!(line.contains(" | 1 | "), "one sample: {line}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
