//! Organisation → XML text: one element per line, attributes in the spellings the reader
//! takes, defaults left out (no `name=""`, `priority="0"`, `onLeave="false"`,
//! `loggedOn="true"`, empty sections), so that reading the text gives the same value back.

use crate::model::{Organisation, User};
use crate::write::escape_attr;

/// Writes an organisation document (UTF-8 XML).
pub fn write_organisation(org: &Organisation) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let empty = org.roles.is_empty()
        && org.departments.is_empty()
        && org.teams.is_empty()
        && org.users.is_empty();
    if empty {
        out.push_str("<organisation/>\n");
        return out;
    }
    out.push_str("<organisation>\n");
    section(&mut out, "roles", &org.roles, |r| {
        element("role", &[("id", Some(r.id.as_str())), name(&r.name)])
    });
    section(&mut out, "departments", &org.departments, |d| {
        let parent = d.parent.as_ref().map(|p| p.as_str());
        element(
            "department",
            &[
                ("id", Some(d.id.as_str())),
                name(&d.name),
                ("parent", parent),
            ],
        )
    });
    section(&mut out, "teams", &org.teams, |t| {
        let parent = t.parent.as_ref().map(|p| p.as_str());
        element(
            "team",
            &[
                ("id", Some(t.id.as_str())),
                name(&t.name),
                ("parent", parent),
            ],
        )
    });
    section(&mut out, "users", &org.users, user);
    out.push_str("</organisation>\n");
    out
}

/// `<name>` with one line per item (indented), or nothing when there are none.
fn section<T>(out: &mut String, name: &str, items: &[T], line: impl Fn(&T) -> String) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("  <{name}>\n"));
    for item in items {
        for text in line(item).lines() {
            out.push_str("    ");
            out.push_str(text);
            out.push('\n');
        }
    }
    out.push_str(&format!("  </{name}>\n"));
}

/// The `name` attribute, left out when empty.
fn name(name: &str) -> (&'static str, Option<&str>) {
    ("name", Some(name).filter(|n| !n.is_empty()))
}

/// A user: its first team as the `team` attribute, the others as `team` children after its
/// roles.
fn user(u: &User) -> String {
    let (first_team, more_teams) = match u.teams.split_first() {
        Some((first, rest)) => (Some(first.as_str()), rest),
        None => (None, &[][..]),
    };
    let attrs = [
        ("id", Some(u.id.as_str())),
        name(&u.name),
        ("department", u.department.as_ref().map(|d| d.as_str())),
        ("team", first_team),
        ("device", u.device.as_deref()),
        ("onLeave", u.on_leave.then_some("true")),
        ("loggedOn", (!u.logged_on).then_some("false")),
    ];
    if u.roles.is_empty() && more_teams.is_empty() {
        return element("user", &attrs);
    }
    let mut text = open("user", &attrs);
    text.push_str(">\n");
    for grant in &u.roles {
        let priority = (grant.priority != 0).then(|| grant.priority.to_string());
        let attrs = [
            ("id", Some(grant.role.as_str())),
            ("priority", priority.as_deref()),
        ];
        text.push_str(&format!("  {}\n", element("role", &attrs)));
    }
    for team in more_teams {
        let attrs = [("id", Some(team.as_str()))];
        text.push_str(&format!("  {}\n", element("team", &attrs)));
    }
    text.push_str("</user>");
    text
}

/// `<name a="v" .../>`, leaving out the attributes without a value.
fn element(name: &str, attrs: &[(&str, Option<&str>)]) -> String {
    let mut text = open(name, attrs);
    text.push_str("/>");
    text
}

/// `<name a="v" ...` (not closed).
fn open(name: &str, attrs: &[(&str, Option<&str>)]) -> String {
    let mut text = format!("<{name}");
    for (attr, value) in attrs {
        if let Some(value) = value {
            text.push_str(&format!(" {attr}=\"{}\"", escape_attr(value)));
        }
    }
    text
}
