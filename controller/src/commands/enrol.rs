//! `tokens` and `nodes allow|remove`: who may join the mesh (join tokens, the allow list,
//! removing a node so that its name is free for another key).

use std::process::ExitCode;

use super::api_client::{ApiArgs, failure, json};

/// `mobiwf-controller tokens ...`
#[derive(Debug, clap::Subcommand)]
pub enum TokensCommand {
    /// Make a join token: printed alone on standard output (save it to a file and give it to
    /// a node with --join-token-file); the controller keeps only its hash.
    Create {
        /// What the token is for (shown by `tokens list`).
        #[arg(long, default_value = "")]
        label: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// List the join tokens (ids and labels, never the tokens) and the allowed peer ids.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Revoke a join token by id: nodes that joined with it stay; new ones cannot use it.
    Revoke {
        /// The token's id (`tokens list`).
        id: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// `mobiwf-controller nodes allow|remove ...`
#[derive(Debug, clap::Subcommand)]
pub enum NodesCommand {
    /// Let the node with this peer id join without a token (it prints its peer id at start).
    Allow {
        /// The node's peer id (12D3...).
        peer: String,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Remove a registered node: its unfinished partitions are given up (their contingencies
    /// apply), its name is free for another key, and it must enrol again to come back.
    Remove {
        /// The node's name.
        name: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Carries out a `tokens` command.
pub async fn tokens(command: TokensCommand) -> anyhow::Result<ExitCode> {
    match command {
        TokensCommand::Create { label, api } => {
            let request = api
                .client()?
                .post(api.url("/tokens"))
                .json(&serde_json::json!({ "label": label }));
            match json(request, &api).await? {
                Ok(body) => {
                    println!("{}", body["token"].as_str().unwrap_or_default());
                    eprintln!(
                        "join token {} created",
                        body["id"].as_str().unwrap_or_default()
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failure(Ok(e), &[409])),
            }
        }
        TokensCommand::List { json: as_json, api } => {
            match json(api.client()?.get(api.url("/tokens")), &api).await? {
                Ok(body) if as_json => {
                    println!("{}", serde_json::to_string_pretty(&body)?);
                    Ok(ExitCode::SUCCESS)
                }
                Ok(body) => {
                    print!("{}", listing(&body));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(failure(Ok(e), &[])),
            }
        }
        TokensCommand::Revoke { id, api } => {
            let request = api.client()?.delete(api.url(&format!("/tokens/{id}")));
            done(
                json(request, &api).await?,
                &format!("join token {id} revoked"),
            )
        }
    }
}

/// Carries out a `nodes allow|remove` command.
pub async fn nodes(command: NodesCommand) -> anyhow::Result<ExitCode> {
    match command {
        NodesCommand::Allow { peer, api } => {
            let request = api
                .client()?
                .post(api.url("/nodes/allow"))
                .json(&serde_json::json!({ "peer": peer }));
            done(json(request, &api).await?, &format!("peer {peer} may join"))
        }
        NodesCommand::Remove { name, api } => {
            let request = api.client()?.delete(api.url(&format!("/nodes/{name}")));
            done(
                json(request, &api).await?,
                &format!("node {name} removed: its name is free"),
            )
        }
    }
}

fn done(answer: Result<serde_json::Value, (u16, String)>, said: &str) -> anyhow::Result<ExitCode> {
    match answer {
        Ok(_) => {
            println!("{said}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(failure(Ok(e), &[400, 404, 409])),
    }
}

/// The tokens and allowed peers as text.
fn listing(body: &serde_json::Value) -> String {
    let mut out = String::new();
    if body["open"].as_bool() == Some(true) {
        out.push_str("enrolment is OPEN (serve --open-enrolment): any node may join\n");
    }
    let tokens = body["tokens"].as_array().cloned().unwrap_or_default();
    out.push_str(&format!(
        "{:<14} {:<24} LABEL\n",
        "TOKEN ID", "CREATED (UTC)"
    ));
    for t in &tokens {
        let created = t["created_ms"].as_u64().unwrap_or_default();
        out.push_str(&format!(
            "{:<14} {:<24} {}\n",
            t["id"].as_str().unwrap_or_default(),
            mobiwf_book::format_time(created),
            t["label"].as_str().unwrap_or_default()
        ));
    }
    for peer in body["allowed"].as_array().cloned().unwrap_or_default() {
        out.push_str(&format!(
            "allowed peer   {}\n",
            peer.as_str().unwrap_or_default()
        ));
    }
    out
}
