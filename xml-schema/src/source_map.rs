//! Where each part of a read document came from, so validation can point at it.
//!
//! Kept apart from the model so that model values compare by content only.

use std::collections::HashMap;

use crate::diagnostic::Pos;

/// A part of a document, addressed by indexes into the model's vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// The root `workflow` element.
    Root,
    /// `activities/activity[i]`.
    Activity(usize),
    /// The value of child element `name` of `activity[i]` (e.g. `"contingencyActivityId"`).
    ActivityField(usize, &'static str),
    /// Precondition `j` of `activity[i]` (`preconditionId` or `precondition`).
    Precondition(usize, usize),
    /// The value of child element `name` of precondition `j` of `activity[i]` (partition
    /// documents, e.g. `"local"`).
    PreconditionField(usize, usize, &'static str),
    /// Adjacent `j` of `activity[i]` (partition documents).
    Adjacent(usize, usize),
    /// `activityTypes/activityType[i]`.
    ActivityType(usize),
    /// `partitions/partition[i]`.
    Partition(usize),
    /// The value of child element `name` of `partition[i]` (e.g. `"partnerId"`).
    PartitionField(usize, &'static str),
    /// `activityId` `j` of `partition[i]`.
    PartitionActivity(usize, usize),
    /// `partners/partner[i]`.
    Partner(usize),
    /// Skill `j` of `partner[i]`.
    PartnerSkill(usize, usize),
}

/// Positions of the parts of one read document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    positions: HashMap<Node, Pos>,
}

impl SourceMap {
    /// Where `node` is, or [`Pos::UNKNOWN`] for a model built in code.
    pub fn pos(&self, node: Node) -> Pos {
        self.positions.get(&node).copied().unwrap_or(Pos::UNKNOWN)
    }

    /// Where `node` is, falling back to `fallback` when it was not written in the document.
    pub fn pos_or(&self, node: Node, fallback: Node) -> Pos {
        self.positions
            .get(&node)
            .or_else(|| self.positions.get(&fallback))
            .copied()
            .unwrap_or(Pos::UNKNOWN)
    }

    pub(crate) fn set(&mut self, node: Node, pos: Pos) {
        self.positions.insert(node, pos);
    }
}
