//! `submit FILE [--responsible USER]`: start an instance of a workflow on the running controller.

use std::path::Path;
use std::process::ExitCode;

use super::api_client::{ApiArgs, json};

/// Prints the new instance id (exit 0), or why it was refused (exit 1).
pub async fn run(
    api: &ApiArgs,
    file: &Path,
    responsible: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let bytes = super::read(file)?;
    let request = api
        .client()?
        .post(api.url("/instances"))
        .query(&[("source", file.display().to_string())])
        .query(&[("responsible", responsible)])
        .header("content-type", "application/xml")
        .body(bytes);
    match json(request, api).await? {
        Ok(body) => {
            println!("{}", body["instance"]);
            Ok(ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: the workflow was not started");
            Ok(ExitCode::from(1))
        }
    }
}
