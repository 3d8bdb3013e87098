//! Snapshot tests over a corpus of broken PDL texts (`tests/broken-pdl/*.pdl`), as `broken.rs`
//! does for the XML: each file holds one kind of problem (plus `many-problems.pdl`, which holds
//! several at once), is named after it, and starts with a `//` comment saying what is wrong.
//! Their rendered diagnostics are pinned as insta snapshots in `tests/snapshots/`, so any
//! change in wording, position or number of diagnostics shows up in review.
//!
//! Besides the snapshots, every file must yield at least one diagnostic, each line of the shape
//! `name.pdl:LINE:COL: error: message` with a place inside the file.
//!
//! To accept new or changed snapshots: `INSTA_UPDATE=always cargo test -p mobiwf-xml-schema
//! --test broken_pdl`, then review the `.snap` files with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;

use common::corpus::{check_all, check_lines, files_ending, snapshot_settings};
use mobiwf_xml_schema::{Language, load_definition_in};

fn check_file(path: &Path, failures: &mut Vec<String>) {
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let rendered = match load_definition_in(Language::Pdl, &bytes) {
        Ok(_) => {
            failures.push(format!(
                "{file_name}: expected at least one diagnostic, got none"
            ));
            String::new()
        }
        Err(diagnostics) => diagnostics.render(file_name),
    };
    check_lines(file_name, &bytes, &rendered, failures);
    snapshot_settings(path, &bytes)
        .bind(|| insta::assert_snapshot!(format!("pdl-{stem}"), rendered));
}

#[test]
fn broken_pdl_texts() {
    let files = files_ending(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/broken-pdl"),
        "pdl",
    );
    assert!(files.len() > 1, "the corpus is empty");
    let report = check_all(&files, check_file);
    assert!(report.is_empty(), "{} files checked\n{report}", files.len());
}
