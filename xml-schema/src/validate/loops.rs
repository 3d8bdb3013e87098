//! Checks loops (`<loop to while max>`, the SERIAL_NO of *A lightweight workflow engine based
//! on a relational structure* (He, Li, Jiao, Liu), §3.2.3): the flag and the limit in both
//! languages; in a definition, that the head is before the end on a path, and that the body
//! (every activity on the paths from the head to the end) can run again as a whole: nothing
//! outside it waits for an activity of it but for the end, it holds no completion or
//! contingency activity and none of its activities but the end names one, it joins with `and` (an `or` or `vote` could leave a branch running
//! when the next pass starts), and no two loops share an activity (nested loops are not
//! supported yet).

use std::collections::{HashMap, HashSet};

use crate::derive::loop_body;
use crate::diagnostic::Diagnostic;
use crate::limits::MAX_LOOP_PASSES;
use crate::model::{
    Activity, ActivityId, Contingency, Loop, Merge, WorkflowDefinition, flag_problem,
};
use crate::source_map::{Node, SourceMap};

/// Reports a bad `while` flag or `max` of the loop `l` of activity `id`, the `i`th of its
/// document (either language).
pub(super) fn check_loop_attrs(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    (i, id): (usize, ActivityId),
    l: &Loop,
) {
    let at = |attr| map.pos_or(Node::LoopAttr(i, attr), Node::Loop(i));
    if let Some(problem) = flag_problem(&l.while_flag) {
        diags.push(Diagnostic::new(
            at("while"),
            format!("while of the <loop> of activity {id}: {problem}"),
        ));
    }
    if !(2..=MAX_LOOP_PASSES).contains(&l.max) {
        diags.push(Diagnostic::new(
            at("max"),
            format!(
                "the <loop> of activity {id} has max=\"{}\"; max counts the passes, the first \
                 included: a whole number from 2 to {MAX_LOOP_PASSES} (MAX_LOOP_PASSES)",
                l.max
            ),
        ));
    }
}

/// What the checks of every loop of a definition look up.
struct Graph<'a> {
    by_id: HashMap<ActivityId, &'a Activity>,
    /// Each activity's index in the definition, for positions.
    index: HashMap<ActivityId, usize>,
    contingencies: HashSet<ActivityId>,
    /// For each activity, those that wait for it (a precondition or a rule's term).
    waiting: HashMap<ActivityId, Vec<ActivityId>>,
}

impl<'a> Graph<'a> {
    fn new(def: &'a WorkflowDefinition) -> Self {
        let mut waiting: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
        for a in &def.activities {
            let terms = a.depends.as_ref().map(|r| r.terms()).unwrap_or_default();
            let awaited = a.preconditions.iter().copied();
            for other in awaited.chain(terms.into_iter().map(|(id, _)| id)) {
                waiting.entry(other).or_default().push(a.id);
            }
        }
        Graph {
            by_id: def.activities_by_id(),
            index: def
                .activities
                .iter()
                .enumerate()
                .map(|(i, a)| (a.id, i))
                .collect(),
            contingencies: def.contingency_activities(),
            waiting,
        }
    }
}

/// Reports every problem of the loops of `def`.
pub(super) fn check_loops(diags: &mut Vec<Diagnostic>, def: &WorkflowDefinition, map: &SourceMap) {
    let graph = Graph::new(def);
    // Each activity's loop, as the first loop whose body holds it; the pairs of loops told
    // they cross.
    let mut owner: HashMap<ActivityId, ActivityId> = HashMap::new();
    let mut crossed: HashSet<(ActivityId, ActivityId)> = HashSet::new();
    for (i, a) in def.activities.iter().enumerate() {
        let Some(l) = &a.loop_back else {
            continue;
        };
        let end = a.id;
        let at = map.pos_or(Node::Loop(i), Node::Activity(i));
        let Some(body) = checked_body(diags, map, def, &graph, (i, end, l)) else {
            continue;
        };
        let inside: HashSet<ActivityId> = body.iter().copied().collect();
        for &b in &body {
            let Some(act) = graph.by_id.get(&b) else {
                continue;
            };
            for ((id, field), text) in body_problem(end, l.to, (b, act), &graph, &inside) {
                let pos = match (graph.index.get(&id), field) {
                    (Some(&k), Some(field)) => {
                        map.pos_or(Node::ActivityField(k, field), Node::Activity(k))
                    }
                    (Some(&k), None) => map.pos(Node::Activity(k)),
                    (None, _) => at,
                };
                diags.push(Diagnostic::new(pos, text));
            }
            if let Some(other) = owner.insert(b, end)
                && crossed.insert((other, end))
            {
                let text = format!(
                    "the loops of activities {other} and {end} both hold activity {b}; loops \
                     may not cross or nest (nested loops are not supported yet): make their \
                     bodies apart"
                );
                diags.push(Diagnostic::new(at, text));
            }
        }
    }
}

/// The body of the loop `l` of activity `end` (the `i`th), once its attributes are checked
/// and its head is an activity before it; `None` (reported) when there is none.
fn checked_body(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    def: &WorkflowDefinition,
    graph: &Graph<'_>,
    (i, end, l): (usize, ActivityId, &Loop),
) -> Option<Vec<ActivityId>> {
    check_loop_attrs(diags, map, (i, end), l);
    let at = map.pos_or(Node::Loop(i), Node::Activity(i));
    let mut problem = |text: String| diags.push(Diagnostic::new(at, text));
    if !l.body.is_empty() {
        problem(format!(
            "the <loop> of activity {end} lists <member>s; derivation writes them into \
             partition documents: remove them from the definition"
        ));
    }
    if !graph.by_id.contains_key(&l.to) {
        problem(format!(
            "the <loop> of activity {end} goes back to activity {}, which is not an activity \
             of this workflow; fix to",
            l.to
        ));
        return None;
    }
    let body = loop_body(def, l.to, end);
    if body.is_empty() {
        problem(format!(
            "the <loop> of activity {end} goes back to activity {}, which is not before it on \
             a path of preconditions; to names the first activity of each pass, one that \
             activity {end} waits for directly or not",
            l.to
        ));
        return None;
    }
    Some(body)
}

/// Where a problem is: the activity, and its child element (`None`: the activity itself).
type At = (ActivityId, Option<&'static str>);

/// What is wrong with activity `b` in the body `inside` of the loop from `end` back to
/// `head`, each with where it is.
fn body_problem(
    end: ActivityId,
    head: ActivityId,
    (b, act): (ActivityId, &Activity),
    graph: &Graph<'_>,
    inside: &HashSet<ActivityId>,
) -> Vec<(At, String)> {
    let mut out: Vec<(At, String)> = Vec::new();
    let loop_of = format!("the loop of activity {end} (back to {head})");
    if act.completion {
        out.push((
            (b, Some("completion")),
            format!(
                "activity {b} ends the instance (<completion>) and is in the body of {loop_of}; a \
             pass could not end the instance and run again: move the completion after the loop"
            ),
        ));
    }
    if graph.contingencies.contains(&b) {
        out.push((
            (b, None),
            format!(
                "activity {b} is a contingency activity and is in the body of {loop_of}; a \
             contingency activity runs in another's place, not in passes: take it out of the \
             loop"
            ),
        ));
    }
    // The end's contingency applies when it fails, which ends the loop.
    if let (true, Contingency::Run(x)) = (b != end, act.contingency) {
        out.push(((b, Some("contingencyActivityId")), format!(
            "activity {b} is in the body of {loop_of} and names contingency activity {x}, which \
             would stand in for it in one pass only; use 0 (release) or -1 (block)"
        )));
    }
    if b != head && act.merge != Merge::All {
        out.push((
            (b, Some("merge")),
            format!(
                "activity {b} is in the body of {loop_of} and merges its preconditions with or or \
             vote, which could leave a branch running when the next pass starts; inside a loop \
             an activity waits for all its preconditions (remove <merge>)"
            ),
        ));
    }
    if b != end {
        let outside = graph
            .waiting
            .get(&b)
            .into_iter()
            .flatten()
            .filter(|w| !inside.contains(w));
        for w in outside {
            out.push((
                (*w, None),
                format!(
                    "activity {w} waits for activity {b} of the body of {loop_of} but is not in \
                 it; only the loop's end leads out of a loop (what comes after goes on when \
                 the loop ends): make activity {w} wait for activity {end}"
                ),
            ));
        }
    }
    out
}
