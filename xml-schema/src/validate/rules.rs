//! Checks dependency rules (`<depends>`), apart from the other checks because a rule is a
//! tree with positions of its own: every `and` and `or` must hold a rule, every term must name
//! another activity (in a definition, one of the workflow), a rule has at most
//! [`MAX_RULE_TERMS`] terms, and, in a definition, preconditions and rules together must not
//! make activities wait for each other in a loop.
//!
//! A state a term names is always a task state in the model; names that are not are refused
//! by the reader.

use std::collections::{HashMap, HashSet};

use super::cycles::{components, path};
use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::MAX_RULE_TERMS;
use crate::model::{ActivityId, Rule, WorkflowDefinition};
use crate::source_map::{Node, SourceMap};

/// The problem of a `<depends>` of `owner` (e.g. `activity 5`) with `n` terms, over
/// [`MAX_RULE_TERMS`]; the reader says the same.
pub(crate) fn too_many_terms(owner: &str, n: usize) -> String {
    format!(
        "<depends> of {owner} has {n} terms, over the limit of {MAX_RULE_TERMS} \
         (MAX_RULE_TERMS); name fewer activities, e.g. let one activity that waits for many of \
         them stand for them"
    )
}

/// Where the rules of activity `i` are in the document.
struct Place<'a> {
    map: &'a SourceMap,
    i: usize,
    /// The activity's id, for messages.
    id: ActivityId,
}

impl Place<'_> {
    /// Where `node` is; the `<depends>`, or else the activity, when it is not known.
    fn at(&self, node: Node) -> Pos {
        let pos = self.map.pos(node);
        if pos.is_known() {
            pos
        } else {
            self.map
                .pos_or(Node::Depends(self.i), Node::Activity(self.i))
        }
    }
}

/// Reports every problem of `rule`, the `<depends>` of activity `id` (the `i`th of its
/// document). `activities` are the activities a term may name (a definition's); `None` lets
/// a term name any activity (a partition document holds only part of the workflow).
pub(super) fn check_depends(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    i: usize,
    id: ActivityId,
    rule: &Rule,
    activities: Option<&HashSet<ActivityId>>,
) {
    let place = Place { map, i, id };
    let mut k = 0;
    check_empty(diags, &place, rule, &mut k);
    let terms = rule.terms();
    for (t, (activity, _)) in terms.iter().enumerate() {
        let pos = place.at(Node::Term(i, t));
        if *activity == id {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "activity {id} has a <depends> term on itself (activity=\"{id}\"): an \
                     activity cannot wait for a state of its own; remove the term or name \
                     another activity"
                ),
            ));
        } else if activities.is_some_and(|known| !known.contains(activity)) {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "activity {id} has a <depends> term on activity {activity}, which is not an \
                     activity of this workflow; fix the id or add activity {activity}"
                ),
            ));
        }
    }
    if terms.len() > MAX_RULE_TERMS {
        diags.push(Diagnostic::new(
            place.at(Node::Depends(i)),
            too_many_terms(&format!("activity {id}"), terms.len()),
        ));
    }
}

/// Reports each term of `rule` (the `<depends>` of activity `id`, the `i`th) that names a
/// contingency activity: one runs only in place of a failed activity (or never), and its
/// partner is not told which rules name it, so such a term could wait forever.
pub(super) fn check_terms_on_stand_ins(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    i: usize,
    id: ActivityId,
    rule: &Rule,
    contingencies: &HashSet<ActivityId>,
) {
    let place = Place { map, i, id };
    for (t, (activity, _)) in rule.terms().iter().enumerate() {
        if contingencies.contains(activity) {
            diags.push(Diagnostic::new(
                place.at(Node::Term(i, t)),
                format!(
                    "activity {id} has a <depends> term on activity {activity}, a contingency \
                     activity (it runs only in place of a failed one, if ever), so the rule \
                     could wait for it forever; name the activity it stands in for"
                ),
            ));
        }
    }
}

/// Reports each `and` and `or` without a rule inside; `k` numbers the rules in document order.
fn check_empty(diags: &mut Vec<Diagnostic>, place: &Place<'_>, rule: &Rule, k: &mut usize) {
    let here = *k;
    *k += 1;
    let (name, rules) = match rule {
        Rule::Term { .. } => return,
        Rule::And(rules) => ("and", rules),
        Rule::Or(rules) => ("or", rules),
    };
    if rules.is_empty() {
        diags.push(Diagnostic::new(
            place.at(Node::Rule(place.i, here)),
            format!(
                "activity {} has an empty <{name}> in its <depends>; an empty <{name}> never \
                 says anything: add a term or remove it",
                place.id
            ),
        ));
    }
    for inner in rules {
        check_empty(diags, place, inner, k);
    }
}

/// A term of activity `activity[i]` on another one: `(i, t, waiting, awaited)`, the `t`th
/// term of the rule of the `i`th activity.
type TermEdge = (usize, usize, ActivityId, ActivityId);

/// Reports each loop of activities that wait for each other through preconditions and
/// `<depends>` terms together, which no precondition cycle explains (those are reported as
/// precondition cycles): one per group of activities that wait for each other, at the term
/// that closes it.
pub(super) fn check_dependency_cycles(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    map: &SourceMap,
) {
    if def.activities.iter().all(|a| a.depends.is_none()) {
        return;
    }
    let nodes: Vec<ActivityId> = def.activities.iter().map(|a| a.id).collect();
    let mut waits_for: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
    let mut term_edges: Vec<TermEdge> = Vec::new();
    for (i, a) in def.activities.iter().enumerate() {
        let awaited = waits_for.entry(a.id).or_default();
        awaited.extend(a.preconditions.iter().filter(|p| **p != a.id));
        let Some(rule) = &a.depends else { continue };
        for (t, (other, _)) in rule.terms().into_iter().enumerate() {
            // A term on a precondition adds no wait that the precondition does not.
            if other != a.id && !a.preconditions.contains(&other) {
                awaited.push(other);
                term_edges.push((i, t, a.id, other));
            }
        }
    }
    if term_edges.is_empty() {
        return;
    }
    for members in components(&nodes, &waits_for) {
        let inside: HashSet<ActivityId> = members.into_iter().collect();
        let closing = term_edges
            .iter()
            .find(|(_, _, from, to)| inside.contains(from) && inside.contains(to));
        let Some(&(i, t, from, to)) = closing else {
            continue;
        };
        let Some(back) = path(to, from, &inside, &waits_for) else {
            continue;
        };
        let way: Vec<String> = std::iter::once(from)
            .chain(back)
            .map(|a| a.to_string())
            .collect();
        diags.push(Diagnostic::new(
            map.pos_or(Node::Term(i, t), Node::Activity(i)),
            format!(
                "dependency cycle: activity {} (each waits for the next through a precondition \
                 or a <depends> term, starting with this term of activity {from}), so they \
                 could wait for each other forever; preconditions and <depends> rules together \
                 must not loop: remove this term or one of the preconditions on the way",
                way.join(" -> ")
            ),
        ));
    }
}
