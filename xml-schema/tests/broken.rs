//! Snapshot tests over a corpus of broken MobiWfMS documents (`tests/broken/*.xml`).
//!
//! Why this exists: the validator's promise to users (MISSION L4, "bad input gets a clear
//! error: what, where, how to fix") is only as good as the text it prints. Each file in the
//! corpus holds one kind of problem (plus `many-problems.xml`, which holds several at once),
//! named after the problem and starting with a `<!-- what is wrong -->` comment (except
//! `empty-file.xml` and `not-xml.xml`, which cannot have one). The rendered diagnostics of
//! every file are pinned as insta snapshots in `tests/snapshots/`, so any change in wording,
//! position or number of diagnostics shows up in review.
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

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// The one file in the corpus that is valid by the rule it exercises.
const VALID_BY_RULE: &str = "unplaced-contingency-ok.xml";

/// All `*.xml` files in `tests/broken`, sorted by name so the run order is stable.
fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("broken");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read corpus directory {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "xml"))
        .collect();
    files.sort();
    files
}

/// The text of the leading `<!-- what is wrong -->` comment, if there is one; it goes into
/// the snapshot header so a reviewer sees the intent next to the output.
fn what_is_wrong(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let start = text.find("<!--")? + "<!--".len();
    let end = start + text[start..].find("-->")?;
    Some(text[start..end].trim().to_owned())
}

/// Checks that `line` reads `file_name:LINE:COL: error: message` with a position inside
/// `source`. Returns a description of what is wrong with the line otherwise.
fn check_line_shape(file_name: &str, source: &[u8], line: &str) -> Result<(), String> {
    let rest = line
        .strip_prefix(file_name)
        .and_then(|r| r.strip_prefix(':'))
        .ok_or_else(|| format!("does not start with `{file_name}:`"))?;
    let mut parts = rest.splitn(3, ':');
    let line_no = parts.next().unwrap_or_default();
    let col_no = parts.next().unwrap_or_default();
    let tail = parts.next().unwrap_or_default();
    let line_no: usize = line_no
        .parse()
        .map_err(|_| format!("line number `{line_no}` is not a number"))?;
    let col_no: usize = col_no
        .parse()
        .map_err(|_| format!("column number `{col_no}` is not a number"))?;
    if line_no == 0 || col_no == 0 {
        return Err(format!("position {line_no}:{col_no} is not 1-based"));
    }
    let message = tail
        .strip_prefix(" error: ")
        .ok_or_else(|| "position is not followed by ` error: `".to_owned())?;
    if message.trim().is_empty() {
        return Err("message is empty".to_owned());
    }
    // `1:1` is always allowed: it is where document-level problems (empty file) go.
    if (line_no, col_no) != (1, 1) {
        let text = String::from_utf8_lossy(source);
        let source_lines: Vec<&str> = text.split('\n').collect();
        let Some(source_line) = source_lines.get(line_no - 1) else {
            return Err(format!(
                "line {line_no} is past the end of the file ({} lines)",
                source_lines.len()
            ));
        };
        // One past the last character is a fair place for "end of file" or "missing `>`".
        let width = source_line.trim_end_matches('\r').chars().count() + 1;
        if col_no > width {
            return Err(format!(
                "column {col_no} is past the end of line {line_no} ({} columns)",
                width - 1
            ));
        }
    }
    Ok(())
}

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
    for line in rendered.lines() {
        if let Err(why) = check_line_shape(file_name, &bytes, line) {
            failures.push(format!(
                "{file_name}: bad diagnostic line ({why}): {line:?}"
            ));
        }
    }

    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(path);
    if let Some(description) = what_is_wrong(&bytes) {
        settings.set_description(description);
    }
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(stem, rendered));
}

#[test]
fn broken_documents() {
    let files = corpus();
    assert!(
        files.iter().any(|p| p.ends_with(VALID_BY_RULE)),
        "the corpus must contain {VALID_BY_RULE}"
    );
    assert!(files.len() > 1, "the corpus is empty");

    let mut failures = Vec::new();
    let mut panicked = Vec::new();
    for path in &files {
        let result = catch_unwind(AssertUnwindSafe(|| check_file(path, &mut failures)));
        if let Err(payload) = result {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(non-string panic payload)".to_owned());
            let name = path.file_name().unwrap().to_string_lossy();
            panicked.push(format!("{name}: {message}"));
        }
    }

    let mut report = String::new();
    if !failures.is_empty() {
        report.push_str(&format!("{} contract failure(s):\n", failures.len()));
        for failure in &failures {
            report.push_str(&format!("  - {failure}\n"));
        }
    }
    if !panicked.is_empty() {
        report.push_str(&format!(
            "{} file(s) panicked (library panic or snapshot mismatch):\n",
            panicked.len()
        ));
        for p in &panicked {
            report.push_str(&format!("  - {p}\n"));
        }
    }
    assert!(report.is_empty(), "{} files checked\n{report}", files.len());
}
