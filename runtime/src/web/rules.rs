//! The rules of signing in, pure (no clock, no store, no network): what a login code and a
//! session are, when they are spent, the CSRF token a session's forms carry, which paths a
//! login may lead to, and the `Cookie`/`Set-Cookie` headers. `sessions` keeps them; the routes
//! only read and write headers around these functions.

use serde::{Deserialize, Serialize};

use crate::api_auth::Grant;
use crate::secret;

/// How long a login code may be exchanged for a session, in ms (5 minutes).
pub const CODE_TTL_MS: u64 = 5 * 60 * 1000;

/// How long a session lasts from sign-in, in ms (12 hours: a working day in the field).
pub const SESSION_TTL_MS: u64 = 12 * 60 * 60 * 1000;

/// What a login code starts with: says what it is when found in a log or a chat.
pub const CODE_PREFIX: &str = "mwf_login_";

/// What a session's token starts with (the cookie's value).
pub const SESSION_PREFIX: &str = "mwf_session_";

/// The longest path a login may lead to, in bytes.
pub const MAX_THEN_BYTES: usize = 512;

/// A login code as a daemon keeps it: its hash, never the code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginCode {
    /// The first 12 hex digits of its hash: its store key.
    pub id: String,
    /// SHA-256 of the code, hex.
    pub hash: String,
    /// Whom the session it opens speaks for.
    pub grant: Grant,
    /// The organisation user a role's session speaks for (the controller's
    /// `login-link --role R --user U`), as an API token may ([`crate::api_auth::ApiToken::user`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Where the browser goes once signed in (a path of this daemon).
    pub then: String,
    /// When it can no longer be exchanged, ms since the epoch.
    pub expires_ms: u64,
}

/// Whom a login link's session will speak for: a grant, and for a role on the controller,
/// maybe the organisation user it acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    /// The rights.
    pub grant: Grant,
    /// The organisation user a role speaks for, if any.
    pub user: Option<String>,
}

impl From<Grant> for Speaker {
    fn from(grant: Grant) -> Speaker {
        Speaker { grant, user: None }
    }
}

/// A session as a daemon keeps it: its hash, never the cookie's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// The first 12 hex digits of its hash: its store key.
    pub id: String,
    /// SHA-256 of the session's token, hex.
    pub hash: String,
    /// Whom it speaks for: exactly the rights of an API token with this grant.
    pub grant: Grant,
    /// The organisation user a role's session speaks for, if its link named one: who starts
    /// an instance, for a definition's creator role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// When it began, ms since the epoch.
    pub created_ms: u64,
    /// When it ends, ms since the epoch.
    pub expires_ms: u64,
}

/// Why a login code was not taken (each says what to do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRefused {
    /// Not a code this daemon made, or one already used.
    Unknown,
    /// Made, but more than [`CODE_TTL_MS`] ago.
    Expired,
}

impl std::fmt::Display for CodeRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CodeRefused::Unknown => {
                "this sign-in link is not one this daemon made, or it was used already: ask \
                 for a new one (login-link)"
            }
            CodeRefused::Expired => {
                "this sign-in link expired (a link works for 5 minutes): ask for a new one \
                 (login-link)"
            }
        })
    }
}

/// The store id of a secret's hash: its first 12 hex digits.
pub fn id_of(hash: &str) -> String {
    hash.chars().take(12).collect()
}

/// Whether something that ends at `expires_ms` is over at `now_ms`.
pub fn is_over(expires_ms: u64, now_ms: u64) -> bool {
    now_ms >= expires_ms
}

/// `stored` if it is the code `presented` and still valid at `now_ms`.
pub fn take_code(
    stored: Option<&LoginCode>,
    presented_hash: &str,
    now_ms: u64,
) -> Result<(), CodeRefused> {
    match stored {
        Some(code) if secret::same_hash(&code.hash, presented_hash) => {
            if is_over(code.expires_ms, now_ms) {
                Err(CodeRefused::Expired)
            } else {
                Ok(())
            }
        }
        _ => Err(CodeRefused::Unknown),
    }
}

/// The CSRF token of the session whose token is `session_token`: every state-changing form
/// and fetch of the session carries it. Derived (SHA-256 of a tag and the token) rather than
/// stored: it is the same for the whole session, and knowing it does not give the session.
pub fn csrf_of(session_token: &str) -> String {
    secret::hash(&format!("csrf:{session_token}"))
}

/// Whether `presented` is the CSRF token of the session `session_token` (constant time).
pub fn csrf_matches(session_token: &str, presented: Option<&str>) -> bool {
    presented.is_some_and(|p| secret::same_hash(&csrf_of(session_token), p.trim()))
}

/// `then` if a login may lead there: a path of this daemon (`/`, `/items/7/2`), never
/// another site (`//evil`, `https://...`, `/\evil`) nor anything with control characters.
pub fn local_path(then: &str) -> Result<String, String> {
    let fine = then.starts_with('/')
        && !then.starts_with("//")
        && !then.starts_with("/\\")
        && then.len() <= MAX_THEN_BYTES
        && !then.chars().any(char::is_control);
    if fine {
        Ok(then.to_owned())
    } else {
        Err(format!(
            "{then:?} is not a path of this daemon: give one that starts with a single `/` \
             (at most {MAX_THEN_BYTES} bytes), such as `/`"
        ))
    }
}

/// The name of a daemon's session cookie: `mwf_` and 8 hex digits of its identity (its peer
/// id), so that two daemons on one host (cookies do not tell ports apart) keep their own.
pub fn cookie_name(identity: &str) -> String {
    format!("mwf_{}", &secret::hash(identity)[..8])
}

/// The `Set-Cookie` value that gives the browser a session: only sent back to this daemon
/// (`SameSite=Strict`), never readable by scripts (`HttpOnly`), over TLS only when served so.
pub fn session_cookie(name: &str, token: &str, max_age_ms: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    let max_age = max_age_ms / 1000;
    format!("{name}={token}; Path=/; Max-Age={max_age}; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` value that makes the browser forget the session.
pub fn cleared_cookie(name: &str, secure: bool) -> String {
    session_cookie(name, "", 0, secure)
}

/// The value of cookie `name` in `Cookie` headers (`a=1; b=2`), if there is one.
pub fn cookie_value<'a>(headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<&'a str> {
    headers
        .into_iter()
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(hash: &str, expires_ms: u64) -> LoginCode {
        LoginCode {
            user: None,
            id: id_of(hash),
            hash: hash.to_owned(),
            grant: Grant::User("alice".into()),
            then: "/".into(),
            expires_ms,
        }
    }

    #[test]
    fn a_code_is_taken_once_while_valid_and_only_as_itself() {
        let hash = secret::hash("mwf_login_abc");
        let stored = code(&hash, 1_000);
        assert_eq!(take_code(Some(&stored), &hash, 999), Ok(()));
        assert_eq!(
            take_code(Some(&stored), &hash, 1_000),
            Err(CodeRefused::Expired)
        );
        let other = secret::hash("mwf_login_abd");
        assert_eq!(
            take_code(Some(&stored), &other, 0),
            Err(CodeRefused::Unknown)
        );
        assert_eq!(take_code(None, &hash, 0), Err(CodeRefused::Unknown));
        assert!(CodeRefused::Expired.to_string().contains("new one"));
    }

    #[test]
    fn the_csrf_token_belongs_to_its_session() {
        let token = "mwf_session_1";
        let csrf = csrf_of(token);
        assert!(csrf_matches(token, Some(&csrf)));
        assert!(!csrf_matches(token, None));
        assert!(!csrf_matches(token, Some("")));
        assert!(!csrf_matches("mwf_session_2", Some(&csrf)));
        assert!(
            !csrf.contains(token),
            "the CSRF token does not show the session"
        );
    }

    #[test]
    fn a_login_leads_only_to_a_path_of_this_daemon() {
        for fine in ["/", "/items/7/2", "/?order=priority"] {
            assert_eq!(local_path(fine).as_deref(), Ok(fine));
        }
        let long = format!("/{}", "a".repeat(MAX_THEN_BYTES));
        for bad in [
            "",
            "items",
            "//evil.example",
            "/\\evil.example",
            "https://evil.example/",
            "/a\nb",
            &long,
        ] {
            assert!(local_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cookies_are_strict_http_only_and_found_by_name() {
        let set = session_cookie("mwf_1", "tok", 12_000, false);
        assert_eq!(
            set,
            "mwf_1=tok; Path=/; Max-Age=12; HttpOnly; SameSite=Strict"
        );
        assert!(session_cookie("mwf_1", "tok", 0, true).ends_with("; Secure"));
        assert!(cleared_cookie("mwf_1", false).starts_with("mwf_1=; Path=/; Max-Age=0"));
        let headers = ["a=1; mwf_1=tok", "b=2"];
        assert_eq!(cookie_value(headers, "mwf_1"), Some("tok"));
        assert_eq!(cookie_value(headers, "b"), Some("2"));
        assert_eq!(cookie_value(headers, "mwf_2"), None);
        assert_eq!(cookie_value(["mwf_1="], "mwf_1"), None);
        assert_ne!(cookie_name("peer-a"), cookie_name("peer-b"));
        assert!(cookie_name("peer-a").starts_with("mwf_"));
    }
}
