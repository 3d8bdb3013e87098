//! A small element tree with source positions, built from quick-xml events.
//!
//! Reading a document is two steps: text → [`Element`] tree (this module: well-formedness,
//! hostile-input refusal, limits), then tree → typed model (`read`), which can report every
//! problem at once because the whole tree is in hand. Entity declarations cannot be used:
//! a DOCTYPE is refused, and only the five predefined entities and character references are
//! resolved.

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{MAX_ELEMENTS, MAX_TEXT_BYTES};
use crate::text::{LineIndex, unwritable, unwritable_name};

mod language;

pub(crate) use language::{BPMN, CLASSES, Language, Limit, ORDERINGS, ORGANISATION, WORKFLOW};

/// An element with its attributes, child elements and text, and where it starts.
#[derive(Debug, Clone)]
pub(crate) struct Element {
    pub name: String,
    /// Position of the `<` that opens the element.
    pub pos: Pos,
    pub attrs: Vec<Attribute>,
    pub children: Vec<Element>,
    /// The concatenated character data directly inside this element.
    pub text: String,
    /// Position of the first non-whitespace character data, if any.
    pub text_pos: Option<Pos>,
}

/// An attribute, unescaped.
#[derive(Debug, Clone)]
pub(crate) struct Attribute {
    pub name: String,
    pub value: String,
    /// Position of the attribute's name.
    pub pos: Pos,
}

impl Element {
    /// Children named `name` (or any of its aliases).
    pub fn children_named<'a>(&'a self, names: &'a [&'a str]) -> impl Iterator<Item = &'a Element> {
        self.children
            .iter()
            .filter(move |c| names.contains(&c.name.as_str()))
    }

    /// The first child named `name` (or any of its aliases).
    pub fn child(&self, names: &[&str]) -> Option<&Element> {
        self.children
            .iter()
            .find(|c| names.contains(&c.name.as_str()))
    }

    /// Where the element's value is: its first non-blank text, or the element itself when it
    /// has none. Value problems (a bad number) point here.
    pub fn value_pos(&self) -> Pos {
        self.text_pos.unwrap_or(self.pos)
    }

    /// The value of the first attribute named `name` (or any of its aliases).
    pub fn attr(&self, names: &[&str]) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| names.contains(&a.name.as_str()))
            .map(|a| a.value.as_str())
    }
}

/// Parses `text`, a document of `language`, into its root element, or the first
/// well-formedness problem.
pub(crate) fn parse(text: &str, language: Language) -> Result<Element, Diagnostic> {
    let lines = LineIndex::new(text);
    let at = |offset: u64| lines.pos(usize::try_from(offset).unwrap_or(usize::MAX));
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    let mut elements = 0usize;

    loop {
        let offset = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| ill_formed(&e, at(reader.error_position()), &stack))?;
        match event {
            Event::Start(start) | Event::Empty(start) if stack.len() >= language.depth.max => {
                return Err(too_deep(
                    &start,
                    stack.len() + 1,
                    at(offset),
                    language.depth,
                ));
            }
            Event::Start(start) => {
                let opened = Opened {
                    offset,
                    root_done: root.is_some(),
                    language,
                };
                stack.push(open(&start, opened, &at, &mut elements)?);
            }
            Event::Empty(start) => {
                let opened = Opened {
                    offset,
                    root_done: root.is_some(),
                    language,
                };
                let element = open(&start, opened, &at, &mut elements)?;
                close(element, &mut stack, &mut root);
            }
            Event::End(_) => {
                // quick-xml has checked that the end tag matches the open one.
                if let Some(element) = stack.pop() {
                    close(element, &mut stack, &mut root);
                }
            }
            Event::Text(t) => add_text(&mut stack, &t.xml10_content(), at(offset), language)?,
            Event::CData(c) => add_text(&mut stack, &c.xml10_content(), at(offset), language)?,
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r, at(offset))?;
                add_text(&mut stack, &resolved, at(offset), language)?;
            }
            Event::DocType(_) => return Err(doctype_refused(at(offset), language)),
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::Eof => return finish(&stack, root, at(offset), language),
        }
    }
}

/// Refuses `start` at nesting `depth` over the language's `limit`: deep nesting is a hostile
/// input.
fn too_deep(start: &BytesStart<'_>, depth: usize, pos: Pos, limit: Limit) -> Diagnostic {
    let name = start.name().as_ref().to_string();
    let Limit {
        max,
        name: what,
        hint,
    } = limit;
    Diagnostic::new(
        pos,
        format!("<{name}> is nested {depth} levels deep, over the limit of {max} ({what}){hint}"),
    )
}

/// Resolves a reference, refusing bad characters and all but the five predefined entities.
fn resolve_reference(r: &BytesRef<'_>, pos: Pos) -> Result<String, Diagnostic> {
    if r.is_char_ref() {
        match r.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            _ => Err(Diagnostic::new(
                pos,
                format!(
                    "&{}; is not a valid character reference; write a character like &#233; \
                     or &#xE9;",
                    &**r
                ),
            )),
        }
    } else {
        predefined_entity(r).map(str::to_string).ok_or_else(|| {
            Diagnostic::new(
                pos,
                format!(
                    "unknown entity &{};: only &lt; &gt; &amp; &apos; &quot; and character \
                     references such as &#233; may be used (write &amp; for a literal &)",
                    &**r
                ),
            )
        })
    }
}

/// Refuses a DOCTYPE: documents are read without DTDs, so no entities or external references.
fn doctype_refused(pos: Pos, language: Language) -> Diagnostic {
    Diagnostic::new(
        pos,
        format!(
            "<!DOCTYPE> is not allowed: {} are read without DTDs, so entity declarations and \
             external references are refused; remove the DOCTYPE declaration",
            language.documents
        ),
    )
}

/// Ends the document at `pos`: the root, unless an element is still open (cut off) or none.
fn finish(
    stack: &[Element],
    root: Option<Element>,
    pos: Pos,
    language: Language,
) -> Result<Element, Diagnostic> {
    if let Some(open) = stack.last() {
        let enclosing: Vec<String> = stack
            .iter()
            .rev()
            .skip(1)
            .map(|e| format!("<{}>", e.name))
            .collect();
        let inside = if enclosing.is_empty() {
            String::new()
        } else {
            format!(", inside {}", enclosing.join(" inside "))
        };
        return Err(Diagnostic::new(
            pos,
            format!(
                "the document ends inside <{}> (opened at {}){inside}: the file looks cut off; \
                 check that it was saved or copied completely",
                open.name, open.pos
            ),
        ));
    }
    root.ok_or_else(|| {
        Diagnostic::new(
            Pos::START,
            format!("the document is empty: expected {}", language.root),
        )
    })
}

/// A well-formedness error in words that say what to do, using the open elements for context.
fn ill_formed(error: &quick_xml::Error, pos: Pos, stack: &[Element]) -> Diagnostic {
    use quick_xml::errors::{Error, IllFormedError};
    let message = match error {
        Error::IllFormed(IllFormedError::MismatchedEndTag { expected, found }) => {
            let opened = stack
                .last()
                .map(|e| format!(" (opened at {})", e.pos))
                .unwrap_or_default();
            if stack.iter().rev().skip(1).any(|e| e.name == *found) {
                format!(
                    "<{expected}>{opened} is not closed before </{found}>; add </{expected}> \
                     before this line"
                )
            } else {
                format!(
                    "</{found}> does not close <{expected}>{opened}; did you mean \
                     </{expected}>?"
                )
            }
        }
        Error::IllFormed(IllFormedError::UnmatchedEndTag(found)) => {
            format!("</{found}> closes an element that was never opened; remove it")
        }
        other => format!("the document is not well-formed XML: {other}"),
    };
    Diagnostic::new(pos, message)
}

/// Where and how an element is opened: its byte offset, whether the root already ended, and
/// the language's attribute limit.
#[derive(Clone, Copy)]
struct Opened {
    offset: u64,
    root_done: bool,
    language: Language,
}

/// Opens the element `start` (`at` turns a byte offset into a position), counting it in
/// `elements`.
fn open(
    start: &BytesStart<'_>,
    opened: Opened,
    at: &impl Fn(u64) -> Pos,
    elements: &mut usize,
) -> Result<Element, Diagnostic> {
    let Opened {
        offset,
        root_done,
        language,
    } = opened;
    let pos = at(offset);
    let name = start.name().as_ref().to_string();
    if root_done {
        return Err(Diagnostic::new(
            pos,
            format!(
                "<{name}> comes after the root element has ended; a document has exactly one root element"
            ),
        ));
    }
    *elements += 1;
    if *elements > MAX_ELEMENTS {
        return Err(Diagnostic::new(
            pos,
            format!("the document has more than {MAX_ELEMENTS} elements (MAX_ELEMENTS)"),
        ));
    }
    let attrs = attributes(start, &name, (offset, language), at)?;
    Ok(Element {
        name,
        pos,
        attrs,
        children: Vec::new(),
        text: String::new(),
        text_pos: None,
    })
}

/// The attributes of `start`, the tag of `<name>` at byte `offset`, each with its position; at
/// most `limit` of them.
fn attributes(
    start: &BytesStart<'_>,
    name: &str,
    (offset, language): (u64, Language),
    at: &impl Fn(u64) -> Pos,
) -> Result<Vec<Attribute>, Diagnostic> {
    let limit = language.attributes;
    let pos = at(offset);
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| {
            Diagnostic::new(pos, format!("<{name}> has a malformed attribute: {e}"))
        })?;
        if attrs.len() == limit.max {
            return Err(Diagnostic::new(
                pos,
                format!(
                    "<{name}> has more than {} attributes ({})",
                    limit.max, limit.name
                ),
            ));
        }
        let key = attr.key.as_ref().to_string();
        let value = attr
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| {
                Diagnostic::new(
                    pos,
                    format!("attribute {key} of <{name}> has a bad escape: {e}; write & as &amp;"),
                )
            })?;
        // The key is a slice of the tag's text, which starts one byte after the `<`.
        let inside = attr
            .key
            .as_ref()
            .as_ptr()
            .addr()
            .saturating_sub(start.as_ptr().addr());
        let inside = u64::try_from(inside).unwrap_or(0);
        let attr_pos = at(offset + 1 + inside);
        if let Some(problem) = language
            .text_like_attributes
            .then(|| value_problem(&value))
            .flatten()
        {
            return Err(Diagnostic::new(
                attr_pos,
                format!("attribute {key} of <{name}> holds {problem}"),
            ));
        }
        attrs.push(Attribute {
            name: key,
            value: value.into_owned(),
            pos: attr_pos,
        });
    }
    Ok(attrs)
}

/// What is wrong with an attribute's `value` that no element text may hold either: a
/// character the MobiWfMS XML cannot keep, or more than [`MAX_TEXT_BYTES`]. A model value read
/// from an attribute is written back as a text or an attribute, and must read again.
fn value_problem(value: &str) -> Option<String> {
    if let Some(bad) = value.chars().find(|c| unwritable(*c)) {
        return Some(format!(
            "{}, which no XML document read here may hold; remove it",
            unwritable_name(bad)
        ));
    }
    (value.len() > MAX_TEXT_BYTES).then(|| {
        format!(
            "{} bytes, over the limit of {MAX_TEXT_BYTES} bytes (MAX_TEXT_BYTES); shorten it",
            value.len()
        )
    })
}

fn close(element: Element, stack: &mut [Element], root: &mut Option<Element>) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(element),
        None => *root = Some(element),
    }
}

fn add_text(
    stack: &mut [Element],
    text: &str,
    pos: Pos,
    language: Language,
) -> Result<(), Diagnostic> {
    let Some(top) = stack.last_mut() else {
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let start: String = text.chars().take(12).collect();
        return Err(Diagnostic::new(
            pos,
            format!(
                "found \"{start}\" outside the root element; {} is one {} element and \
                 nothing else",
                language.document, language.opening
            ),
        ));
    };
    if let Some(bad) = text.chars().find(|c| unwritable(*c)) {
        return Err(Diagnostic::new(
            pos,
            format!(
                "{} is not allowed in XML text; remove it",
                unwritable_name(bad)
            ),
        ));
    }
    if top.text_pos.is_none() && !text.trim().is_empty() {
        top.text_pos = Some(first_non_blank(text, pos));
    }
    if top.text.len() + text.len() > MAX_TEXT_BYTES {
        return Err(Diagnostic::new(
            pos,
            format!(
                "the text of <{}> is longer than {MAX_TEXT_BYTES} bytes (MAX_TEXT_BYTES)",
                top.name
            ),
        ));
    }
    top.text.push_str(text);
    Ok(())
}

/// Where the first non-blank character of `text`, found at `pos`, is: a value's position
/// points at it, not at the whitespace before it.
fn first_non_blank(text: &str, pos: Pos) -> Pos {
    let lead = text.len() - text.trim_start().len();
    if lead == 0 {
        return pos;
    }
    let inner = LineIndex::new(text).pos(lead);
    if inner.line == 1 {
        Pos {
            line: pos.line,
            column: pos.column + inner.column - 1,
        }
    } else {
        Pos {
            line: pos.line + inner.line - 1,
            column: inner.column,
        }
    }
}

fn predefined_entity(name: &str) -> Option<&'static str> {
    Some(match name {
        "lt" => "<",
        "gt" => ">",
        "amp" => "&",
        "apos" => "'",
        "quot" => "\"",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_DEPTH;

    #[test]
    fn builds_tree_with_positions() {
        let root = parse(
            "<workflow id=\"1\">\n  <a>x &amp; y</a>\n  <b/>\n</workflow>",
            WORKFLOW,
        )
        .unwrap();
        assert_eq!(root.name, "workflow");
        assert_eq!(root.attr(&["id"]), Some("1"));
        assert_eq!(root.children.len(), 2);
        assert_eq!(root.children[0].text, "x & y");
        assert_eq!(root.children[0].pos, Pos { line: 2, column: 3 });
        assert_eq!(root.children[0].text_pos, Some(Pos { line: 2, column: 6 }));
        assert_eq!(root.children[1].pos, Pos { line: 3, column: 3 });
    }

    #[test]
    fn attributes_have_positions() {
        let root = parse("<w>\n  <a x=\"1\"  why='2'/>\n</w>", ORGANISATION).unwrap();
        let a = &root.children[0];
        assert_eq!(a.attrs[0].pos, Pos { line: 2, column: 6 });
        assert_eq!(
            a.attrs[1].pos,
            Pos {
                line: 2,
                column: 13
            }
        );
    }

    #[test]
    fn messages_name_the_language() {
        let err = parse("", ORGANISATION).unwrap_err();
        assert!(err.message.contains("<organisation>"), "{}", err.message);
        let err = parse("<w/> text", ORGANISATION).unwrap_err();
        assert!(
            err.message.contains("an organisation document"),
            "{}",
            err.message
        );
    }

    #[test]
    fn doctype_is_refused() {
        let err = parse("<!DOCTYPE w [<!ENTITY a \"aaaa\">]><w>&a;</w>", WORKFLOW).unwrap_err();
        assert!(err.message.contains("DOCTYPE"), "{}", err.message);
    }

    #[test]
    fn attribute_values_hold_no_control_character_and_are_bounded() {
        for doc in [
            "<w a=\"x&#1;y\"/>",
            "<w a=\"&#x7F;\"/>",
            "<w a=\"&#xFFFE;\"/>",
        ] {
            let err = parse(doc, BPMN).unwrap_err();
            assert!(
                err.message.contains("attribute a of <w>"),
                "{}",
                err.message
            );
            assert_eq!(err.pos, Pos { line: 1, column: 4 });
        }
        let long = format!("<w a=\"{}\"/>", "x".repeat(MAX_TEXT_BYTES + 1));
        let err = parse(&long, BPMN).unwrap_err();
        assert!(err.message.contains("MAX_TEXT_BYTES"), "{}", err.message);
        assert!(parse("<w a=\"x&#9;&#10;&#13;y\"/>", BPMN).is_ok());
        // The MobiWfMS and organisation documents are stored as read: their attributes are
        // read as they always were, so a document stored before still loads.
        for language in [WORKFLOW, ORGANISATION] {
            assert!(parse("<w a=\"x&#1;y\"/>", language).is_ok());
            assert!(parse(&long, language).is_ok());
        }
    }

    #[test]
    fn unknown_entity_is_refused() {
        let err = parse("<w>&nope;</w>", WORKFLOW).unwrap_err();
        assert!(err.message.contains("&nope;"), "{}", err.message);
    }

    #[test]
    fn depth_is_limited() {
        let deep = "<a>".repeat(MAX_DEPTH + 1) + &"</a>".repeat(MAX_DEPTH + 1);
        assert!(
            parse(&deep, WORKFLOW)
                .unwrap_err()
                .message
                .contains("MAX_DEPTH")
        );
    }

    #[test]
    fn unclosed_element_is_reported_with_where_it_opened() {
        let err = parse("<w>\n <a>", WORKFLOW).unwrap_err();
        assert!(err.message.contains("2:2"), "{}", err.message);
    }

    #[test]
    fn mismatched_end_tag_is_reported() {
        let err = parse("<w><a></b></w>", WORKFLOW).unwrap_err();
        assert_eq!(
            err.message,
            "</b> does not close <a> (opened at 1:4); did you mean </a>?"
        );
        let err = parse("<w>\n<a><b></a></w>", WORKFLOW).unwrap_err();
        assert!(
            err.message
                .starts_with("<b> (opened at 2:4) is not closed before </a>"),
            "{}",
            err.message
        );
    }
}
