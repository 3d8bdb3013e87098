//! An ordering's task names against the deployed definitions: which activity each names
//! (`task_id`, for one definition, e.g. the version an instance runs), and every problem of a
//! whole document against the definitions deployed now (`resolve_orderings`: an unknown
//! definition, an unknown or ambiguous task name, two pairs that are one), each with what to
//! do.

use std::collections::HashMap;

use crate::diagnostic::{Diagnostic, Diagnostics, Pos};
use crate::model::{ActivityId, DefinitionName, Orderings, Side, TaskRef, WorkflowDefinition};
use crate::read::{abbreviate, suggest};
use crate::source_map::{Node, SourceMap};

/// One ordering with its tasks as activity ids, in the definitions deployed when it was
/// resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedOrdering {
    /// The first definition's name.
    pub first: DefinitionName,
    /// The second definition's name.
    pub second: DefinitionName,
    /// Each pair's `(first task, second task)`, in document order.
    pub pairs: Vec<(ActivityId, ActivityId)>,
}

/// The activity of `def` that `task` names, or why there is none, in words with what to do:
/// a name must be the name of exactly one activity (else write its id), an id that of one.
pub fn task_id(def: &WorkflowDefinition, task: &TaskRef) -> Result<ActivityId, String> {
    match task {
        TaskRef::Id(id) => {
            if def.activity(*id).is_some() {
                Ok(*id)
            } else {
                Err(format!(
                    "the definition has no activity {id}; write the id of one of its \
                     activities, or its name"
                ))
            }
        }
        TaskRef::Name(name) => {
            let named: Vec<ActivityId> = def
                .activities
                .iter()
                .filter(|a| a.name.trim() == name)
                .map(|a| a.id)
                .collect();
            match named.as_slice() {
                [one] => Ok(*one),
                [] => {
                    let names: Vec<&str> = def.activities.iter().map(|a| a.name.trim()).collect();
                    let fix = match suggest(name, &names) {
                        Some(near) => format!("did you mean {near}?"),
                        None => "write the name of one of its activities, or its id".to_owned(),
                    };
                    Err(format!(
                        "the definition has no activity named {}; {fix}",
                        abbreviate(name)
                    ))
                }
                many => {
                    let ids: Vec<String> = many.iter().map(ToString::to_string).collect();
                    Err(format!(
                        "{} activities of the definition are named {} (ids {}); name the one \
                         you mean by its id",
                        many.len(),
                        abbreviate(name),
                        ids.join(", ")
                    ))
                }
            }
        }
    }
}

/// Every ordering of `orderings` with its tasks as activity ids of the definitions
/// `deployed` gives by name, or every problem, positioned with `map` (where `orderings` was
/// read from).
pub fn resolve_orderings<'d>(
    orderings: &Orderings,
    map: &SourceMap,
    deployed: impl Fn(&DefinitionName) -> Option<&'d WorkflowDefinition>,
) -> Result<Vec<ResolvedOrdering>, Diagnostics> {
    let mut diags = Vec::new();
    let mut resolved = Vec::new();
    for (i, o) in orderings.orderings.iter().enumerate() {
        let defs = [Side::First, Side::Second].map(|side| {
            let name = o.definition(side);
            let def = deployed(name);
            if def.is_none() {
                diags.push(Diagnostic::new(
                    map.pos_or(Node::OrderingAttr(i, side.word()), Node::Ordering(i)),
                    format!(
                        "no definition is deployed under the name {name}; deploy it first \
                         (mobiwf-controller deploy FILE --name {name}), or correct the name"
                    ),
                ));
            }
            def
        });
        let mut pairs = Vec::new();
        let mut first_at: HashMap<(ActivityId, ActivityId), usize> = HashMap::new();
        for (j, pair) in o.pairs.iter().enumerate() {
            let ids = [Side::First, Side::Second].map(|side| {
                let def = defs[side_index(side)]?;
                task_id(def, pair.task(side))
                    .map_err(|problem| {
                        diags.push(Diagnostic::new(
                            map.pos_or(Node::OrderTask(i, j, side.word()), Node::Order(i, j)),
                            format!(
                                "the {} task of this pair, in {}: {problem}",
                                side.word(),
                                o.definition(side)
                            ),
                        ));
                    })
                    .ok()
            });
            let [Some(a), Some(b)] = ids else { continue };
            if let Some(&f) = first_at.get(&(a, b)) {
                diags.push(Diagnostic::new(
                    map.pos(Node::Order(i, j)),
                    format!(
                        "this pair is activities {a} : {b}, as pair {} is{}; keep one",
                        f + 1,
                        at(map.pos(Node::Order(i, f)))
                    ),
                ));
                continue;
            }
            first_at.insert((a, b), j);
            pairs.push((a, b));
        }
        resolved.push(ResolvedOrdering {
            first: o.first.clone(),
            second: o.second.clone(),
            pairs,
        });
    }
    if diags.is_empty() {
        Ok(resolved)
    } else {
        Err(Diagnostics(diags))
    }
}

fn side_index(side: Side) -> usize {
    match side {
        Side::First => 0,
        Side::Second => 1,
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
