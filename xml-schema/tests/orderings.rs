//! The ordering document, in XML and in PDL: both read into one model with positions; the
//! corpus of broken documents with their exact diagnostics (`tests/orderings/broken/`, XML and
//! PDL, snapshots in `tests/snapshots/orderings__*.snap`); the limits; the writers
//! (`read(write(x)) == x` in both languages for any valid document); the resolution of task
//! names against definitions; and `xsd/orderings.xsd` against `xmllint` (which, as in
//! `xsd.rs`, must be installed: the test fails without it).
//!
//! To accept new or changed snapshots: `INSTA_UPDATE=always cargo test -p mobiwf-xml-schema
//! --test orderings`, then review the `.snap` files with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::corpus::{check_all, check_lines, files_ending, snapshot_settings};
use common::xmllint::{
    EXPECT_MARKER, Verdict, XMLLINT_EXIT_INVALID, assert_no_problems, expected_error, xmllint,
};
use mobiwf_xml_schema::limits::{MAX_ORDER_PAIRS, MAX_ORDERINGS};
use mobiwf_xml_schema::*;
use proptest::prelude::*;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture(name: &str) -> PathBuf {
    crate_dir().join("tests/orderings").join(name)
}

fn example(name: &str) -> (String, Vec<u8>) {
    let path = crate_dir().join("../examples/orderings").join(name);
    (name.to_owned(), fs::read(&path).unwrap())
}

fn load(name: &str, src: &[u8]) -> Loaded<Orderings> {
    load_orderings_named(name, src).unwrap_or_else(|d| panic!("{}", d.render(name)))
}

/// The problems of `src` read as `name`, rendered.
fn problems(name: &str, src: &str) -> String {
    match load_orderings_named(name, src.as_bytes()) {
        Ok(_) => String::new(),
        Err(d) => d.render(name),
    }
}

fn name(text: &str) -> TaskRef {
    TaskRef::Name(text.to_owned())
}

fn seed_model() -> Orderings {
    Orderings {
        orderings: vec![Ordering {
            first: "P1".into(),
            second: "P2".into(),
            pairs: vec![
                OrderPair {
                    first: name("T11"),
                    second: name("T21"),
                },
                OrderPair {
                    first: name("T12"),
                    second: name("T22"),
                },
            ],
        }],
    }
}

#[test]
fn the_seed_example_reads_the_same_in_both_languages() {
    let (xml_name, xml) = example("seed.xml");
    let (pdl_name, pdl) = example("seed.pdl");
    assert_eq!(load(&xml_name, &xml).value, seed_model());
    assert_eq!(load(&pdl_name, &pdl).value, seed_model());
    // Without an extension, the content tells.
    assert_eq!(load("-", &xml).value, seed_model());
    assert_eq!(load("-", &pdl).value, seed_model());
}

#[test]
fn the_source_map_points_at_what_a_person_edits() {
    let (_, xml) = example("seed.xml");
    let map = load("seed.xml", &xml).source_map;
    assert_eq!(map.pos(Node::Ordering(0)), Pos { line: 5, column: 3 });
    assert_eq!(
        map.pos(Node::OrderingAttr(0, "second")),
        Pos {
            line: 5,
            column: 24
        }
    );
    assert_eq!(
        map.pos(Node::OrderTask(0, 1, "second")),
        Pos {
            line: 7,
            column: 24
        }
    );
    let (_, pdl) = example("seed.pdl");
    let map = load("seed.pdl", &pdl).source_map;
    assert_eq!(map.pos(Node::Ordering(0)), Pos { line: 3, column: 1 });
    assert_eq!(
        map.pos(Node::OrderingAttr(0, "second")),
        Pos {
            line: 3,
            column: 27
        }
    );
    assert_eq!(map.pos(Node::Order(0, 1)), Pos { line: 6, column: 5 });
    assert_eq!(
        map.pos(Node::OrderTask(0, 1, "second")),
        Pos {
            line: 6,
            column: 11
        }
    );
}

#[test]
fn tasks_are_named_by_name_or_by_id_in_both_languages() {
    let xml = r#"<orderings><ordering first="a" second="b">
        <order firstId="3" second="Visit &amp; sign"/></ordering></orderings>"#;
    let pdl = r#"WORKFLOW_DEFINITIONS a : b; RELATIVE_ORDER { 3 : "Visit & sign"; }"#;
    let expected = vec![OrderPair {
        first: TaskRef::Id(ActivityId(3)),
        second: name("Visit & sign"),
    }];
    assert_eq!(
        load("o.xml", xml.as_bytes()).value.orderings[0].pairs,
        expected
    );
    assert_eq!(
        load("o.pdl", pdl.as_bytes()).value.orderings[0].pairs,
        expected
    );
    // An empty document clears the orderings.
    assert!(load("o.xml", b"<orderings/>").value.orderings.is_empty());
    assert!(load("o.pdl", b"// none\n").value.orderings.is_empty());
}

#[test]
fn a_definition_s_text_holding_an_ordering_says_where_it_belongs() {
    let text = "TASK M { } WORKFLOW P1 { TASK T11 : M { } }\n\
                WORKFLOW_DEFINITIONS P1 : P2;\nRELATIVE_ORDER { T11 : T21; }\n";
    let err = load_definition_in(Language::Pdl, text.as_bytes()).unwrap_err();
    let rendered = err.render("p1.pdl");
    assert_eq!(
        rendered,
        "p1.pdl:2:1: error: `WORKFLOW_DEFINITIONS` is not a clause of a PDL text: it belongs in \
         an ordering text of its own, which is applied with `mobiwf-controller orderings apply \
         FILE`, not deployed with a definition\n\
         p1.pdl:3:1: error: `RELATIVE_ORDER` is not a clause of a PDL text: it belongs in an \
         ordering text of its own, which is applied with `mobiwf-controller orderings apply \
         FILE`, not deployed with a definition\n"
    );
    // Inside the workflow too.
    let text = "TASK M { } WORKFLOW P1 { TASK T11 : M { } RELATIVE_ORDER { T11 : T21; } }";
    let err = load_definition_in(Language::Pdl, text.as_bytes()).unwrap_err();
    assert!(
        err.render("p1.pdl").contains(
            "`RELATIVE_ORDER` is not a clause of workflow P1: it belongs in an ordering text"
        ),
        "{}",
        err.render("p1.pdl")
    );
    // `check` tells an ordering document by its root.
    let (_, xml) = example("seed.xml");
    assert_eq!(detect_kind(&xml).unwrap(), DocumentKind::Orderings);
    assert!(check(&xml).is_empty());
    assert!(
        check(b"<orderings><ordering first=\"a\" second=\"a\"/></orderings>")
            .render("o.xml")
            .contains("orders a against itself")
    );
    // And a BPMN file is no ordering.
    assert!(problems("o.bpmn", "<orderings/>").contains("BPMN has no orderings"));
}

// ----------------------------------------------------------------------------- broken corpus

/// Checks one corpus file: at least one diagnostic, each line well shaped, and the rendered
/// text equal to its snapshot.
fn check_broken_file(path: &Path, failures: &mut Vec<String>) {
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let rendered = match load_orderings_named(file_name, &bytes) {
        Ok(_) => {
            failures.push(format!("{file_name}: loads, but every file here is broken"));
            String::new()
        }
        Err(diagnostics) => diagnostics.render(file_name),
    };
    check_lines(file_name, &bytes, &rendered, failures);
    snapshot_settings(path, &bytes).bind(|| insta::assert_snapshot!(stem, rendered));
}

#[test]
fn broken_documents() {
    let mut files = files_ending(&fixture("broken"), "xml");
    files.extend(files_ending(&fixture("broken"), "pdl"));
    assert!(files.len() > 1, "the corpus is empty");
    let report = check_all(&files, check_broken_file);
    assert!(report.is_empty(), "{} files checked\n{report}", files.len());
}

#[test]
fn every_problem_is_reported_at_once() {
    let bytes = fs::read(fixture("broken/many-problems.xml")).unwrap();
    let diagnostics = load_orderings(&bytes).unwrap_err();
    // The attribute, the task named both ways, the bad id, the pair twice, the ordering
    // without pairs, the definitions ordered twice, the definition against itself.
    assert_eq!(diagnostics.len(), 7, "{}", diagnostics.render("many.xml"));
    let bytes = fs::read(fixture("broken/pdl-many-problems.pdl")).unwrap();
    let diagnostics = load_orderings_named("many.pdl", &bytes).unwrap_err();
    // Against itself, the id 0, the pair twice, the pair without its second task, the
    // ordering without pairs, the definitions ordered twice.
    assert_eq!(diagnostics.len(), 6, "{}", diagnostics.render("many.pdl"));
}

#[test]
fn counts_beyond_the_limits_are_refused() {
    let pair = "<order first=\"a\" second=\"b\"/>";
    let one = |i: usize, pairs: &str| {
        format!("<ordering first=\"p{i}\" second=\"q{i}\">{pairs}</ordering>\n")
    };
    let fine: String = (0..MAX_ORDERINGS).map(|i| one(i, pair)).collect();
    assert_eq!(
        problems("o.xml", &format!("<orderings>\n{fine}</orderings>")),
        ""
    );
    let over: String = (0..=MAX_ORDERINGS).map(|i| one(i, pair)).collect();
    let rendered = problems("o.xml", &format!("<orderings>\n{over}</orderings>"));
    assert_eq!(
        rendered,
        format!(
            "o.xml:{}:1: error: the document holds {} orderings, more than the {MAX_ORDERINGS} \
             allowed (MAX_ORDERINGS); the controller looks through them at every ordered task, \
             so keep to the orderings that matter\n",
            MAX_ORDERINGS + 2,
            MAX_ORDERINGS + 1
        )
    );
    let pairs: String = (0..=MAX_ORDER_PAIRS)
        .map(|k| format!("\n<order first=\"a{k}\" second=\"b\"/>"))
        .collect();
    let rendered = problems(
        "o.xml",
        &format!("<orderings>{}</orderings>", one(0, &pairs)),
    );
    assert!(
        rendered.starts_with(&format!("o.xml:{}:1: error: ", MAX_ORDER_PAIRS + 2))
            && rendered.contains("(MAX_ORDER_PAIRS)")
            && rendered.lines().count() == 1,
        "{rendered}"
    );
}

#[test]
fn models_built_in_code_are_validated_without_positions() {
    let mut doc = seed_model();
    let again = doc.orderings[0].pairs[0].clone();
    doc.orderings[0].pairs.push(again);
    doc.orderings[0].pairs[1].second = TaskRef::Id(ActivityId(0));
    let rendered = Diagnostics(validate_orderings(&doc, &SourceMap::default())).render("code");
    assert_eq!(
        rendered,
        "code: error: the second task of pair 2 of the ordering of P1 and P2: its id is 0; \
         activity ids start at 1\n\
         code: error: T11 : T21 is paired twice in the ordering of P1 and P2 (first); keep one\n"
    );
}

// ----------------------------------------------------------------------------- resolution

fn definition(text: &str) -> WorkflowDefinition {
    load_definition_named("d.pdl", text.as_bytes())
        .unwrap_or_else(|d| panic!("{}", d.render("d.pdl")))
        .value
}

#[test]
fn task_names_resolve_to_the_activities_of_the_deployed_definitions() {
    let p1 = definition("TASK M { } WORKFLOW P1 { TASK T11 : M { } TASK T12 : M { } }");
    let p2 = definition("TASK M { } WORKFLOW P2 { TASK T21 : M { } TASK T22 : M { } }");
    let deployed = |n: &DefinitionName| match n.as_str() {
        "P1" => Some(&p1),
        "P2" => Some(&p2),
        _ => None,
    };
    let (_, xml) = example("seed.xml");
    let loaded = load("seed.xml", &xml);
    let resolved = resolve_orderings(&loaded.value, &loaded.source_map, deployed).unwrap();
    assert_eq!(
        resolved,
        vec![ResolvedOrdering {
            first: "P1".into(),
            second: "P2".into(),
            pairs: vec![
                (ActivityId(1), ActivityId(1)),
                (ActivityId(2), ActivityId(2))
            ],
        }]
    );
}

#[test]
fn every_problem_of_resolution_is_said_where_it_is_written_with_what_to_do() {
    let p1 = definition(
        "TASK M { } WORKFLOW P1 { TASK T11 : M { } TASK T12 : M { } TASK Twin : M { } \
         TASK \"Twin \" : M { } }",
    );
    let p2 = definition("TASK M { } WORKFLOW P2 { TASK T21 : M { } }");
    let deployed = |n: &DefinitionName| match n.as_str() {
        "P1" => Some(&p1),
        "P2" => Some(&p2),
        _ => None,
    };
    let text = "WORKFLOW_DEFINITIONS P1 : P2;\n\
                RELATIVE_ORDER {\n\
                \x20   T13 : T21;\n\
                \x20   Twin : 9;\n\
                \x20   1 : T21;\n\
                \x20   T11 : 1;\n\
                }\n\
                WORKFLOW_DEFINITIONS P1 : P3;\n\
                RELATIVE_ORDER { T11 : X; }\n";
    let loaded = load("o.pdl", text.as_bytes());
    let err = resolve_orderings(&loaded.value, &loaded.source_map, deployed).unwrap_err();
    assert_eq!(
        err.render("o.pdl"),
        "o.pdl:3:5: error: the first task of this pair, in P1: the definition has no activity \
         named T13; write the name of one of its activities, or its id\n\
         o.pdl:4:5: error: the first task of this pair, in P1: 2 activities of the definition \
         are named Twin (ids 3, 4); name the one you mean by its id\n\
         o.pdl:4:12: error: the second task of this pair, in P2: the definition has no \
         activity 9; write the id of one of its activities, or its name\n\
         o.pdl:6:5: error: this pair is activities 1 : 1, as pair 3 is at 5:5; keep one\n\
         o.pdl:8:27: error: no definition is deployed under the name P3; deploy it first \
         (mobiwf-controller deploy FILE --name P3), or correct the name\n"
    );
    assert_eq!(task_id(&p1, &name("T12")), Ok(ActivityId(2)));
}

// ----------------------------------------------------------------------------- round trips

/// A definition name.
fn definition_name() -> impl Strategy<Value = DefinitionName> {
    proptest::string::string_regex("[A-Za-z0-9_.-]{1,12}")
        .unwrap()
        .prop_map(DefinitionName::new)
}

/// A task: a name (any text without white space around it, XML's and PDL's special
/// characters and keywords included), or an id.
fn task() -> impl Strategy<Value = TaskRef> {
    prop_oneof![
        proptest::string::string_regex("[^\\s\\p{C}]([^\\p{C}]{0,10}[^\\s\\p{C}])?")
            .unwrap()
            .prop_map(TaskRef::Name),
        Just(TaskRef::Name("RELATIVE_ORDER".into())),
        Just(TaskRef::Name("a\"b\\c<&>".into())),
        (1u64..=u64::MAX).prop_map(|id| TaskRef::Id(ActivityId(id))),
    ]
}

/// A valid document: distinct pairs of distinct definitions, each with distinct pairs.
fn orderings() -> impl Strategy<Value = Orderings> {
    let ordering = (
        definition_name(),
        definition_name(),
        prop::collection::vec((task(), task()), 1..5),
    );
    prop::collection::vec(ordering, 0..5).prop_map(|list| {
        let mut seen = std::collections::BTreeSet::new();
        let orderings = list
            .into_iter()
            .filter(|(a, b, _)| {
                a != b
                    && seen.insert(if a < b {
                        (a.clone(), b.clone())
                    } else {
                        (b.clone(), a.clone())
                    })
            })
            .map(|(first, second, pairs)| {
                let mut unique = Vec::new();
                for (a, b) in pairs {
                    let pair = OrderPair {
                        first: a,
                        second: b,
                    };
                    if !unique.contains(&pair) {
                        unique.push(pair);
                    }
                }
                Ordering {
                    first,
                    second,
                    pairs: unique,
                }
            })
            .collect();
        Orderings { orderings }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn written_orderings_read_back_equal_in_both_languages(doc in orderings()) {
        let problems = validate_orderings(&doc, &SourceMap::default());
        prop_assert!(problems.is_empty(), "the generator made an invalid value: {problems:?}");
        let xml = write_orderings(&doc);
        match load_orderings_named("w.xml", xml.as_bytes()) {
            Ok(loaded) => prop_assert_eq!(&loaded.value, &doc, "written:\n{}", xml),
            Err(d) => prop_assert!(false, "{}\nwritten:\n{}", d.render("w.xml"), xml),
        }
        let pdl = write_orderings_pdl(&doc);
        match load_orderings_named("w.pdl", pdl.as_bytes()) {
            Ok(loaded) => prop_assert_eq!(&loaded.value, &doc, "written:\n{}", pdl),
            Err(d) => prop_assert!(false, "{}\nwritten:\n{}", d.render("w.pdl"), pdl),
        }
    }

    #[test]
    fn cut_or_damaged_texts_never_panic(doc in orderings(), pdl in any::<bool>(), cut in any::<usize>(), byte in any::<u8>()) {
        let (name, text) = if pdl {
            ("d.pdl", write_orderings_pdl(&doc))
        } else {
            ("d.xml", write_orderings(&doc))
        };
        let mut bytes = text.into_bytes();
        let at = cut % (bytes.len() + 1);
        if byte % 2 == 0 {
            bytes.truncate(at);
        } else if at < bytes.len() {
            bytes[at] = byte;
        }
        if let Err(d) = load_orderings_named(name, &bytes) {
            prop_assert!(!d.is_empty());
            let _ = d.render(name);
        }
    }
}

// ----------------------------------------------------------------------------- the XSD

/// Broken documents that XSD 1.0 cannot refuse: the same definitions ordered twice the other
/// way round (identity constraints compare fields in their order), and a definition against
/// itself (no constraint compares two attributes of one element). Every other XML document of
/// the corpus must be refused by the XSD too.
const BEYOND_XSD: &[&str] = &["ordered-twice.xml", "same-definition.xml"];

fn schema() -> PathBuf {
    crate_dir().join("xsd/orderings.xsd")
}

fn check_valid(document: &Path) -> Option<String> {
    let Verdict { code, stderr } = xmllint(&schema(), document);
    (code != Some(0)).then(|| {
        format!(
            "{} should validate against orderings.xsd but xmllint exited with {code:?}:\n{stderr}",
            document.display()
        )
    })
}

#[test]
fn the_xsd_accepts_valid_documents() {
    let mut documents = files_ending(&fixture("xsd/valid"), "xml");
    assert!(
        !documents.is_empty(),
        "no document in tests/orderings/xsd/valid"
    );
    documents.push(crate_dir().join("../examples/orderings/seed.xml"));
    let mut problems = Vec::new();
    for document in &documents {
        // What the XSD accepts, the reader accepts too.
        if let Err(d) = load_orderings(&fs::read(document).unwrap()) {
            problems.push(d.render(&document.display().to_string()));
        }
        problems.extend(check_valid(document));
    }
    assert_no_problems(&problems);
}

#[test]
fn the_xsd_refuses_invalid_documents_for_the_expected_reason() {
    let invalid = files_ending(&fixture("xsd/invalid"), "xml");
    assert!(
        !invalid.is_empty(),
        "no document in tests/orderings/xsd/invalid"
    );
    let mut problems = Vec::new();
    for document in invalid {
        let text = fs::read_to_string(&document).unwrap();
        let Some(expected) = expected_error(&text) else {
            problems.push(format!(
                "{}: add a `<!-- {EXPECT_MARKER} TEXT -->` comment",
                document.display()
            ));
            continue;
        };
        let Verdict { code, stderr } = xmllint(&schema(), &document);
        if code != Some(XMLLINT_EXIT_INVALID) || !stderr.contains(expected) {
            problems.push(format!(
                "{} should be refused with `{expected}` (exit {XMLLINT_EXIT_INVALID}); xmllint \
                 exited with {code:?}:\n{stderr}",
                document.display()
            ));
        }
        // What the XSD refuses, the reader refuses too.
        if load_orderings(text.as_bytes()).is_ok() {
            problems.push(format!("{}: the reader accepts it", document.display()));
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn the_xsd_refuses_the_broken_corpus() {
    let mut problems = Vec::new();
    for document in files_ending(&fixture("broken"), "xml") {
        let name = document.file_name().unwrap().to_str().unwrap();
        let Verdict { code, stderr } = xmllint(&schema(), &document);
        let refused = code != Some(0);
        if refused == BEYOND_XSD.contains(&name) {
            problems.push(format!(
                "{name}: xmllint exited with {code:?} (listed in BEYOND_XSD: {}):\n{stderr}",
                BEYOND_XSD.contains(&name)
            ));
        }
    }
    assert_no_problems(&problems);
}

proptest! {
    // Each case runs xmllint: a few dozen are enough to cover the shapes.
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn written_documents_pass_the_xsd(doc in orderings()) {
        let dir = std::env::temp_dir().join(format!("mobiwf-orderings-xsd-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("written.xml");
        fs::write(&path, write_orderings(&doc)).unwrap();
        let problem = check_valid(&path);
        fs::remove_file(&path).ok();
        prop_assert!(problem.is_none(), "{}", problem.unwrap_or_default());
    }
}
