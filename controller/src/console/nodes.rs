//! `GET /console/nodes`: the registered nodes as the controller knows them (what `GET /nodes`
//! and `GET /org` show): each node's name, peer id, skills and addresses, when it last
//! registered and how often, whether the failure detector suspects it (and why), and the
//! users whose worklists it holds, with their roles, marked when they are away
//! (`mobiwf-node disconnect`), on leave or logged off.

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_book::NodeInfo;
use mobiwf_people::Directory;
use mobiwf_runtime::web;

use super::Console;

/// `GET /console/nodes`.
pub(super) async fn page(State(console): State<Console>, headers: HeaderMap, uri: Uri) -> Response {
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, "/nodes")) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let read = async {
        let nodes = console.client.nodes().await?;
        let directory = console.client.directory().await?;
        anyhow::Ok((nodes, directory))
    };
    let (mut nodes, directory) = match read.await {
        Ok(read) => read,
        Err(e) => {
            let why = format!("cannot read the nodes: {e:#}");
            return super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    nodes.sort_by(|a, b| a.name.as_str().cmp(b.name.as_str()));
    let csrf = signed.csrf();
    web::html(
        StatusCode::OK,
        web::layout(
            "Nodes",
            Some(web::bar(&signed, &csrf)),
            &body(&nodes, &directory),
        ),
    )
}

/// The page's body: one row per node, in name order.
fn body(nodes: &[NodeInfo], directory: &Directory) -> Markup {
    html! {
        (super::nav(Some(super::Section::Nodes)))
        h1 { "Nodes" }
        @if nodes.is_empty() {
            p.empty { "No node has registered." }
        } @else {
            div.wide { table.nodes {
                thead { tr {
                    th { "Name" } th { "Peer id" } th { "Skills" } th { "Last registered" }
                    th { "State" } th { "Users" }
                } }
                tbody {
                    @for node in nodes { (row(node, directory)) }
                }
            } }
        }
    }
}

/// One node's row.
fn row(node: &NodeInfo, directory: &Directory) -> Markup {
    let device = directory.devices.get(&node.name);
    let skills: Vec<String> = node.skills.iter().map(ToString::to_string).collect();
    let state = if node.suspected.is_some() {
        "suspected"
    } else {
        "answering"
    };
    html! {
        tr data-node=(node.name.as_str()) data-state=(state) {
            td { (node.name.as_str()) }
            td.peer { code { (node.peer.as_str()) }
                @for addr in &node.addrs { br; small { (addr) } }
            }
            td { (skills.join(", ")) }
            td {
                (mobiwf_book::format_time(node.registered_ms))
                @if let Some(device) = device {
                    " " small { "(" (device.connections) " times)" }
                }
            }
            td {
                @if let Some(why) = &node.suspected {
                    span.refused { "suspected: " (why) }
                } @else {
                    "answering"
                }
            }
            td { (users(node, directory)) }
        }
    }
}

/// The users whose worklists the node holds, with their roles and whether they can be
/// offered work.
fn users(node: &NodeInfo, directory: &Directory) -> Markup {
    let away = directory
        .devices
        .get(&node.name)
        .map_or(&[][..], |d| d.away.as_slice());
    let on_it: Vec<_> = directory.users_on(node.name.as_str()).collect();
    html! {
        @if on_it.is_empty() {
            span.empty { "none" }
        } @else {
            ul.users {
                @for user in on_it {
                    li data-user=(user.id.as_str()) {
                        (user.id.as_str())
                        @let roles: Vec<&str> = user.roles.iter().map(|g| g.role.as_str()).collect();
                        @if !roles.is_empty() { " " small { "(" (roles.join(", ")) ")" } }
                        @if away.iter().any(|a| a.as_str() == user.id.as_str()) {
                            " " span.away { "away" }
                        }
                        @if user.on_leave { " " span.away { "on leave" } }
                        @if !user.logged_on { " " span.away { "logged off" } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, suspected: Option<&str>) -> NodeInfo {
        serde_json::from_value(serde_json::json!({
            "peer": format!("12D3Koo{name}"), "name": name, "skills": [1, 2],
            "addrs": ["/ip4/127.0.0.1/tcp/4001"], "registered_ms": 0, "seq": 1,
            "suspected": suspected,
        }))
        .expect("a node")
    }

    fn directory() -> Directory {
        let document = r#"<organisation>
  <roles><role id="tech"/></roles>
  <users>
    <user id="alice" name="Alice" device="D1"><role id="tech"/></user>
    <user id="bob" name="Bob" device="D1" onLeave="true"/>
  </users>
</organisation>"#;
        let sent = mobiwf_proto::DirectoryVersion {
            version: 1,
            document: document.to_owned(),
            devices: Vec::new(),
        };
        Directory::parse(sent).expect("a directory")
    }

    #[test]
    fn each_node_shows_its_peer_skills_state_and_users() {
        let page = body(
            &[
                node("D1", None),
                node("D2", Some("no answer for 10 s")),
                node("<b>N</b>", None),
            ],
            &directory(),
        )
        .into_string();
        assert!(
            page.contains("data-node=\"D1\" data-state=\"answering\""),
            "{page}"
        );
        assert!(
            page.contains("data-node=\"D2\" data-state=\"suspected\""),
            "{page}"
        );
        assert!(page.contains("12D3KooD1"), "{page}");
        assert!(page.contains("1, 2"), "{page}");
        assert!(page.contains("suspected: no answer for 10 s"), "{page}");
        assert!(page.contains("data-user=\"alice\""), "{page}");
        assert!(page.contains("(tech)"), "{page}");
        assert!(page.contains("data-user=\"bob\""), "{page}");
        assert!(page.contains("on leave"), "{page}");
        // Names are text, never markup.
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("&lt;b&gt;N&lt;/b&gt;"), "{page}");
        assert!(page.contains("href=\"/console/nodes\""), "{page}");
    }
}
