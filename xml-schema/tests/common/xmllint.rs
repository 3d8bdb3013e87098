//! Running `xmllint`, the XML Schema validator of libxml2, on a document (`xsd.rs`, `org.rs`).

use std::io::ErrorKind;
use std::path::Path;
use std::process::Command;

/// Exit code of `xmllint` when a well-formed document does not validate against the schema
/// (as opposed to 1: not well-formed, or 4: the schema itself does not compile).
pub const XMLLINT_EXIT_INVALID: i32 = 3;

/// Marker that an invalid test document uses to say which error it must produce.
pub const EXPECT_MARKER: &str = "expect-error:";

/// Outcome of one `xmllint --noout --schema` run.
pub struct Verdict {
    /// Exit code; `None` when xmllint was killed by a signal.
    pub code: Option<i32>,
    /// What xmllint printed (its verdict and errors go to stderr).
    pub stderr: String,
}

/// Runs `xmllint --noout --schema <schema> <document>`.
pub fn xmllint(schema: &Path, document: &Path) -> Verdict {
    let output = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(schema)
        .arg(document)
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) if error.kind() == ErrorKind::NotFound => panic!(
            "`xmllint` is not on PATH, so the XSD files cannot be checked. Install it with \
             `apt-get install libxml2-utils` (Debian/Ubuntu; CI installs it) and run the tests \
             again."
        ),
        Err(error) => panic!("cannot run xmllint: {error}"),
    };
    Verdict {
        code: output.status.code(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The error text of the `<!-- expect-error: TEXT -->` comment, if there is one and it names
/// something.
pub fn expected_error(text: &str) -> Option<&str> {
    let start = text.find(EXPECT_MARKER)? + EXPECT_MARKER.len();
    let rest = &text[start..];
    let end = rest.find("-->")?;
    Some(rest[..end].trim()).filter(|expected| !expected.is_empty())
}

/// Panics with every problem at once, so one run shows all broken documents.
pub fn assert_no_problems(problems: &[String]) {
    assert!(
        problems.is_empty(),
        "{} problem(s):\n\n{}",
        problems.len(),
        problems.join("\n")
    );
}
