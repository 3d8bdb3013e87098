//! The documentation a newcomer walks holds together: every relative link in the README,
//! ARCHITECTURE.md, BENCHMARKS.md and the pages under `docs/` points at a file the repository
//! has (and, with `#anchor`, at a heading that page has), and every example document the pages
//! tell people to submit exists. Pages move and files are renamed; a dead link is found here,
//! not by the reader.

#![allow(clippy::expect_used)] // a test: a failure is the report

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use mobiwf_tests::repo_root;

/// The markdown pages checked: the top-level ones and every page under `docs/`.
fn pages() -> Vec<PathBuf> {
    let root = repo_root();
    let mut pages: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md"]
        .iter()
        .map(|name| root.join(name))
        .collect();
    let mut docs: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "docs/ holds no page");
    pages.extend(docs);
    pages
}

/// The text outside fenced code blocks (a link in a code sample is not a link).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the markdown links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        targets.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    targets
}

/// The anchors of a page's headings, as GitHub makes them: lower case, punctuation dropped,
/// spaces as hyphens.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| {
            line.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// What is wrong with one link of `page` (None: it leads somewhere).
fn dead(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let dir = page.parent().expect("a page is in a directory");
    let file = if path.is_empty() {
        page.to_path_buf()
    } else {
        dir.join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no such file"));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    if file.is_dir() || file.extension().is_none_or(|ext| ext != "md") {
        return None;
    }
    let text = fs::read_to_string(&file).expect("a linked page is readable");
    (!anchors(&text).contains(anchor)).then(|| format!("{target}: no heading #{anchor}"))
}

#[test]
fn every_relative_link_in_the_docs_leads_to_a_file_and_heading() {
    let root = repo_root();
    let mut broken = Vec::new();
    let mut links = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).expect("a page is readable");
        for target in link_targets(&prose(&text)) {
            links += 1;
            if let Some(why) = dead(&page, &target) {
                let name = page.strip_prefix(&root).unwrap_or(&page).display();
                broken.push(format!("{name}: {why}"));
            }
        }
    }
    assert!(
        links > 20,
        "only {links} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "dead links:\n{}", broken.join("\n"));
}

#[test]
fn every_example_document_the_docs_name_exists() {
    let root = repo_root();
    let mut missing = BTreeSet::new();
    let mut named = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).expect("a page is readable");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("examples/") {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || "/._-".contains(c)))
                .unwrap_or(tail.len());
            let path = tail[..end].trim_end_matches('.');
            if path.ends_with(".xml") {
                named += 1;
                if !root.join(path).exists() {
                    missing.insert(path.to_owned());
                }
            }
            rest = &tail[end..];
        }
    }
    assert!(
        named > 5,
        "only {named} example documents named: is the scan broken?"
    );
    assert!(
        missing.is_empty(),
        "the docs name missing examples: {missing:?}"
    );
}

#[test]
fn the_anchors_are_made_as_github_makes_them() {
    let text = "# Title\n## Roaming: addressed by peer id\n```\n# not a heading\n```\n### Mutation testing (cargo-mutants, not in CI)\n";
    let found = anchors(text);
    assert!(found.contains("roaming-addressed-by-peer-id"), "{found:?}");
    assert!(
        found.contains("mutation-testing-cargo-mutants-not-in-ci"),
        "{found:?}"
    );
    assert!(!found.contains("not-a-heading"), "{found:?}");
    assert_eq!(
        link_targets("see [a](docs/a.md#x) and [b](b.md)"),
        ["docs/a.md#x", "b.md"]
    );
}
