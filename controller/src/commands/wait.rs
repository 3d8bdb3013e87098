//! `wait INSTANCE [--timeout SECS]`: block until an instance is final (and its compensations,
//! if any, are over).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use mobiwf_book::{Instance, InstanceState};
use mobiwf_controller::api::MAX_WAIT_SECS;

use super::api_client::{ApiArgs, exit_code_of, json};

/// Exit 0 when the instance succeeded, 1 when it failed or was cancelled (compensated or
/// not), 2 on timeout, 3 when there is no such instance or the controller cannot be asked.
pub async fn run(api: &ApiArgs, id: u64, timeout: Option<u64>) -> anyhow::Result<ExitCode> {
    let deadline = timeout.map(|s| Instant::now() + Duration::from_secs(s));
    let client = api.client()?;
    loop {
        // Rounded up: the last fraction of a second is waited for too, not polled.
        let left = deadline.map_or(MAX_WAIT_SECS, |d| {
            d.saturating_duration_since(Instant::now())
                .as_millis()
                .div_ceil(1000)
                .try_into()
                .unwrap_or(MAX_WAIT_SECS)
        });
        let request = client
            .get(api.url(&format!("/instances/{id}/wait")))
            .query(&[("timeout", left.min(MAX_WAIT_SECS))]);
        let inst: Instance = match json(request, api).await {
            Ok(Ok(body)) => serde_json::from_value(body)?,
            Ok(Err((_, message))) => {
                eprintln!("mobiwf-controller: {message}");
                return Ok(ExitCode::from(3));
            }
            Err(e) => {
                eprintln!("mobiwf-controller: error: {e:#}");
                return Ok(ExitCode::from(exit_code_of(&e, 3)));
            }
        };
        if inst.is_settled() {
            if inst.state() == InstanceState::Succeeded {
                println!("instance {id} succeeded");
                return Ok(ExitCode::SUCCESS);
            }
            let why = inst
                .detail
                .as_deref()
                .unwrap_or("an activity failed or was cancelled");
            println!("instance {id} {}: {why}", inst.state().as_str());
            return Ok(ExitCode::from(1));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            println!("instance {id} is still {} (timeout)", inst.state().as_str());
            return Ok(ExitCode::from(2));
        }
    }
}
