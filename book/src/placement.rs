//! Which registered node runs which partition.
//!
//! A node registered under a workflow partner's name (or id) takes that partner's partitions.
//! A partner that no registered node answers to is given to a node with every skill its
//! partition needs (the least loaded first). A workflow without partitions is partitioned
//! here: each activity goes to a node with its skill, preferring the node that already runs
//! most of its preconditions (so that few edges cross partitions), then the least loaded.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_xml_schema::{
    ActivityId, ActivityTypeId, Partition, PartitionId, Partner, PartnerId, WorkflowDefinition,
};

use super::NodeInfo;

/// Why a workflow cannot be placed on the registered nodes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// No node is registered at all.
    #[error("no node is registered; start one with `mobiwf-node run --controller ADDRESS ...`")]
    NoNodes,
    /// No node has the skills a partition needs.
    #[error(
        "partition {partition} (partner {partner:?}) needs skills {numbers:?}, and no registered \
         node named {partner:?} or with those skills is registered; start one with \
         `mobiwf-node run --name {partner} --skills ...`",
        numbers = .skills.iter().map(|s| s.0).collect::<Vec<u64>>()
    )]
    NoNodeForPartition {
        /// The partition.
        partition: PartitionId,
        /// The partner named for it.
        partner: String,
        /// The activity types it needs.
        skills: Vec<ActivityTypeId>,
    },
    /// No node has the skill an activity needs.
    #[error(
        "activity {activity} needs skill {skill}, and no registered node has it; start one with \
         `mobiwf-node run --skills {skill} ...`"
    )]
    NoNodeForActivity {
        /// The activity.
        activity: ActivityId,
        /// The activity type it needs.
        skill: ActivityTypeId,
    },
}

/// The outcome: a definition whose partners are the chosen nodes.
#[derive(Debug, Clone)]
pub struct Placement {
    /// The definition, with partitions (computed when it had none).
    pub definition: WorkflowDefinition,
    /// For each partner of `definition`, the index of its node in the given list.
    pub node_of: BTreeMap<PartnerId, usize>,
}

/// Places `def` (valid) on `nodes`.
pub fn place(def: &WorkflowDefinition, nodes: &[NodeInfo]) -> Result<Placement, PlacementError> {
    if nodes.is_empty() {
        return Err(PlacementError::NoNodes);
    }
    if def.partitions.is_empty() {
        partition_by_skill(def, nodes)
    } else {
        assign_partners(def, nodes)
    }
}

fn skills_of(def: &WorkflowDefinition, activities: &[ActivityId]) -> BTreeSet<ActivityTypeId> {
    let by_id = def.activities_by_id();
    activities
        .iter()
        .filter_map(|a| by_id.get(a).map(|a| a.activity_type))
        .collect()
}

fn has_all(node: &NodeInfo, skills: &BTreeSet<ActivityTypeId>) -> bool {
    skills.iter().all(|s| node.skills.contains(s))
}

fn assign_partners(
    def: &WorkflowDefinition,
    nodes: &[NodeInfo],
) -> Result<Placement, PlacementError> {
    let mut node_of = BTreeMap::new();
    let mut load = vec![0usize; nodes.len()];
    // First the partners some node answers to by name or id (the latest registration wins).
    for partner in &def.partners {
        let id = partner.id.0.to_string();
        let named = (0..nodes.len())
            .filter(|&i| nodes[i].name == *partner.name || nodes[i].name == *id)
            .max_by_key(|&i| nodes[i].registered_ms);
        if let Some(i) = named {
            node_of.insert(partner.id, i);
        }
    }
    for partition in &def.partitions {
        if let Some(&i) = node_of.get(&partition.partner) {
            load[i] += 1;
        }
    }
    // Then the others, by skill.
    for partition in &def.partitions {
        if node_of.contains_key(&partition.partner) {
            continue;
        }
        let skills = skills_of(def, &partition.activities);
        let chosen = (0..nodes.len())
            .filter(|&i| has_all(&nodes[i], &skills))
            .min_by(|&a, &b| {
                load[a]
                    .cmp(&load[b])
                    .then(nodes[a].name.cmp(&nodes[b].name))
            });
        let Some(i) = chosen else {
            let partner = def
                .partner(partition.partner)
                .map_or_else(|| partition.partner.0.to_string(), |p| p.name.clone());
            return Err(PlacementError::NoNodeForPartition {
                partition: partition.id,
                partner,
                skills: skills.into_iter().collect(),
            });
        };
        load[i] += 1;
        node_of.insert(partition.partner, i);
    }
    Ok(Placement {
        definition: def.clone(),
        node_of,
    })
}

fn partition_by_skill(
    def: &WorkflowDefinition,
    nodes: &[NodeInfo],
) -> Result<Placement, PlacementError> {
    let contingency_only = def.contingency_activities();
    let mut node_of_activity: BTreeMap<ActivityId, usize> = BTreeMap::new();
    let mut load = vec![0usize; nodes.len()];
    for act in topological(def) {
        if contingency_only.contains(&act) {
            continue;
        }
        let Some(a) = def.activity(act) else { continue };
        let skill = a.activity_type;
        let shared = |i: usize| {
            a.preconditions
                .iter()
                .filter(|p| node_of_activity.get(p) == Some(&i))
                .count()
        };
        let chosen = (0..nodes.len())
            .filter(|&i| nodes[i].skills.contains(&skill))
            .min_by(|&x, &y| {
                shared(y)
                    .cmp(&shared(x))
                    .then(load[x].cmp(&load[y]))
                    .then(nodes[x].name.cmp(&nodes[y].name))
            });
        let Some(i) = chosen else {
            return Err(PlacementError::NoNodeForActivity {
                activity: act,
                skill,
            });
        };
        load[i] += 1;
        node_of_activity.insert(act, i);
    }
    let mut definition = def.clone();
    let mut node_of = BTreeMap::new();
    let used: BTreeSet<usize> = node_of_activity.values().copied().collect();
    for (k, &i) in used.iter().enumerate() {
        let n = u64::try_from(k).unwrap_or(u64::MAX).saturating_add(1);
        let activities = def
            .activities
            .iter()
            .map(|a| a.id)
            .filter(|a| node_of_activity.get(a) == Some(&i))
            .collect();
        definition.partitions.push(Partition {
            id: PartitionId(n),
            name: format!("partition of {}", nodes[i].name),
            partner: PartnerId(n),
            time_out_secs: 0,
            activities,
        });
        definition.partners.push(Partner {
            id: PartnerId(n),
            name: nodes[i].name.to_string(),
            description: String::new(),
            location: nodes[i].addrs.first().cloned().unwrap_or_default(),
            skills: nodes[i].skills.clone(),
        });
        node_of.insert(PartnerId(n), i);
    }
    Ok(Placement {
        definition,
        node_of,
    })
}

/// Activity ids, every one after its preconditions (the definition is valid: no cycles).
fn topological(def: &WorkflowDefinition) -> Vec<ActivityId> {
    let mut done: BTreeSet<ActivityId> = BTreeSet::new();
    let mut order = Vec::with_capacity(def.activities.len());
    let mut stack: Vec<(ActivityId, bool)> =
        def.activities.iter().rev().map(|a| (a.id, false)).collect();
    let by_id = def.activities_by_id();
    let mut entered: BTreeSet<ActivityId> = BTreeSet::new();
    while let Some((id, expanded)) = stack.pop() {
        if done.contains(&id) {
            continue;
        }
        if expanded {
            done.insert(id);
            order.push(id);
            continue;
        }
        // Entered once only: even a cycle (which validation rules out) cannot loop here.
        if !entered.insert(id) {
            continue;
        }
        stack.push((id, true));
        if let Some(a) = by_id.get(&id) {
            for p in a.preconditions.iter().rev() {
                if !done.contains(p) {
                    stack.push((*p, false));
                }
            }
        }
    }
    order
}
