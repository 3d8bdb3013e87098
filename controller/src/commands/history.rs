//! `history INSTANCE [--json]`: every transition of an instance, with its time and partner.

use std::process::ExitCode;

use mobiwf_controller::render::ShownEvent;

use super::api_client::{ApiArgs, failure, json};
use mobiwf_controller::table;

/// Prints the history (exit 0); exit 1 when there is no such instance, 3 when the controller
/// cannot be asked.
pub async fn run(api: &ApiArgs, id: u64, as_json: bool) -> anyhow::Result<ExitCode> {
    let request = api
        .client()?
        .get(api.url(&format!("/instances/{id}/history")));
    match json(request, api).await {
        Ok(Ok(body)) => {
            if as_json {
                println!("{}", serde_json::to_string_pretty(&body)?);
            } else {
                let events: Vec<ShownEvent> = serde_json::from_value(body)?;
                print!("{}", table::history(&events));
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}
