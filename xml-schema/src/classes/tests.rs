//! The class document: read into the model, every problem at once with its place, the limits,
//! and the writer (`read(write(x)) == x` for any valid document).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::*;
use crate::limits::{MAX_CLASSES, MAX_WAIT_SECS};
use crate::model::{ClassName, DEFAULT_MAX_WAIT_SECS, TaskClass};

fn problems(src: &str) -> String {
    match load_classes(src.as_bytes()) {
        Ok(_) => String::new(),
        Err(d) => d.render("classes.xml"),
    }
}

fn class(id: &str, conflicts: &[&str], max_wait_secs: u32) -> TaskClass {
    TaskClass {
        id: id.into(),
        conflicts: conflicts.iter().map(|c| ClassName::from(*c)).collect(),
        max_wait_secs,
    }
}

#[test]
fn a_document_reads_to_its_model_and_conflicts_are_symmetric() {
    let src = r#"<classes>
  <class id="press"><conflicts>press drill</conflicts><maxWait>30</maxWait></class>
  <class id="drill"/>
  <class id="paint"><conflicts>paint</conflicts></class>
  <class id="log"/>
</classes>"#;
    let doc = load_classes(src.as_bytes()).unwrap().value;
    assert_eq!(
        doc.classes,
        vec![
            class("press", &["press", "drill"], 30),
            class("drill", &[], DEFAULT_MAX_WAIT_SECS),
            class("paint", &["paint"], DEFAULT_MAX_WAIT_SECS),
            class("log", &[], DEFAULT_MAX_WAIT_SECS),
        ]
    );
    let c = |a: &str, b: &str| doc.conflict(&a.into(), &b.into());
    assert!(c("press", "press"), "a class naming itself excludes itself");
    assert!(c("press", "drill") && c("drill", "press"), "symmetric");
    assert!(!c("drill", "drill"), "same class, not named: compatible");
    assert!(!c("log", "press") && !c("log", "log"));
    assert!(!c("unknown", "press"));
}

#[test]
fn every_problem_is_reported_at_once_with_its_place() {
    let src = r#"<classes colour="red">
  <class id="press"><conflicts>press dril drill press</conflicts><maxWait>-1</maxWait></class>
  <class id="drill"><wait>3</wait></class>
  <class id="press"/>
  <class><maxWait>90000</maxWait></class>
  <class id="two words"/>
</classes>"#;
    let expected = "\
classes.xml:1:1: error: <classes> has an unknown attribute colour; it takes no attributes
classes.xml:2:38: error: <conflicts> of class press names dril, which is not a class of this document; did you mean drill?
classes.xml:2:49: error: <conflicts> of class press names press twice (the first at 2:32); keep one
classes.xml:2:75: error: <maxWait> of class press is -1; expected a whole number of seconds, 0 or more (0 means none)
classes.xml:3:21: error: <wait> is not an element of <class> (class drill); expected one of: <conflicts>, <maxWait>
classes.xml:4:10: error: class press is declared twice (the first at 2:10); keep one, with the conflicts of both
classes.xml:5:3: error: <class> has no id attribute; add one that names the class, e.g. id=\"press\"
classes.xml:5:19: error: <maxWait> of this class is 90000 seconds, more than the 86400 allowed (MAX_WAIT_SECS); give the seconds a request may wait, e.g. 60
classes.xml:6:10: error: class name \"two words\" contains white space; a class name is one word of at most 64 characters, e.g. press
";
    assert_eq!(problems(src), expected);
}

#[test]
fn a_wrong_root_and_a_list_with_elements_say_what_to_write() {
    assert!(problems("<organisation/>").contains("a class document starts with <classes>"));
    let got = problems(r#"<classes><class id="a"><conflicts><b/></conflicts></class></classes>"#);
    assert!(got.contains("write the class names as text"), "{got}");
}

#[test]
fn more_classes_than_max_classes_are_refused_naming_the_limit() {
    let doc = ClassDocument {
        classes: (0..=MAX_CLASSES)
            .map(|i| TaskClass::new(format!("c{i}")))
            .collect(),
    };
    let diags = validate_classes(&doc, &crate::SourceMap::default());
    assert_eq!(diags.len(), 1);
    assert!(diags[0].message.contains("MAX_CLASSES"), "{diags:?}");
    let fits = ClassDocument {
        classes: doc.classes[..MAX_CLASSES].to_vec(),
    };
    assert!(validate_classes(&fits, &crate::SourceMap::default()).is_empty());
}

#[test]
fn max_wait_at_its_limit_loads_and_one_more_is_refused() {
    let at = |secs: u32| {
        format!(r#"<classes><class id="a"><maxWait>{secs}</maxWait></class></classes>"#)
    };
    assert_eq!(problems(&at(MAX_WAIT_SECS)), "");
    assert_eq!(problems(&at(0)), "");
    assert!(problems(&at(MAX_WAIT_SECS + 1)).contains("MAX_WAIT_SECS"));
}

#[test]
fn the_writer_leaves_defaults_out() {
    let doc = ClassDocument {
        classes: vec![class("press", &["press"], 60), class("drill", &[], 5)],
    };
    assert_eq!(
        write_classes(&doc),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<classes>\n  <class id=\"press\">\n    \
         <conflicts>press</conflicts>\n  </class>\n  <class id=\"drill\">\n    \
         <maxWait>5</maxWait>\n  </class>\n</classes>\n"
    );
    assert_eq!(
        write_classes(&ClassDocument::default()),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<classes/>\n"
    );
}

/// A valid document: distinct names, conflicts among them, each named once.
fn documents() -> impl Strategy<Value = ClassDocument> {
    let names = prop::collection::btree_set("[a-z][a-z0-9_.-]{0,8}", 0..8);
    names.prop_flat_map(|names| {
        let names: Vec<String> = names.into_iter().collect();
        let n = names.len();
        let per_class = (
            prop::collection::btree_set(0..n.max(1), 0..=n),
            prop_oneof![Just(DEFAULT_MAX_WAIT_SECS), 0..=MAX_WAIT_SECS],
        );
        prop::collection::vec(per_class, n).prop_map(move |fields| ClassDocument {
            classes: names
                .iter()
                .zip(fields)
                .map(|(id, (conflicts, max_wait_secs))| TaskClass {
                    id: id.as_str().into(),
                    conflicts: conflicts
                        .into_iter()
                        .filter(|k| *k < names.len())
                        .map(|k| ClassName::from(names[k].as_str()))
                        .collect(),
                    max_wait_secs,
                })
                .collect(),
        })
    })
}

proptest! {
    #[test]
    fn read_of_write_is_the_same_document(doc in documents()) {
        prop_assert!(validate_classes(&doc, &crate::SourceMap::default()).is_empty());
        let text = write_classes(&doc);
        let back = load_classes(text.as_bytes()).map_err(|d| TestCaseError::fail(d.render("w")))?;
        prop_assert_eq!(back.value, doc);
    }
}
