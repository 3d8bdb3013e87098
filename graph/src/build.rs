//! An instance's graph from what the controller knows: its activities (state, pass, the node
//! that runs each) from the book's [`Instance`], its edges from the workflow definition
//! (preconditions, with the flags of the routes that lead along them; contingency activities;
//! loops' back edges).

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_book::{ActivityView, Instance, PartitionView};
use mobiwf_proto::{ActivityId, PartitionId};
use mobiwf_xml_schema::{Activity, Contingency, WorkflowDefinition};

use crate::model::{ActivityBox, Edge, EdgeKind, Graph, LaneKey};
use crate::state::Shown;

impl Graph {
    /// The graph of `inst`, with the edges of its definition `def` (none without it: the
    /// activities alone, as an instance stored before definitions were has them).
    pub fn of_instance(inst: &Instance, def: Option<&WorkflowDefinition>) -> Graph {
        let partitions: BTreeMap<PartitionId, &PartitionView> =
            inst.partitions.iter().map(|p| (p.id, p)).collect();
        let activities: Vec<ActivityBox> = inst
            .activities
            .iter()
            .map(|a| shown(&partitions, a))
            .collect();
        let present: BTreeSet<ActivityId> = activities.iter().map(|a| a.id).collect();
        let mut edges: Vec<Edge> = def.map_or_else(Vec::new, definition_edges);
        edges.retain(|e| present.contains(&e.from) && present.contains(&e.to));
        Graph {
            title: title(inst),
            activities,
            edges,
        }
    }
}

/// `instance 7: workflow 18 (Workflow Exemplo), running`.
fn title(inst: &Instance) -> String {
    let description = if inst.description.is_empty() {
        String::new()
    } else {
        format!(" ({})", inst.description)
    };
    format!(
        "instance {}: workflow {}{description}, {}",
        inst.id,
        inst.workflow,
        inst.state().as_str()
    )
}

/// One activity, in the lane of the partner that runs its partition (of `partitions`); one
/// the controller placed (its partition stands for a failed activity) or nobody placed yet
/// in the controller's lane.
fn shown(partitions: &BTreeMap<PartitionId, &PartitionView>, a: &ActivityView) -> ActivityBox {
    let partition = a.partition.and_then(|p| partitions.get(&p).copied());
    let by_partner = partition.filter(|p| p.stands_for.is_none());
    let (lane, node) = match (by_partner, &a.node) {
        (Some(p), _) => (LaneKey::Partner(p.node.to_string()), None),
        (None, node) => (LaneKey::Controller, node.as_ref().map(|n| n.to_string())),
    };
    ActivityBox {
        id: a.id,
        name: a.name.clone(),
        state: Shown::of(a),
        pass: a.pass,
        lane,
        node,
    }
}

/// The edges of `def`, activity by activity in document order: its preconditions' edges
/// into it, then its contingency's and its loop's out of it.
fn definition_edges(def: &WorkflowDefinition) -> Vec<Edge> {
    let by_id = def.activities_by_id();
    let mut edges = Vec::new();
    for a in &def.activities {
        for p in &a.preconditions {
            edges.push(Edge {
                from: *p,
                to: a.id,
                kind: EdgeKind::Precondition,
                label: by_id.get(p).and_then(|p| route_label(p, a.id)),
            });
        }
        if let Contingency::Run(x) = a.contingency {
            edges.push(Edge {
                from: a.id,
                to: x,
                kind: EdgeKind::Contingency,
                label: Some("if it fails".to_owned()),
            });
        }
        if let Some(l) = &a.loop_back {
            edges.push(Edge {
                from: a.id,
                to: l.to,
                kind: EdgeKind::Loop,
                label: Some(format!("while {}, max {}", l.while_flag, l.max)),
            });
        }
    }
    edges
}

/// The flags of the routes of `from` that lead to `to` (`otherwise` for the route without
/// one), or none when `from` has no routes (every successor goes on).
fn route_label(from: &Activity, to: ActivityId) -> Option<String> {
    let flags: Vec<&str> = from
        .routes
        .iter()
        .filter(|r| r.to.contains(&to))
        .map(|r| r.flag.as_deref().unwrap_or("otherwise"))
        .collect();
    (!flags.is_empty()).then(|| flags.join(" | "))
}
