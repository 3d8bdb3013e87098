//! `GET /console/org`: the organisation as the controller holds it (what `GET /org` shows):
//! its users with their roles, department, teams and device, and whether each can be offered
//! work (away, on leave, logged off, a device not registered); the roles with their members;
//! the departments and teams as trees with their members; the registered devices and who on
//! them is away. An operator sees at a glance why an item was offered to nobody.

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_people::Directory;
use mobiwf_runtime::web;
use mobiwf_xml_schema::User;

use super::Console;

/// `GET /console/org`.
pub(super) async fn page(State(console): State<Console>, headers: HeaderMap, uri: Uri) -> Response {
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, "/org")) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let directory = match console.client.directory().await {
        Ok(directory) => directory,
        Err(e) => {
            let why = format!("cannot read the organisation: {e:#}");
            return super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let csrf = signed.csrf();
    web::html(
        StatusCode::OK,
        web::layout(
            "Organisation",
            Some(web::bar(&signed, &csrf)),
            &body(&directory),
        ),
    )
}

/// The page's body.
fn body(directory: &Directory) -> Markup {
    let org = &directory.org;
    html! {
        (super::nav(Some(super::Section::Org)))
        h1 { "Organisation" }
        @if directory.version == 0 || org.users.is_empty() {
            p.empty {
                "No organisation applied: " code { "mobiwf-controller org apply FILE" } "."
            }
        } @else {
            p { "Directory version " (directory.version) "." }
            h2 { "Users" }
            div.wide { table.org-users {
                thead { tr {
                    th { "User" } th { "Name" } th { "Roles" } th { "Department" }
                    th { "Teams" } th { "Device" } th { "Offered work" }
                } }
                tbody { @for user in &org.users { (user_row(user, directory)) } }
            } }
            h2 { "Roles" }
            (groups("role", org.roles.iter().map(|r| (r.id.as_str(), r.name.as_str(), None)),
                |id| org.users.iter().filter(|u| u.roles.iter().any(|g| g.role.as_str() == id)).collect()))
            h2 { "Departments" }
            (groups("department", org.departments.iter()
                    .map(|d| (d.id.as_str(), d.name.as_str(), d.parent.as_ref().map(|p| p.as_str()))),
                |id| org.users.iter().filter(|u| u.department.as_ref().is_some_and(|d| d.as_str() == id)).collect()))
            h2 { "Teams" }
            (groups("team", org.teams.iter()
                    .map(|t| (t.id.as_str(), t.name.as_str(), t.parent.as_ref().map(|p| p.as_str()))),
                |id| org.users.iter().filter(|u| u.teams.iter().any(|t| t.as_str() == id)).collect()))
        }
        h2 { "Devices" }
        (devices(directory))
    }
}

/// Why `user` is offered no new work, if they are not: away, on leave, logged off, without a
/// device, or on a device that has not registered.
fn not_offered(user: &User, directory: &Directory) -> Vec<&'static str> {
    let mut why = Vec::new();
    match &user.device {
        None => why.push("no device"),
        Some(device) => {
            let entry = directory
                .devices
                .values()
                .find(|d| d.name.as_str() == device);
            match entry {
                None => why.push("device not registered"),
                Some(d) if d.away.iter().any(|a| a == &user.id) => why.push("away"),
                Some(_) => {}
            }
        }
    }
    if user.on_leave {
        why.push("on leave");
    }
    if !user.logged_on {
        why.push("logged off");
    }
    why
}

/// One user's row.
fn user_row(user: &User, directory: &Directory) -> Markup {
    let why = not_offered(user, directory);
    let roles: Vec<String> = user
        .roles
        .iter()
        .map(|g| match g.priority {
            0 => g.role.to_string(),
            p => format!("{} (priority {p})", g.role),
        })
        .collect();
    let teams: Vec<&str> = user.teams.iter().map(|t| t.as_str()).collect();
    let state = if why.is_empty() {
        "available"
    } else {
        "not-offered"
    };
    html! {
        tr data-user=(user.id.as_str()) data-state=(state) {
            td { (user.id.as_str()) }
            td { (user.name) }
            td { (roles.join(", ")) }
            td { (user.department.as_ref().map_or("", |d| d.as_str())) }
            td { (teams.join(", ")) }
            td { (user.device.as_deref().unwrap_or("")) }
            td {
                @if why.is_empty() { "yes" } @else { span.away { (why.join(", ")) } }
            }
        }
    }
}

/// A list of roles, departments or teams (`kind`): each `(id, name, parent)` with its members
/// (`members` of an id).
fn groups<'a>(
    kind: &str,
    all: impl Iterator<Item = (&'a str, &'a str, Option<&'a str>)>,
    members: impl Fn(&str) -> Vec<&'a User>,
) -> Markup {
    let all: Vec<_> = all.collect();
    html! {
        @if all.is_empty() {
            p.empty { "None." }
        } @else {
            ul.groups {
                @for (id, name, parent) in all {
                    li data-group=(format!("{kind}:{id}")) {
                        strong { (id) }
                        @if !name.is_empty() { " " (name) }
                        @if let Some(parent) = parent { " " small { "(part of " (parent) ")" } }
                        ": "
                        @let people: Vec<&str> = members(id).iter().map(|u| u.id.as_str()).collect();
                        @if people.is_empty() { span.empty { "nobody" } } @else { (people.join(", ")) }
                    }
                }
            }
        }
    }
}

/// The registered devices: name, peer id, when last registered and how often, who is away.
fn devices(directory: &Directory) -> Markup {
    html! {
        @if directory.devices.is_empty() {
            p.empty { "No device has registered." }
        } @else {
            div.wide { table.nodes {
                thead { tr {
                    th { "Device" } th { "Peer id" } th { "Last registered" } th { "Away" }
                } }
                tbody {
                    @for d in directory.devices.values() {
                        @let away: Vec<&str> = d.away.iter().map(|u| u.as_str()).collect();
                        tr data-device=(d.name.as_str()) {
                            td { a href="/console/nodes" { (d.name.as_str()) } }
                            td.peer { code { (d.node.as_str()) } }
                            td {
                                (mobiwf_book::format_time(d.last_connected_ms))
                                " " small { "(" (d.connections) " times)" }
                            }
                            td { @if away.is_empty() { span.empty { "nobody" } } @else { span.away { (away.join(", ")) } } }
                        }
                    }
                }
            } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory() -> Directory {
        let document = r#"<organisation>
  <roles><role id="tech" name="Technician"/><role id="boss"/></roles>
  <departments><department id="ops"/><department id="field" parent="ops"/></departments>
  <teams><team id="red"/></teams>
  <users>
    <user id="alice" name="Alice" department="field" team="red" device="D1"><role id="tech"/></user>
    <user id="bob" name="&lt;b&gt;Bob&lt;/b&gt;" device="D1" onLeave="true"><role id="tech" priority="2"/></user>
    <user id="carol" device="D9" loggedOn="false"/>
  </users>
</organisation>"#;
        let sent = mobiwf_proto::DirectoryVersion {
            version: 3,
            document: document.to_owned(),
            devices: Vec::new(),
        };
        Directory::parse(sent).expect("a directory")
    }

    #[test]
    fn users_roles_groups_and_who_is_not_offered_work() {
        let page = body(&directory()).into_string();
        assert!(page.contains("Directory version 3"), "{page}");
        assert!(page.contains("href=\"/console/org\""), "{page}");
        // Nothing registered: every device is missing, and said so.
        assert!(
            page.contains("data-user=\"alice\" data-state=\"not-offered\""),
            "{page}"
        );
        assert!(page.contains("device not registered"), "{page}");
        assert!(page.contains("on leave"), "{page}");
        assert!(page.contains("logged off"), "{page}");
        assert!(page.contains("tech (priority 2)"), "{page}");
        assert!(page.contains("data-group=\"role:tech\""), "{page}");
        assert!(page.contains("alice, bob"), "{page}");
        assert!(page.contains("(part of ops)"), "{page}");
        assert!(page.contains("data-group=\"team:red\""), "{page}");
        assert!(page.contains("No device has registered."), "{page}");
        // Names are text, never markup.
        assert!(!page.contains("<b>"), "{page}");
    }

    #[test]
    fn without_an_organisation_the_page_says_how_to_apply_one() {
        let empty = Directory::parse(mobiwf_proto::DirectoryVersion {
            version: 0,
            document: String::new(),
            devices: Vec::new(),
        })
        .expect("the empty directory");
        let page = body(&empty).into_string();
        assert!(page.contains("org apply"), "{page}");
    }
}
