//! `mobiwf-node complete INSTANCE ACTIVITY [--failed] [--flag F]`: a person finishes a manual
//! activity of the node's worklist.

use crate::commands::api_client::{ApiArgs, check};
use mobiwf_node::api::Completion;

/// Completes the activity through the node's API.
pub async fn run(
    api: &ApiArgs,
    instance: u64,
    activity: u64,
    body: Completion,
) -> anyhow::Result<()> {
    let url = format!(
        "{}/instances/{instance}/activities/{activity}/complete",
        api.base_url()?
    );
    check(reqwest::Client::new().post(&url).json(&body).send().await?).await?;
    let verb = if body.failed { "failed" } else { "completed" };
    println!("activity {activity} of instance {instance} {verb}");
    Ok(())
}
