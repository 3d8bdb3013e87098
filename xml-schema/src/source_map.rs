//! Where each part of a read document came from, so validation can point at it.
//!
//! Kept apart from the model so that model values compare by content only.

use std::collections::HashMap;

use crate::diagnostic::Pos;

/// A part of a document, addressed by indexes into the model's vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// The root element (`workflow`, `organisation` or `orderings`).
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
    /// The value of `states` of adjacent `j` of `activity[i]` (partition documents).
    AdjacentStates(usize, usize),
    /// The `<depends>` element of `activity[i]`.
    Depends(usize),
    /// Rule `k` of the `<depends>` of `activity[i]`: its `term`, `and` and `or` elements
    /// numbered in document order (the order of a pre-order walk of the [`crate::Rule`]),
    /// from 0 for the outermost. When `<depends>` holds several rules, rule 0 is the `and` of
    /// them that it stands for, at the `<depends>` element.
    Rule(usize, usize),
    /// Term `t` of the `<depends>` of `activity[i]`, in document order (the order of
    /// [`crate::Rule::terms`]).
    Term(usize, usize),
    /// Attribute `name` (`"flag"` or `"votes"`) of the `<merge>` of `activity[i]`.
    MergeAttr(usize, &'static str),
    /// Route `r` of the `<routes>` of `activity[i]` (the `r`th of [`crate::Activity::routes`]).
    Route(usize, usize),
    /// The `flag` attribute of route `r` of `activity[i]`.
    RouteFlag(usize, usize),
    /// The value of `to` `t` of route `r` of `activity[i]`.
    RouteTo(usize, usize, usize),
    /// The `<loop>` of `activity[i]`.
    Loop(usize),
    /// Attribute `name` (`"to"`, `"while"` or `"max"`) of the `<loop>` of `activity[i]`.
    LoopAttr(usize, &'static str),
    /// `<member>` `m` of the `<loop>` of `activity[i]` (partition documents).
    LoopMember(usize, usize),
    /// The `<reads>` of `activity[i]`: its first name (the element when it is empty).
    Reads(usize),
    /// Name `k` of the `<reads>` of `activity[i]`.
    ReadName(usize, usize),
    /// The `<writes>` of `activity[i]`: its first name (the element when it is empty).
    Writes(usize),
    /// Name `k` of the `<writes>` of `activity[i]`.
    WriteName(usize, usize),
    /// The `<carries>` of adjacent `j` of `activity[i]` (partition documents): its first name.
    Carries(usize, usize),
    /// Name `k` of the `<carries>` of adjacent `j` of `activity[i]` (partition documents).
    CarriedName(usize, usize, usize),
    /// The `<data>` element of the document.
    Data,
    /// Declaration `k` of `<data>` (a `<value>` or `<file>`), the `k`th of the model's `data`.
    DataItem(usize),
    /// Attribute `name` (`"name"` or `"type"`) of declaration `k` of `<data>`.
    DataItemAttr(usize, &'static str),
    /// `applications/application[k]` of a definition (the `k`th of the model's
    /// `applications`).
    Application(usize),
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
    /// `roles/role[i]` of an organisation document.
    Role(usize),
    /// Attribute `name` of `role[i]` (e.g. `"id"`).
    RoleAttr(usize, &'static str),
    /// `departments/department[i]` of an organisation document.
    Department(usize),
    /// Attribute `name` of `department[i]` (e.g. `"parent"`).
    DepartmentAttr(usize, &'static str),
    /// `teams/team[i]` of an organisation document.
    Team(usize),
    /// Attribute `name` of `team[i]` (e.g. `"parent"`).
    TeamAttr(usize, &'static str),
    /// `users/user[i]` of an organisation document.
    User(usize),
    /// Attribute `name` of `user[i]` (e.g. `"department"`).
    UserAttr(usize, &'static str),
    /// Role grant `j` of `user[i]` (its `j`th `role` child).
    Grant(usize, usize),
    /// Attribute `name` of role grant `j` of `user[i]` (`"id"` or `"priority"`).
    GrantAttr(usize, usize, &'static str),
    /// Team `j` of `user[i]`: its `team` attribute, or the `id` of a `team` child.
    UserTeam(usize, usize),
    /// `ordering[i]` of an ordering document (PDL: its `WORKFLOW_DEFINITIONS`).
    Ordering(usize),
    /// Attribute `name` (`"first"` or `"second"`) of `ordering[i]` (PDL: the definition's name).
    OrderingAttr(usize, &'static str),
    /// Pair `j` of `ordering[i]` (`<order>`, PDL: a line of its `RELATIVE_ORDER`).
    Order(usize, usize),
    /// The task on side `name` (`"first"` or `"second"`) of pair `j` of `ordering[i]`: its
    /// `first` or `firstId` attribute, PDL's name or number.
    OrderTask(usize, usize, &'static str),
    /// `class[i]` of a class document.
    Class(usize),
    /// The `id` of `class[i]` of a class document.
    ClassId(usize),
    /// The value of child element `name` (`"conflicts"` or `"maxWait"`) of `class[i]`.
    ClassField(usize, &'static str),
    /// Name `k` of the `<conflicts>` of `class[i]`.
    ClassConflict(usize, usize),
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
