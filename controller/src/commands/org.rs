//! `org apply FILE` and `org show [--json]`: the organisation directory (users, roles,
//! departments, teams, devices) the controller keeps and replicates to every node.

use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use super::api_client::{ApiArgs, apply_document, cell, list_cell, show_document};

/// Sends the organisation document; prints the new directory version (exit 0) or every
/// problem of the document (`file:line:col: error: ...`, exit 1).
pub async fn apply(api: &ApiArgs, file: &Path) -> anyhow::Result<ExitCode> {
    let target = ("/org", "application/xml");
    apply_document(api, file, target, "organisation", |body| {
        format!(
            "organisation applied: directory version {} ({} users), sent to every node",
            body["version"], body["users"]
        )
    })
    .await
}

/// Prints the directory: its version, then one line per user (JSON with `--json`).
pub async fn show(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    show_document(api, "/org", as_json, |body| {
        println!("directory version {}", body["version"]);
        let users = body["users"].as_array().cloned().unwrap_or_default();
        if users.is_empty() {
            println!("no users (apply an organisation document: mobiwf-controller org apply FILE)");
            return;
        }
        println!(
            "{:<12} {:<16} {:<12} {:<14} {:<10} {:<9} ROLES",
            "USER", "NAME", "DEPARTMENT", "TEAMS", "DEVICE", "ON LEAVE"
        );
        for u in users {
            let on_leave = if u["on_leave"].as_bool() == Some(true) {
                "yes"
            } else {
                "no"
            };
            println!(
                "{:<12} {:<16} {:<12} {:<14} {:<10} {:<9} {}",
                cell(&u["id"]),
                cell(&u["name"]),
                cell(&u["department"]),
                list_cell(&u["teams"]),
                device(&u["device"], &u["device_registered"]),
                on_leave,
                list_cell(&u["roles"]),
            );
        }
    })
    .await
}

fn device(name: &Value, registered: &Value) -> String {
    match (name.as_str(), registered.as_bool()) {
        (Some(n), Some(false)) => format!("{n}?"),
        (Some(n), _) => n.to_owned(),
        (None, _) => "-".to_owned(),
    }
}
