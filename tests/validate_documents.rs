//! `mobiwf-controller validate` of the coordination documents through the real binary: the
//! seed ordering validates in PDL as in XML (an ordering text is told from a definition by its
//! first word), and so does the example class document, each with a note of what only the
//! controller checks when it is applied (the deployed definitions an ordering names; the
//! running instances' classes); a broken ordering text, a broken XML ordering document and a
//! broken class document are refused with every problem at `file:line:col` (exit 1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use mobiwf_tests::harness::{CLI_TIMEOUT, CmdOutput, run};
use mobiwf_tests::{binary, repo_root, scratch};

fn validate(files: &[&Path]) -> CmdOutput {
    let mut command = Command::new(binary("mobiwf-controller").unwrap());
    command.arg("validate").args(files);
    run(&mut command, CLI_TIMEOUT)
}

#[test]
fn the_seed_ordering_validates_as_pdl_and_as_xml_and_the_class_example_too() {
    let examples = repo_root().join("examples");
    let pdl = examples.join("orderings/seed.pdl");
    let xml = examples.join("orderings/seed.xml");
    let classes = examples.join("classes/plant.classes.xml");
    let out = validate(&[&pdl, &xml, &classes]);
    out.expect_code(0, "validate the coordination examples");
    for (file, kind, note) in [
        (&pdl, "ordering document", "orderings apply FILE"),
        (&xml, "ordering document", "orderings apply FILE"),
        (&classes, "class document", "classes apply FILE"),
    ] {
        let name = file.display();
        assert!(
            out.stdout.contains(&format!("{name}: ok ({kind})\n")),
            "{}",
            out.stdout
        );
        let said = out
            .stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}: note: ")))
            .unwrap_or_else(|| panic!("no note for {name}:\n{}", out.stdout));
        assert!(said.contains(note), "{said}");
    }
    assert!(
        out.stdout
            .contains("names are not resolved here: only the controller knows the deployed"),
        "{}",
        out.stdout
    );
}

#[test]
fn broken_coordination_documents_are_refused_with_every_problem_where_it_is_written() {
    let dir = scratch("validate-coordination").unwrap();
    // No extension: an ordering text by its first word, after a comment.
    let text = dir.join("orders");
    std::fs::write(
        &text,
        "// two mistakes\nWORKFLOW_DEFINITIONS P1 : P1;\nRELATIVE_ORDER {\n    T11 : ;\n}\n",
    )
    .unwrap();
    let xml = dir.join("orders.xml");
    std::fs::write(
        &xml,
        "<orderings>\n  <ordering first=\"P1\" second=\"P2\">\n    <order first=\"T11\"/>\n  \
         </ordering>\n</orderings>\n",
    )
    .unwrap();
    let classes = dir.join("plant.xml");
    std::fs::write(
        &classes,
        "<classes>\n  <class id=\"press\"><conflicts>dril</conflicts></class>\n</classes>\n",
    )
    .unwrap();
    let out = validate(&[&text, &xml, &classes]);
    out.expect_code(1, "validate broken coordination documents");
    let problems: Vec<&str> = out.stdout.lines().collect();
    for at in [
        format!("{}:2:", text.display()),
        format!("{}:4:", text.display()),
        format!("{}:3:5: error:", xml.display()),
        format!(
            "{}:2:32: error: <conflicts> of class press names dril",
            classes.display()
        ),
    ] {
        assert!(
            problems
                .iter()
                .any(|l| l.starts_with(&at) && l.contains("error: ")),
            "no problem at {at}:\n{}",
            out.stdout
        );
    }
    assert!(!out.stdout.contains(": ok ("), "{}", out.stdout);
    // None of them read as a workflow definition.
    assert!(!out.stdout.contains("holds no WORKFLOW"), "{}", out.stdout);
}
