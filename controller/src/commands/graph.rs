//! `graph INSTANCE [--svg | --dot]`: an instance's graph (a lane per partner, its activities
//! coloured by state), as the controller's API draws it, on standard output.

use std::process::ExitCode;

use mobiwf_graph::Format;

use super::api_client::{ApiArgs, failure, text};

/// Prints the graph (exit 0); exit 1 when there is no such instance, 3 when the controller
/// cannot be asked.
pub async fn run(api: &ApiArgs, id: u64, format: Format) -> anyhow::Result<ExitCode> {
    let request = api
        .client()?
        .get(api.url(&format!("/instances/{id}/graph")))
        .query(&[("format", format.word())]);
    match text(request, api).await {
        Ok(Ok(drawn)) => {
            print!("{drawn}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}
