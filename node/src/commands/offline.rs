//! `mobiwf-node disconnect` and `reconnect`: a field user takes their locked items offline and
//! comes back (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §5.1.2-5.1.3),
//! through the node's API.
//!
//! Exit codes of `disconnect`: 0 away; 3 the copy would take longer than `--max-wait` (the time
//! needed is printed); 4 the disk lacks the space; 5 the user holds a selected item; 1 anything
//! else (the hosts could not be reached to copy, the user's worklist is on another node).

use serde_json::{Value, json};

use crate::commands::api_client::{ApiArgs, Exit};

/// Exit code: the copy does not fit the wait.
pub const EXIT_TIME: u8 = 3;
/// Exit code: the disk lacks the space for the copy.
pub const EXIT_DISK: u8 = 4;
/// Exit code: the user holds a selected item.
pub const EXIT_SELECTED: u8 = 5;

/// Copies the user's locked items and takes the user offline.
pub async fn disconnect(
    api: &ApiArgs,
    user: &str,
    max_wait_secs: u64,
    accept: bool,
) -> anyhow::Result<()> {
    let url = format!("{}/users/{user}/disconnect", api.base_url()?);
    let body = json!({ "max_wait_secs": max_wait_secs, "accept": accept });
    let value = post(api, &url, &body).await?;
    let locked = value["locked"].as_array().map_or(0, Vec::len);
    println!(
        "{user} is disconnected: {locked} locked item(s) on this device ({} bytes copied); \
         work them with `mobiwf-node complete --user {user}`, then `mobiwf-node reconnect --user \
         {user}`",
        value["copied_bytes"].as_u64().unwrap_or(0)
    );
    let taken: Vec<String> = value["applications"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            format!(
                "{} ({} KiB)",
                a["name"].as_str().unwrap_or("?"),
                a["size_kib"]
            )
        })
        .collect();
    if !taken.is_empty() {
        println!(
            "applications its locked items start, not installed on this device (run \
             --application NAME says which are): {}",
            taken.join(", ")
        );
    }
    Ok(())
}

/// Takes the user back online: every item can be worked on again.
pub async fn reconnect(api: &ApiArgs, user: &str) -> anyhow::Result<()> {
    let url = format!("{}/users/{user}/reconnect", api.base_url()?);
    post(api, &url, &json!({})).await?;
    println!(
        "{user} is connected again: what they did offline is delivered to the hosts in the \
         background; items taken away meanwhile say \"no longer available\""
    );
    Ok(())
}

async fn post(api: &ApiArgs, url: &str, body: &Value) -> anyhow::Result<Value> {
    let response = api.client()?.post(url).json(body).send().await?;
    let response = crate::commands::api_client::authorised(response).await?;
    let status = response.status();
    let value: Value = response.json().await.unwrap_or_default();
    if status.is_success() {
        return Ok(value);
    }
    let message = format!(
        "{} (HTTP {status})",
        value["error"].as_str().unwrap_or("no details")
    );
    let code = match value["reason"].as_str() {
        Some("time") => EXIT_TIME,
        Some("disk") => EXIT_DISK,
        Some("selected") => EXIT_SELECTED,
        _ => 1,
    };
    Err(Exit { code, message }.into())
}
