//! Checks the routing extensions, apart from the other checks because they look at the
//! workflow's graph around one activity: a `<merge>` other than `and` joins at least two
//! preconditions and asks for at most as many votes as there are; a route leads to successors
//! of its activity (in a partition document, to its adjacents), every successor is in some
//! route, no route is empty, at most one has no flag, and flags are distinct and well formed.

use std::collections::HashSet;

use super::list;
use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::MAX_FLAG_CHARS;
use crate::model::{ActivityId, FlagFault, Merge, Route, flag_fault};
use crate::read::{abbreviate, route_name};
use crate::source_map::{Node, SourceMap};

/// Where the routing extensions of activity `i` (id `id`) are in the document.
pub(super) struct Place<'a> {
    pub map: &'a SourceMap,
    pub i: usize,
    pub id: ActivityId,
}

impl Place<'_> {
    /// Where `node` is; else `fallback`, else the activity (a model built in code).
    fn at(&self, node: Node, fallback: Node) -> Pos {
        [node, fallback, Node::Activity(self.i)]
            .into_iter()
            .map(|n| self.map.pos(n))
            .find(|p| p.is_known())
            .unwrap_or(Pos::UNKNOWN)
    }
}

/// What the `to`s of an activity's routes may name.
pub(super) enum Targets<'a> {
    /// In a definition: the activity's successors (the activities that list it in their
    /// preconditions, in definition order), among all the workflow's `activities`.
    Successors {
        successors: &'a [ActivityId],
        activities: &'a HashSet<ActivityId>,
    },
    /// In a partition document: the ids of the activity's adjacents.
    Adjacents(&'a [ActivityId]),
}

/// Reports the problems of `merge`, the `<merge>` of an activity with `preconditions`
/// preconditions.
pub(super) fn check_merge(
    diags: &mut Vec<Diagnostic>,
    place: &Place<'_>,
    merge: &Merge,
    preconditions: usize,
) {
    let (i, id) = (place.i, place.id);
    let field = Node::ActivityField(i, "merge");
    let (written, votes) = match merge {
        Merge::All => return,
        Merge::First { flag } => {
            if let Some(problem) = flag.as_deref().and_then(flag_problem) {
                let pos = place.at(Node::MergeAttr(i, "flag"), field);
                diags.push(Diagnostic::new(
                    pos,
                    format!("<merge> of activity {id} {problem}"),
                ));
            }
            let flag = flag
                .as_deref()
                .map(|f| format!(" flag=\"{}\"", abbreviate(f)))
                .unwrap_or_default();
            (format!("<merge{flag}>or</merge>"), None)
        }
        Merge::Vote { votes } => (
            format!("<merge votes=\"{votes}\">vote</merge>"),
            Some(*votes),
        ),
    };
    if preconditions < 2 {
        diags.push(Diagnostic::new(
            place.at(field, field),
            format!(
                "activity {id} has {written}, but a merge joins several branches; activity {id} \
                 has {}: add the preconditions it joins, or remove <merge>",
                preconditions_text(preconditions)
            ),
        ));
    }
    let Some(votes) = votes else { return };
    let pos = place.at(Node::MergeAttr(i, "votes"), field);
    let too_many = usize::try_from(votes).map_or(true, |v| v > preconditions);
    if votes == 0 {
        diags.push(Diagnostic::new(
            pos,
            format!(
                "activity {id} has {written}; votes is how many preconditions must succeed, at \
                 least 1: raise votes, or use <merge>or</merge> for the first to finish"
            ),
        ));
    } else if preconditions >= 2 && too_many {
        diags.push(Diagnostic::new(
            pos,
            format!(
                "activity {id} has {written} but only {preconditions} preconditions, so it \
                 could never start; votes is at most the number of preconditions: lower votes \
                 to {preconditions} or less, or add preconditions"
            ),
        ));
    }
}

/// `1 precondition`, `no precondition`, `3 preconditions`.
fn preconditions_text(n: usize) -> String {
    match n {
        0 => "no precondition".to_owned(),
        1 => "1 precondition".to_owned(),
        n => format!("{n} preconditions"),
    }
}

/// Reports the problems of `routes`, the `<routes>` of an activity whose `to`s may name
/// `targets`.
pub(super) fn check_routes(
    diags: &mut Vec<Diagnostic>,
    place: &Place<'_>,
    routes: &[Route],
    targets: &Targets<'_>,
) {
    if routes.is_empty() {
        return;
    }
    let (i, id) = (place.i, place.id);
    check_flags(diags, place, routes);
    for (r, route) in routes.iter().enumerate() {
        let name = route_name(route.flag.as_deref());
        let route_pos = place.at(Node::Route(i, r), Node::ActivityField(i, "routes"));
        if route.to.is_empty() {
            diags.push(Diagnostic::new(
                route_pos,
                format!(
                    "{name} of activity {id} has no <to>, so it leads nowhere; add \
                     <to>ID</to> for each successor it leads to, or remove the route"
                ),
            ));
        }
        let mut seen = HashSet::new();
        for (t, to) in route.to.iter().enumerate() {
            let pos = place.at(Node::RouteTo(i, r, t), Node::Route(i, r));
            let problem = if seen.insert(*to) {
                target_problem(id, *to, targets)
            } else {
                Some(format!(
                    "{name} of activity {id} lists {to} twice; remove one"
                ))
            };
            if let Some(problem) = problem {
                diags.push(Diagnostic::new(pos, problem));
            }
        }
    }
    if let Targets::Successors { successors, .. } = targets {
        let pos = place.at(Node::ActivityField(i, "routes"), Node::Activity(i));
        for s in successors.iter() {
            if !routes.iter().any(|r| r.to.contains(s)) {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "successor {s} of activity {id} is in no route, so it would always be \
                         skipped: add it to a route"
                    ),
                ));
            }
        }
    }
}

/// What is wrong with a route of activity `id` leading to `to`, if anything.
fn target_problem(id: ActivityId, to: ActivityId, targets: &Targets<'_>) -> Option<String> {
    match targets {
        Targets::Successors { successors, .. } if successors.contains(&to) => None,
        Targets::Successors { activities, .. } if activities.contains(&to) => Some(format!(
            "activity {id} routes to {to}, which does not have {id} among its preconditions; \
             add {id} to {to}'s preconditions or route elsewhere"
        )),
        Targets::Successors { successors, .. } => Some(format!(
            "activity {id} routes to {to}, which is not an activity of this workflow; {}",
            if successors.is_empty() {
                format!(
                    "fix the id, or remove the route: activity {id} has no successor (no \
                     activity lists it in its preconditions)"
                )
            } else {
                format!(
                    "fix the id: a route leads to successors of activity {id}, here {}",
                    list(successors)
                )
            }
        )),
        Targets::Adjacents(adjacents) if adjacents.contains(&to) => None,
        Targets::Adjacents(adjacents) => Some(format!(
            "activity {id} routes to {to}, which is not one of its adjacents ({}); route to an \
             adjacent, or add <adjacent id=\"{to}\">",
            if adjacents.is_empty() {
                "it has none".to_owned()
            } else {
                list(adjacents)
            }
        )),
    }
}

/// Reports bad flag text, two routes with the same flag, and several routes without one.
fn check_flags(diags: &mut Vec<Diagnostic>, place: &Place<'_>, routes: &[Route]) {
    let (i, id) = (place.i, place.id);
    let mut flagged: Vec<(&str, Pos)> = Vec::new();
    let mut unflagged: Option<Pos> = None;
    for (r, route) in routes.iter().enumerate() {
        let route_pos = place.at(Node::Route(i, r), Node::ActivityField(i, "routes"));
        let Some(flag) = route.flag.as_deref() else {
            match unflagged {
                Some(first) => diags.push(Diagnostic::new(
                    route_pos,
                    format!(
                        "activity {id} has a second <route> without flag{}; one route is taken \
                         when no flag matches: put their <to>s in one route, or give this one \
                         a flag",
                        first_at(first)
                    ),
                )),
                None => unflagged = Some(route_pos),
            }
            continue;
        };
        let pos = place.at(Node::RouteFlag(i, r), Node::Route(i, r));
        if let Some(problem) = flag_problem(flag) {
            diags.push(Diagnostic::new(
                pos,
                format!("<route> of activity {id} {problem}"),
            ));
        }
        match flagged.iter().find(|(f, _)| *f == flag) {
            Some(&(_, first)) => diags.push(Diagnostic::new(
                pos,
                format!(
                    "activity {id} has two routes with flag=\"{}\"{}; a flag picks one route: \
                     put their <to>s in one route, or change one of the flags",
                    abbreviate(flag),
                    first_at(first)
                ),
            )),
            None => flagged.push((flag, pos)),
        }
    }
}

/// ` (the first at 12:5)`, or nothing for a model built in code.
fn first_at(pos: Pos) -> String {
    if pos.is_known() {
        format!(" (the first at {pos})")
    } else {
        String::new()
    }
}

/// What is wrong with completion flag `flag`, worded to follow `<route> of activity 5`; `None`
/// for a flag of 1 to [`MAX_FLAG_CHARS`] of the characters `A-Z a-z 0-9 _ . -`.
fn flag_problem(flag: &str) -> Option<String> {
    let problem = match flag_fault(flag)? {
        FlagFault::Empty => "has an empty flag (flag=\"\")".to_owned(),
        FlagFault::TooLong(chars) => format!(
            "has a flag of {chars} characters, over the limit of {MAX_FLAG_CHARS} \
             (MAX_FLAG_CHARS)"
        ),
        FlagFault::BadChar(bad) => format!(
            "has flag=\"{}\", which holds {bad:?}, not a flag character",
            abbreviate(flag)
        ),
    };
    Some(format!(
        "{problem}; a flag is 1 to {MAX_FLAG_CHARS} of the characters A-Z, a-z, 0-9, _, . and \
         -, e.g. flag=\"approved\""
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_short_words() {
        assert_eq!(flag_problem("approved"), None);
        assert_eq!(flag_problem("v1.2_ok-3"), None);
        assert_eq!(flag_problem(&"a".repeat(MAX_FLAG_CHARS)), None);
        assert!(flag_problem("").unwrap().starts_with("has an empty flag"));
        assert!(
            flag_problem(&"a".repeat(MAX_FLAG_CHARS + 1))
                .unwrap()
                .contains("(MAX_FLAG_CHARS)")
        );
        assert!(
            flag_problem("ap proved")
                .unwrap()
                .starts_with("has flag=\"ap proved\", which holds ' ', not a flag character;")
        );
        assert!(flag_problem("café").unwrap().contains("holds 'é'"));
    }
}
