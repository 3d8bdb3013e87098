//! Tree → typed model, collecting every problem instead of stopping at the first.
//!
//! Structural problems (unknown or repeated elements, missing required ones, bad numbers) are
//! reported here; cross-references (unknown ids, cycles, skills) by `validate`.
//!
//! Here: the reading context ([`Ctx`]) with the shape checks and the value readers every
//! element uses; one module per part of a document (`activity`: the part of an activity
//! both languages share).

mod activity;
mod applications;
mod data;
mod definition;
mod loops;
mod partition;
mod people;
mod retries;
mod routing;
mod rules;

pub(crate) use activity::read_common_activity;
pub(crate) use definition::read_definition;
pub(crate) use partition::read_partition;
pub(crate) use routing::route_name;
pub(crate) use rules::words;

use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{ActivityKind, Contingency, Status};
use crate::source_map::{Node, SourceMap};
use crate::tree::Element;

/// A child element a parent may have: its name and accepted aliases, and whether it repeats.
#[derive(Clone, Copy)]
pub(crate) struct Child {
    names: &'static [&'static str],
    repeats: bool,
}

impl Child {
    /// The child's name and its aliases.
    pub(crate) fn names(&self) -> &'static [&'static str] {
        self.names
    }
}

/// A child that appears at most once.
pub(crate) const fn one(names: &'static [&'static str]) -> Child {
    Child {
        names,
        repeats: false,
    }
}

/// A child that may appear any number of times.
pub(crate) const fn many(names: &'static [&'static str]) -> Child {
    Child {
        names,
        repeats: true,
    }
}

/// The children of `own` then those of `shared`, as one list of `N`: a language's own children
/// of an element before the part both languages give it. `N` is checked when the constant is
/// built.
pub(crate) const fn joined<const N: usize>(own: &[Child], shared: &[Child]) -> [Child; N] {
    assert!(
        own.len() + shared.len() == N,
        "N is the length of both lists"
    );
    let mut out = [one(&[]); N];
    let mut i = 0;
    while i < N {
        out[i] = if i < own.len() {
            own[i]
        } else {
            shared[i - own.len()]
        };
        i += 1;
    }
    out
}

/// Accumulates diagnostics and positions while reading one document.
#[derive(Default)]
pub(crate) struct Ctx {
    pub diags: Vec<Diagnostic>,
    pub map: SourceMap,
}

impl Ctx {
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.diags.push(Diagnostic::new(pos, message));
    }

    /// Checks that `el` holds only the children in `spec` (each non-repeating one at most once),
    /// no stray text, and only an `id` attribute when `id_attr` says so.
    pub fn check_shape(&mut self, el: &Element, what: &str, spec: &[Child], id_attr: bool) {
        for attr in &el.attrs {
            let allowed = (id_attr && (attr.name == "id" || attr.name == "Id"))
                || attr.name == "xmlns"
                || attr.name.starts_with("xmlns:")
                || attr.name.starts_with("xsi:");
            if !allowed {
                let hint = if id_attr {
                    "its only attribute is id"
                } else {
                    "it takes no attributes"
                };
                self.error(
                    el.pos,
                    format!("{what} has an unknown attribute {}; {hint}", attr.name),
                );
            }
        }
        self.check_content(el, what, spec);
    }

    /// Checks that `el` holds only the children in `spec` (each non-repeating one at most
    /// once) and no stray text; attributes are the caller's.
    pub fn check_content(&mut self, el: &Element, what: &str, spec: &[Child]) {
        if let (Some(pos), false) = (el.text_pos, el.text.trim().is_empty()) {
            self.error(
                pos,
                format!(
                    "{what} contains text \"{}\"; only child elements belong there",
                    abbreviate(el.text.trim())
                ),
            );
        }
        let mut seen: Vec<(&str, Pos)> = Vec::new();
        for child in &el.children {
            let Some(rule) = spec.iter().find(|c| c.names.contains(&child.name.as_str())) else {
                let names: Vec<&str> = spec.iter().flat_map(|c| c.names.iter().copied()).collect();
                let message = match suggest(&child.name, &names) {
                    _ if names.is_empty() => format!(
                        "<{}> is not an element of {what}; it takes no child elements",
                        child.name
                    ),
                    Some(s) => format!(
                        "<{}> is not an element of {what}; did you mean <{s}>?",
                        child.name
                    ),
                    None => format!(
                        "<{}> is not an element of {what}; expected one of: {}",
                        child.name,
                        names
                            .iter()
                            .map(|n| format!("<{n}>"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                self.error(child.pos, message);
                continue;
            };
            if rule.repeats {
                continue;
            }
            let key = rule.names[0];
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == key) {
                let first = *first;
                self.error(
                    child.pos,
                    format!(
                        "{what} has a second <{}> (the first is at {first}); keep one",
                        child.name
                    ),
                );
            } else {
                seen.push((key, child.pos));
            }
        }
    }

    /// The text of `el`'s child element `name`, or empty when there is none.
    pub fn text_of(&mut self, el: &Element, name: &str) -> String {
        el.child(&[name])
            .map(|e| self.leaf(e).to_string())
            .unwrap_or_default()
    }

    /// The text of a leaf element; reports child elements inside it.
    pub fn leaf<'a>(&mut self, el: &'a Element) -> &'a str {
        if let Some(child) = el.children.first() {
            self.error(
                child.pos,
                format!("<{}> must contain only text, not <{}>", el.name, child.name),
            );
        }
        &el.text
    }

    /// The whole number inside a leaf element; `expected` says what a good value looks like.
    pub fn integer(&mut self, el: &Element, owner: &str, expected: &str) -> Option<i128> {
        let text = self.leaf(el).trim();
        let pos = el.value_pos();
        if text.is_empty() {
            self.error(
                pos,
                format!("<{}> of {owner} is empty; expected {expected}", el.name),
            );
            return None;
        }
        match text.parse::<i128>() {
            Ok(n) => Some(n),
            Err(_) => {
                self.error(
                    pos,
                    format!(
                        "<{}> of {owner} is \"{}\", not a whole number; expected {expected}",
                        el.name,
                        abbreviate(text)
                    ),
                );
                None
            }
        }
    }

    /// A number of seconds, 0 or more (0 meaning no limit).
    pub fn secs(&mut self, el: &Element, owner: &str) -> Option<u32> {
        const EXPECTED: &str = "a whole number of seconds, 0 or more (0 means none)";
        let n = self.integer(el, owner, EXPECTED)?;
        let secs = u32::try_from(n).ok();
        if secs.is_none() {
            self.error(
                el.value_pos(),
                format!("<{}> of {owner} is {n}; expected {EXPECTED}", el.name),
            );
        }
        secs
    }

    /// An id written as element text (`preconditionId`, `partnerId`, ...).
    pub fn id_text(&mut self, el: &Element, owner: &str) -> Option<u64> {
        const EXPECTED: &str = "an id (a whole number, 0 or more)";
        let n = self.integer(el, owner, EXPECTED)?;
        let id = u64::try_from(n).ok();
        if id.is_none() {
            self.error(
                el.value_pos(),
                format!("<{}> of {owner} is {n}; expected {EXPECTED}", el.name),
            );
        }
        id
    }

    /// The `id` (or `Id`) attribute of `el`; reports it missing or malformed.
    pub fn id_attr(&mut self, el: &Element, what: &str) -> Option<u64> {
        let Some(raw) = el.attr(&["id", "Id"]) else {
            self.error(
                el.pos,
                format!("<{what}> has no id attribute; add id=\"...\" with a whole number"),
            );
            return None;
        };
        match raw.trim().parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => {
                self.error(
                    el.pos,
                    format!(
                        "<{what}> has id=\"{}\"; an id is a whole number, 0 or more, e.g. id=\"17\"",
                        abbreviate(raw)
                    ),
                );
                None
            }
        }
    }

    pub fn status(&mut self, el: &Element, owner: &str) -> Option<Status> {
        const EXPECTED: &str = "0 (running or pending), 1 (succeeded) or 2 (failed)";
        let n = self.integer(el, owner, EXPECTED)?;
        let status = Status::from_code(n);
        if status.is_none() {
            self.error(
                el.value_pos(),
                format!("<{}> of {owner} is {n}; expected {EXPECTED}", el.name),
            );
        }
        status
    }

    pub fn contingency(&mut self, el: &Element, owner: &str) -> Option<Contingency> {
        const EXPECTED: &str = "-1 (abort and block the successors), 0 (abort and release the \
                                successors) or the id of the activity to run instead";
        let n = self.integer(el, owner, EXPECTED)?;
        let rule = Contingency::from_code(n);
        if rule.is_none() {
            self.error(
                el.value_pos(),
                format!("<{}> of {owner} is {n}; expected {EXPECTED}", el.name),
            );
        }
        rule
    }

    /// A 0/1 flag (`responseImmediate`, `local`).
    pub fn flag(&mut self, el: &Element, owner: &str, meaning: &str) -> Option<bool> {
        let expected = format!("0 or 1 (1 = {meaning})");
        match self.integer(el, owner, &expected)? {
            0 => Some(false),
            1 => Some(true),
            n => {
                self.error(
                    el.value_pos(),
                    format!("<{}> of {owner} is {n}; expected {expected}", el.name),
                );
                None
            }
        }
    }

    pub fn kind(&mut self, el: &Element, owner: &str) -> Option<ActivityKind> {
        let text = self.leaf(el).trim();
        let kind = ActivityKind::parse(text);
        if kind.is_none() {
            let names = ["automatic", "semiAutomatic", "manual", "dummy"];
            let hint = suggest(text, &names)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            self.error(
                el.value_pos(),
                format!(
                    "<kind> of {owner} is \"{}\"; expected automatic, semiAutomatic, manual or \
                     dummy{hint}",
                    abbreviate(text)
                ),
            );
        }
        kind
    }

    /// `true` or `false` inside leaf `el` of `owner`; `expected` says what each means.
    pub fn true_false(&mut self, el: &Element, owner: &str, expected: &str) -> Option<bool> {
        let text = self.leaf(el).trim();
        let problem = match text {
            "true" => return Some(true),
            "false" => return Some(false),
            "" => "is empty".to_owned(),
            _ => format!("is \"{}\"", abbreviate(text)),
        };
        self.error(
            el.value_pos(),
            format!("<{}> of {owner} {problem}; expected {expected}", el.name),
        );
        None
    }
}

/// The closest known name to a misspelt one, if close enough to be a likely typo.
pub(crate) fn suggest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    crate::work::count(known.len());
    known
        .iter()
        .map(|k| {
            (
                strsim::jaro_winkler(&name.to_lowercase(), &k.to_lowercase()),
                *k,
            )
        })
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// What an element that must be empty holds, when it holds something: where its first child
/// or its text is, and how to name it in a message (`<and>`, `the text "..."`).
pub(crate) fn content_of_empty(el: &Element) -> Option<(crate::Pos, String)> {
    match (el.children.first(), el.text_pos) {
        (Some(child), _) => Some((child.pos, format!("<{}>", child.name))),
        (None, Some(pos)) if !el.text.trim().is_empty() => {
            Some((pos, format!("the text \"{}\"", abbreviate(el.text.trim()))))
        }
        _ => None,
    }
}

/// Text cut to a length that fits in a one-line message.
pub(crate) fn abbreviate(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    if text.chars().count() <= MAX_CHARS {
        text.to_string()
    } else {
        let cut: String = text.chars().take(MAX_CHARS).collect();
        format!("{cut}...")
    }
}

/// Where attribute `name` of `el` is written, or the element when it is not.
pub(crate) fn attr_pos(el: &Element, name: &str) -> Pos {
    el.attrs
        .iter()
        .find(|a| a.name == name)
        .map_or(el.pos, |a| a.pos)
}

/// Reports a root element that is not `workflow`; returns whether it is.
pub(crate) fn check_root(ctx: &mut Ctx, root: &Element) -> bool {
    if root.name == "workflow" {
        ctx.map.set(Node::Root, root.pos);
        return true;
    }
    ctx.error(
        root.pos,
        format!(
            "the root element is <{}>; a MobiWfMS document (definition or partition) starts with <workflow id=\"...\">",
            root.name
        ),
    );
    false
}

/// `what N`, or `this what` when the id could not be read: how messages name an element.
pub(crate) fn owner(what: &str, id: Option<u64>) -> String {
    match id {
        Some(id) => format!("{what} {id}"),
        None => format!("this {what}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(suggest("timeout", &["timeOut", "status"]), Some("timeOut"));
        assert_eq!(suggest("banana", &["timeOut", "status"]), None);
    }
}
