//! Checks what an ordering document's names say: each definition name is one a definition can
//! be deployed under, the two of an ordering differ, two definitions are ordered once, each
//! ordering pairs at least one task and no pair twice, within the limits of `limits.rs`.
//! Whether the definitions and tasks exist is only known against the deployed definitions
//! (`resolve.rs`).
//!
//! Each problem is reported at the attribute a person would edit (falling back to its element,
//! and to no position for models built in code), with what to do about it.

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{MAX_ORDER_PAIRS, MAX_ORDERINGS};
use crate::model::{Ordering, Orderings, Side, TaskRef, definition_name_problem};
use crate::source_map::{Node, SourceMap};

/// Every problem of `orderings`, positioned with `map` (an empty map gives positionless
/// diagnostics, for models built in code).
pub fn validate_orderings(orderings: &Orderings, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let list = &orderings.orderings;
    if list.len() > MAX_ORDERINGS {
        diags.push(Diagnostic::new(
            map.pos(Node::Ordering(MAX_ORDERINGS)),
            format!(
                "the document holds {} orderings, more than the {MAX_ORDERINGS} allowed \
                 (MAX_ORDERINGS); the controller looks through them at every ordered task, so \
                 keep to the orderings that matter",
                list.len()
            ),
        ));
    }
    // Each unordered pair of definitions, at its first ordering.
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, ordering) in list.iter().enumerate() {
        let names_ok = check_names(&mut diags, map, i, ordering);
        if names_ok {
            let (a, b) = (ordering.first.as_str(), ordering.second.as_str());
            let key = if a <= b { (a, b) } else { (b, a) };
            match seen.get(&key) {
                Some(&f) => diags.push(Diagnostic::new(
                    map.pos(Node::Ordering(i)),
                    format!(
                        "{a} and {b} are already ordered{}; write all their pairs in one \
                         ordering",
                        at(map.pos(Node::Ordering(f)))
                    ),
                )),
                None => {
                    seen.insert(key, i);
                }
            }
        }
        check_pairs(&mut diags, map, (i, names_ok), ordering);
    }
    diags
}

/// The two definition names of ordering `i`: each a definition name, and not the same.
/// Returns whether both are good.
fn check_names(diags: &mut Vec<Diagnostic>, map: &SourceMap, i: usize, o: &Ordering) -> bool {
    let mut good = true;
    for side in [Side::First, Side::Second] {
        let name = o.definition(side).as_str();
        if let Some(problem) = definition_name_problem(name) {
            let pos = map.pos_or(Node::OrderingAttr(i, side.word()), Node::Ordering(i));
            diags.push(Diagnostic::new(
                pos,
                format!("the {} definition of this ordering: {problem}", side.word()),
            ));
            good = false;
        }
    }
    if good && o.first == o.second {
        diags.push(Diagnostic::new(
            map.pos_or(Node::OrderingAttr(i, "second"), Node::Ordering(i)),
            format!(
                "this ordering orders {} against itself; an ordering is between the instances \
                 of two definitions (to run a task of one definition's instances one at a \
                 time, give it a task class that conflicts with itself)",
                o.first
            ),
        ));
        good = false;
    }
    good
}

/// The pairs of ordering `i`: at least one (said only when its names are good: an ordering
/// that names no definition is first of all that), at most [`MAX_ORDER_PAIRS`], each task
/// named, no pair twice.
fn check_pairs(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    (i, names_ok): (usize, bool),
    o: &Ordering,
) {
    let whose = format!("the ordering of {} and {}", o.first, o.second);
    // A pair written but not readable was reported where it is written.
    let none_written = !map.pos(Node::Order(i, 0)).is_known();
    if o.pairs.is_empty() && none_written && names_ok {
        diags.push(Diagnostic::new(
            map.pos(Node::Ordering(i)),
            format!(
                "{whose} pairs no tasks; add the pairs whose order it keeps, e.g. <order \
                 first=\"Visit\" second=\"Invoice\"/> (PDL: RELATIVE_ORDER {{ Visit : Invoice; }})"
            ),
        ));
    }
    if o.pairs.len() > MAX_ORDER_PAIRS {
        diags.push(Diagnostic::new(
            map.pos_or(Node::Order(i, MAX_ORDER_PAIRS), Node::Ordering(i)),
            format!(
                "{whose} holds {} pairs, more than the {MAX_ORDER_PAIRS} allowed \
                 (MAX_ORDER_PAIRS)",
                o.pairs.len()
            ),
        ));
    }
    let mut first_at: HashMap<(&TaskRef, &TaskRef), usize> = HashMap::new();
    for (j, pair) in o.pairs.iter().enumerate() {
        let mut named = true;
        for side in [Side::First, Side::Second] {
            let problem = match pair.task(side) {
                TaskRef::Name(name) if name.trim().is_empty() => {
                    "its name is empty; write the name of the activity, or its id"
                }
                TaskRef::Name(name) if name.trim() != name => {
                    "its name begins or ends with white space; write the activity's name \
                     without it"
                }
                TaskRef::Id(id) if id.0 == 0 => "its id is 0; activity ids start at 1",
                _ => continue,
            };
            named = false;
            diags.push(Diagnostic::new(
                map.pos_or(Node::OrderTask(i, j, side.word()), Node::Order(i, j)),
                format!(
                    "the {} task of pair {} of {whose}: {problem}",
                    side.word(),
                    j + 1
                ),
            ));
        }
        if !named {
            continue;
        }
        match first_at.get(&(&pair.first, &pair.second)) {
            Some(&f) => diags.push(Diagnostic::new(
                map.pos(Node::Order(i, j)),
                format!(
                    "{} : {} is paired twice in {whose} (first{}); keep one",
                    pair.first,
                    pair.second,
                    at(map.pos(Node::Order(i, f)))
                ),
            )),
            None => {
                first_at.insert((&pair.first, &pair.second), j);
            }
        }
    }
}

/// ` at L:C`, or nothing for a position that is not known.
fn at(pos: Pos) -> String {
    if pos.is_known() {
        format!(" at {pos}")
    } else {
        String::new()
    }
}
