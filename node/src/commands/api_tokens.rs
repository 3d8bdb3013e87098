//! `api-tokens create (--role R | --user U) [--label L] | list | revoke ID`: the bearer
//! tokens of the node's HTTP API (the node's administrators only), a user's own token among
//! them: it reaches only `/users/U/...` (their worklist, claims, notices, disconnect).

use serde_json::{Value, json};

use mobiwf_runtime::api_auth::{grant, listing};

use crate::commands::api_client::{ApiArgs, check};

/// `mobiwf-node api-tokens ...`
#[derive(Debug, clap::Subcommand)]
pub enum ApiTokensCommand {
    /// Make an API token: printed alone on standard output (save it to a file, 0600, and use
    /// it with --token-file); the node keeps only its hash.
    Create {
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
        /// What the token is for (shown by `api-tokens list`).
        #[arg(long, default_value = "")]
        label: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List the API tokens (ids, grants and labels, never the tokens).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Revoke an API token by id: refused from the next request on.
    Revoke {
        /// The token's id (`api-tokens list`).
        id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Carries out an `api-tokens` command (exit 1 refused, 6 not authorised).
pub async fn run(command: ApiTokensCommand) -> anyhow::Result<()> {
    match command {
        ApiTokensCommand::Create {
            role,
            user,
            label,
            api,
        } => {
            let body = match (role, user) {
                (_, Some(user)) => json!({ "user": user, "label": label }),
                (role, None) => json!({ "role": role, "label": label }),
            };
            let url = format!("{}/api-tokens", api.base_url()?);
            let response = api.client()?.post(&url).json(&body).send().await?;
            let made: Value = check(response).await?.json().await?;
            println!("{}", made["token"].as_str().unwrap_or_default());
            eprintln!(
                "API token {} ({}) created",
                made["id"].as_str().unwrap_or_default(),
                grant(&made["grant"])
            );
        }
        ApiTokensCommand::List { json: as_json, api } => {
            let url = format!("{}/api-tokens", api.base_url()?);
            let body: Value = check(api.client()?.get(&url).send().await?)
                .await?
                .json()
                .await?;
            if as_json {
                println!("{}", serde_json::to_string_pretty(&body)?);
            } else {
                print!(
                    "{}",
                    listing(&body, "run --insecure-no-auth", |ms| {
                        mobiwf_runtime::process::time_of_day_utc(ms)
                    })
                );
            }
        }
        ApiTokensCommand::Revoke { id, api } => {
            let url = format!("{}/api-tokens/{id}", api.base_url()?);
            check(api.client()?.delete(&url).send().await?).await?;
            println!("API token {id} revoked");
        }
    }
    Ok(())
}
