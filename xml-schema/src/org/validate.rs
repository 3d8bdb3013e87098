//! Checks an organisation's ids and cross-references: every id present, one word, short and
//! unique; every role, department and team a user or a parent names is declared; departments
//! and teams form trees (`trees.rs`); the limits of `limits.rs`.
//!
//! Each problem is reported at the attribute a person would edit (falling back to its element,
//! and to no position for models built in code), with what to do about it.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::trees::check_tree;
use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{
    MAX_DEPARTMENTS, MAX_ID_CHARS, MAX_NAME_CHARS, MAX_ROLES, MAX_TEAMS, MAX_USERS,
};
use crate::model::{DepartmentId, Organisation, TeamId, User};
use crate::read::{abbreviate, suggest};
use crate::source_map::{Node, SourceMap};

/// One of the four kinds of things an organisation declares.
pub(super) struct Kind {
    /// `role`.
    pub what: &'static str,
    /// `roles`.
    pub section: &'static str,
    /// At most this many.
    limit: usize,
    /// The limit's name in `limits.rs`.
    limit_name: &'static str,
    /// A good id, for messages.
    example: &'static str,
}

const ROLE: Kind = Kind {
    what: "role",
    section: "roles",
    limit: MAX_ROLES,
    limit_name: "MAX_ROLES",
    example: "tech",
};
const DEPARTMENT: Kind = Kind {
    what: "department",
    section: "departments",
    limit: MAX_DEPARTMENTS,
    limit_name: "MAX_DEPARTMENTS",
    example: "field",
};
const TEAM: Kind = Kind {
    what: "team",
    section: "teams",
    limit: MAX_TEAMS,
    limit_name: "MAX_TEAMS",
    example: "north",
};
const USER: Kind = Kind {
    what: "user",
    section: "users",
    limit: MAX_USERS,
    limit_name: "MAX_USERS",
    example: "alice",
};

/// A declared role, department, team or user, with where its parts are.
pub(super) struct Item<'a> {
    pub id: &'a str,
    name: &'a str,
    /// Where the element is.
    at: Pos,
    /// Where its id is (the element when the attribute is not known).
    pub id_pos: Pos,
    name_pos: Pos,
}

/// Every cross-reference problem of `org`, positioned with `map` (an empty map gives
/// positionless diagnostics, for models built in code).
pub fn validate_organisation(org: &Organisation, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let roles = items(
        map,
        org.roles.iter().map(|r| (r.id.as_str(), r.name.as_str())),
        (Node::Role, Node::RoleAttr),
    );
    let departments = items(
        map,
        org.departments
            .iter()
            .map(|d| (d.id.as_str(), d.name.as_str())),
        (Node::Department, Node::DepartmentAttr),
    );
    let teams = items(
        map,
        org.teams.iter().map(|t| (t.id.as_str(), t.name.as_str())),
        (Node::Team, Node::TeamAttr),
    );
    let users = items(
        map,
        org.users.iter().map(|u| (u.id.as_str(), u.name.as_str())),
        (Node::User, Node::UserAttr),
    );
    let groups = Groups {
        roles: check_declared(&mut diags, &ROLE, &roles),
        departments: check_declared(&mut diags, &DEPARTMENT, &departments),
        teams: check_declared(&mut diags, &TEAM, &teams),
    };
    check_declared(&mut diags, &USER, &users);
    let department_parents = parents(
        map,
        org.departments
            .iter()
            .map(|d| d.parent.as_ref().map(DepartmentId::as_str)),
        (Node::Department, Node::DepartmentAttr),
    );
    check_tree(&mut diags, &groups.departments, &department_parents);
    let team_parents = parents(
        map,
        org.teams
            .iter()
            .map(|t| t.parent.as_ref().map(TeamId::as_str)),
        (Node::Team, Node::TeamAttr),
    );
    check_tree(&mut diags, &groups.teams, &team_parents);
    for (i, user) in org.users.iter().enumerate() {
        check_user(&mut diags, &groups, map, i, user);
    }
    diags
}

/// How the source map addresses the `i`th item of one kind, and its attributes.
type Nodes = (fn(usize) -> Node, fn(usize, &'static str) -> Node);

/// The items of one kind, from their `(id, name)`s in document order.
fn items<'a>(
    map: &SourceMap,
    parts: impl Iterator<Item = (&'a str, &'a str)>,
    (node, attr): Nodes,
) -> Vec<Item<'a>> {
    parts
        .enumerate()
        .map(|(i, (id, name))| Item {
            id,
            name,
            at: map.pos(node(i)),
            id_pos: map.pos_or(attr(i, "id"), node(i)),
            name_pos: map.pos_or(attr(i, "name"), node(i)),
        })
        .collect()
}

/// The parent each item of one kind names, with where it names it.
fn parents<'a>(
    map: &SourceMap,
    parents: impl Iterator<Item = Option<&'a str>>,
    (node, attr): Nodes,
) -> Vec<Option<(&'a str, Pos)>> {
    parents
        .enumerate()
        .map(|(i, parent)| parent.map(|p| (p, map.pos_or(attr(i, "parent"), node(i)))))
        .collect()
}

/// Checks the items of one kind: how many, their ids' form and uniqueness, their names'
/// length. Returns the ids a reference may name.
pub(super) fn check_declared<'a>(
    diags: &mut Vec<Diagnostic>,
    kind: &'a Kind,
    items: &'a [Item<'a>],
) -> Known<'a> {
    if let Some(over) = items.get(kind.limit) {
        diags.push(Diagnostic::new(
            over.at,
            format!(
                "the organisation declares {} {}, more than the {} allowed ({}); every node \
                 holds a copy of the organisation, so keep it within the limit",
                items.len(),
                kind.section,
                kind.limit,
                kind.limit_name
            ),
        ));
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (index, item) in items.iter().enumerate() {
        check_id_form(diags, kind, item);
        check_name(diags, kind, item);
        if item.id.is_empty() {
            continue;
        }
        match first.get(item.id) {
            Some(&f) => diags.push(Diagnostic::new(
                item.id_pos,
                format!(
                    "duplicate {what} id {id}: {what} {id} is already declared{at}; give each \
                     {what} its own id",
                    what = kind.what,
                    id = item.id,
                    at = at(items[f].id_pos),
                ),
            )),
            None => {
                first.insert(item.id, index);
            }
        }
    }
    Known { kind, first, items }
}

/// ` at L:C`, or nothing for a position that is not known.
fn at(pos: Pos) -> String {
    if pos.is_known() {
        format!(" at {pos}")
    } else {
        String::new()
    }
}

/// An id is present, one word, and at most [`MAX_ID_CHARS`] characters long.
fn check_id_form(diags: &mut Vec<Diagnostic>, kind: &Kind, item: &Item) {
    let what = kind.what;
    let message = if item.id.is_empty() {
        format!(
            "this {what} has an empty id; give it one that names the {what}, e.g. id=\"{}\"",
            kind.example
        )
    } else if item.id.chars().any(char::is_whitespace) {
        let word: Vec<&str> = item.id.split_whitespace().collect();
        format!(
            "{what} id \"{}\" contains white space; an id is one word, e.g. id=\"{}\"",
            abbreviate(item.id),
            abbreviate(&word.join("-"))
        )
    } else if item.id.chars().count() > MAX_ID_CHARS {
        format!(
            "{what} id \"{}\" has {} characters, more than the {MAX_ID_CHARS} allowed \
             (MAX_ID_CHARS); use a shorter id (the name attribute may be long)",
            abbreviate(item.id),
            item.id.chars().count()
        )
    } else {
        return;
    };
    diags.push(Diagnostic::new(item.id_pos, message));
}

/// A name is at most [`MAX_NAME_CHARS`] characters long.
fn check_name(diags: &mut Vec<Diagnostic>, kind: &Kind, item: &Item) {
    let chars = item.name.chars().count();
    if chars > MAX_NAME_CHARS {
        diags.push(Diagnostic::new(
            item.name_pos,
            format!(
                "the name of {} {} has {chars} characters, more than the {MAX_NAME_CHARS} \
                 allowed (MAX_NAME_CHARS); shorten it",
                kind.what, item.id
            ),
        ));
    }
}

/// The declared ids of one kind, which references must name.
pub(super) struct Known<'a> {
    pub kind: &'a Kind,
    /// Each id's first declaration, by index into `items`.
    pub first: HashMap<&'a str, usize>,
    pub items: &'a [Item<'a>],
}

impl Known<'_> {
    /// Reports `reference` at `pos` unless it names a declared id; `whose` says whose
    /// reference it is (`the parent of department field`). Returns whether it is known.
    pub fn check(
        &self,
        diags: &mut Vec<Diagnostic>,
        reference: &str,
        pos: Pos,
        whose: &str,
    ) -> bool {
        let (what, section) = (self.kind.what, self.kind.section);
        if self.first.contains_key(reference) {
            return true;
        }
        let message = if reference.is_empty() {
            format!("{whose} is empty; write the id of a {what} declared in <{section}>")
        } else {
            let ids: Vec<&str> = self.items.iter().map(|item| item.id).collect();
            let fix = match suggest(reference, &ids) {
                Some(s) => format!("did you mean \"{s}\"?"),
                None => format!(
                    "declare it in <{section}> with <{what} id=\"{}\"/>, or correct the id",
                    abbreviate(reference)
                ),
            };
            format!(
                "{whose} is \"{}\", which is not declared in <{section}>; {fix}",
                abbreviate(reference)
            )
        };
        diags.push(Diagnostic::new(pos, message));
        false
    }
}

/// The ids users may name.
struct Groups<'a> {
    roles: Known<'a>,
    departments: Known<'a>,
    teams: Known<'a>,
}

/// Checks user `i`: its device, and the department, teams and roles it names (each team and
/// role once).
fn check_user(diags: &mut Vec<Diagnostic>, known: &Groups, map: &SourceMap, i: usize, u: &User) {
    let el = Node::User(i);
    let owner = if u.id.as_str().is_empty() {
        "this user".to_owned()
    } else {
        format!("user {}", u.id)
    };
    if let Some(device) = &u.device {
        check_device(
            diags,
            map.pos_or(Node::UserAttr(i, "device"), el),
            device,
            &owner,
        );
    }
    if let Some(department) = &u.department {
        let pos = map.pos_or(Node::UserAttr(i, "department"), el);
        let whose = format!("the department of {owner}");
        known
            .departments
            .check(diags, department.as_str(), pos, &whose);
    }
    let mut teams: HashMap<&str, Pos> = HashMap::new();
    for (j, team) in u.teams.iter().enumerate() {
        let pos = map.pos_or(Node::UserTeam(i, j), el);
        let whose = format!("a team of {owner}");
        let team = team.as_str();
        if known.teams.check(diags, team, pos, &whose)
            && let Some(first) = repeated(&mut teams, team, pos)
        {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "{owner} is in team {team} twice (first{}); name each team once",
                    at(first)
                ),
            ));
        }
    }
    let mut roles: HashMap<&str, Pos> = HashMap::new();
    for (j, grant) in u.roles.iter().enumerate() {
        let pos = map.pos_or(Node::GrantAttr(i, j, "id"), Node::Grant(i, j));
        let pos = if pos.is_known() { pos } else { map.pos(el) };
        let whose = format!("a role of {owner}");
        let role = grant.role.as_str();
        if known.roles.check(diags, role, pos, &whose)
            && let Some(first) = repeated(&mut roles, role, pos)
        {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "{owner} is granted role {role} twice (first{}); keep one <role \
                     id=\"{role}\"/>, with the priority you mean",
                    at(first)
                ),
            ));
        }
    }
}

/// Remembers `key` at `pos`; where it was first when it was seen before.
fn repeated<'a>(seen: &mut HashMap<&'a str, Pos>, key: &'a str, pos: Pos) -> Option<Pos> {
    match seen.entry(key) {
        Entry::Occupied(first) => Some(*first.get()),
        Entry::Vacant(entry) => {
            entry.insert(pos);
            None
        }
    }
}

/// A device is the non-empty name of a node, at most [`MAX_ID_CHARS`] characters long.
fn check_device(diags: &mut Vec<Diagnostic>, pos: Pos, device: &str, owner: &str) {
    let message = if device.trim().is_empty() {
        format!(
            "the device of {owner} is empty; write the name of the node that holds the user's \
             worklist (as it registered, e.g. device=\"N2\"), or remove device"
        )
    } else if device.chars().count() > MAX_ID_CHARS {
        format!(
            "the device of {owner} is \"{}\", {} characters, more than the {MAX_ID_CHARS} \
             allowed (MAX_ID_CHARS); node names are shorter",
            abbreviate(device),
            device.chars().count()
        )
    } else {
        return;
    };
    diags.push(Diagnostic::new(pos, message));
}
