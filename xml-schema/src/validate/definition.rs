//! Checks a workflow definition's cross-references.

use std::collections::{HashMap, HashSet};

use super::cycles::find_cycles;
use super::data::{Declared as DataNames, check_access, check_declarations, check_reads_before};
use super::people::check_people;
use super::routing::{Place, Targets, check_merge, check_routes};
use super::rules::{check_dependency_cycles, check_depends, check_terms_on_stand_ins};
use super::{Runs, check_command_and_retries, duplicates, list};
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{
    Activity, ActivityId, ActivityTypeId, Contingency, Partition, Partner, PartnerId,
    WorkflowDefinition,
};
use crate::source_map::{Node, SourceMap};

/// Every cross-reference problem of `def`, positioned with `map` (an empty map gives
/// positionless diagnostics, for models built in code).
pub fn validate_definition(def: &WorkflowDefinition, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    check_duplicates(&mut diags, def, map);
    check_declarations(&mut diags, map, &def.data);
    let declared = Declared::new(def);
    for (i, a) in def.activities.iter().enumerate() {
        check_activity(&mut diags, &declared, map, i, a);
    }
    super::applications::check_applications(&mut diags, def, map);
    check_cycles(&mut diags, def, map);
    check_dependency_cycles(&mut diags, def, map);
    super::loops::check_loops(&mut diags, def, map);
    check_reads_before(&mut diags, def, map);
    check_partitions(&mut diags, def, map);
    check_skills(&mut diags, def, &declared, map);
    diags
}

/// The activity and activity type ids a definition declares, which its references must name,
/// and who waits for whom, which routes must follow.
struct Declared<'a> {
    /// The data names declared, which `<reads>` and `<writes>` must name.
    data: DataNames<'a>,
    activities: HashSet<ActivityId>,
    types: HashSet<ActivityTypeId>,
    /// `types`, sorted, for listing in messages.
    type_ids: Vec<ActivityTypeId>,
    /// For each activity, its successors: the activities that list it in their preconditions
    /// (not itself), each once, in definition order.
    successors: HashMap<ActivityId, Vec<ActivityId>>,
    /// The contingency activities (some activity's `contingencyActivityId`).
    contingencies: HashSet<ActivityId>,
}

impl<'a> Declared<'a> {
    fn new(def: &'a WorkflowDefinition) -> Self {
        let activities: HashSet<ActivityId> = def.activities.iter().map(|a| a.id).collect();
        let types: HashSet<ActivityTypeId> = def.activity_types.iter().map(|t| t.id).collect();
        let mut type_ids: Vec<ActivityTypeId> = types.iter().copied().collect();
        type_ids.sort();
        let mut successors: HashMap<ActivityId, Vec<ActivityId>> = HashMap::new();
        for a in &def.activities {
            for pre in a.preconditions.iter().filter(|p| **p != a.id) {
                let list = successors.entry(*pre).or_default();
                if !list.contains(&a.id) {
                    list.push(a.id);
                }
            }
        }
        Self {
            data: DataNames::new(&def.data, false),
            activities,
            types,
            type_ids,
            successors,
            contingencies: def.contingency_activities(),
        }
    }
}

/// Reports repeated activity, type, partition and partner ids: a reference must name one thing.
fn check_duplicates(diags: &mut Vec<Diagnostic>, def: &WorkflowDefinition, map: &SourceMap) {
    duplicates(
        diags,
        "activity",
        def.activities
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id, map.pos(Node::Activity(i)))),
    );
    duplicates(
        diags,
        "activity type",
        def.activity_types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id, map.pos(Node::ActivityType(i)))),
    );
    duplicates(
        diags,
        "partition",
        def.partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, map.pos(Node::Partition(i)))),
    );
    duplicates(
        diags,
        "partner",
        def.partners
            .iter()
            .enumerate()
            .map(|(i, p)| (p.id, map.pos(Node::Partner(i)))),
    );
}

/// Runs every per-activity check on activity `a` (the `i`th), in the order they are reported.
fn check_activity(
    diags: &mut Vec<Diagnostic>,
    declared: &Declared<'_>,
    map: &SourceMap,
    i: usize,
    a: &Activity,
) {
    check_activity_id(diags, map, i, a);
    check_activity_type(diags, declared, map, i, a);
    check_preconditions(diags, declared, map, i, a);
    if let Some(rule) = &a.depends {
        check_depends(diags, map, i, a.id, rule, Some(&declared.activities));
        check_terms_on_stand_ins(diags, map, i, a.id, rule, &declared.contingencies);
    }
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
    check_access(diags, map, &declared.data, i, a.id, a.kind, &a.data);
    check_contingency(diags, declared, map, i, a);
    let place = Place { map, i, id: a.id };
    check_merge(diags, &place, &a.merge, a.preconditions.len());
    let successors = declared
        .successors
        .get(&a.id)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let targets = Targets::Successors {
        successors,
        activities: &declared.activities,
    };
    check_routes(diags, &place, &a.routes, &targets);
}

/// Refuses activity id 0, which `contingencyActivityId` reserves for "release the successors".
fn check_activity_id(diags: &mut Vec<Diagnostic>, map: &SourceMap, i: usize, a: &Activity) {
    if a.id.0 == 0 {
        diags.push(Diagnostic::new(
            map.pos(Node::Activity(i)),
            "activity id 0 cannot be used: contingencyActivityId 0 means \"release the \
             successors\", so activity ids start at 1",
        ));
    }
}

/// Checks that the activity's type is declared, since partner skills can only name those.
fn check_activity_type(
    diags: &mut Vec<Diagnostic>,
    declared: &Declared<'_>,
    map: &SourceMap,
    i: usize,
    a: &Activity,
) {
    if !declared.types.contains(&a.activity_type) {
        diags.push(Diagnostic::new(
            map.pos_or(Node::ActivityField(i, "activityTypeId"), Node::Activity(i)),
            format!(
                "activity {} has activityTypeId {}, which is not declared in \
                 <activityTypes> (declared: {}); declare it or use a declared type",
                a.id,
                a.activity_type,
                list(&declared.type_ids)
            ),
        ));
    }
}

/// Checks that each precondition names another existing activity, once, or it could never start.
fn check_preconditions(
    diags: &mut Vec<Diagnostic>,
    declared: &Declared<'_>,
    map: &SourceMap,
    i: usize,
    a: &Activity,
) {
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
        } else if !declared.activities.contains(pre) {
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
}

/// Checks that the contingency activity, run when this one fails, is another existing one.
fn check_contingency(
    diags: &mut Vec<Diagnostic>,
    declared: &Declared<'_>,
    map: &SourceMap,
    i: usize,
    a: &Activity,
) {
    let Contingency::Run(x) = a.contingency else {
        return;
    };
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
    } else if !declared.activities.contains(&x) {
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

/// Checks that every partner skill is a declared activity type, the only kind that can match.
fn check_skills(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    declared: &Declared<'_>,
    map: &SourceMap,
) {
    for (i, p) in def.partners.iter().enumerate() {
        for (j, skill) in p.skills.iter().enumerate() {
            if !declared.types.contains(skill) {
                diags.push(Diagnostic::new(
                    map.pos_or(Node::PartnerSkill(i, j), Node::Partner(i)),
                    format!(
                        "partner {} lists skill (activityTypeId) {skill}, which is not declared \
                         in <activityTypes> (declared: {}); declare it or remove the skill",
                        p.id,
                        list(&declared.type_ids)
                    ),
                ));
            }
        }
    }
}

/// Reports each precondition cycle: none of the activities on it could ever start.
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

/// Checks each partition's partner and activities, then that every activity runs somewhere.
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
            report_unknown_partner(diags, map, i, part, &partners);
        }
        for (j, id) in part.activities.iter().enumerate() {
            let pos = map.pos_or(Node::PartitionActivity(i, j), Node::Partition(i));
            let Some(activity) = by_id.get(id).copied() else {
                report_unknown_activity(diags, part, *id, pos);
                continue;
            };
            if let Some(&(other, at)) = placed.get(id) {
                report_placed_twice(diags, part, *id, pos, other, at);
                continue;
            }
            placed.insert(*id, (part.id.0, pos));
            check_skill(diags, def, part, partner, activity, pos);
        }
    }
    check_placed(diags, def, map, &placed);
}

/// Reports partition `part` (the `i`th) naming an undeclared partner: no one would run it.
fn report_unknown_partner(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    i: usize,
    part: &Partition,
    partners: &HashMap<PartnerId, usize>,
) {
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

/// Reports partition `part` listing activity `id` (at `pos`), which the workflow lacks.
fn report_unknown_activity(
    diags: &mut Vec<Diagnostic>,
    part: &Partition,
    id: ActivityId,
    pos: Pos,
) {
    diags.push(Diagnostic::new(
        pos,
        format!(
            "partition {} lists activity {id}, which is not an activity of this \
             workflow; fix the id or remove it",
            part.id
        ),
    ));
}

/// Reports activity `id` listed again at `pos`: an activity runs in exactly one partition.
fn report_placed_twice(
    diags: &mut Vec<Diagnostic>,
    part: &Partition,
    id: ActivityId,
    pos: Pos,
    other: u64,
    at: Pos,
) {
    let where_ = if other == part.id.0 {
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
}

/// Checks that the partner, who runs `activity` (listed at `pos`), has its type as a skill.
fn check_skill(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    part: &Partition,
    partner: Option<&Partner>,
    activity: &Activity,
    pos: Pos,
) {
    let id = activity.id;
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

/// Checks, if there are partitions, that each non-contingency activity is in one, to run at all.
fn check_placed(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    map: &SourceMap,
    placed: &HashMap<ActivityId, (u64, Pos)>,
) {
    if def.partitions.is_empty() {
        // The controller partitions the workflow itself.
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
