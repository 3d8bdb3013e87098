//! What each route of a node's API needs: reading is the viewer's, completing manual work the
//! operator's, the API tokens the administrator's; a user's own routes (`/users/{user}/...`:
//! worklist, claims, notices, disconnect, reconnect) are also open to that user's token, and only
//! those. `/metrics` is read like any other page (viewer). A route not in the table needs the
//! administrator (closed by default).

use axum::http::Method;
use mobiwf_runtime::api_auth::{Need, Role};

/// What a request with `method` on `path` needs.
pub fn need(method: &Method, path: &str) -> Need {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let reads = *method == Method::GET || *method == Method::HEAD;
    if let ["users", user, _, ..] = parts.as_slice() {
        // The user as the route will see it (percent-decoded), so a token cannot reach
        // another user's worklist through an encoded name.
        let Some(user) = decoded(user) else {
            return Need::Role(Role::Administrator);
        };
        let role = if reads { Role::Viewer } else { Role::Operator };
        return Need::RoleOrUser(role, user);
    }
    Need::Role(match (reads, parts.as_slice()) {
        (true, ["api-tokens", ..]) => Role::Administrator,
        (true, _) => Role::Viewer,
        (false, ["instances", _, "activities", _, "complete"]) if *method == Method::POST => {
            Role::Operator
        }
        (false, _) => Role::Administrator,
    })
}

/// `segment` with its `%XX` escapes decoded; `None` when they do not make UTF-8 text.
fn decoded(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(method: &str, path: &str) -> Need {
        need(&method.parse().unwrap(), path)
    }

    #[test]
    fn the_role_table() {
        use Role::{Administrator, Operator, Viewer};
        for (method, path, want) in [
            ("GET", "/worklist", Viewer),
            ("GET", "/runs", Viewer),
            ("GET", "/instances/7/data", Viewer),
            ("GET", "/files/ab12", Viewer),
            ("GET", "/directory", Viewer),
            ("GET", "/metrics", Viewer),
            ("POST", "/instances/7/activities/2/complete", Operator),
            ("GET", "/api-tokens", Administrator),
            ("POST", "/api-tokens", Administrator),
            ("DELETE", "/api-tokens/abc", Administrator),
            ("POST", "/instances/7/activities/2/somewhere", Administrator),
            ("PUT", "/worklist", Administrator),
        ] {
            assert_eq!(at(method, path), Need::Role(want), "{method} {path}");
        }
    }

    #[test]
    fn a_users_routes_are_open_to_that_user() {
        let alice = |role| Need::RoleOrUser(role, "alice".to_owned());
        assert_eq!(at("GET", "/users/alice/worklist"), alice(Role::Viewer));
        assert_eq!(at("GET", "/users/alice/notices"), alice(Role::Viewer));
        for action in [
            "select", "release", "lock", "unlock", "pause", "resume", "complete", "delegate",
        ] {
            let path = format!("/users/alice/worklist/7/2/{action}");
            assert_eq!(at("POST", &path), alice(Role::Operator));
        }
        assert_eq!(at("POST", "/users/alice/disconnect"), alice(Role::Operator));
        assert_eq!(at("POST", "/users/alice/reconnect"), alice(Role::Operator));
        // Encoded names are judged as the route reads them.
        assert_eq!(at("GET", "/users/al%69ce/worklist"), alice(Role::Viewer));
        assert_eq!(
            at("GET", "/users/%ff/worklist"),
            Need::Role(Role::Administrator)
        );
        assert_eq!(
            at("GET", "/users/a%2/worklist"),
            Need::Role(Role::Administrator)
        );
    }
}
