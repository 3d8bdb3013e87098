//! What each route of the controller's API needs: reading is the viewer's, running the work
//! (submit, deploy and remove definitions, start instances of them, control, rerun, work item
//! administration) the operator's (a definition's creator role is checked further by the
//! start itself, against the token's user), and the mesh and its people
//! (join tokens, the allow list, removing nodes, the organisation, the class document, the
//! ordering document) and the API tokens the
//! administrator's. `/metrics` is read like any other page (viewer): it names peers' message kinds
//! and counts, and Prometheus sends a bearer token (`authorization: credentials_file`). A route not
//! in the table needs the administrator (closed by default); so does reading the token lists.

use axum::http::Method;
use mobiwf_runtime::api_auth::{Need, Role};

/// What a request with `method` on `path` needs.
pub fn need(method: &Method, path: &str) -> Need {
    Need::Role(role(method, path))
}

fn role(method: &Method, path: &str) -> Role {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let admin_reads = matches!(parts.first(), Some(&"tokens" | &"api-tokens"));
    if *method == Method::GET || *method == Method::HEAD {
        return if admin_reads {
            Role::Administrator
        } else {
            Role::Viewer
        };
    }
    let runs_work = matches!(
        (method.as_str(), parts.as_slice()),
        ("POST", ["instances"])
            | ("POST", ["definitions"] | ["definitions", _, "instances"])
            | ("DELETE", ["definitions", _])
            | ("POST", ["instances", _, "interrupt" | "resume" | "cancel"])
            | (
                "POST",
                [
                    "instances",
                    _,
                    "activities",
                    _,
                    "rerun" | "worklist" | "pause" | "resume"
                ]
            )
    );
    if runs_work {
        Role::Operator
    } else {
        Role::Administrator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_role_table() {
        let cases = [
            ("GET", "/instances", Role::Viewer),
            ("GET", "/instances/7", Role::Viewer),
            ("GET", "/instances/7/wait", Role::Viewer),
            ("GET", "/instances/7/history", Role::Viewer),
            ("GET", "/instances/7/data", Role::Viewer),
            ("GET", "/instances/7/graph", Role::Viewer),
            ("GET", "/nodes", Role::Viewer),
            ("GET", "/org", Role::Viewer),
            ("GET", "/metrics", Role::Viewer),
            ("POST", "/instances", Role::Operator),
            ("POST", "/instances/7/interrupt", Role::Operator),
            ("POST", "/instances/7/resume", Role::Operator),
            ("POST", "/instances/7/cancel", Role::Operator),
            ("POST", "/instances/7/activities/2/rerun", Role::Operator),
            ("POST", "/instances/7/activities/2/pause", Role::Operator),
            ("POST", "/instances/7/activities/2/resume", Role::Operator),
            ("POST", "/instances/7/activities/2/worklist", Role::Operator),
            ("GET", "/definitions", Role::Viewer),
            ("GET", "/definitions/maintenance", Role::Viewer),
            ("POST", "/definitions", Role::Operator),
            ("DELETE", "/definitions/maintenance", Role::Operator),
            ("POST", "/definitions/maintenance/instances", Role::Operator),
            ("POST", "/definitions/maintenance", Role::Administrator),
            ("PUT", "/org", Role::Administrator),
            ("GET", "/classes", Role::Viewer),
            ("GET", "/sync", Role::Viewer),
            ("PUT", "/classes", Role::Administrator),
            ("GET", "/orderings", Role::Viewer),
            ("PUT", "/orderings", Role::Administrator),
            ("GET", "/tokens", Role::Administrator),
            ("POST", "/tokens", Role::Administrator),
            ("DELETE", "/tokens/abc", Role::Administrator),
            ("POST", "/nodes/allow", Role::Administrator),
            ("DELETE", "/nodes/P1", Role::Administrator),
            ("GET", "/api-tokens", Role::Administrator),
            ("POST", "/api-tokens", Role::Administrator),
            ("DELETE", "/api-tokens/abc", Role::Administrator),
            ("POST", "/instances/7/somewhere-new", Role::Administrator),
            ("DELETE", "/instances/7", Role::Administrator),
        ];
        for (method, path, want) in cases {
            let method: Method = method.parse().unwrap();
            assert_eq!(role(&method, path), want, "{method} {path}");
            assert_eq!(need(&method, path), Need::Role(want));
        }
    }
}
