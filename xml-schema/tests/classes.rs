//! The class document against `xsd/classes.xsd` (`xmllint`, which must be installed, as in
//! `xsd.rs`): the example and what the writer writes pass both the XSD and the loader, and
//! what the XSD can say is refused by both; the example workflow naming classes loads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::xmllint::{XMLLINT_EXIT_INVALID, xmllint};
use mobiwf_xml_schema::{ClassDocument, ClassName, TaskClass, load_classes, write_classes};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> PathBuf {
    crate_dir().join("xsd/classes.xsd")
}

/// `text` in a file of its own under the test's temporary directory.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mobiwf-classes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_example_passes_the_xsd_and_the_loader() {
    let path = crate_dir().join("../examples/classes/plant.classes.xml");
    let verdict = xmllint(&schema(), &path);
    assert_eq!(verdict.code, Some(0), "{}", verdict.stderr);
    let doc = load_classes(&std::fs::read(&path).unwrap()).unwrap().value;
    assert!(doc.conflict(&"press".into(), &"press".into()));
    assert!(doc.conflict(&"drill".into(), &"press".into()));
    assert!(!doc.conflict(&"paint".into(), &"paint".into()));
    let workflow = crate_dir().join("../examples/classes/press.workflow.xml");
    let def = mobiwf_xml_schema::load_definition(&std::fs::read(&workflow).unwrap())
        .unwrap()
        .value;
    let classes: Vec<Option<&str>> = def
        .activities
        .iter()
        .map(|a| a.class.as_ref().map(ClassName::as_str))
        .collect();
    assert_eq!(classes, [Some("press"), Some("press"), Some("drill")]);
}

#[test]
fn written_documents_pass_the_xsd() {
    let doc = ClassDocument {
        classes: vec![
            TaskClass {
                id: "press".into(),
                conflicts: vec!["press".into(), "drill".into()],
                max_wait_secs: 0,
            },
            TaskClass::new("drill"),
        ],
    };
    let path = file("written.xml", &write_classes(&doc));
    let verdict = xmllint(&schema(), &path);
    assert_eq!(verdict.code, Some(0), "{}", verdict.stderr);
    let empty = file("empty.xml", &write_classes(&ClassDocument::default()));
    assert_eq!(xmllint(&schema(), &empty).code, Some(0));
}

#[test]
fn what_the_xsd_refuses_the_loader_refuses() {
    let cases = [
        (
            "twice.xml",
            r#"<classes><class id="a"/><class id="a"/></classes>"#,
        ),
        ("no-id.xml", r#"<classes><class/></classes>"#),
        (
            "wait.xml",
            r#"<classes><class id="a"><maxWait>86401</maxWait></class></classes>"#,
        ),
        (
            "negative.xml",
            r#"<classes><class id="a"><maxWait>-1</maxWait></class></classes>"#,
        ),
        (
            "stray.xml",
            r#"<classes><class id="a"><waits/></class></classes>"#,
        ),
    ];
    for (name, text) in cases {
        let verdict = xmllint(&schema(), &file(name, text));
        assert_eq!(
            verdict.code,
            Some(XMLLINT_EXIT_INVALID),
            "{name}: {}",
            verdict.stderr
        );
        assert!(load_classes(text.as_bytes()).is_err(), "{name} loads");
    }
}
