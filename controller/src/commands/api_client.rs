//! Talking to a running controller's HTTP API from the command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_runtime::api_auth::{
    EXIT_NOT_AUTHORISED, bearer_client, is_auth_refusal, token_from_env,
};

/// The default API address of `serve`, and of the commands that talk to it.
pub const DEFAULT_API: &str = "127.0.0.1:7700";

/// The environment variable that may hold the API token itself (`--token-file` is read
/// first).
pub const TOKEN_ENV: &str = "MOBIWF_TOKEN";

/// Where the controller's API is, and the token to show it.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    /// The controller's API address (HOST:PORT).
    #[arg(long, value_name = "HOST:PORT", env = "MOBIWF_API", default_value = DEFAULT_API)]
    pub api: String,
    /// A file holding an API token: the controller's DIR/operator.token (administrator), or
    /// one from `api-tokens create`. Without it, the token in $MOBIWF_TOKEN.
    #[arg(long, value_name = "FILE", env = "MOBIWF_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
}

impl ApiArgs {
    /// The URL of `path` on the API.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.api)
    }

    /// An HTTP client that shows the token (`--token-file`, else `$MOBIWF_TOKEN`, else none:
    /// the controller then answers 401 unless it runs `--insecure-no-auth`).
    pub fn client(&self) -> anyhow::Result<reqwest::Client> {
        let token = match &self.token_file {
            Some(file) => Some(mobiwf_runtime::secret::read_token_file(file)?),
            None => token_from_env(TOKEN_ENV),
        };
        bearer_client(token.as_deref())
    }
}

/// The API refused the request for want of a token (401) or of a role (403): the command
/// exits with [`EXIT_NOT_AUTHORISED`].
#[derive(Debug)]
pub struct NotAuthorised(pub String);

impl std::fmt::Display for NotAuthorised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not authorised: {}", self.0)
    }
}

impl std::error::Error for NotAuthorised {}

/// The exit code of an error: [`EXIT_NOT_AUTHORISED`] when the API refused the token,
/// `otherwise` else.
pub fn exit_code_of(e: &anyhow::Error, otherwise: u8) -> u8 {
    if e.downcast_ref::<NotAuthorised>().is_some() {
        EXIT_NOT_AUTHORISED
    } else {
        otherwise
    }
}

/// An answer of the API: the JSON body on success, the API's error message otherwise; a
/// refused token is an error ([`NotAuthorised`]).
pub async fn json(
    request: reqwest::RequestBuilder,
    api: &ApiArgs,
) -> anyhow::Result<Result<serde_json::Value, (u16, String)>> {
    let response = request.send().await.with_context(|| {
        format!(
            "cannot reach the controller's API at {} (is `mobiwf-controller serve` running? \
             give its address with --api)",
            api.api
        )
    })?;
    let status = response.status();
    let challenged = response
        .headers()
        .contains_key(reqwest::header::WWW_AUTHENTICATE);
    let text = response
        .text()
        .await
        .context("the controller's answer was cut off")?;
    let body: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    if is_auth_refusal(status.as_u16(), challenged) {
        let message = body
            .as_ref()
            .and_then(|b| b["error"].as_str())
            .map_or_else(|| format!("HTTP {status}"), str::to_owned);
        return Err(NotAuthorised(message).into());
    }
    match body {
        Some(body) if status.is_success() => Ok(Ok(body)),
        Some(body) if body["error"].is_string() => {
            let message = body["error"].as_str().unwrap_or_default().to_owned();
            Ok(Err((status.as_u16(), message)))
        }
        // Answers that are not ours (a body over the size limit, a proxy): say what came.
        _ => Ok(Err((
            status.as_u16(),
            format!("HTTP {status}: {}", text.trim()),
        ))),
    }
}

/// Says why a request did not succeed and gives the exit status: 1 when the controller
/// refused it with one of the HTTP statuses in `refusals` (something the user can act on: an
/// unknown instance, a state where it does not apply), [`EXIT_NOT_AUTHORISED`] when it
/// refused the token, 3 when it could not be asked or answered otherwise.
pub fn failure(answer: anyhow::Result<(u16, String)>, refusals: &[u16]) -> ExitCode {
    match answer {
        Ok((status, message)) => {
            eprintln!("mobiwf-controller: {message}");
            ExitCode::from(if refusals.contains(&status) { 1 } else { 3 })
        }
        Err(e) => {
            eprintln!("mobiwf-controller: error: {e:#}");
            ExitCode::from(exit_code_of(&e, 3))
        }
    }
}
