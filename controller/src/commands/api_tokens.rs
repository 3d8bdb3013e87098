//! `api-tokens create --role R [--label L] | list | revoke ID`: the bearer tokens of the
//! controller's HTTP API (administrators only).

use std::process::ExitCode;

use mobiwf_runtime::api_auth::{grant, listing};

use super::api_client::{ApiArgs, failure, json};

/// `mobiwf-controller api-tokens ...`
#[derive(Debug, clap::Subcommand)]
pub enum ApiTokensCommand {
    /// Make an API token: printed alone on standard output (save it to a file, 0600, and use
    /// it with --token-file); the controller keeps only its hash.
    Create {
        /// What it may do: viewer (read), operator (also submit, control, rerun, administer
        /// work items) or administrator (everything).
        #[arg(long, value_name = "ROLE")]
        role: String,
        /// What the token is for (shown by `api-tokens list`).
        #[arg(long, default_value = "")]
        label: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List the API tokens (ids, roles and labels, never the tokens).
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

/// Carries out an `api-tokens` command: exit 0 done, 1 refused (a bad role, an unknown id,
/// the limit), 6 not authorised, 3 the controller cannot be asked.
pub async fn run(command: ApiTokensCommand) -> anyhow::Result<ExitCode> {
    match command {
        ApiTokensCommand::Create { role, label, api } => {
            let body = serde_json::json!({ "role": role, "label": label });
            let request = api.client()?.post(api.url("/api-tokens")).json(&body);
            match json(request, &api).await? {
                Ok(made) => {
                    println!("{}", made["token"].as_str().unwrap_or_default());
                    eprintln!(
                        "API token {} ({}) created",
                        made["id"].as_str().unwrap_or_default(),
                        grant(&made["grant"])
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failure(Ok(e), &[400, 409])),
            }
        }
        ApiTokensCommand::List { json: as_json, api } => {
            match json(api.client()?.get(api.url("/api-tokens")), &api).await? {
                Ok(body) if as_json => {
                    println!("{}", serde_json::to_string_pretty(&body)?);
                    Ok(ExitCode::SUCCESS)
                }
                Ok(body) => {
                    print!(
                        "{}",
                        listing(&body, "serve --insecure-no-auth", mobiwf_book::format_time)
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failure(Ok(e), &[])),
            }
        }
        ApiTokensCommand::Revoke { id, api } => {
            let request = api.client()?.delete(api.url(&format!("/api-tokens/{id}")));
            match json(request, &api).await? {
                Ok(_) => {
                    println!("API token {id} revoked");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failure(Ok(e), &[404])),
            }
        }
    }
}
