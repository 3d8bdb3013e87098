//! The documents of the people tests: organisation documents, workflows whose activities all
//! run on partner H, and reading `file:line:col: error:` diagnostics back against a document.
// Shared by the `people` and `people_assignment` test binaries: each uses a part.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::Path;

use mobiwf_tests::harness::CmdOutput;

/// A manual activity for role `tech`, offered to all its members (fcfa, policy all).
pub(crate) const TECH: &str = "<kind>manual</kind>\n      <role>tech</role>";

/// An organisation document with roles tech, clerk and administrator, departments ops and
/// field (under ops), team north, and these `<user>` lines.
pub(crate) fn organisation(users: &str) -> String {
    format!(
        r#"<organisation>
  <roles><role id="tech"/><role id="clerk"/><role id="administrator"/></roles>
  <departments><department id="ops"/><department id="field" parent="ops"/></departments>
  <teams><team id="north"/></teams>
  <users>
{users}
  </users>
</organisation>
"#
    )
}

/// A workflow whose activities `(id, extra elements, preconditions)` are all in one partition
/// for partner `H` (activity type 1). An activity without extra elements is automatic and has
/// no command: it succeeds as soon as it starts.
pub(crate) fn workflow(activities: &[(u64, &str, &[u64])]) -> String {
    let mut acts = String::new();
    let mut ids = String::new();
    for (id, extra, pre) in activities {
        let pre: String = pre
            .iter()
            .map(|p| format!("<preconditionId>{p}</preconditionId>"))
            .collect();
        write!(
            acts,
            r#"    <activity id="{id}">
      <nameActivity>A{id}</nameActivity>
      <descriptionActivity>Step {id} of the people tests</descriptionActivity>
      <activityTypeId>1</activityTypeId>
      <status>0</status>
      <timeToWait>0</timeToWait>
      <contingencyActivityId>-1</contingencyActivityId>
      <timeOut>0</timeOut>
      <preconditions>{pre}</preconditions>
      {extra}
    </activity>
"#
        )
        .unwrap();
        write!(ids, "<activityId>{id}</activityId>").unwrap();
    }
    format!(
        r#"<workflow id="12">
  <description>People in the mesh</description>
  <activities>
{acts}  </activities>
  <activityTypes>
    <activityType id="1"><description>Field work</description></activityType>
  </activityTypes>
  <partitions>
    <partition id="1">
      <name>host</name>
      <partnerId>1</partnerId>
      <timeOut>0</timeOut>
      {ids}
    </partition>
  </partitions>
  <partners>
    <partner id="1">
      <name>H</name>
      <description>The host of every activity</description>
      <ip>127.0.0.1</ip>
      <skills><activityTypeId>1</activityTypeId></skills>
    </partner>
  </partners>
</workflow>
"#
    )
}

/// A workflow of one manual activity (id 1) with these extra elements.
pub(crate) fn single(extra: &str) -> String {
    workflow(&[(1, extra, &[])])
}

/// The `FILE:line:col: error: message` lines of `text` about `file`, as (line, col, message).
pub(crate) fn diagnostics(text: &str, file: &Path) -> Vec<(usize, usize, String)> {
    let prefix = format!("{}:", file.display());
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(&prefix)?;
            let mut parts = rest.splitn(3, ':');
            let line = parts.next()?.trim().parse().ok()?;
            let col = parts.next()?.trim().parse().ok()?;
            let message = parts.next()?.trim().strip_prefix("error:")?.trim();
            Some((line, col, message.to_owned()))
        })
        .collect()
}

/// The 1-based numbers of the lines of `doc` that contain `needle` (at least one).
pub(crate) fn lines_with(doc: &str, needle: &str) -> Vec<usize> {
    let found: Vec<usize> = doc
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert!(!found.is_empty(), "the test document has no {needle:?}");
    found
}

/// The lines from `<activity id="ID">` to its `</activity>`.
pub(crate) fn activity_lines(doc: &str, id: u64) -> Vec<usize> {
    let start = lines_with(doc, &format!("<activity id=\"{id}\">"))[0];
    let end = doc
        .lines()
        .enumerate()
        .skip(start)
        .find(|(_, l)| l.contains("</activity>"))
        .map(|(i, _)| i + 1)
        .expect("every activity of the test document ends");
    (start..=end).collect()
}

/// Panics unless some diagnostic is on one of `lines` with `word` in its message.
pub(crate) fn expect_problem(
    found: &[(usize, usize, String)],
    lines: &[usize],
    word: &str,
    what: &str,
    output: &CmdOutput,
) {
    let word_lower = word.to_lowercase();
    assert!(
        found
            .iter()
            .any(|(l, _, m)| lines.contains(l) && m.to_lowercase().contains(&word_lower)),
        "{what}: expected a `file:line:col: error:` line on line {lines:?} mentioning {word:?}; \
         found {found:#?}\n--- stdout\n{}--- stderr\n{}",
        output.stdout,
        output.stderr
    );
}
