//! Checks a workflow definition's cross-references (MISSION L4).

use std::collections::{HashMap, HashSet};

use super::cycles::find_cycles;
use super::{duplicates, list, retries_problem};
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{ActivityId, ActivityTypeId, Contingency, PartnerId, WorkflowDefinition};
use crate::source_map::{Node, SourceMap};

/// Every cross-reference problem of `def`, positioned with `map` (an empty map gives
/// positionless diagnostics, for models built in code).
pub fn validate_definition(def: &WorkflowDefinition, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let activity_pos = |i: usize| map.pos(Node::Activity(i));

    duplicates(
        &mut diags,
        "activity",
        def.activities
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id, activity_pos(i))),
    );
    duplicates(
        &mut diags,
        "activity type",
        def.activity_types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, map.pos(Node::ActivityType(i)))),
    );
    duplicates(
        &mut diags,
        "partition",
        def.partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, map.pos(Node::Partition(i)))),
    );
    duplicates(
        &mut diags,
        "partner",
        def.partners
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, map.pos(Node::Partner(i)))),
    );

    let activities: HashSet<ActivityId> = def.activities.iter().map(|a| a.id).collect();
    let types: HashSet<ActivityTypeId> = def.activity_types.iter().map(|t| t.id).collect();
    let mut type_ids: Vec<ActivityTypeId> = types.iter().copied().collect();
    type_ids.sort();

    for (i, a) in def.activities.iter().enumerate() {
        if a.id.0 == 0 {
            diags.push(Diagnostic::new(
                activity_pos(i),
                "activity id 0 cannot be used: contingencyActivityId 0 means \"release the \
                 successors\", so activity ids start at 1",
            ));
        }
        if !types.contains(&a.activity_type) {
            diags.push(Diagnostic::new(
                map.pos_or(Node::ActivityField(i, "activityTypeId"), Node::Activity(i)),
                format!(
                    "activity {} has activityTypeId {}, which is not declared in \
                     <activityTypes> (declared: {}); declare it or use a declared type",
                    a.id,
                    a.activity_type,
                    list(&type_ids)
                ),
            ));
        }
        let mut seen = HashSet::new();
        for (j, pre) in a.preconditions.iter().enumerate() {
            let pos = map.pos_or(Node::Precondition(i, j), Node::Activity(i));
            if *pre == a.id {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {} lists itself as a precondition, so it could never start; \
                         remove <preconditionId>{pre}</preconditionId>",
                        a.id
                    ),
                ));
            } else if !activities.contains(pre) {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {} lists precondition {pre}, which is not an activity of this \
                         workflow; fix the id or add activity {pre}",
                        a.id
                    ),
                ));
            } else if !seen.insert(*pre) {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {} lists precondition {pre} twice; remove one",
                        a.id
                    ),
                ));
            }
        }
        if let Some(problem) = retries_problem(a.id, a.kind, a.retries) {
            diags.push(Diagnostic::new(
                map.pos_or(Node::ActivityField(i, "retries"), Node::Activity(i)),
                problem,
            ));
        }
        if let Contingency::Run(x) = a.contingency {
            let pos = map.pos_or(
                Node::ActivityField(i, "contingencyActivityId"),
                Node::Activity(i),
            );
            if x == a.id {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {} names itself as its contingency activity; use -1, 0 or \
                         another activity's id",
                        a.id
                    ),
                ));
            } else if !activities.contains(&x) {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {} has contingencyActivityId {x}, which is not an activity of \
                         this workflow; use -1 (abort and block the successors), 0 (abort and \
                         release the successors) or the id of an activity",
                        a.id
                    ),
                ));
            }
        }
    }

    check_cycles(&mut diags, def, map);
    check_partitions(&mut diags, def, map);

    for (i, p) in def.partners.iter().enumerate() {
        for (j, skill) in p.skills.iter().enumerate() {
            if !types.contains(skill) {
                diags.push(Diagnostic::new(
                    map.pos_or(Node::PartnerSkill(i, j), Node::Partner(i)),
                    format!(
                        "partner {} lists skill (activityTypeId) {skill}, which is not declared \
                         in <activityTypes> (declared: {}); declare it or remove the skill",
                        p.id,
                        list(&type_ids)
                    ),
                ));
            }
        }
    }
    diags
}

fn check_cycles(diags: &mut Vec<Diagnostic>, def: &WorkflowDefinition, map: &SourceMap) {
    let nodes: Vec<ActivityId> = def.activities.iter().map(|a| a.id).collect();
    let mut waits_for: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
    for a in &def.activities {
        let entry = waits_for.entry(a.id).or_default();
        entry.extend(a.preconditions.iter().filter(|p| **p != a.id));
    }
    for cycle in find_cycles(&nodes, &waits_for) {
        let Some(first) = cycle.first() else { continue };
        let index = def
            .activities
            .iter()
            .position(|a| a.id == *first)
            .unwrap_or(0);
        let path: Vec<String> = cycle.iter().map(ToString::to_string).collect();
        diags.push(Diagnostic::new(
            map.pos(Node::Activity(index)),
            format!(
                "precondition cycle: activity {} (each waits for the next), so none of them \
                 could ever start; remove one of these preconditions",
                path.join(" waits for ")
            ),
        ));
    }
}

fn check_partitions(diags: &mut Vec<Diagnostic>, def: &WorkflowDefinition, map: &SourceMap) {
    let partners: HashMap<PartnerId, usize> = def
        .partners
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id, i))
        .collect();
    let by_id = def.activities_by_id();
    // activity -> (partition id, position of its activityId) where it was first placed
    let mut placed: HashMap<ActivityId, (u64, Pos)> = HashMap::new();

    for (i, part) in def.partitions.iter().enumerate() {
        let partner = partners.get(&part.partner).map(|&k| &def.partners[k]);
        if partner.is_none() {
            let mut known: Vec<PartnerId> = partners.keys().copied().collect();
            known.sort();
            diags.push(Diagnostic::new(
                map.pos_or(Node::PartitionField(i, "partnerId"), Node::Partition(i)),
                format!(
                    "partition {} names partner {}, which is not declared in <partners> \
                     (declared: {}); fix the partnerId or add the partner",
                    part.id,
                    part.partner,
                    list(&known)
                ),
            ));
        }
        for (j, id) in part.activities.iter().enumerate() {
            let pos = map.pos_or(Node::PartitionActivity(i, j), Node::Partition(i));
            let Some(activity) = by_id.get(id).copied() else {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "partition {} lists activity {id}, which is not an activity of this \
                         workflow; fix the id or remove it",
                        part.id
                    ),
                ));
                continue;
            };
            if let Some((other, at)) = placed.get(id) {
                let where_ = if *other == part.id.0 {
                    format!("already listed in this partition at {at}")
                } else {
                    format!("already in partition {other} (at {at})")
                };
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "activity {id} is {where_}; an activity runs in exactly one partition, \
                         so remove one of the two <activityId>{id}</activityId>"
                    ),
                ));
                continue;
            }
            placed.insert(*id, (part.id.0, pos));
            // An undeclared type is reported on the activity; no skill can match it.
            if let Some(partner) = partner
                && def
                    .activity_types
                    .iter()
                    .any(|t| t.id == activity.activity_type)
                && !partner.skills.contains(&activity.activity_type)
            {
                diags.push(Diagnostic::new(
                    pos,
                    format!(
                        "partition {} gives activity {id} (activity type {}) to partner {}{}, \
                         whose skills are {}; add skill {} to the partner or move the \
                         activity to a partition whose partner has it",
                        part.id,
                        activity.activity_type,
                        partner.id,
                        if partner.name.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", partner.name)
                        },
                        list(&partner.skills),
                        activity.activity_type
                    ),
                ));
            }
        }
    }

    if def.partitions.is_empty() {
        // The controller partitions the workflow itself (MISSION P1).
        return;
    }
    let contingencies = def.contingency_activities();
    for (i, a) in def.activities.iter().enumerate() {
        if !placed.contains_key(&a.id) && !contingencies.contains(&a.id) {
            diags.push(Diagnostic::new(
                map.pos(Node::Activity(i)),
                format!(
                    "activity {} is in no partition; list it in a partition's <activityId> \
                     (only contingency activities may stay out: the controller places them \
                     when a failure calls for them)",
                    a.id
                ),
            ));
        }
    }
}
