//! `worklist insert|remove|delegate|extend INSTANCE ACTIVITY --user U [--to U2] [--hours N]`: an administrator's
//! change of a work item, carried by the controller to the node that hosts the item.

use std::process::ExitCode;

use super::api_client::{ApiArgs, failure, json};

/// Sends the action; exit 0 when the controller sent it to the host, 1 when refused (unknown
/// instance, activity or user; an instance already over), 3 when the controller cannot be
/// asked. The host's decision shows in `history`.
pub async fn run(
    api: &ApiArgs,
    item: (u64, u64),
    action: &str,
    user: &str,
    (to, hours): (Option<&str>, Option<u32>),
) -> anyhow::Result<ExitCode> {
    let (instance, activity) = item;
    let body = serde_json::json!({ "action": action, "user": user, "to": to, "hours": hours });
    let request = api
        .client()?
        .post(api.url(&format!(
            "/instances/{instance}/activities/{activity}/worklist"
        )))
        .json(&body);
    match json(request, api).await {
        Ok(Ok(answer)) => {
            println!(
                "{action} for {user} sent to node {} (see `mobiwf-controller history {instance}`)",
                answer["host"].as_str().unwrap_or("?")
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[400, 404, 409])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}
