//! How both CLIs' `api-tokens` commands show tokens: a grant as a word (with the user a
//! controller's token speaks for), the list as a table.

use serde_json::Value;

/// A grant as `{"role": "viewer"}` or `{"user": "alice"}` shows it: `viewer`, `user alice`.
pub fn grant(value: &Value) -> String {
    match (value["role"].as_str(), value["user"].as_str()) {
        (Some(role), _) => role.to_owned(),
        (None, Some(user)) => format!("user {user}"),
        _ => value.to_string(),
    }
}

/// Whom a token as `GET /api-tokens` shows it speaks for: its grant, and the user it names
/// (`operator for alice`).
pub fn whom(token: &Value) -> String {
    match token["user"].as_str() {
        Some(user) => format!("{} for {user}", grant(&token["grant"])),
        None => grant(&token["grant"]),
    }
}

/// The answer of `GET /api-tokens` as a table, each creation time shown by `created`;
/// `switch` is the command line that turned the check off (`serve --insecure-no-auth`).
pub fn listing(body: &Value, switch: &str, created: impl Fn(u64) -> String) -> String {
    let mut out = String::new();
    if body["enforced"].as_bool() == Some(false) {
        out.push_str(&format!("the API checks NO tokens ({switch})\n"));
    }
    out.push_str(&format!(
        "{:<14} {:<15} {:<24} LABEL\n",
        "TOKEN ID", "GRANT", "CREATED (UTC)"
    ));
    for t in body["tokens"].as_array().cloned().unwrap_or_default() {
        out.push_str(&format!(
            "{:<14} {:<15} {:<24} {}\n",
            t["id"].as_str().unwrap_or_default(),
            whom(&t),
            created(t["created_ms"].as_u64().unwrap_or_default()),
            t["label"].as_str().unwrap_or_default()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_shows_each_grant_and_says_when_nothing_is_checked() {
        let body = json!({
            "enforced": false,
            "tokens": [
                {"id": "t1", "grant": {"role": "viewer"}, "created_ms": 5, "label": "dash"},
                {"id": "t2", "grant": {"user": "alice"}, "created_ms": 6, "label": ""},
                {"id": "t3", "grant": {"role": "operator"}, "user": "bob", "created_ms": 7, "label": ""},
            ]
        });
        let text = listing(&body, "run --insecure-no-auth", |ms| format!("at {ms}"));
        assert!(text.starts_with("the API checks NO tokens (run --insecure-no-auth)\n"));
        assert!(text.contains("t1             viewer          at 5"));
        assert!(text.contains("user alice"));
        assert!(text.contains("dash"));
        assert!(text.contains("t3             operator for bob"), "{text}");
    }
}
