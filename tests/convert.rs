//! The definition languages through the real binary: `convert` writes the paper's example from
//! XML to PDL and back, each result valid and partitioning to the same documents as the
//! published XML; `validate` of a broken PDL text prints every problem as `file:line:col` and
//! exits 1, and `convert` refuses it the same way, writing nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use mobiwf_tests::harness::{CLI_TIMEOUT, CmdOutput, run};
use mobiwf_tests::{binary, repo_root, scratch};

fn controller(args: &[&str]) -> CmdOutput {
    run(
        Command::new(binary("mobiwf-controller").unwrap()).args(args),
        CLI_TIMEOUT,
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The partition documents `partition` writes for `workflow`, by file name.
fn partitions(workflow: &Path, out: &Path) -> Vec<(String, String)> {
    controller(&["partition", path(workflow), "--out", path(out)])
        .expect_code(0, "partition the definition");
    let mut written: Vec<(String, String)> = std::fs::read_dir(out)
        .unwrap()
        .map(|entry| {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    written.sort();
    written
}

#[test]
fn the_paper_example_converts_both_ways_and_partitions_alike() {
    let dir = scratch("convert-paper").unwrap();
    let xml = repo_root().join("examples/paper/workflow.xml");
    let as_pdl = controller(&["convert", path(&xml), "--to", "pdl"]);
    as_pdl.expect_code(0, "convert the XML to PDL");
    assert!(
        as_pdl.stdout.contains("TASK A1 : type1"),
        "{}",
        as_pdl.stdout
    );
    let pdl = dir.join("from-xml.pdl");
    std::fs::write(&pdl, &as_pdl.stdout).unwrap();
    let again = dir.join("again.xml");
    controller(&["convert", path(&pdl), "--to", "xml", "--out", path(&again)])
        .expect_code(0, "convert the PDL back to XML");
    let shipped = repo_root().join("examples/paper/workflow.pdl");
    let shipped_xml = dir.join("shipped.xml");
    controller(&[
        "convert",
        path(&shipped),
        "--to",
        "xml",
        "--out",
        path(&shipped_xml),
    ])
    .expect_code(0, "convert the shipped PDL to XML");
    let checked = controller(&["validate", path(&pdl), path(&again), path(&shipped_xml)]);
    checked.expect_code(0, "every converted definition is valid");
    assert_eq!(
        checked.stdout.matches(": ok (workflow definition)").count(),
        3
    );
    let published = partitions(&xml, &dir.join("published"));
    assert_eq!(published.len(), 2);
    for (name, converted) in [("again", &again), ("shipped", &shipped_xml), ("pdl", &pdl)] {
        assert_eq!(
            partitions(converted, &dir.join(name)),
            published,
            "{name} partitions differently from the published XML"
        );
    }
}

#[test]
fn a_broken_pdl_text_is_refused_with_every_problem_in_place() {
    let dir = scratch("convert-broken").unwrap();
    let bad = dir.join("bad.pdl");
    std::fs::write(
        &bad,
        "TASK Step { }\nWORKFLOW w {\n    TASK A : Step { ROEL tech; }\n    TASK B : Stepp { \
         PRECONDITIONS A, Z; }\n}\n",
    )
    .unwrap();
    let name = path(&bad);
    let validated = controller(&["validate", name]);
    validated.expect_code(1, "validate a broken PDL text");
    let lines: Vec<&str> = validated.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", validated.stdout);
    assert!(
        lines[0].starts_with(&format!("{name}:3:21: error: `ROEL`")),
        "{lines:?}"
    );
    assert!(lines[1].starts_with(&format!(
        "{name}:4:14: error: no task model is named `Stepp`"
    )));
    assert!(
        lines[2].starts_with(&format!("{name}:4:39: error: no task is named `Z`")),
        "{lines:?}"
    );
    let out = dir.join("never.xml");
    let converted = controller(&["convert", name, "--to", "xml", "--out", path(&out)]);
    converted.expect_code(1, "convert a broken PDL text");
    assert!(
        converted.stderr.contains(&format!("{name}:3:21: error:")),
        "{}",
        converted.stderr
    );
    assert!(!out.exists(), "nothing is written for a broken definition");
}
