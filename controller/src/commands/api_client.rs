//! Talking to a running controller's HTTP API from the command line.

use std::process::ExitCode;

use anyhow::Context;

/// The default API address of `serve`, and of the commands that talk to it.
pub const DEFAULT_API: &str = "127.0.0.1:7700";

/// Where the controller's API is.
#[derive(Debug, Clone, clap::Args)]
pub struct ApiArgs {
    /// The controller's API address (HOST:PORT).
    #[arg(long, value_name = "HOST:PORT", env = "MOBIWF_API", default_value = DEFAULT_API)]
    pub api: String,
}

impl ApiArgs {
    /// The URL of `path` on the API.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.api)
    }
}

/// An answer of the API: the JSON body on success, the API's error message otherwise.
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
    let text = response
        .text()
        .await
        .context("the controller's answer was cut off")?;
    let body: Option<serde_json::Value> = serde_json::from_str(&text).ok();
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
/// unknown instance, a state where it does not apply), 3 when it could not be asked or
/// answered otherwise.
pub fn failure(answer: anyhow::Result<(u16, String)>, refusals: &[u16]) -> ExitCode {
    match answer {
        Ok((status, message)) => {
            eprintln!("mobiwf-controller: {message}");
            ExitCode::from(if refusals.contains(&status) { 1 } else { 3 })
        }
        Err(e) => {
            eprintln!("mobiwf-controller: error: {e:#}");
            ExitCode::from(3)
        }
    }
}
