//! `org apply FILE` and `org show [--json]`: the organisation directory (users, roles,
//! departments, teams, devices) the controller keeps and replicates to every node.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use super::api_client::{ApiArgs, failure, json};

/// Sends the organisation document; prints the new directory version (exit 0) or every
/// problem of the document (`file:line:col: error: ...`, exit 1).
pub async fn apply(api: &ApiArgs, file: &Path) -> anyhow::Result<ExitCode> {
    let bytes = super::read(file)?;
    let request = api
        .client()?
        .put(api.url("/org"))
        .query(&[("source", file.display().to_string())])
        .header("content-type", "application/xml")
        .body(bytes);
    match json(request, api).await? {
        Ok(body) => {
            println!(
                "organisation applied: directory version {} ({} users), sent to every node",
                body["version"], body["users"]
            );
            Ok(ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: the organisation was not applied");
            Ok(ExitCode::from(1))
        }
    }
}

/// Prints the directory: its version, then one line per user (JSON with `--json`).
pub async fn show(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let request = api.client()?.get(api.url("/org"));
    let body = match json(request, api).await {
        Ok(Ok(body)) => body,
        Ok(Err(refused)) => return Ok(failure(Ok(refused), &[404])),
        Err(e) => return Ok(failure(Err(e), &[])),
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("directory version {}", body["version"]);
    let users = body["users"].as_array().cloned().unwrap_or_default();
    if users.is_empty() {
        println!("no users (apply an organisation document: mobiwf-controller org apply FILE)");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<12} {:<16} {:<12} {:<14} {:<10} {:<9} ROLES",
        "USER", "NAME", "DEPARTMENT", "TEAMS", "DEVICE", "ON LEAVE"
    );
    for u in users {
        println!(
            "{:<12} {:<16} {:<12} {:<14} {:<10} {:<9} {}",
            text(&u["id"]),
            text(&u["name"]),
            text(&u["department"]),
            list(&u["teams"]),
            device(&u["device"], &u["device_registered"]),
            if u["on_leave"].as_bool() == Some(true) {
                "yes"
            } else {
                "no"
            },
            list(&u["roles"]),
        )
    }
    Ok(ExitCode::SUCCESS)
}

fn device(name: &Value, registered: &Value) -> String {
    match (name.as_str(), registered.as_bool()) {
        (Some(n), Some(false)) => format!("{n}?"),
        (Some(n), _) => n.to_owned(),
        (None, _) => "-".to_owned(),
    }
}

fn list(value: &Value) -> String {
    let items: Vec<String> = value
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(",")
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::String(s) if s.is_empty() => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
