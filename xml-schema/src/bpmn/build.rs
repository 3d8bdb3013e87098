//! Assembles the definition from the mapped members and their placement, with the source map
//! that points every part of it back at the BPMN element it came from.

use super::graph::{Kind, Process, Task};
use super::lanes::Placement;
use super::map::{Member, Origin};
use super::shape::Shape;
use crate::model::{
    Activity, ActivityId, ActivityKind, Contingency, DefinitionName, Status, WorkflowDefinition,
    WorkflowId, definition_name_problem,
};
use crate::source_map::{Node, SourceMap};

/// The definition of `p`, and where each of its parts is written.
pub(crate) fn definition(
    p: &Process,
    s: &Shape,
    members: &[Member],
    placement: Placement,
) -> (WorkflowDefinition, SourceMap) {
    let mut map = SourceMap::default();
    map.set(Node::Root, p.pos);
    let id_of_node = |n: usize| {
        members
            .iter()
            .position(|m| m.origin == Origin::Node(n))
            .map(|k| ActivityId(u64::try_from(k).unwrap_or(u64::MAX).saturating_add(1)))
    };
    let mut activities = Vec::with_capacity(members.len());
    for (i, m) in members.iter().enumerate() {
        let id = ActivityId(u64::try_from(i).unwrap_or(u64::MAX).saturating_add(1));
        let mut a = activity(p, s, m, id, &id_of_node, &mut map, i);
        a.activity_type = placement.type_of.get(i).copied().unwrap_or(a.activity_type);
        activities.push(a);
    }
    let mut def = WorkflowDefinition {
        id: WorkflowId(1),
        description: [&p.description, &p.name, &p.file_name]
            .into_iter()
            .find(|d| !d.is_empty())
            .cloned()
            .unwrap_or_default(),
        name: [&p.name, &p.file_name, &p.id]
            .into_iter()
            .find(|n| definition_name_problem(n).is_none())
            .map(|n| DefinitionName::new(n.as_str())),
        creator_role: None,
        activities,
        activity_types: Vec::new(),
        partitions: Vec::new(),
        partners: Vec::new(),
        data: Vec::new(),
        applications: Vec::new(),
    };
    for (i, (t, pos)) in placement.types.into_iter().enumerate() {
        map.set(Node::ActivityType(i), pos);
        def.activity_types.push(t);
    }
    for (i, (partition, partner, pos, refs)) in placement.partitions.into_iter().enumerate() {
        map.set(Node::Partition(i), pos);
        map.set(Node::Partner(i), pos);
        for (j, at) in refs.into_iter().enumerate() {
            map.set(Node::PartitionActivity(i, j), at);
        }
        def.partitions.push(partition);
        def.partners.push(partner);
    }
    (def, map)
}

/// What the task `task` says of the `i`th activity `a`: its kind, description, command,
/// compensation, retries and people, their positions recorded in `map`.
fn task_fields(a: &mut Activity, task: &Task, map: &mut SourceMap, i: usize) {
    a.kind = task.kind;
    a.description = task.description.clone();
    a.command = task.command.as_ref().map(|(c, _)| c.clone());
    a.compensation = task.compensation.as_ref().map(|(c, _)| c.clone());
    a.retries = task.retries;
    a.people = task.people.clone();
    for (field, pos) in [
        ("command", &task.command),
        ("compensation", &task.compensation),
    ] {
        if let Some((_, pos)) = pos {
            map.set(Node::ActivityField(i, field), *pos);
        }
    }
    if let Some(pos) = task.people_pos {
        map.set(Node::ActivityField(i, "role"), pos);
    }
}

/// The activity of member `m` (the `i`th, id `id`), its positions recorded in `map`.
fn activity(
    p: &Process,
    s: &Shape,
    m: &Member,
    id: ActivityId,
    id_of_node: &dyn Fn(usize) -> Option<ActivityId>,
    map: &mut SourceMap,
    i: usize,
) -> Activity {
    map.set(Node::Activity(i), m.pos);
    for (j, (_, pos)) in m.preconditions.iter().enumerate() {
        map.set(Node::Precondition(i, j), *pos);
    }
    for (r, (_, pos)) in m.routes.iter().enumerate() {
        map.set(Node::Route(i, r), *pos);
    }
    let mut a = Activity {
        id,
        name: String::new(),
        description: String::new(),
        activity_type: crate::model::ActivityTypeId(1),
        status: Status::Pending,
        time_to_wait_secs: 0,
        contingency: Contingency::Block,
        time_out_secs: 0,
        preconditions: m.preconditions.iter().map(|(id, _)| *id).collect(),
        depends: None,
        merge: m.merge.clone(),
        routes: m.routes.iter().map(|(r, _)| r.clone()).collect(),
        completion: false,
        loop_back: None,
        kind: ActivityKind::Dummy,
        command: None,
        compensation: None,
        retries: crate::model::Retries::default(),
        class: None,
        application: None,
        data: crate::model::DataAccess::default(),
        people: crate::model::People::default(),
    };
    match m.origin {
        Origin::Node(n) => {
            let node = &p.nodes[n];
            a.name = node.name.clone();
            match &node.kind {
                Kind::Task(task) => {
                    task_fields(&mut a, task, map, i);
                    if let Some(&(secs, stand_in)) = s.timers.get(&n) {
                        a.time_out_secs = secs;
                        a.contingency =
                            id_of_node(stand_in).map_or(Contingency::Block, Contingency::Run);
                    }
                }
                Kind::Gateway { parallel, .. } if a.name.is_empty() => {
                    a.name = if *parallel {
                        "parallel gateway"
                    } else {
                        "exclusive gateway"
                    }
                    .to_owned();
                }
                _ => {}
            }
        }
        Origin::BranchEnd(f) => {
            let end = &p.nodes[s.dst[f]];
            a.name = if end.name.is_empty() {
                "end".to_owned()
            } else {
                end.name.clone()
            };
            a.description = format!("where {} ends", p.flows[f].label);
        }
    }
    a
}
