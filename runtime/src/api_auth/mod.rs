//! Who may use a daemon's HTTP API: bearer tokens, each granting a role (viewer < operator <
//! administrator) or, on a node, one user's own worklist. Both daemons share it: the tokens (kept
//! only as their SHA-256, in the daemon's store, synced before a new token is shown), the file
//! `serve`/`run` writes the administrator's token to, the axum layer that answers 401/403
//! (`guard`), the `/api-tokens` routes (`routes`), and the client side both CLIs share: the
//! token a command shows and the check's refusal (`client`), the `api-tokens` command (`cli`).
//! What each route needs is the daemon's own table (`controller::api_access`,
//! `node::api_access`).

mod cli;
mod client;
mod guard;
mod listing;
mod routes;
mod tokens;

use serde::{Deserialize, Serialize};

pub use cli::{ApiCli, ApiTokensCommand, GrantArgs, api_tokens};
pub use client::{
    NotAuthorised, authorised, base_url, bearer_client, exit_code_of, token, token_from_env,
};
pub use guard::{guard, protect};
pub use listing::{grant, listing, whom};
pub use routes::routes;
pub use tokens::{ApiTokens, AuthSettings, NotMade};

/// What an API token starts with: says what it is when found in a file or a log.
pub const API_TOKEN_PREFIX: &str = "mwf_api_";

/// The most API tokens a daemon keeps (create refuses past it: revoke some).
pub const MAX_API_TOKENS: usize = 1024;

/// The longest label of an API token, in characters.
pub const MAX_API_LABEL_CHARS: usize = 200;

/// The longest user id a user token may name, in characters (the organisation document's
/// `MAX_ID_CHARS`).
pub const MAX_USER_CHARS: usize = mobiwf_xml_schema::limits::MAX_ID_CHARS;

/// The exit code of a command whose API call was refused for want of a token (401) or of a
/// role (403 from the token check): both CLIs use it.
pub const EXIT_NOT_AUTHORISED: u8 = 6;

/// What a token may do; each role may do everything the ones below it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Read: every `GET` but the token lists.
    Viewer,
    /// Read, and run the work: submit, control, rerun, administer work items, complete.
    Operator,
    /// Everything: join tokens, nodes, the organisation, API tokens.
    Administrator,
}

impl Role {
    /// Every role, lowest first.
    pub const ALL: [Role; 3] = [Role::Viewer, Role::Operator, Role::Administrator];

    /// The role's name, as the API and the CLI spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
            Role::Administrator => "administrator",
        }
    }

    /// The role named `text`, or what the names are.
    pub fn parse(text: &str) -> Result<Role, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == text.trim())
            .ok_or_else(|| {
                format!("no role {text:?}: the roles are viewer (read), operator (submit, control) and administrator (everything)")
            })
    }
}

/// Whom a token speaks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// Anyone with this role.
    Role(Role),
    /// One user of the organisation: only their own worklist, notices and connection on the
    /// node (`/users/{user}/...`).
    User(String),
}

impl std::fmt::Display for Grant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Grant::Role(role) => write!(f, "role {}", role.as_str()),
            Grant::User(user) => write!(f, "user {user}"),
        }
    }
}

/// What a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A token with at least this role.
    Role(Role),
    /// A token with at least this role, or the named user's own token.
    RoleOrUser(Role, String),
}

impl Need {
    /// Whether `grant` may make the request.
    pub fn allows(&self, grant: &Grant) -> bool {
        match (self, grant) {
            (Need::Role(need) | Need::RoleOrUser(need, _), Grant::Role(have)) => have >= need,
            (Need::RoleOrUser(_, user), Grant::User(have)) => user == have,
            (Need::Role(_), Grant::User(_)) => false,
        }
    }
}

impl std::fmt::Display for Need {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Need::Role(role) => write!(f, "the {} role", role.as_str()),
            Need::RoleOrUser(role, user) => {
                write!(f, "the {} role, or user {user}'s own token", role.as_str())
            }
        }
    }
}

/// An API token as a daemon keeps it: its hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiToken {
    /// The token's id (the first 12 hex digits of its hash): how operators name it.
    pub id: String,
    /// SHA-256 of the token, hex.
    pub hash: String,
    /// Whom it speaks for.
    pub grant: Grant,
    /// What it is for, as its creator said.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// When it was made, ms since the epoch.
    pub created_ms: u64,
    /// On the controller, the organisation user a role token speaks for
    /// (`api-tokens create --role R --user U`): who starts an instance, for a definition's
    /// creator role, and its responsible user unless another is named. None on nodes (a
    /// user's own token is [`Grant::User`]) and on tokens made before there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// Who made a request, as the token check saw it: what the check hands the routes (an axum
/// request extension) that decide by the user a token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The API checks no tokens (`--insecure-no-auth`): whoever reaches it.
    Unchecked,
    /// A token the check took.
    Token {
        /// Its id.
        id: String,
        /// The organisation user it speaks for, if it names one ([`ApiToken::user`]).
        user: Option<String>,
    },
}

/// Whether an HTTP answer is the token check's refusal (401, or 403 with
/// `WWW-Authenticate`), rather than the daemon's own 403 about what is asked: the CLIs exit
/// with [`EXIT_NOT_AUTHORISED`] then.
pub fn is_auth_refusal(status: u16, www_authenticate: bool) -> bool {
    status == 401 || (status == 403 && www_authenticate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_users_reach_only_their_own() {
        let viewer = Grant::Role(Role::Viewer);
        let operator = Grant::Role(Role::Operator);
        let admin = Grant::Role(Role::Administrator);
        let alice = Grant::User("alice".into());
        let read = Need::Role(Role::Viewer);
        let run = Need::Role(Role::Operator);
        let all = Need::Role(Role::Administrator);
        assert!(read.allows(&viewer) && read.allows(&operator) && read.allows(&admin));
        assert!(!run.allows(&viewer) && run.allows(&operator) && run.allows(&admin));
        assert!(!all.allows(&viewer) && !all.allows(&operator) && all.allows(&admin));
        assert!(
            !read.allows(&alice),
            "a user token reads only its user's things"
        );
        let own = Need::RoleOrUser(Role::Operator, "alice".into());
        let other = Need::RoleOrUser(Role::Operator, "bob".into());
        assert!(own.allows(&alice) && !other.allows(&alice));
        assert!(own.allows(&operator) && !own.allows(&viewer));
        assert_eq!(Role::parse("operator"), Ok(Role::Operator));
        assert!(Role::parse("root").unwrap_err().contains("viewer"));
        assert!(is_auth_refusal(401, false) && is_auth_refusal(403, true));
        assert!(!is_auth_refusal(403, false) && !is_auth_refusal(404, true));
    }

    #[test]
    fn a_token_reads_back_as_stored() {
        let mut token = ApiToken {
            id: "abc".into(),
            hash: "ab".repeat(32),
            grant: Grant::User("alice".into()),
            label: String::new(),
            created_ms: 5,
            user: None,
        };
        let text = serde_json::to_string(&token).unwrap();
        assert!(text.contains(r#""grant":{"user":"alice"}"#), "{text}");
        assert_eq!(serde_json::from_str::<ApiToken>(&text).unwrap(), token);
        token.grant = Grant::Role(Role::Operator);
        token.user = Some("bob".into());
        let text = serde_json::to_string(&token).unwrap();
        assert!(text.ends_with(r#""created_ms":5,"user":"bob"}"#), "{text}");
        assert_eq!(serde_json::from_str::<ApiToken>(&text).unwrap(), token);
    }

    #[test]
    fn a_token_stored_before_tokens_named_users_loads_and_is_written_as_it_was() {
        let stored = format!(
            r#"{{"id":"0123456789ab","hash":"{}","grant":{{"role":"operator"}},"label":"ci","created_ms":1767225600000}}"#,
            "cd".repeat(32)
        );
        let token: ApiToken = serde_json::from_str(&stored).unwrap();
        assert_eq!(token.grant, Grant::Role(Role::Operator));
        assert_eq!(token.user, None);
        assert_eq!(serde_json::to_string(&token).unwrap(), stored);
    }
}
