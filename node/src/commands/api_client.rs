//! Finding a running node's HTTP API from the command line, and calling it. The token and the
//! token check's refusal are the runtime's (`mobiwf_runtime::api_auth`), as the controller's
//! CLI has them; what is the node's own: `--data-dir` (its `api` and `api.token` files) and
//! that an answer that is not a success is an error (exit 1, or an [`Exit`] code).

use std::path::PathBuf;

use anyhow::Context;
use mobiwf_runtime::api_auth::{ApiCli, EXIT_NOT_AUTHORISED, base_url, bearer_client, token};

/// The environment variable that may hold a node API token itself (`--token-file` is read
/// first). Not the controller's `MOBIWF_TOKEN`: a controller's token exported for its CLI is
/// never sent to a node.
pub const TOKEN_ENV: &str = "MOBIWF_NODE_TOKEN";

/// Where the node's API is: `--api`, or the `api` file its `run` wrote in `--data-dir`; and
/// the token to show it.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// The node's API address: HOST:PORT (plain HTTP), or https://HOST:PORT for a node run
    /// with --tls-cert (as its DIR/api file says).
    #[arg(long, value_name = "[https://]HOST:PORT", conflicts_with = "data_dir")]
    pub api: Option<String>,
    /// The node's data directory (its `api` file says where the API is, its `api.token`
    /// holds the node administrator's token).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// A file holding a node API token (one from `mobiwf-node api-tokens create`, e.g. a
    /// user's own). Without it, $MOBIWF_NODE_TOKEN, else --data-dir's api.token.
    #[arg(long, value_name = "FILE", env = "MOBIWF_NODE_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Whom to trust for an https:// API.
    #[command(flatten)]
    pub ca: mobiwf_runtime::tls::ApiCaArgs,
}

impl ApiArgs {
    /// The token to show: `--token-file`, else `$MOBIWF_NODE_TOKEN`, else the data
    /// directory's `api.token` when there is one; none otherwise.
    pub fn token(&self) -> anyhow::Result<Option<String>> {
        let own = self
            .data_dir
            .as_ref()
            .map(|dir| dir.join(mobiwf_node::API_TOKEN_FILE));
        token(self.token_file.as_deref(), TOKEN_ENV, own.as_deref())
    }

    /// An HTTP client that shows the token ([`ApiArgs::token`]) with every request, trusting
    /// `--api-ca` for an https:// API.
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        bearer_client(self.token()?.as_deref(), self.ca.api_ca.as_deref())
    }

    /// The API's base URL (`https://` when `--api` or the `api` file says so).
    pub fn base_url(&self) -> anyhow::Result<String> {
        let addr = match (&self.api, &self.data_dir) {
            (Some(api), _) => api.clone(),
            (None, Some(dir)) => {
                let file = dir.join("api");
                std::fs::read_to_string(&file)
                    .with_context(|| {
                        format!(
                            "cannot read {} (is `mobiwf-node run --data-dir {}` running?)",
                            file.display(),
                            dir.display()
                        )
                    })?
                    .trim()
                    .to_owned()
            }
            (None, None) => anyhow::bail!("say which node: --data-dir DIR or --api HOST:PORT"),
        };
        Ok(base_url(&addr))
    }
}

/// The node's API for the commands the CLIs share (`api-tokens`): a refusal is an error, as
/// [`check`] makes it.
impl ApiCli for ApiArgs {
    const INSECURE: &'static str = "run --insecure-no-auth";

    fn url(&self, path: &str) -> anyhow::Result<String> {
        Ok(format!("{}{path}", self.base_url()?))
    }

    fn client(&self) -> anyhow::Result<reqwest::Client> {
        ApiArgs::client(self)
    }

    async fn call(
        &self,
        request: reqwest::RequestBuilder,
        _refusals: &[u16],
    ) -> anyhow::Result<serde_json::Value> {
        Ok(check(request.send().await?).await?.json().await?)
    }

    fn time(ms: u64) -> String {
        mobiwf_runtime::process::time_of_day_utc(ms)
    }
}

/// `response`, unless it is the token check's refusal (401, or 403 with
/// `WWW-Authenticate`): then an [`Exit`] with `EXIT_NOT_AUTHORISED` and the API's message.
pub async fn authorised(response: reqwest::Response) -> anyhow::Result<reqwest::Response> {
    mobiwf_runtime::api_auth::authorised(response)
        .await
        .map_err(|refused| {
            Exit {
                code: EXIT_NOT_AUTHORISED,
                message: format!(
                    "not authorised: {} (HTTP {})",
                    refused.error.as_deref().unwrap_or("no details"),
                    refused.status
                ),
            }
            .into()
        })
}

/// Turns an error answer of the API into an error with its message.
pub async fn check(response: reqwest::Response) -> anyhow::Result<reqwest::Response> {
    let response = authorised(response).await?;
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let message = body["error"].as_str().unwrap_or("no details").to_owned();
    anyhow::bail!("{message} (HTTP {status})")
}

/// Every page of the list at `url` (with `query`), read page after page while the API says
/// more follow (its `Link: rel="next"`) and a page brings something new (a server that
/// answers the same page again ends the reading). Pages are read one after the other, not at
/// one instant: an entry that moved onto a page already read as the list changed meanwhile
/// is not read twice, one that moved back onto a page already read is missed.
pub async fn all_pages<T: serde::de::DeserializeOwned + serde::Serialize>(
    client: &reqwest::Client,
    url: &str,
    query: &[(&str, &str)],
) -> anyhow::Result<Vec<T>> {
    let mut all: Vec<T> = Vec::new();
    let mut read = std::collections::HashSet::new();
    for page in 1usize.. {
        let number = page.to_string();
        let response = client
            .get(url)
            .query(query)
            .query(&[("page", number.as_str())])
            .send()
            .await?;
        let response = check(response).await?;
        let more = response.headers().contains_key(reqwest::header::LINK);
        let entries: Vec<T> = response.json().await?;
        let before = all.len();
        for entry in entries {
            if read.insert(serde_json::to_string(&entry)?) {
                all.push(entry);
            }
        }
        if !more || all.len() == before {
            break;
        }
    }
    Ok(all)
}

/// An error that ends the command with a code of its own (the worklist commands' 3 and 4).
#[derive(Debug)]
pub struct Exit {
    /// The process exit code.
    pub code: u8,
    /// What to print.
    pub message: String,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mobiwf_node::api_paging::PageParams;

    /// The CLI's reader follows the pages to the end, each entry once.
    #[tokio::test]
    async fn all_pages_reads_every_page_once() {
        use axum::extract::Query;
        let all: Vec<u32> = (0..7).collect();
        let app = axum::Router::new().route(
            "/list",
            axum::routing::get(move |Query(params): Query<PageParams>| {
                let all = all.clone();
                async move {
                    let page = params.page().expect("a readable page");
                    page.answer(page.slice(&all), all.len(), "/list", "")
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/list", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let client = bearer_client(None, None).unwrap();
        let read: Vec<u32> = all_pages(&client, &url, &[("limit", "3")]).await.unwrap();
        assert_eq!(read, (0..7).collect::<Vec<_>>());
    }
}
