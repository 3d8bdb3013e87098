//! The `api-tokens` command both CLIs share (`create`, `list`, `revoke`), with what differs
//! between them as parameters: where the API is and how a failed call ends the command
//! ([`ApiCli`], each CLI's `ApiArgs`), and whom a new token may speak for ([`GrantArgs`]: a
//! role on the controller, a role or one user on a node).

use std::future::Future;

use serde_json::{Map, Value};

use super::{listing, whom};

/// A daemon's API as its command line reaches it.
pub trait ApiCli: clap::Args {
    /// The command line that turns the token check off, named when a list shows the API
    /// checks none (`serve --insecure-no-auth`).
    const INSECURE: &'static str;

    /// The URL of `path` on the API.
    fn url(&self, path: &str) -> anyhow::Result<String>;

    /// An HTTP client that shows the command's token.
    fn client(&self) -> anyhow::Result<reqwest::Client>;

    /// The API's JSON answer to `request`, or an error that ends the command as this CLI
    /// ends it (its message, its exit code); `refusals` are the HTTP statuses that mean a
    /// refusal the user can act on (a bad role, an unknown id).
    fn call(
        &self,
        request: reqwest::RequestBuilder,
        refusals: &[u16],
    ) -> impl Future<Output = anyhow::Result<Value>>;

    /// A creation time as `api-tokens list` shows it.
    fn time(ms: u64) -> String;
}

/// Whom a new token speaks for, as the command line takes it.
pub trait GrantArgs: clap::Args {
    /// The grant as `POST /api-tokens` takes it (`{"role": "viewer"}`, `{"user": "alice"}`,
    /// on the controller `{"role": "operator", "user": "alice"}`).
    fn grant(&self) -> Map<String, Value>;
}

/// `api-tokens ...`: the daemon's API tokens (its administrators only).
#[derive(Debug, clap::Subcommand)]
pub enum ApiTokensCommand<A: ApiCli, G: GrantArgs> {
    /// Make an API token: printed alone on standard output (save it to a file, 0600, and use
    /// it with --token-file); the daemon keeps only its hash.
    Create {
        /// Whom it speaks for.
        #[command(flatten)]
        grant: G,
        /// What the token is for (shown by `api-tokens list`).
        #[arg(long, default_value = "")]
        label: String,
        /// Where the API is, and the token to show it.
        #[command(flatten)]
        api: A,
    },
    /// List the API tokens (ids, grants and labels, never the tokens).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Where the API is, and the token to show it.
        #[command(flatten)]
        api: A,
    },
    /// Revoke an API token by id: refused from the next request on.
    Revoke {
        /// The token's id (`api-tokens list`).
        id: String,
        /// Where the API is, and the token to show it.
        #[command(flatten)]
        api: A,
    },
}

/// Carries out an `api-tokens` command; a refusal ends it as `A` says (see [`ApiCli::call`]).
pub async fn api_tokens<A: ApiCli, G: GrantArgs>(
    command: ApiTokensCommand<A, G>,
) -> anyhow::Result<()> {
    match command {
        ApiTokensCommand::Create {
            grant: asked,
            label,
            api,
        } => {
            let mut body = asked.grant();
            body.insert("label".to_owned(), Value::String(label));
            let url = api.url("/api-tokens")?;
            let request = api.client()?.post(url).json(&body);
            let made = api.call(request, &[400, 409]).await?;
            println!("{}", made["token"].as_str().unwrap_or_default());
            eprintln!(
                "API token {} ({}) created",
                made["id"].as_str().unwrap_or_default(),
                whom(&made)
            );
        }
        ApiTokensCommand::List { json, api } => {
            let url = api.url("/api-tokens")?;
            let body = api.call(api.client()?.get(url), &[]).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&body)?);
            } else {
                print!("{}", listing(&body, A::INSECURE, A::time));
            }
        }
        ApiTokensCommand::Revoke { id, api } => {
            let url = api.url(&format!("/api-tokens/{id}"))?;
            api.call(api.client()?.delete(url), &[404]).await?;
            println!("API token {id} revoked");
        }
    }
    Ok(())
}
