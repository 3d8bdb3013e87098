//! Reads an organisation document from its element tree, recording where every element and
//! attribute is, and reporting every problem of form (unknown elements and attributes,
//! missing ids, bad numbers and flags) at once. Cross-references are `validate`'s.

use crate::model::{
    Department, DepartmentId, Organisation, Role, RoleGrant, RoleId, Team, TeamId, User, UserId,
};
use crate::read::{Child, Ctx, abbreviate, many, one, suggest};
use crate::source_map::Node;
use crate::tree::Element;

const ROOT: &[Child] = &[
    one(&["roles"]),
    one(&["departments"]),
    one(&["teams"]),
    one(&["users"]),
];
const ROLES: &[Child] = &[many(&["role"])];
const DEPARTMENTS: &[Child] = &[many(&["department"])];
const TEAMS: &[Child] = &[many(&["team"])];
const USERS: &[Child] = &[many(&["user"])];
const USER: &[Child] = &[many(&["role"]), many(&["team"])];

const ROLE_ATTRS: &[&str] = &["id", "name"];
const DEPARTMENT_ATTRS: &[&str] = &["id", "name", "parent"];
const TEAM_ATTRS: &[&str] = &["id", "name", "parent"];
const USER_ATTRS: &[&str] = &[
    "id",
    "name",
    "department",
    "team",
    "device",
    "onLeave",
    "loggedOn",
];
const GRANT_ATTRS: &[&str] = &["id", "priority"];
const USER_TEAM_ATTRS: &[&str] = &["id"];

/// Reads an organisation; `None` only when the root is not `organisation`. Problems go to
/// `ctx`.
pub(crate) fn read_organisation(ctx: &mut Ctx, root: &Element) -> Option<Organisation> {
    if root.name != "organisation" {
        ctx.error(
            root.pos,
            format!(
                "the root element is <{}>; an organisation document starts with \
                 <organisation>",
                root.name
            ),
        );
        return None;
    }
    ctx.map.set(Node::Root, root.pos);
    check_attrs(ctx, root, "<organisation>", &[]);
    ctx.check_content(root, "<organisation>", ROOT);
    let mut org = Organisation::default();
    for (i, el) in section(ctx, root, "roles", ROLES).into_iter().enumerate() {
        org.roles.push(read_role(ctx, el, i));
    }
    for (i, el) in section(ctx, root, "departments", DEPARTMENTS)
        .into_iter()
        .enumerate()
    {
        org.departments.push(read_department(ctx, el, i));
    }
    for (i, el) in section(ctx, root, "teams", TEAMS).into_iter().enumerate() {
        org.teams.push(read_team(ctx, el, i));
    }
    for (i, el) in section(ctx, root, "users", USERS).into_iter().enumerate() {
        org.users.push(read_user(ctx, el, i));
    }
    Some(org)
}

/// The items of section `name` of the root (none when it is absent), after checking its shape.
fn section<'a>(
    ctx: &mut Ctx,
    root: &'a Element,
    name: &str,
    spec: &'static [Child],
) -> Vec<&'a Element> {
    let list = root.child(&[name]);
    if let Some(list) = list {
        let what = format!("<{name}>");
        check_attrs(ctx, list, &what, &[]);
        ctx.check_content(list, &what, spec);
    }
    let item = match spec.first() {
        Some(child) => child.names(),
        None => &[],
    };
    list.into_iter()
        .flat_map(|l| l.children_named(item))
        .collect()
}

fn read_role(ctx: &mut Ctx, el: &Element, i: usize) -> Role {
    ctx.map.set(Node::Role(i), el.pos);
    record_attrs(ctx, el, ROLE_ATTRS, |name| Node::RoleAttr(i, name));
    let id = id(ctx, el, "role", "tech");
    let what = format!("<role> ({})", owner("role", id.as_deref()));
    check_attrs(ctx, el, &what, ROLE_ATTRS);
    ctx.check_content(el, &what, &[]);
    Role {
        id: RoleId::new(id.unwrap_or_default()),
        name: text_attr(el, "name"),
    }
}

fn read_department(ctx: &mut Ctx, el: &Element, i: usize) -> Department {
    ctx.map.set(Node::Department(i), el.pos);
    record_attrs(ctx, el, DEPARTMENT_ATTRS, |name| {
        Node::DepartmentAttr(i, name)
    });
    let id = id(ctx, el, "department", "field");
    let what = format!("<department> ({})", owner("department", id.as_deref()));
    check_attrs(ctx, el, &what, DEPARTMENT_ATTRS);
    ctx.check_content(el, &what, &[]);
    Department {
        id: DepartmentId::new(id.unwrap_or_default()),
        name: text_attr(el, "name"),
        parent: el.attr(&["parent"]).map(DepartmentId::from),
    }
}

fn read_team(ctx: &mut Ctx, el: &Element, i: usize) -> Team {
    ctx.map.set(Node::Team(i), el.pos);
    record_attrs(ctx, el, TEAM_ATTRS, |name| Node::TeamAttr(i, name));
    let id = id(ctx, el, "team", "north");
    let what = format!("<team> ({})", owner("team", id.as_deref()));
    check_attrs(ctx, el, &what, TEAM_ATTRS);
    ctx.check_content(el, &what, &[]);
    Team {
        id: TeamId::new(id.unwrap_or_default()),
        name: text_attr(el, "name"),
        parent: el.attr(&["parent"]).map(TeamId::from),
    }
}

fn read_user(ctx: &mut Ctx, el: &Element, i: usize) -> User {
    ctx.map.set(Node::User(i), el.pos);
    record_attrs(ctx, el, USER_ATTRS, |name| Node::UserAttr(i, name));
    let id = id(ctx, el, "user", "alice");
    let owner = owner("user", id.as_deref());
    let what = format!("<user> ({owner})");
    check_attrs(ctx, el, &what, USER_ATTRS);
    ctx.check_content(el, &what, USER);
    let mut teams = Vec::new();
    if let Some(attr) = el.attrs.iter().find(|a| a.name == "team") {
        ctx.map.set(Node::UserTeam(i, 0), attr.pos);
        teams.push(TeamId::new(attr.value.clone()));
    }
    let mut roles = Vec::new();
    for child in &el.children {
        match child.name.as_str() {
            "role" => {
                if let Some(grant) = read_grant(ctx, child, &owner, (i, roles.len())) {
                    roles.push(grant);
                }
            }
            "team" => {
                if let Some(team) = read_user_team(ctx, child, &owner, (i, teams.len())) {
                    teams.push(team);
                }
            }
            _ => {}
        }
    }
    User {
        id: UserId::new(id.unwrap_or_default()),
        name: text_attr(el, "name"),
        department: el.attr(&["department"]).map(DepartmentId::from),
        teams,
        device: el.attr(&["device"]).map(str::to_owned),
        on_leave: flag(ctx, el, "onLeave", &owner, false),
        logged_on: flag(ctx, el, "loggedOn", &owner, true),
        roles,
    }
}

/// A `role` child of a user: the grant `(user, j)`; `None` when it has no id.
fn read_grant(
    ctx: &mut Ctx,
    el: &Element,
    user: &str,
    (i, j): (usize, usize),
) -> Option<RoleGrant> {
    let what = format!("<role> of {user}");
    check_attrs(ctx, el, &what, GRANT_ATTRS);
    ctx.check_content(el, &what, &[]);
    let role = id(ctx, el, "role", "tech")?;
    ctx.map.set(Node::Grant(i, j), el.pos);
    record_attrs(ctx, el, GRANT_ATTRS, |name| Node::GrantAttr(i, j, name));
    let priority = el
        .attrs
        .iter()
        .find(|a| a.name == "priority")
        .and_then(|a| priority(ctx, a, &role, user))
        .unwrap_or(0);
    Some(RoleGrant {
        role: RoleId::new(role),
        priority,
    })
}

/// A `team` child of a user: its `j`th team; `None` when it has no id.
fn read_user_team(
    ctx: &mut Ctx,
    el: &Element,
    user: &str,
    (i, j): (usize, usize),
) -> Option<TeamId> {
    let what = format!("<team> of {user}");
    check_attrs(ctx, el, &what, USER_TEAM_ATTRS);
    ctx.check_content(el, &what, &[]);
    let team = id(ctx, el, "team", "north")?;
    let pos = el
        .attrs
        .iter()
        .find(|a| a.name == "id")
        .map_or(el.pos, |a| a.pos);
    ctx.map.set(Node::UserTeam(i, j), pos);
    Some(TeamId::new(team))
}

/// `what id`, or `this what` when the id is missing or empty: how messages name an element.
fn owner(what: &str, id: Option<&str>) -> String {
    match id {
        Some(id) if !id.is_empty() => format!("{what} {id}"),
        _ => format!("this {what}"),
    }
}

/// The `id` attribute of `el`, reported when missing (`example` shows a good one). Its form
/// (empty, white space, length) is checked by validation, which also sees models built in code.
fn id(ctx: &mut Ctx, el: &Element, what: &str, example: &str) -> Option<String> {
    let id = el.attr(&["id"]).map(str::to_owned);
    if id.is_none() {
        ctx.error(
            el.pos,
            format!(
                "<{what}> has no id attribute; add one that names the {what}, e.g. id=\"{example}\""
            ),
        );
    }
    id
}

/// The text of attribute `name`, empty when absent.
fn text_attr(el: &Element, name: &str) -> String {
    el.attr(&[name]).unwrap_or_default().to_owned()
}

/// Reports every attribute of `el` that is not in `allowed` (namespace declarations and
/// `xsi:` attributes are always allowed), suggesting the closest allowed one.
pub(crate) fn check_attrs(ctx: &mut Ctx, el: &Element, what: &str, allowed: &[&str]) {
    for attr in &el.attrs {
        let name = attr.name.as_str();
        if allowed.contains(&name)
            || name == "xmlns"
            || name.starts_with("xmlns:")
            || name.starts_with("xsi:")
        {
            continue;
        }
        let hint = match (suggest(name, allowed), allowed) {
            (Some(s), _) => format!("did you mean {s}?"),
            (None, []) => "it takes no attributes".to_owned(),
            (None, [only]) => format!("its only attribute is {only}"),
            (None, [init @ .., last]) => {
                format!("its attributes are {} and {last}", init.join(", "))
            }
        };
        ctx.error(
            attr.pos,
            format!("{what} has an unknown attribute {name}; {hint}"),
        );
    }
}

/// Records the position of each attribute of `el` named in `names` under `node(name)`.
fn record_attrs(
    ctx: &mut Ctx,
    el: &Element,
    names: &'static [&'static str],
    node: impl Fn(&'static str) -> Node,
) {
    for name in names {
        if let Some(attr) = el.attrs.iter().find(|a| a.name == *name) {
            ctx.map.set(node(name), attr.pos);
        }
    }
}

/// Boolean attribute `name` of `el` (`true` or `false`), `default` when absent or unreadable.
fn flag(ctx: &mut Ctx, el: &Element, name: &str, owner: &str, default: bool) -> bool {
    let Some(attr) = el.attrs.iter().find(|a| a.name == name) else {
        return default;
    };
    match attr.value.trim() {
        "true" => true,
        "false" => false,
        other => {
            ctx.error(
                attr.pos,
                format!(
                    "{name} of {owner} is \"{}\"; expected true or false (default {default})",
                    abbreviate(other)
                ),
            );
            default
        }
    }
}

/// The `priority` of `user`'s grant of `role`: a whole number that fits in 64 bits.
fn priority(ctx: &mut Ctx, attr: &crate::tree::Attribute, role: &str, user: &str) -> Option<i64> {
    let text = attr.value.trim();
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    let problem = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        format!("\"{}\", not a whole number", abbreviate(text))
    } else {
        match text.parse::<i64>() {
            Ok(n) => return Some(n),
            Err(_) => format!("{}, out of range", abbreviate(text)),
        }
    };
    ctx.error(
        attr.pos,
        format!(
            "priority of role {role} for {user} is {problem}; expected a whole number between \
             {} and {} (the higher, the sooner method priority chooses this user; default 0)",
            i64::MIN,
            i64::MAX
        ),
    );
    None
}
