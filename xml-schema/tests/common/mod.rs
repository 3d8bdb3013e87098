//! Helpers shared by the integration tests: fixture paths and XML tree comparison.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod corpus;
pub mod extension;
pub mod xmllint;

use std::path::PathBuf;

use quick_xml::Reader;
use quick_xml::events::Event;

/// The paper's example workflow shipped in this repository.
pub fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/paper")
        .join(name)
}

/// A valid example of `tests/xsd/valid` (also checked against the XSD by `xsd.rs`).
pub fn valid_example(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/xsd/valid")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The published fixtures (`../shared/fixtures/paper/`) next to the repository, if present.
pub fn shared_fixture(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/paper")
        .join(name);
    path.exists().then_some(path)
}

/// A document as a comparable tree: `(name, attributes, text, children)`, ignoring
/// whitespace-only text, comments, the XML declaration and elements named in `skip`.
#[derive(Debug, PartialEq, Eq)]
pub struct Tree {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub text: String,
    pub children: Vec<Tree>,
}

pub fn tree(xml: &str, skip: &[&str]) -> Tree {
    let mut reader = Reader::from_str(xml);
    let mut stack: Vec<Tree> = Vec::new();
    let mut skipping = 0usize;
    loop {
        match reader.read_event().unwrap() {
            Event::Empty(e) if skipping > 0 || skip.contains(&e.name().as_ref()) => {}
            Event::Start(e) if skipping > 0 || skip.contains(&e.name().as_ref()) => skipping += 1,
            Event::End(_) if skipping > 0 => skipping -= 1,
            Event::Start(e) => stack.push(node(&e)),
            Event::Empty(e) => {
                let n = node(&e);
                stack.last_mut().unwrap().children.push(n);
            }
            Event::End(_) => {
                let done = stack.pop().unwrap();
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => return done,
                }
            }
            Event::Text(t) if skipping == 0 => {
                let text = t.xml10_content();
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(text.trim());
                }
            }
            Event::GeneralRef(r) if skipping == 0 => {
                let c = match &*r {
                    "amp" => "&",
                    "lt" => "<",
                    "gt" => ">",
                    "quot" => "\"",
                    "apos" => "'",
                    other => panic!("unexpected entity {other}"),
                };
                stack.last_mut().unwrap().text.push_str(c);
            }
            Event::Eof => panic!("document ended early"),
            _ => {}
        }
    }
}

fn node(e: &quick_xml::events::BytesStart<'_>) -> Tree {
    Tree {
        name: e.name().as_ref().to_string(),
        attrs: e
            .attributes()
            .map(|a| {
                let a = a.unwrap();
                (
                    a.key.as_ref().to_string(),
                    a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .unwrap()
                        .into_owned(),
                )
            })
            .collect(),
        text: String::new(),
        children: Vec::new(),
    }
}

/// Reads a file as text, decoding ISO-8859-1 when its declaration says so.
pub fn read_text(path: &std::path::Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    match std::str::from_utf8(&bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}
