//! `interrupt`, `resume` and `cancel INSTANCE`: an operator's control of a running instance;
//! `pause INSTANCE ACTIVITY [--kill]` and `resume INSTANCE ACTIVITY`: one activity of it;
//! `rerun INSTANCE ACTIVITY`: an operator's forward recovery of a failed one.

use std::process::ExitCode;

use mobiwf_proto::Control;

use super::api_client::{ApiArgs, failure, json};

/// Asks the controller to interrupt, resume or cancel an instance. Exit 0 when done, 1 when
/// refused (the instance is not in a state where it applies) or unknown, 3 when the
/// controller cannot be asked.
pub async fn run(api: &ApiArgs, id: u64, action: Control) -> anyhow::Result<ExitCode> {
    let request = api
        .client()?
        .post(api.url(&format!("/instances/{id}/{}", action.as_str())));
    match json(request, api).await {
        Ok(Ok(body)) => {
            let state = body["state"].as_str().unwrap_or("?");
            match action {
                Control::Interrupt => println!("instance {id} interrupted"),
                Control::Resume => println!("instance {id} resumed ({state})"),
                Control::Cancel => println!("instance {id} cancelled"),
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404, 409])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}

/// Asks the controller to rerun failed `activity` of failed instance `id`. Exit 0 when done,
/// 1 when refused (with the controller's reason) or unknown, 3 when the controller cannot be
/// asked.
pub async fn rerun(api: &ApiArgs, id: u64, activity: u64) -> anyhow::Result<ExitCode> {
    let path = format!("/instances/{id}/activities/{activity}/rerun");
    let request = api.client()?.post(api.url(&path));
    match json(request, api).await {
        Ok(Ok(body)) => {
            let state = body["state"].as_str().unwrap_or("?");
            println!("instance {id}: activity {activity} rerun ({state})");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404, 409])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}

/// `resume INSTANCE [ACTIVITY]`: the instance after an interruption, or a paused activity.
pub async fn resume(api: &ApiArgs, id: u64, activity: Option<u64>) -> anyhow::Result<ExitCode> {
    match activity {
        None => run(api, id, Control::Resume).await,
        Some(activity) => pause(api, id, activity, None).await,
    }
}

/// Asks the controller to have the node of `activity` of instance `id` pause it (`kill`:
/// `Some`, killing its running command or not) or resume it (`None`). Exit 0 when asked, 1
/// when refused (with the controller's reason) or unknown, 3 when the controller cannot be
/// asked.
pub async fn pause(
    api: &ApiArgs,
    id: u64,
    activity: u64,
    kill: Option<bool>,
) -> anyhow::Result<ExitCode> {
    let path = match kill {
        Some(kill) => format!("/instances/{id}/activities/{activity}/pause?kill={kill}"),
        None => format!("/instances/{id}/activities/{activity}/resume"),
    };
    let request = api.client()?.post(api.url(&path));
    match json(request, api).await {
        Ok(Ok(_)) => {
            let what = if kill.is_some() { "pause" } else { "resume" };
            println!(
                "instance {id}: activity {activity}: {what} asked of its node (`status {id}` \
                 shows it once done; `history {id}` who and when, or why not)"
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404, 409])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}
