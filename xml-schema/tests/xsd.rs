//! Checks the XSD files in `xsd/` with a real XML Schema validator, `xmllint` (libxml2).
//!
//! The schemas are the formal statement of the two MobiWfMS XML languages; nothing in the
//! crate reads them, so without this test they could silently drift away from the published
//! documents and from our extensions. It validates:
//!
//! * the repaired paper fixtures (`../../shared/fixtures/paper/`, skipped when that directory
//!   is absent) and their copy in `../examples/paper/` (always present): they must pass;
//! * every document in `tests/xsd/valid/`: it must pass;
//! * every document in `tests/xsd/invalid/`: it must be rejected by the validator, with an
//!   error that contains the text of the document's `<!-- expect-error: ... -->` comment, so a
//!   document cannot pass the test by failing for an unrelated reason.
//!
//! The schema is chosen by file name: `*.workflow.xml` and `workflow.xml` are workflow
//! definitions (`xsd/workflow.xsd`); `*.partition.xml` and `partition-N.xml` are partition
//! documents (`xsd/partition.xsd`).
//!
//! `xmllint` comes from the Debian package `libxml2-utils`. When it is missing the tests fail
//! (they do not skip), so that CI cannot pass without checking the schemas.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::xmllint::{
    EXPECT_MARKER, XMLLINT_EXIT_INVALID, assert_no_problems, expected_error, xmllint,
};

/// Where this crate lives; the other paths are relative to it.
fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The schema that applies to `document`, chosen by its file name.
fn schema_for(document: &Path) -> Result<PathBuf, String> {
    let name = document
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let schema = if name == "workflow.xml" || name.ends_with(".workflow.xml") {
        "workflow.xsd"
    } else if name.starts_with("partition-") || name.ends_with(".partition.xml") {
        "partition.xsd"
    } else {
        return Err(format!(
            "{}: cannot tell which schema applies; name it `*.workflow.xml` or \
             `*.partition.xml`",
            document.display()
        ));
    };
    Ok(crate_dir().join("xsd").join(schema))
}

/// The `*.xml` files of `dir`, sorted so that failures are reported in a stable order.
fn xml_files(dir: &Path) -> Vec<PathBuf> {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "xml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.xml file in {}", dir.display());
    files
}

/// Validates `document`; returns a description of the problem when it does not pass.
fn check_valid(document: &Path) -> Option<String> {
    let schema = match schema_for(document) {
        Ok(schema) => schema,
        Err(problem) => return Some(problem),
    };
    let verdict = xmllint(&schema, document);
    (verdict.code != Some(0)).then(|| {
        format!(
            "{} should validate against {} but xmllint exited with {:?}:\n{}",
            document.display(),
            schema.display(),
            verdict.code,
            verdict.stderr
        )
    })
}

/// Validates `document`, which must be rejected with the error its `expect-error` comment
/// names; returns a description of the problem when it is not.
fn check_invalid(document: &Path) -> Option<String> {
    let schema = match schema_for(document) {
        Ok(schema) => schema,
        Err(problem) => return Some(problem),
    };
    let text = fs::read_to_string(document)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", document.display()));
    let Some(expected) = expected_error(&text) else {
        return Some(format!(
            "{}: add a `<!-- {EXPECT_MARKER} TEXT -->` comment naming the error xmllint must \
             report",
            document.display()
        ));
    };
    let verdict = xmllint(&schema, document);
    if verdict.code != Some(XMLLINT_EXIT_INVALID) {
        return Some(format!(
            "{} should be rejected by {} (xmllint exit code {XMLLINT_EXIT_INVALID}) but xmllint \
             exited with {:?}:\n{}",
            document.display(),
            schema.display(),
            verdict.code,
            verdict.stderr
        ));
    }
    (!verdict.stderr.contains(expected)).then(|| {
        format!(
            "{} is rejected, but not with the expected error `{expected}`:\n{}",
            document.display(),
            verdict.stderr
        )
    })
}

#[test]
fn paper_fixtures_are_valid() {
    let examples = crate_dir().join("../examples/paper");
    assert!(
        examples.join("workflow.xml").is_file(),
        "{}/workflow.xml is missing",
        examples.display()
    );
    let shared = crate_dir().join("../../shared/fixtures/paper");
    let mut dirs = vec![examples];
    if shared.is_dir() {
        dirs.push(shared);
    } else {
        eprintln!(
            "skipping the shared fixtures: {} does not exist",
            shared.display()
        );
    }
    let problems: Vec<String> = dirs
        .iter()
        .flat_map(|dir| xml_files(dir))
        .filter_map(|document| check_valid(&document))
        .collect();
    assert_no_problems(&problems);
}

/// The example workflows beside the paper's (`examples/people`, `examples/recovery`,
/// `examples/rules`) pass both the XSD and the loader: what the docs tell users to
/// submit is valid.
#[test]
fn example_workflows_are_valid() {
    let mut problems = Vec::new();
    for dir in [
        "../examples/applications",
        "../examples/people",
        "../examples/recovery",
        "../examples/rules",
    ] {
        for document in xml_files(&crate_dir().join(dir)) {
            let schema = crate_dir().join("xsd/workflow.xsd");
            let verdict = xmllint(&schema, &document);
            if verdict.code != Some(0) {
                problems.push(format!("{}: {}", document.display(), verdict.stderr));
            }
            let text = std::fs::read(&document).unwrap();
            if let Err(d) = mobiwf_xml_schema::load_definition(&text) {
                problems.push(d.render(&document.display().to_string()));
            }
        }
    }
    assert_no_problems(&problems);
}

#[test]
fn valid_documents_are_accepted() {
    let problems: Vec<String> = xml_files(&crate_dir().join("tests/xsd/valid"))
        .iter()
        .filter_map(|document| check_valid(document))
        .collect();
    assert_no_problems(&problems);
}

#[test]
fn invalid_documents_are_rejected_for_the_expected_reason() {
    let problems: Vec<String> = xml_files(&crate_dir().join("tests/xsd/invalid"))
        .iter()
        .filter_map(|document| check_invalid(document))
        .collect();
    assert_no_problems(&problems);
}

/// The types both schemas take from `xsd/routing.xsd` list what the crate reads: every task
/// state, every activity kind, and flags as long as `MAX_FLAG_CHARS` allows.
#[test]
fn shared_types_match_the_model() {
    use mobiwf_xml_schema::{ActivityKind, TaskState, limits::MAX_FLAG_CHARS};
    let xsd = fs::read_to_string(crate_dir().join("xsd/routing.xsd")).unwrap();
    let enumerated = |value: &str| xsd.contains(&format!("<xs:enumeration value=\"{value}\">"));
    let mut problems: Vec<String> = TaskState::ALL
        .iter()
        .map(|s| s.published())
        .chain(["automatic", "semiAutomatic", "manual", "dummy"])
        .filter(|value| !enumerated(value))
        .map(|value| format!("routing.xsd does not enumerate {value}"))
        .collect();
    for kind in ["automatic", "semiAutomatic", "manual", "dummy"] {
        if ActivityKind::parse(kind).map(ActivityKind::as_str) != Some(kind) {
            problems.push(format!("the reader does not know the kind {kind}"));
        }
    }
    if !xsd.contains(&format!("{{1,{MAX_FLAG_CHARS}}}")) {
        problems.push(format!(
            "the flag pattern does not allow {MAX_FLAG_CHARS} characters"
        ));
    }
    for schema in ["workflow.xsd", "partition.xsd"] {
        let text = fs::read_to_string(crate_dir().join("xsd").join(schema)).unwrap();
        for shared in ["routing.xsd", "data.xsd"] {
            if !text.contains(&format!("<xs:include schemaLocation=\"{shared}\">")) {
                problems.push(format!("{schema} does not include {shared}"));
            }
        }
    }
    assert_no_problems(&problems);
}

/// The data types both schemas take from `xsd/data.xsd` have the crate's limits: names as long
/// as `MAX_DATA_NAME_CHARS` allows, as many declarations as `MAX_DATA_ITEMS`, and the types of
/// value the reader knows.
#[test]
fn data_types_match_the_model() {
    use mobiwf_xml_schema::DataKind;
    use mobiwf_xml_schema::limits::{MAX_DATA_ITEMS, MAX_DATA_NAME_CHARS};
    let xsd = fs::read_to_string(crate_dir().join("xsd/data.xsd")).unwrap();
    let mut problems = Vec::new();
    if !xsd.contains(&format!("<xs:maxLength value=\"{MAX_DATA_NAME_CHARS}\"/>")) {
        problems.push(format!(
            "data names are not limited to {MAX_DATA_NAME_CHARS} characters"
        ));
    }
    if !xsd.contains(&format!("maxOccurs=\"{MAX_DATA_ITEMS}\"")) {
        problems.push(format!(
            "<data> is not limited to {MAX_DATA_ITEMS} declarations"
        ));
    }
    for kind in [DataKind::String, DataKind::Number] {
        let name = kind.type_name().unwrap();
        let pattern: String = name
            .chars()
            .map(|c| format!("[{}{}]", c.to_ascii_uppercase(), c))
            .collect();
        if !xsd.contains(&pattern) || DataKind::of_type_name(&name.to_uppercase()) != Some(kind) {
            problems.push(format!("the type {name} is not known in any case to both"));
        }
    }
    assert_no_problems(&problems);
}

/// What mobiwf itself writes must pass the XSDs too: the derived partitions of the paper's
/// workflow, and definitions with our extensions (dependency rules included, whose derived
/// partitions have adjacent states; routing too; instance data, whose derived partitions
/// declare data and have adjacents that carry it) written back by `write_definition`.
#[test]
fn written_documents_are_valid() {
    use mobiwf_xml_schema::{
        DeriveOptions, derive_partitions, load_definition, write_definition, write_partition,
    };
    let out = std::env::temp_dir().join(format!("mobiwf-xsd-written-{}", std::process::id()));
    fs::create_dir_all(&out).unwrap();
    let mut problems = Vec::new();
    let mut carried = false;
    let sources = [
        crate_dir().join("../examples/paper/workflow.xml"),
        crate_dir().join("tests/xsd/valid/extensions.workflow.xml"),
        crate_dir().join("tests/xsd/valid/people.workflow.xml"),
        crate_dir().join("tests/xsd/valid/rules.workflow.xml"),
        crate_dir().join("tests/xsd/valid/routing.workflow.xml"),
        crate_dir().join("tests/xsd/valid/data.workflow.xml"),
    ];
    for (i, source) in sources.iter().enumerate() {
        let def = load_definition(&fs::read(source).unwrap())
            .unwrap_or_else(|d| panic!("{}", d.render(&source.display().to_string())))
            .value;
        let written = out.join(format!("written-{i}.workflow.xml"));
        fs::write(&written, write_definition(&def)).unwrap();
        problems.extend(check_valid(&written));
        let options = DeriveOptions {
            start_time: Some("2026/11/22 10:00:00".into()),
            ..DeriveOptions::default()
        };
        for part in derive_partitions(&def, &options) {
            let path = out.join(format!("written-{i}-{}.partition.xml", part.partition));
            let text = write_partition(&part.document);
            carried |= text.contains("<carries>");
            fs::write(&path, text).unwrap();
            problems.extend(check_valid(&path));
        }
    }
    fs::remove_dir_all(&out).ok();
    assert!(carried, "some derived partition carries data");
    assert_no_problems(&problems);
}
