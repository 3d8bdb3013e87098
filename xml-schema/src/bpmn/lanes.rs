//! Lanes as partners: each lane is a partner of the workflow (named as the lane), its flow
//! nodes a partition, and the activities in it of an activity type of its own (the lane's
//! number), which is the partner's skill. A node registered under the lane's name takes its
//! partition; otherwise the controller gives it to a node with that skill, and places a
//! contingency task (in no partition) on another node with its lane's skill. Without lanes
//! every activity is of activity type 1 and the controller partitions the workflow itself.

use std::collections::HashMap;

use super::graph::{Kind, Process};
use super::map::{Member, Origin};
use super::shape::Shape;
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{
    ActivityId, ActivityType, ActivityTypeId, Partition, PartitionId, Partner, PartnerId,
};

/// Where the activities run: their types, the partitions and partners.
#[derive(Debug, Default)]
pub(crate) struct Placement {
    pub types: Vec<(ActivityType, Pos)>,
    /// Each partition with its partner, where its lane is written and where each of its
    /// activities is referred to.
    pub partitions: Vec<(Partition, Partner, Pos, Vec<Pos>)>,
    /// The activity type of each member, in member order.
    pub type_of: Vec<ActivityTypeId>,
}

/// The placement of `members` (member `k` has id `k + 1`) by the lanes of `p`.
pub(crate) fn place(
    p: &Process,
    s: &Shape,
    members: &[Member],
) -> Result<Placement, Vec<Diagnostic>> {
    if p.lanes.is_empty() {
        return Ok(Placement {
            types: vec![(
                ActivityType {
                    id: ActivityTypeId(1),
                    description: "any partner (the process has no lanes)".to_owned(),
                },
                p.pos,
            )],
            partitions: Vec::new(),
            type_of: vec![ActivityTypeId(1); members.len()],
        });
    }
    let mut diags = Vec::new();
    let lane_of = lanes_of_nodes(p, s, &mut diags);
    let mut lane_of_member: Vec<usize> = Vec::with_capacity(members.len());
    for m in members {
        let node = match m.origin {
            Origin::Node(n) => n,
            Origin::BranchEnd(f) => s.src[f],
        };
        let lane = lane_of
            .get(&node)
            .copied()
            .or_else(|| neighbour_lane(p, s, node, &lane_of));
        if let Some(lane) = lane {
            lane_of_member.push(lane);
            continue;
        }
        lane_of_member.push(0);
        diags.push(Diagnostic::new(
            p.nodes[node].pos,
            format!(
                "{} is in no lane: each lane is a partner of the workflow, and each task runs \
                 on one; add it to a lane's flowNodeRef",
                p.nodes[node].label
            ),
        ));
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(by_lane(p, s, members, &lane_of_member))
}

/// The lane of each flow node a lane lists; an unknown node or one in two lanes is reported.
fn lanes_of_nodes(p: &Process, s: &Shape, diags: &mut Vec<Diagnostic>) -> HashMap<usize, usize> {
    let mut lane_of: HashMap<usize, usize> = HashMap::new();
    for (k, lane) in p.lanes.iter().enumerate() {
        for (id, pos) in &lane.nodes {
            let Some(&n) = s.index.get(id) else {
                diags.push(Diagnostic::new(
                    *pos,
                    format!(
                        "lane {:?} lists {id:?}, which is no flow node of the process that \
                         mobiwf reads; fix the flowNodeRef",
                        lane.name
                    ),
                ));
                continue;
            };
            if let Some(&other) = lane_of.get(&n)
                && other != k
            {
                diags.push(Diagnostic::new(
                    *pos,
                    format!(
                        "{} is in lane {:?} and in lane {:?}: a task runs on one partner; keep \
                         it in one lane",
                        p.nodes[n].label, p.lanes[other].name, lane.name
                    ),
                ));
            }
            lane_of.insert(n, k);
        }
    }
    lane_of
}

/// The lane of a gateway drawn in no lane: that of a node it is connected to.
fn neighbour_lane(
    p: &Process,
    s: &Shape,
    node: usize,
    lane_of: &HashMap<usize, usize>,
) -> Option<usize> {
    if !matches!(p.nodes[node].kind, Kind::Gateway { .. }) {
        return None;
    }
    let before = s.ins[node].iter().map(|&f| s.src[f]);
    let after = s.outs[node].iter().map(|&f| s.dst[f]);
    before.chain(after).find_map(|n| lane_of.get(&n).copied())
}

/// Types, partitions and partners from the lane of each member.
fn by_lane(p: &Process, s: &Shape, members: &[Member], lane_of_member: &[usize]) -> Placement {
    let number = |k: usize| u64::try_from(k).unwrap_or(u64::MAX).saturating_add(1);
    let mut placement = Placement {
        type_of: lane_of_member
            .iter()
            .map(|&k| ActivityTypeId(number(k)))
            .collect(),
        ..Placement::default()
    };
    for (k, lane) in p.lanes.iter().enumerate() {
        placement.types.push((
            ActivityType {
                id: ActivityTypeId(number(k)),
                description: format!("lane {}", lane.name),
            },
            lane.pos,
        ));
        let placed: Vec<(usize, &Member)> = members
            .iter()
            .enumerate()
            .filter(|(m, member)| {
                lane_of_member[*m] == k
                    && !matches!(member.origin, Origin::Node(n) if s.stand_ins.contains(&n))
            })
            .collect();
        if placed.is_empty() {
            continue;
        }
        let activities = placed.iter().map(|(m, _)| ActivityId(number(*m))).collect();
        let refs = placed.iter().map(|(_, member)| member.pos).collect();
        placement.partitions.push((
            Partition {
                id: PartitionId(number(k)),
                name: lane.name.clone(),
                partner: PartnerId(number(k)),
                time_out_secs: 0,
                activities,
            },
            Partner {
                id: PartnerId(number(k)),
                name: lane.name.clone(),
                description: String::new(),
                location: String::new(),
                skills: vec![ActivityTypeId(number(k))],
            },
            lane.pos,
            refs,
        ));
    }
    placement
}
