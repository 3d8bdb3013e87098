//! Checks a partition document's internal consistency.

use std::collections::HashSet;

use super::data::{Declared, List, check_access, check_declarations, check_list};
use super::people::check_people;
use super::routing::{Place, Targets, check_merge, check_routes};
use super::rules::check_depends;
use super::{Runs, check_command_and_retries, duplicates};
use crate::diagnostic::Diagnostic;
use crate::model::{ActivityId, PartitionActivity, PartitionDocument};
use crate::source_map::{Node, SourceMap};

/// Every consistency problem of a partition document: repeated ids, `retries` on an activity
/// that is not automatic, a dummy with a command, retries or people, people extensions that do
/// not fit together or the activity, dependency rules that are empty, too long or name their
/// own activity, merges and routes that do not fit the activity's preconditions and adjacents,
/// preconditions or adjacents whose `local` flag or location contradicts the document, and data
/// names that the document's own `<data>` does not declare, declares badly or lists twice.
pub fn validate_partition(doc: &PartitionDocument, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    duplicates(
        &mut diags,
        "activity",
        doc.activities
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id, map.pos(Node::Activity(i)))),
    );
    check_declarations(&mut diags, map, &doc.data);
    let declared = Declared::new(&doc.data, true);
    let here: HashSet<ActivityId> = doc.activities.iter().map(|a| a.id).collect();
    for (i, a) in doc.activities.iter().enumerate() {
        check_extensions(&mut diags, map, i, a);
        check_access(&mut diags, map, &declared, i, a.id, a.kind, &a.data);
        check_preconditions(&mut diags, map, &here, i, a);
        check_adjacents(&mut diags, map, &here, i, a);
        check_carries(&mut diags, map, &declared, i, a);
    }
    diags
}

/// Checks the extensions of activity `a` (the `i`th): command, retries, people, its
/// dependency rule, merge and routes.
fn check_extensions(diags: &mut Vec<Diagnostic>, map: &SourceMap, i: usize, a: &PartitionActivity) {
    check_command_and_retries(
        diags,
        map,
        i,
        a.id,
        a.kind,
        Runs {
            command: a.command.as_deref(),
            compensation: a.compensation.as_deref(),
            retries: a.retries,
        },
    );
    check_people(diags, map, i, a.id, a.kind, &a.people);
    if a.application.is_some()
        && let Some(problem) = super::applications::kind_problem(a.id, a.kind)
    {
        let pos = map.pos_or(Node::ActivityField(i, "application"), Node::Activity(i));
        diags.push(Diagnostic::new(pos, problem));
    }
    if let Some(rule) = &a.depends {
        // A term may name an activity of another partition: not checked here.
        check_depends(diags, map, i, a.id, rule, None);
    }
    let place = Place { map, i, id: a.id };
    check_merge(diags, &place, &a.merge, a.preconditions.len());
    let adjacents: Vec<ActivityId> = a.adjacents.iter().map(|adj| adj.id).collect();
    check_routes(diags, &place, &a.routes, &Targets::Adjacents(&adjacents));
    if let Some(l) = &a.loop_back {
        super::loops::check_loop_attrs(diags, map, (i, a.id), l);
    }
}

/// Checks that no precondition of `a` (the `i`th) is itself, and that each is marked local
/// exactly when its activity is `here`, in this partition.
fn check_preconditions(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    here: &HashSet<ActivityId>,
    i: usize,
    a: &PartitionActivity,
) {
    for (j, p) in a.preconditions.iter().enumerate() {
        let pos = map.pos_or(Node::Precondition(i, j), Node::Activity(i));
        let local_pos = map.pos_or(
            Node::PreconditionField(i, j, "local"),
            Node::Precondition(i, j),
        );
        if p.id == a.id {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "activity {} lists itself as a precondition; remove it",
                    a.id
                ),
            ));
        } else if p.local && !here.contains(&p.id) {
            diags.push(Diagnostic::new(
                local_pos,
                format!(
                    "precondition {} of activity {} is marked local (<local>1</local>) but \
                     activity {} is not in this partition; set <local>0</local> or add the \
                     activity",
                    p.id, a.id, p.id
                ),
            ));
        } else if !p.local && here.contains(&p.id) {
            diags.push(Diagnostic::new(
                local_pos,
                format!(
                    "precondition {} of activity {} is marked remote (<local>0</local>) but \
                     activity {} is in this partition; set <local>1</local>",
                    p.id, a.id, p.id
                ),
            ));
        }
    }
}

/// Checks that each adjacent of `a` (the `i`th) that runs elsewhere has a location.
fn check_adjacents(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    here: &HashSet<ActivityId>,
    i: usize,
    a: &PartitionActivity,
) {
    for (j, adj) in a.adjacents.iter().enumerate() {
        if !here.contains(&adj.id) && adj.location.trim().is_empty() {
            diags.push(Diagnostic::new(
                map.pos_or(Node::Adjacent(i, j), Node::Activity(i)),
                format!(
                    "adjacent {} of activity {} runs in another partition but has no <ip>; \
                     give the location of the partner that runs it",
                    adj.id, a.id
                ),
            ));
        }
    }
}

/// Checks that each name the adjacents of `a` (the `i`th) carry is `declared` in the
/// document's own `<data>`, and listed once.
fn check_carries(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    declared: &Declared<'_>,
    i: usize,
    a: &PartitionActivity,
) {
    for (j, adj) in a.adjacents.iter().enumerate() {
        let name = |k| Node::CarriedName(i, j, k);
        let list = List {
            says: format!("adjacent {} of activity {} carries", adj.id, a.id),
            element: "carries",
            at: Node::Carries(i, j),
            name: &name,
            names: &adj.carries,
            activity: Node::Adjacent(i, j),
        };
        check_list(diags, map, declared, &list);
    }
}
