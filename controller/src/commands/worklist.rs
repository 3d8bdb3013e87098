//! `worklist insert|remove|delegate|extend INSTANCE ACTIVITY --user U [--to U2] [--hours N]`: an administrator's
//! change of a work item, carried by the controller to the node that hosts the item.

use std::process::ExitCode;

use super::api_client::{ApiArgs, failure, json};

/// An administrator's action on a work item, as the controller's API takes it.
pub struct Action<'a> {
    /// `insert`, `remove`, `delegate` or `extend`.
    pub action: &'a str,
    /// The user it is about.
    pub user: &'a str,
    /// Who gets the item (`delegate`).
    pub to: Option<&'a str>,
    /// How many hours later its deadline moves (`extend`).
    pub hours: Option<u32>,
}

/// Sends the action; exit 0 when the controller sent it to the host, 1 when refused (unknown
/// instance, activity or user; an instance already over), 3 when the controller cannot be
/// asked. The host's decision shows in `history`.
pub async fn run(api: &ApiArgs, item: (u64, u64), action: Action<'_>) -> anyhow::Result<ExitCode> {
    let (instance, activity) = item;
    let Action {
        action,
        user,
        to,
        hours,
    } = action;
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
