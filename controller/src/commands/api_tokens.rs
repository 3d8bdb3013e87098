//! `api-tokens create --role R [--user U] [--label L] | list | revoke ID`: the bearer tokens
//! of the controller's HTTP API (administrators only). The command is both CLIs' own
//! (`mobiwf_runtime::api_auth::api_tokens`); a controller's token speaks for a role, and for
//! the organisation user it names, if any (who starts instances: a definition's creator
//! role).

use serde_json::{Map, Value};

use mobiwf_runtime::api_auth::GrantArgs;

use super::api_client::ApiArgs;

/// `mobiwf-controller api-tokens ...`: exit 0 done, 1 refused (a bad role, an unknown id,
/// the limit), 6 not authorised, 3 the controller cannot be asked.
pub type ApiTokensCommand = mobiwf_runtime::api_auth::ApiTokensCommand<ApiArgs, RoleArgs>;

/// Carries out `command` (the runtime's); a refusal ends the command as its error says.
pub async fn run(command: ApiTokensCommand) -> anyhow::Result<std::process::ExitCode> {
    mobiwf_runtime::api_auth::api_tokens(command).await?;
    Ok(std::process::ExitCode::SUCCESS)
}

/// Whom a controller's token speaks for: anyone with a role, and the organisation user who
/// holds it, if named.
#[derive(Debug, clap::Args)]
pub struct RoleArgs {
    /// What it may do: viewer (read), operator (also submit, start, control, rerun,
    /// administer work items) or administrator (everything).
    #[arg(long, value_name = "ROLE")]
    role: String,
    /// The organisation user it speaks for: `start` checks a definition's creator role
    /// against them, and makes them the instance's responsible user unless told otherwise.
    #[arg(long, value_name = "USER")]
    user: Option<String>,
}

impl GrantArgs for RoleArgs {
    fn grant(&self) -> Map<String, Value> {
        let mut grant = Map::from_iter([("role".to_owned(), Value::String(self.role.clone()))]);
        if let Some(user) = &self.user {
            grant.insert("user".to_owned(), Value::String(user.clone()));
        }
        grant
    }
}
