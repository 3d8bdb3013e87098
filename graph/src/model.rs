//! What a graph holds before it is laid out: the activities with their state and lane, and
//! the edges between them. Plain data, so that the layout and the renderers are tested on
//! graphs written by hand as well as on instances (`build`).

use mobiwf_proto::{ActivityId, Pass};

use crate::state::Shown;

/// One instance's graph: what [`crate::svg`] and [`crate::dot`] draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// The caption: which instance, of which workflow.
    pub title: String,
    /// Its activities, in definition order (the order ties are broken by).
    pub activities: Vec<ActivityBox>,
    /// The edges between them, in definition order.
    pub edges: Vec<Edge>,
}

/// One activity as the graph shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityBox {
    /// Its id.
    pub id: ActivityId,
    /// Its name (may be empty).
    pub name: String,
    /// Its state, as `status` says it.
    pub state: Shown,
    /// The pass of a loop's body it is in (shown when after the first).
    pub pass: Pass,
    /// The lane it is drawn in.
    pub lane: LaneKey,
    /// The node that runs it, when its lane does not say so (one the controller placed).
    pub node: Option<String>,
}

/// A horizontal lane of the graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LaneKey {
    /// The activities of the partitions one partner (a node, by its name) runs.
    Partner(String),
    /// The activities no partition of the definition holds: contingency activities, which
    /// the controller places on a node only when a failure calls for them.
    Controller,
}

impl LaneKey {
    /// The lane's caption.
    pub fn label(&self) -> &str {
        match self {
            LaneKey::Partner(name) => name,
            LaneKey::Controller => "contingency",
        }
    }

    /// What the caption's second line says of the lane.
    pub fn note(&self) -> &'static str {
        match self {
            LaneKey::Partner(_) => "partner",
            LaneKey::Controller => "placed by the controller",
        }
    }
}

/// An edge between two activities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// Where it starts: the predecessor, the failed activity, or the loop's end.
    pub from: ActivityId,
    /// Where it ends: the successor, the contingency activity, or the loop's head.
    pub to: ActivityId,
    /// What it stands for.
    pub kind: EdgeKind,
    /// Words beside it: the route's flags, or the loop's condition.
    pub label: Option<String>,
}

/// What an edge stands for, and so how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EdgeKind {
    /// `to` has `from` among its preconditions: a solid arrow.
    Precondition,
    /// `to` runs in place of `from` when `from` fails (`contingencyActivityId`): dashed.
    Contingency,
    /// `from` ends a loop back to `to` (`<loop to>`): a curved arc back, never a layer.
    Loop,
}

impl EdgeKind {
    /// The word its element's class and the legend use.
    pub fn word(self) -> &'static str {
        match self {
            EdgeKind::Precondition => "precondition",
            EdgeKind::Contingency => "contingency",
            EdgeKind::Loop => "loop",
        }
    }
}
