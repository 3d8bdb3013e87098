//! Talking to a running controller's HTTP API from the command line: where it is (`--api`),
//! the token to show it, and how an answer that is not a success ends the command. The token
//! and the token check's refusal are the runtime's (`mobiwf_runtime::api_auth`), as the node's
//! CLI has them.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_runtime::api_auth::{ApiCli, authorised, base_url, bearer_client, token};

pub use mobiwf_runtime::api_auth::exit_code_of;

/// The default API address of `serve`, and of the commands that talk to it.
pub const DEFAULT_API: &str = "127.0.0.1:7700";

/// The environment variable that may hold the API token itself (`--token-file` is read
/// first).
pub const TOKEN_ENV: &str = "MOBIWF_TOKEN";

/// Where the controller's API is, and the token to show it.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    /// The controller's API address: HOST:PORT (plain HTTP), or https://HOST:PORT for a
    /// controller serving with --tls-cert (as its DIR/api file says).
    #[arg(long, value_name = "[https://]HOST:PORT", env = "MOBIWF_API", default_value = DEFAULT_API)]
    pub api: String,
    /// A file holding an API token: the controller's DIR/operator.token (administrator), or
    /// one from `api-tokens create`. Without it, the token in $MOBIWF_TOKEN.
    #[arg(long, value_name = "FILE", env = "MOBIWF_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// Whom to trust for an https:// API.
    #[command(flatten)]
    pub ca: mobiwf_runtime::tls::ApiCaArgs,
}

impl ApiArgs {
    /// The URL of `path` on the API.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", base_url(&self.api))
    }

    /// An HTTP client that shows the token (`--token-file`, else `$MOBIWF_TOKEN`, else none:
    /// the controller then answers 401 unless it runs `--insecure-no-auth`), trusting
    /// `--api-ca` for an https:// API.
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        bearer_client(
            token(self.token_file.as_deref(), TOKEN_ENV, None)?.as_deref(),
            self.ca.api_ca.as_deref(),
        )
    }
}

/// The controller's API for the commands the CLIs share (`api-tokens`): a refusal ends the
/// command as [`failure`] says (exit 1 for `refusals`, 3 otherwise).
impl ApiCli for ApiArgs {
    const INSECURE: &'static str = "serve --insecure-no-auth";

    fn url(&self, path: &str) -> anyhow::Result<String> {
        Ok(ApiArgs::url(self, path))
    }

    fn client(&self) -> anyhow::Result<reqwest::Client> {
        ApiArgs::client(self)
    }

    async fn call(
        &self,
        request: reqwest::RequestBuilder,
        refusals: &[u16],
    ) -> anyhow::Result<serde_json::Value> {
        match json(request, self).await? {
            Ok(body) => Ok(body),
            Err(refused) => Err(Said(failure_code(Ok(refused), refusals)).into()),
        }
    }

    fn time(ms: u64) -> String {
        mobiwf_book::format_time(ms)
    }
}

/// An error already told to the user: the command ends with this exit code and says
/// nothing more.
#[derive(Debug)]
pub struct Said(pub u8);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Said {}

/// An answer of the API: the JSON body on success, the API's error message otherwise; a
/// refused token is an error (`NotAuthorised`).
pub async fn json(
    request: reqwest::RequestBuilder,
    api: &ApiArgs,
) -> anyhow::Result<Result<serde_json::Value, (u16, String)>> {
    let (status, text, retry) = answer(request, api).await?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(body) if status.is_success() => Ok(Ok(body)),
        _ => Ok(Err(refusal(status, &text, retry.as_deref()))),
    }
}

/// An answer of the API that is not JSON on success (a graph): its body, or the API's error
/// message; a refused token is an error (`NotAuthorised`).
pub async fn text(
    request: reqwest::RequestBuilder,
    api: &ApiArgs,
) -> anyhow::Result<Result<String, (u16, String)>> {
    let (status, text, retry) = answer(request, api).await?;
    if status.is_success() {
        Ok(Ok(text))
    } else {
        Ok(Err(refusal(status, &text, retry.as_deref())))
    }
}

/// The status, body and `Retry-After` header of the answer to `request`.
async fn answer(
    request: reqwest::RequestBuilder,
    api: &ApiArgs,
) -> anyhow::Result<(reqwest::StatusCode, String, Option<String>)> {
    let response = request.send().await.with_context(|| {
        format!(
            "cannot reach the controller's API at {} (is `mobiwf-controller serve` running? \
             give its address with --api, and for https:// its CA with --api-ca)",
            api.api
        )
    })?;
    let response = authorised(response).await?;
    let status = response.status();
    let retry = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response
        .text()
        .await
        .context("the controller's answer was cut off")?;
    Ok((status, text, retry))
}

/// The exit status of a command that was shed (429: the controller takes no more instances
/// for now): sysexits' `EX_TEMPFAIL`, "try again later", so that a script can tell it from a
/// refusal.
pub const EXIT_TRY_AGAIN: u8 = 75;

/// What an answer that is not a success says: the API's `{"error": ...}` message, or, for
/// answers that are not ours (a body over the size limit, a proxy), what came. A 429 says so
/// in words, with when to try again.
fn refusal(status: reqwest::StatusCode, text: &str, retry: Option<&str>) -> (u16, String) {
    let body: Option<serde_json::Value> = serde_json::from_str(text).ok();
    let message = match body.as_ref().and_then(|b| b["error"].as_str()) {
        Some(message) => message.to_owned(),
        None => format!("HTTP {status}: {}", text.trim()),
    };
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        let when = retry.map_or_else(String::new, |secs| format!(", retry after {secs} s"));
        return (
            status.as_u16(),
            format!("the controller is too busy for this (429 Too Many Requests{when}): {message}"),
        );
    }
    (status.as_u16(), message)
}

/// The exit status of a command refused as `status`: [`EXIT_TRY_AGAIN`] for a 429, else 1.
pub fn refused_exit(status: u16) -> ExitCode {
    if status == 429 {
        ExitCode::from(EXIT_TRY_AGAIN)
    } else {
        ExitCode::from(1)
    }
}

/// Says why a request did not succeed and gives the exit status: 1 when the controller
/// refused it with one of the HTTP statuses in `refusals` (something the user can act on: an
/// unknown instance, a state where it does not apply), [`EXIT_NOT_AUTHORISED`] when it
/// refused the token, 3 when it could not be asked or answered otherwise.
pub fn failure(answer: anyhow::Result<(u16, String)>, refusals: &[u16]) -> ExitCode {
    ExitCode::from(failure_code(answer, refusals))
}

/// [`failure`]'s exit code, after saying why.
fn failure_code(answer: anyhow::Result<(u16, String)>, refusals: &[u16]) -> u8 {
    match answer {
        Ok((status, message)) => {
            eprintln!("mobiwf-controller: {message}");
            if refusals.contains(&status) { 1 } else { 3 }
        }
        Err(e) => {
            eprintln!("mobiwf-controller: error: {e:#}");
            exit_code_of(&e, 3)
        }
    }
}

/// A coordination document an administrator applies (`PUT path?source=FILE`, as the class and
/// ordering documents are): prints `applied(answer)` (exit 0), or every problem and that
/// `what` was not applied (exit 1).
pub async fn apply_document(
    api: &ApiArgs,
    file: &std::path::Path,
    (path, content_type): (&str, &str),
    what: &str,
    applied: impl Fn(&serde_json::Value) -> String,
) -> anyhow::Result<std::process::ExitCode> {
    let bytes = super::read(file)?;
    let request = api
        .client()?
        .put(api.url(path))
        .query(&[("source", file.display().to_string())])
        .header("content-type", content_type)
        .body(bytes);
    match json(request, api).await? {
        Ok(body) => {
            println!("{}", applied(&body));
            Ok(std::process::ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: the {what} was not applied");
            Ok(std::process::ExitCode::from(1))
        }
    }
}

/// GETs a document the controller keeps (`path`) and prints it: pretty JSON with `as_json`,
/// else as `table` writes it. A refusal (404 included) is printed as any command's.
pub async fn show_document(
    api: &ApiArgs,
    path: &str,
    as_json: bool,
    table: impl FnOnce(&serde_json::Value),
) -> anyhow::Result<std::process::ExitCode> {
    let body = match get_json(api, path).await {
        Ok(body) => body,
        Err(code) => return Ok(code),
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        table(&body);
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// GETs `path` as JSON; a refusal or an unreachable controller already printed, as its exit
/// code.
pub async fn get_json(
    api: &ApiArgs,
    path: &str,
) -> Result<serde_json::Value, std::process::ExitCode> {
    let request = api
        .client()
        .map_err(|e| failure(Err(e), &[]))?
        .get(api.url(path));
    match json(request, api).await {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(refused)) => Err(failure(Ok(refused), &[404])),
        Err(e) => Err(failure(Err(e), &[])),
    }
}

/// A JSON value as a table cell: `-` for nothing.
pub fn cell(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "-".to_owned(),
        serde_json::Value::String(s) if s.is_empty() => "-".to_owned(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON list as a table cell: its items joined by commas, `-` for none.
pub fn list_cell(value: &serde_json::Value) -> String {
    let items: Vec<String> = value
        .as_array()
        .map(|a| a.iter().map(cell).collect())
        .unwrap_or_default();
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(",")
    }
}
