//! `mobiwf-node complete INSTANCE ACTIVITY [--failed]`: a person finishes a manual activity.

use crate::commands::api_client::{ApiArgs, check};
use mobiwf_node::api::Completion;

/// Completes the activity through the node's API.
pub async fn run(
    api: &ApiArgs,
    instance: u64,
    activity: u64,
    failed: bool,
    detail: Option<String>,
) -> anyhow::Result<()> {
    let url = format!(
        "{}/instances/{instance}/activities/{activity}/complete",
        api.base_url()?
    );
    let body = Completion { failed, detail };
    check(reqwest::Client::new().post(&url).json(&body).send().await?).await?;
    let verb = if failed { "failed" } else { "completed" };
    println!("activity {activity} of instance {instance} {verb}");
    Ok(())
}
