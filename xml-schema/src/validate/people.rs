//! Checks the people extensions of an activity, the same in both languages: only manual and
//! semiAutomatic activities go to people's worklists (a dummy to nobody's), someone must be named to offer the item
//! to, the assignment basis needs its group, and method and policy must fit together.
//!
//! The checks look at the model, so an element that states its default (`<priority>0</priority>`,
//! `<assignment/>`) does no harm anywhere, as `<retries/>` does none.

use super::list;
use crate::diagnostic::{Diagnostic, Pos};
use crate::model::{ActivityId, ActivityKind, Basis, Method, People, Policy};
use crate::source_map::{Node, SourceMap};

/// Where the people extensions of activity `i` are in the document.
struct Place<'a> {
    map: &'a SourceMap,
    i: usize,
}

impl Place<'_> {
    /// Where element `field` is, or the activity when it was not written.
    fn at(&self, field: &'static str) -> Pos {
        self.map
            .pos_or(Node::ActivityField(self.i, field), Node::Activity(self.i))
    }

    /// The first of the written elements among `fields`, in document order; the activity
    /// when none of them was written (a model built in code).
    fn first(&self, fields: &[&'static str]) -> Pos {
        fields
            .iter()
            .map(|f| self.map.pos(Node::ActivityField(self.i, f)))
            .filter(|p| p.is_known())
            .min()
            .unwrap_or_else(|| self.map.pos(Node::Activity(self.i)))
    }
}

/// Reports every problem of the people extensions `people` of activity `id` (the `i`th of its
/// document) of `kind`, positioned with `map`.
pub(super) fn check_people(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    i: usize,
    id: ActivityId,
    kind: ActivityKind,
    people: &People,
) {
    let set = set_elements(people);
    if set.is_empty() {
        return;
    }
    let place = Place { map, i };
    if kind == ActivityKind::Dummy {
        diags.push(Diagnostic::new(
            place.first(&set),
            format!(
                "activity {id} is a dummy and has {}: a dummy activity passes at once and is \
                 offered to nobody; remove {}, or make the activity <kind>manual</kind> or \
                 <kind>semiAutomatic</kind>",
                elements(&set),
                if set.len() == 1 { "it" } else { "them" }
            ),
        ));
        return;
    }
    if kind == ActivityKind::Automatic {
        diags.push(Diagnostic::new(
            place.first(&set),
            format!(
                "activity {id} has {} but is automatic: only manual and semiAutomatic \
                 activities are offered to people; remove {}, or make the activity \
                 <kind>manual</kind> or <kind>semiAutomatic</kind>",
                elements(&set),
                if set.len() == 1 { "it" } else { "them" }
            ),
        ));
    }
    if people.assigned() {
        check_basis(diags, &place, id, people);
    } else {
        diags.push(Diagnostic::new(
            place.first(&set),
            format!(
                "activity {id} has {} but no <role>, <department> or <team>, so nobody would be \
                 offered the item; add <{}> naming who does it, or remove {}",
                elements(&set),
                people.basis.as_str(),
                elements(&set)
            ),
        ));
    }
    check_method(diags, &place, id, people);
    if people.pause_stops_deadline && people.deadline.is_none() {
        diags.push(Diagnostic::new(
            place.at("pauseStopsDeadline"),
            format!(
                "activity {id} has <pauseStopsDeadline> but no <deadline> to stop; add \
                 <deadline> with its hours, or remove <pauseStopsDeadline>"
            ),
        ));
    }
}

/// The people elements whose value is not the default, in the order of the language.
fn set_elements(people: &People) -> Vec<&'static str> {
    let mut set = Vec::new();
    if people.role.is_some() {
        set.push("role");
    }
    if people.department.is_some() {
        set.push("department");
    }
    if people.team.is_some() {
        set.push("team");
    }
    if people.basis != Basis::default() || people.method != Method::default() {
        set.push("assignment");
    }
    if people.policy != Policy::default() {
        set.push("policy");
    }
    if people.priority != 0 {
        set.push("priority");
    }
    if people.disconnected {
        set.push("disconnected");
    }
    if people.deadline.is_some() {
        set.push("deadline");
    }
    if people.pause_stops_deadline {
        set.push("pauseStopsDeadline");
    }
    set
}

/// `<a>, <b> and <c>`.
fn elements(fields: &[&str]) -> String {
    let names: Vec<String> = fields.iter().map(|f| format!("<{f}>")).collect();
    list(&names)
}

/// Checks that the group the assignment basis names is there (the activity names someone).
fn check_basis(diags: &mut Vec<Diagnostic>, place: &Place<'_>, id: ActivityId, people: &People) {
    let missing = match people.basis {
        Basis::Role if people.role.is_none() => {
            diags.push(default_basis_without_role(place, id, people));
            return;
        }
        Basis::Department if people.department.is_none() => "department",
        Basis::Team if people.team.is_none() => "team",
        _ => return,
    };
    diags.push(Diagnostic::new(
        place.at("assignment"),
        format!(
            "activity {id} has assignment basis {missing} but no <{missing}>, so nobody would be \
             offered the item; add <{missing}> naming the {missing} whose members do it, or \
             change the basis"
        ),
    ));
}

/// The problem of an activity with a department or team (in `people`) but no role, whose
/// basis is role: the basis was most likely meant to be the group it names.
fn default_basis_without_role(place: &Place<'_>, id: ActivityId, people: &People) -> Diagnostic {
    let has = if people.department.is_some() {
        "department"
    } else {
        "team"
    };
    let written = |field| {
        place
            .map
            .pos(Node::ActivityField(place.i, field))
            .is_known()
    };
    let pos = if written("assignment") {
        place.at("assignment")
    } else {
        place.at(has)
    };
    Diagnostic::new(
        pos,
        format!(
            "activity {id} has <{has}> but no <role>, and its assignment basis is role (the \
             default), so nobody would be offered the item; add <assignment basis=\"{has}\"/> \
             to offer it to the members of the {has}, or add <role>"
        ),
    )
}

/// Checks that the method fits the basis, and the policy the method.
fn check_method(diags: &mut Vec<Diagnostic>, place: &Place<'_>, id: ActivityId, people: &People) {
    let how = match people.method {
        Method::Priority => Some("by their priority in the role"),
        Method::RoundRobin => Some("in turn"),
        _ => None,
    };
    if let (Some(how), false) = (how, people.basis == Basis::Role) {
        diags.push(Diagnostic::new(
            place.at("assignment"),
            format!(
                "activity {id} has method {} with basis {}: {} chooses among the members of a \
                 role {how}, so it needs basis role; use basis=\"role\" with a <role>, or \
                 method fcfa, all or least-working",
                people.method.as_str(),
                people.basis.as_str(),
                people.method.as_str()
            ),
        ));
    }
    if people.policy != Policy::All && people.method != Method::Fcfa {
        diags.push(Diagnostic::new(
            place.at("policy"),
            format!(
                "activity {id} has <policy>{}</policy> with method {}: a policy says to whom an \
                 fcfa item is offered, and method {} does not offer it that way; remove \
                 <policy>, or use method=\"fcfa\"",
                people.policy.to_text(),
                people.method.as_str(),
                people.method.as_str()
            ),
        ));
    }
}
