//! Finding a running node's HTTP API from the command line, and calling it.

use std::path::PathBuf;

use anyhow::Context;

/// Where the node's API is: `--api`, or the `api` file its `run` wrote in `--data-dir`.
#[derive(Debug, clap::Args)]
pub struct ApiArgs {
    /// The node's API address (HOST:PORT).
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "data_dir")]
    pub api: Option<String>,
    /// The node's data directory (its `api` file says where the API is).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

impl ApiArgs {
    /// The API's base URL.
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
        Ok(format!("http://{addr}"))
    }
}

/// Turns an error answer of the API into an error with its message.
pub async fn check(response: reqwest::Response) -> anyhow::Result<reqwest::Response> {
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    let message = body["error"].as_str().unwrap_or("no details").to_owned();
    anyhow::bail!("{message} (HTTP {status})")
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
