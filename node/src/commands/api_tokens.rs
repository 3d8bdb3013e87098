//! `api-tokens create (--role R | --user U) [--label L] | list | revoke ID`: the bearer
//! tokens of the node's HTTP API (the node's administrators only), a user's own token among
//! them: it reaches only `/users/U/...` (their worklist, claims, notices, disconnect). The
//! command is both CLIs' own (`mobiwf_runtime::api_auth::api_tokens`); a node's token speaks
//! for a role or for one user.

use serde_json::{Map, Value};

use mobiwf_runtime::api_auth::GrantArgs;

use crate::commands::api_client::ApiArgs;

/// `mobiwf-node api-tokens ...` (exit 1 refused, 6 not authorised).
pub type ApiTokensCommand = mobiwf_runtime::api_auth::ApiTokensCommand<ApiArgs, NodeGrantArgs>;

/// Whom a node's token speaks for: anyone with a role, or one user.
#[derive(Debug, clap::Args)]
pub struct NodeGrantArgs {
    /// What it may do: viewer (read), operator (also complete work, act for any user)
    /// or administrator (everything).
    #[arg(
        long,
        value_name = "ROLE",
        required_unless_present = "user",
        conflicts_with = "user"
    )]
    role: Option<String>,
    /// A user's own token instead: only their worklist, notices and connection on this
    /// node (`/users/USER/...`).
    #[arg(long, value_name = "USER")]
    user: Option<String>,
}

impl GrantArgs for NodeGrantArgs {
    fn grant(&self) -> Map<String, Value> {
        let grant = match (&self.role, &self.user) {
            (_, Some(user)) => ("user", Value::String(user.clone())),
            (role, None) => ("role", role.clone().map_or(Value::Null, Value::String)),
        };
        Map::from_iter([(grant.0.to_owned(), grant.1)])
    }
}
