//! `mobiwf-node worklist --user`, `select`, `release`, `lock`, `unlock`, `pause`, `resume`,
//! `complete --user`, `delegate` and `notices`: a person's worklist on their device, through
//! the node's API.
//!
//! Exit codes: 0 done; 4 "no longer available" (someone else holds the item, HTTP 409; or a
//! pause or resume that does not apply now: the message says what to do); 3 the
//! host has not answered yet (HTTP 202: the claim waits in the outbox, its answer will show in
//! the worklist); 6 the API refused the token (`EXIT_NOT_AUTHORISED`); 1 anything else (not
//! allowed 403, unknown item 404, invalid 400).

use serde_json::Value;

use crate::commands::api_client::{ApiArgs, Exit, all_pages};

/// Exit code of a claim the host refused because someone else holds the item.
pub const EXIT_UNAVAILABLE: u8 = 4;
/// Exit code of a claim whose answer has not come yet.
pub const EXIT_PENDING: u8 = 3;

/// Prints a user's worklist as a table, or as JSON.
pub async fn worklist(api: &ApiArgs, user: &str, order: &str, json: bool) -> anyhow::Result<()> {
    let url = format!("{}/users/{user}/worklist", api.base_url()?);
    let items: Vec<Value> = all_pages(&api.client()?, &url, &[("order", order)]).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(());
    }
    if items.is_empty() {
        println!("nothing to do for {user}");
        return Ok(());
    }
    println!(
        "{:<9} {:<9} {:<18} {:<9} {:<9} {:<10} {:<11} DESCRIPTION",
        "INSTANCE", "ACTIVITY", "NAME", "STATE", "PRIORITY", "GRANTOR", "OFFLINE"
    );
    for item in items {
        // A paused item stays its holder's: shown paused until they resume it.
        let state = if item["paused_ms"].is_u64() {
            Value::String("paused".to_owned())
        } else {
            item["state"].clone()
        };
        println!(
            "{:<9} {:<9} {:<18} {:<9} {:<9} {:<10} {:<11} {}",
            text(&item["instance"]),
            match item["pass"].as_u64() {
                Some(pass) => format!("{}#{pass}", text(&item["activity"])),
                None => text(&item["activity"]),
            },
            text(&item["name"]),
            text(&state),
            text(&item["priority"]),
            text(&item["grantor"]),
            text(&item["offline"]),
            text(&item["description"]),
        );
    }
    Ok(())
}

/// Prints what a user was told, oldest first.
pub async fn notices(api: &ApiArgs, user: &str, json: bool) -> anyhow::Result<()> {
    let url = format!("{}/users/{user}/notices", api.base_url()?);
    let notices = answer(api.client()?.get(&url).send().await?).await?.1;
    if json {
        println!("{}", serde_json::to_string_pretty(&notices)?);
        return Ok(());
    }
    let list = notices.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        println!("no notices for {user}");
    }
    for n in list {
        println!(
            "{} UTC  instance {}{}: {}: {}",
            mobiwf_runtime::process::time_of_day_utc(n["at_ms"].as_u64().unwrap_or(0)),
            text(&n["instance"]),
            n["activity"]
                .as_u64()
                .map(|a| format!(" activity {a}"))
                .unwrap_or_default(),
            text(&n["kind"]),
            text(&n["text"]),
        );
    }
    Ok(())
}

/// A user acts on a work item: `select`, `release`, `lock`, `unlock`, `pause`, `resume`,
/// `complete`, `delegate`
/// (`body` carries the completion or the delegate).
pub async fn act(
    api: &ApiArgs,
    user: &str,
    item: (u64, u64),
    action: &str,
    body: Value,
) -> anyhow::Result<()> {
    let (instance, activity) = item;
    let url = format!(
        "{}/users/{user}/worklist/{instance}/{activity}/{action}",
        api.base_url()?
    );
    let response = api.client()?.post(&url).json(&body).send().await?;
    let (status, value) = answer(response).await?;
    if status == reqwest::StatusCode::ACCEPTED {
        return Err(Exit {
            code: EXIT_PENDING,
            message: text(&value["message"]),
        }
        .into());
    }
    println!("{user}: {action} activity {activity} of instance {instance}: done");
    Ok(())
}

/// The status and JSON body of a success; an error answer becomes an [`Exit`] with its
/// message (code 4 for 409 "no longer available", else 1).
async fn answer(response: reqwest::Response) -> anyhow::Result<(reqwest::StatusCode, Value)> {
    let response = crate::commands::api_client::authorised(response).await?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    if status.is_success() {
        return Ok((status, body));
    }
    let message = format!(
        "{} (HTTP {status})",
        body["error"].as_str().unwrap_or("no details")
    );
    let code = if status == reqwest::StatusCode::CONFLICT {
        EXIT_UNAVAILABLE
    } else {
        1
    };
    Err(Exit { code, message }.into())
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
