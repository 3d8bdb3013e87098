//! Snapshot tests over a corpus of broken MobiWfMS documents (`tests/broken/*.xml`).
//!
//! Why this exists: the validator's promise to users (bad input gets a clear error: what, where,
//! how to fix) is only as good as the text it prints. Each file in the corpus holds one kind of
//! problem (plus `many-problems.xml`, which holds several at once), named after the problem and
//! starting with a `<!-- what is wrong -->` comment (except `empty-file.xml` and `not-xml.xml`,
//! which cannot have one). The rendered diagnostics of every file are pinned as insta snapshots in
//! `tests/snapshots/`, so any change in wording, position or number of diagnostics shows up in
//! review.
//!
//! Besides the snapshots, this test enforces the contract that does not depend on wording:
//! - every file yields at least one diagnostic, except `unplaced-contingency-ok.xml`, which is
//!   valid (an activity in no partition is fine when it is some activity's contingency) and
//!   must yield none;
//! - every rendered line has the shape `name.xml:LINE:COL: error: message` with LINE >= 1 and
//!   COL >= 1 inside the file (a document-level problem without a position uses `1:1`).
//!
//! Each file is checked under `catch_unwind`, so a panic in the library on one file does not
//! hide the results of the others; all panicking files are listed at the end.
//!
//! To accept new or changed snapshots: `INSTA_UPDATE=always cargo test -p mobiwf-xml-schema
//! --test broken`, then review the `.snap` files with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;

use common::corpus::{check_all, check_lines, files, snapshot_settings};

/// The one file in the corpus that is valid by the rule it exercises.
const VALID_BY_RULE: &str = "unplaced-contingency-ok.xml";

/// Checks one corpus file; contract violations are pushed onto `failures`. Panics (from the
/// library, or from insta on a snapshot mismatch) are caught by the caller.
fn check_file(path: &Path, failures: &mut Vec<String>) {
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));

    let diagnostics = mobiwf_xml_schema::check(&bytes);
    let rendered = diagnostics.render(file_name);

    if file_name == VALID_BY_RULE {
        if !diagnostics.is_empty() || !rendered.trim().is_empty() {
            failures.push(format!(
                "{file_name}: must be accepted (an unplaced contingency activity is allowed), \
                 but got:\n{rendered}"
            ));
        }
    } else if diagnostics.is_empty() || rendered.trim().is_empty() {
        failures.push(format!(
            "{file_name}: expected at least one diagnostic, got none (is_empty = {}, rendered = {rendered:?})",
            diagnostics.is_empty()
        ));
    }
    check_lines(file_name, &bytes, &rendered, failures);

    snapshot_settings(path, &bytes).bind(|| insta::assert_snapshot!(stem, rendered));
}

#[test]
fn broken_documents() {
    let files = files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/broken"));
    assert!(
        files.iter().any(|p| p.ends_with(VALID_BY_RULE)),
        "the corpus must contain {VALID_BY_RULE}"
    );
    assert!(files.len() > 1, "the corpus is empty");
    let report = check_all(&files, check_file);
    assert!(report.is_empty(), "{} files checked\n{report}", files.len());
}
