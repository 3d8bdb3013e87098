//! Checks a class document's names and cross-references: every class named once, with a good
//! name; every class a `<conflicts>` names declared, and named once there; `maxWait` and the
//! number of classes within the limits of `limits.rs`.
//!
//! Each problem is reported at the place a person would edit (falling back to its class, and to
//! no position for models built in code), with what to do about it.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::limits::{MAX_CLASSES, MAX_WAIT_SECS};
use crate::model::{ClassDocument, class_name_problem};
use crate::read::suggest;
use crate::source_map::{Node, SourceMap};

/// Every problem of `doc`'s names and references, positioned with `map` (an empty map gives
/// positionless diagnostics, for models built in code).
pub fn validate_classes(doc: &ClassDocument, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    if doc.classes.len() > MAX_CLASSES {
        diags.push(Diagnostic::new(
            map.pos_or(Node::Class(MAX_CLASSES), Node::Root),
            format!(
                "the document declares {} classes, more than the {MAX_CLASSES} allowed \
                 (MAX_CLASSES); merge classes that are one kind of work",
                doc.classes.len()
            ),
        ));
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, class) in doc.classes.iter().enumerate() {
        let at = map.pos_or(Node::ClassId(i), Node::Class(i));
        if let Some(problem) = class_name_problem(class.id.as_str()) {
            diags.push(Diagnostic::new(at, problem));
            continue;
        }
        if let Some(&j) = first.get(class.id.as_str()) {
            let there = map.pos_or(Node::ClassId(j), Node::Class(j));
            diags.push(Diagnostic::new(
                at,
                format!(
                    "class {} is declared twice (the first at {there}); keep one, with the \
                     conflicts of both",
                    class.id
                ),
            ));
        } else {
            first.insert(class.id.as_str(), i);
        }
    }
    let declared: Vec<&str> = first.keys().copied().collect();
    for (i, class) in doc.classes.iter().enumerate() {
        references(&mut diags, map, (i, class), &declared);
        if class.max_wait_secs > MAX_WAIT_SECS {
            diags.push(Diagnostic::new(
                map.pos_or(Node::ClassField(i, "maxWait"), Node::Class(i)),
                format!(
                    "<maxWait> of {} is {} seconds, more than the {MAX_WAIT_SECS} allowed \
                     (MAX_WAIT_SECS); give the seconds a request may wait, e.g. 60",
                    owner(class),
                    class.max_wait_secs
                ),
            ));
        }
    }
    diags
}

/// The problems of the `<conflicts>` of class `i`: names undeclared, or named twice.
fn references(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    (i, class): (usize, &crate::model::TaskClass),
    declared: &[&str],
) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (k, name) in class.conflicts.iter().enumerate() {
        let at = map.pos_or(Node::ClassConflict(i, k), Node::Class(i));
        if let Some(&j) = seen.get(name.as_str()) {
            let there = map.pos_or(Node::ClassConflict(i, j), Node::Class(i));
            diags.push(Diagnostic::new(
                at,
                format!(
                    "<conflicts> of {} names {name} twice (the first at {there}); keep one",
                    owner(class)
                ),
            ));
            continue;
        }
        seen.insert(name.as_str(), k);
        if !declared.contains(&name.as_str()) {
            let hint = match suggest(name.as_str(), declared) {
                Some(s) => format!("did you mean {s}?"),
                None => format!("declare it with <class id=\"{name}\"/>, or leave it out"),
            };
            diags.push(Diagnostic::new(
                at,
                format!(
                    "<conflicts> of {} names {name}, which is not a class of this document; \
                     {hint}",
                    owner(class)
                ),
            ));
        }
    }
}

/// How messages name a class: `class press`, or `this class` when it has no name.
fn owner(class: &crate::model::TaskClass) -> String {
    if class.id.as_str().is_empty() {
        "this class".to_owned()
    } else {
        format!("class {}", class.id)
    }
}
