//! Helpers for the snapshot corpora of broken documents (`broken.rs`, `org.rs`,
//! `broken_pdl.rs`): listing a corpus, the `<!-- what is wrong -->` (or `//`) comment, the shape
//! every rendered line must have, how a file's snapshot is taken, and checking every file even
//! when some panic.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// All `*.xml` files in `dir`, sorted by name so the run order is stable.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    files_ending(dir, "xml")
}

/// All files in `dir` with extension `ext`, sorted by name so the run order is stable.
pub fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read corpus directory {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

/// The text of the leading `<!-- what is wrong -->` comment (or, in PDL, of the leading `//`
/// comment lines), if there is one; it goes into the snapshot header so a reviewer sees the
/// intent next to the output.
pub fn what_is_wrong(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    if text.starts_with("//") {
        let lines: Vec<&str> = text
            .lines()
            .map_while(|line| line.strip_prefix("//"))
            .map(str::trim)
            .collect();
        return Some(lines.join(" "));
    }
    let start = text.find("<!--")? + "<!--".len();
    let end = start + text[start..].find("-->")?;
    Some(text[start..end].trim().to_owned())
}

/// Checks that `line` reads `file_name:LINE:COL: error: message` with a position inside
/// `source`. Returns a description of what is wrong with the line otherwise.
pub fn check_line_shape(file_name: &str, source: &[u8], line: &str) -> Result<(), String> {
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

/// Checks that every line of `rendered`, the diagnostics of `source`, has their shape
/// ([`check_line_shape`]); what is wrong goes to `failures`.
pub fn check_lines(file_name: &str, source: &[u8], rendered: &str, failures: &mut Vec<String>) {
    for line in rendered.lines() {
        if let Err(why) = check_line_shape(file_name, source, line) {
            failures.push(format!(
                "{file_name}: bad diagnostic line ({why}): {line:?}"
            ));
        }
    }
}

/// How the snapshot of corpus file `path` (holding `source`) is taken: with the file as its
/// input, its `<!-- what is wrong -->` comment as its description, and no expression.
pub fn snapshot_settings(path: &Path, source: &[u8]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_input_file(path);
    if let Some(description) = what_is_wrong(source) {
        settings.set_description(description);
    }
    settings.set_omit_expression(true);
    settings
}

/// Runs `check` on every file, collecting contract failures it pushes and panics (from the
/// library, or from insta on a snapshot mismatch), so that one run shows every broken file.
/// Returns the report: empty when all is well.
pub fn check_all(files: &[PathBuf], check: impl Fn(&Path, &mut Vec<String>)) -> String {
    let mut failures = Vec::new();
    let mut panicked = Vec::new();
    for path in files {
        let result = catch_unwind(AssertUnwindSafe(|| check(path, &mut failures)));
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
    report
}
