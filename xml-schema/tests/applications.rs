//! The applications extension (WorkToDo's `APPLICATION`) in both XML languages and in PDL:
//! reading a definition's applications and an activity's reference, the refusals, writing them
//! back, the example in both languages, and derivation copying the whole application into the
//! partition document of its activity. The broken-document corpora pin the full wording of the
//! errors; these tests pin the behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{assert_read_back, definition_xml, load_def, partition, partition_errors};
use mobiwf_xml_schema::{
    Application, ApplicationId, DeriveOptions, Language, derive_partitions, load_definition_in,
    write_definition, write_partition, write_pdl,
};

const EDITOR: &str = r#"<applications><application id="editor"><command>editor "$MOBIWF_DATA_DIR"</command><size>2048</size><os>linux</os></application></applications>"#;

/// [`definition_xml`] with `extra` in activity 2 and the application `editor` defined.
fn with_editor(extra: &str) -> String {
    definition_xml(extra).replace("</workflow>", &format!("{EDITOR}\n</workflow>"))
}

fn editor() -> Application {
    Application {
        id: ApplicationId::new("editor"),
        command: "editor \"$MOBIWF_DATA_DIR\"".to_owned(),
        size_kib: 2048,
        os: Some("linux".to_owned()),
    }
}

#[test]
fn a_semi_automatic_activity_names_an_application_defined_once() {
    let def = load_def(&with_editor(
        "<kind>semiAutomatic</kind><application> editor </application><role>tech</role>",
    ))
    .unwrap();
    assert_eq!(def.applications, vec![editor()]);
    assert_eq!(
        def.activities[1].application,
        Some(ApplicationId::new("editor"))
    );
    assert_eq!(def.activities[0].application, None);
    // Written back, it reads as the same definition.
    assert_eq!(load_def(&write_definition(&def)).unwrap(), def);
}

#[test]
fn size_and_os_have_defaults() {
    let xml = definition_xml("").replace(
        "</workflow>",
        "<applications><application id=\"any\"><command>true</command></application></applications></workflow>",
    );
    let def = load_def(&xml).unwrap();
    assert_eq!(def.applications[0].size_kib, 0);
    assert_eq!(def.applications[0].os, None);
    let written = write_definition(&def);
    assert!(
        !written.contains("<size>") && !written.contains("<os>"),
        "{written}"
    );
}

#[test]
fn validation_refuses_unknown_applications_wrong_kinds_and_manual_commands_at_once() {
    let xml = with_editor(
        "<kind>manual</kind><application>editr</application><command>x</command><role>tech</role>",
    );
    let errors = load_def(&xml).unwrap_err().render("d.xml");
    let lines: Vec<&str> = errors.lines().collect();
    assert_eq!(lines.len(), 3, "{errors}");
    assert!(lines.iter().all(|l| l.starts_with("d.xml:5:")), "{errors}");
    assert!(
        errors.contains("activity 2 is manual and has a <command>"),
        "{errors}"
    );
    assert!(
        errors.contains("has an <application> but is manual"),
        "{errors}"
    );
    assert!(
        errors.contains("names application editr") && errors.contains("did you mean editor?"),
        "{errors}"
    );
    // A command on an automatic or semi-automatic activity stays what it was.
    assert!(load_def(&definition_xml("<command>x</command>")).is_ok());
    assert!(
        load_def(&definition_xml(
            "<kind>semiAutomatic</kind><command>x</command><role>tech</role>"
        ))
        .is_ok()
    );
}

#[test]
fn derivation_copies_the_whole_application_into_its_activity() {
    let def = load_def(&with_editor(
        "<kind>semiAutomatic</kind><application>editor</application><role>tech</role>",
    ))
    .unwrap();
    let derived = derive_partitions(&def, &DeriveOptions::default());
    let doc = &derived[0].document;
    assert_eq!(doc.activities[0].application, None);
    assert_eq!(doc.activities[1].application, Some(editor()));
    assert_read_back(&derived);
    assert!(write_partition(doc).contains("<application id=\"editor\">"));
}

#[test]
fn a_partition_document_refuses_an_application_on_another_kind() {
    let app = r#"<application id="e"><command>e</command></application>"#;
    assert!(partition(&format!("<kind>semiAutomatic</kind>{app}<role>tech</role>")).is_ok());
    let errors = partition_errors(app);
    assert!(
        errors.starts_with("p.xml:4:1: error: activity 2 has an <application> but is automatic"),
        "{errors}"
    );
}

#[test]
fn the_example_reads_the_same_in_xml_and_pdl_and_converts_both_ways() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/applications/");
    let xml = std::fs::read(format!("{root}survey.xml")).unwrap();
    let pdl = std::fs::read(format!("{root}survey.pdl")).unwrap();
    let from_xml = load_definition_in(Language::MobiWfMs, &xml).unwrap().value;
    let from_pdl = load_definition_in(Language::Pdl, &pdl)
        .unwrap_or_else(|d| panic!("{}", d.render("survey.pdl")))
        .value;
    assert_eq!(from_pdl, from_xml);
    assert_eq!(from_xml.applications[0].size_kib, 2048);
    let written = write_pdl(&from_xml);
    assert!(written.starts_with("APPLICATION form {"), "{written}");
    let back = load_definition_in(Language::Pdl, written.as_bytes())
        .unwrap()
        .value;
    assert_eq!(back, from_xml);
}

#[test]
fn a_task_model_gives_its_tasks_its_application() {
    let text = r#"APPLICATION editor { COMMAND "editor"; }
TASK Form { TYPE Semi-automatic; APPLICATION editor; }
WORKFLOW w {
    TASK A : Form { ROLE tech; }
    TASK B : Form { ROLE tech; TYPE Manual; APPLICATION none; PRECONDITIONS A; }
}
"#;
    let errors = load_definition_in(Language::Pdl, text.as_bytes())
        .unwrap_err()
        .render("t.pdl");
    // A inherits editor; B says otherwise, and its own clause is where its problems are.
    assert_eq!(errors.lines().count(), 2, "{errors}");
    assert!(
        errors.lines().all(|l| l.starts_with("t.pdl:5:")),
        "{errors}"
    );
    let ok = text.replace(" TYPE Manual; APPLICATION none;", "");
    let def = load_definition_in(Language::Pdl, ok.as_bytes())
        .unwrap()
        .value;
    assert!(
        def.activities
            .iter()
            .all(|a| a.application == Some(ApplicationId::new("editor")))
    );
}

#[test]
fn a_new_definition_may_not_give_an_application_a_task_class() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/applications/survey.xml"),
    )
    .unwrap();
    assert!(mobiwf_xml_schema::check(text.as_bytes()).is_empty());
    let classed = text.replacen("<application>", "<class>press</class><application>", 1);
    assert_ne!(classed, text, "the example names an application");
    let errors = mobiwf_xml_schema::check(classed.as_bytes()).render("survey.xml");
    assert!(
        errors.contains("has class press and application"),
        "{errors}"
    );
}
