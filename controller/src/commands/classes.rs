//! `classes apply FILE`, `classes show [--json]` and `sync show [--json]`: the task classes the
//! synchronization manager decides by, and who holds and waits for them now.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::Value;

use super::api_client::{ApiArgs, apply_document, cell, get_json, list_cell};

/// `mobiwf-controller classes ...`.
#[derive(Subcommand)]
pub enum ClassesCommand {
    /// Apply a class document (XML): the task classes, which conflict, how long a request may
    /// wait. Exit 1 with every problem (`file:line:col`) when it is invalid, or when it leaves
    /// out a class an instance not over names.
    Apply {
        /// The class document.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Show the classes: each with the classes it may not run beside and its maxWait.
    Show {
        /// Print JSON (with the document as applied).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// `mobiwf-controller sync ...`.
#[derive(Subcommand)]
pub enum SyncCommand {
    /// Show who holds a task class now, and who waits for one (and behind whom).
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Runs a `classes` command.
pub async fn classes(command: ClassesCommand) -> anyhow::Result<ExitCode> {
    match command {
        ClassesCommand::Apply { file, api } => apply(&api, &file).await,
        ClassesCommand::Show { json, api } => show(&api, json).await,
    }
}

/// Runs a `sync` command.
pub async fn sync(command: SyncCommand) -> anyhow::Result<ExitCode> {
    match command {
        SyncCommand::Show { json, api } => sync_show(&api, json).await,
    }
}

/// Sends the class document; prints how many classes it declares (exit 0) or every problem
/// (exit 1).
async fn apply(api: &ApiArgs, file: &Path) -> anyhow::Result<ExitCode> {
    let target = ("/classes", "application/xml");
    apply_document(api, file, target, "class document", |body| {
        format!(
            "class document applied: {} classes; requests for them are decided by it from now on",
            body["classes"]
        )
    })
    .await
}

/// Prints one line per class (JSON with `--json`).
async fn show(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let body = match get_json(api, "/classes").await {
        Ok(body) => body,
        Err(code) => return Ok(code),
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let classes = body["classes"].as_array().cloned().unwrap_or_default();
    if classes.is_empty() {
        println!("no classes (apply a class document: mobiwf-controller classes apply FILE)");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<16} {:<9} CONFLICTS WITH", "CLASS", "MAX WAIT");
    for c in classes {
        println!(
            "{:<16} {:<9} {}",
            cell(&c["id"]),
            format!("{} s", c["max_wait_secs"]),
            list_cell(&c["conflicts_with"]),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the holders, then the waiters in the order they will be looked at.
async fn sync_show(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let body = match get_json(api, "/sync").await {
        Ok(body) => body,
        Err(code) => return Ok(code),
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("lease {} ms", body["lease_ms"]);
    let holders = body["holders"].as_array().cloned().unwrap_or_default();
    let waiters = body["waiters"].as_array().cloned().unwrap_or_default();
    let ordered = body["ordered"].as_array().cloned().unwrap_or_default();
    if holders.is_empty() && waiters.is_empty() && ordered.is_empty() {
        println!("no activity holds or waits for a class");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<8} {:<12} {:<9} {:<20} {:<10} {:<20} BEHIND",
        "", "CLASS", "INSTANCE", "ACTIVITY", "NODE", "SINCE"
    );
    // The requests waiting for their instance's relative order: what they wait after.
    let ordered = ordered.iter().map(|o| {
        let mut row = o.clone();
        row["behind_text"] = o["after_text"].clone();
        ("orders", row)
    });
    let rows: Vec<(&str, Value)> = holders
        .iter()
        .map(|h| ("holds", holder_row(h)))
        .chain(waiters.iter().map(|w| ("waits", w.clone())))
        .chain(ordered)
        .collect();
    for (what, row) in &rows {
        let since = row["since_ms"]
            .as_u64()
            .map_or_else(|| "-".to_owned(), mobiwf_book::format_time);
        println!(
            "{:<8} {:<12} {:<9} {:<20} {:<10} {:<20} {}",
            what,
            cell(&row["class"]),
            cell(&row["instance"]),
            activity(row),
            cell(&row["node"]),
            since,
            row["behind_text"].as_str().unwrap_or("-"),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A holder as a row: one whose node is suspected or gone says when its hold ends and why
/// where a waiter says what it waits behind.
fn holder_row(holder: &Value) -> Value {
    let mut row = holder.clone();
    if let Some(at) = holder["ending"]["at_ms"].as_u64() {
        let why = holder["ending"]["why"].as_str().unwrap_or("-");
        row["behind_text"] =
            Value::String(format!("ending at {}: {why}", mobiwf_book::format_time(at)));
    }
    row
}

/// `press lid (1)`, `press lid (1#2)` in a loop's second pass, or `activity 1` without a name.
fn activity(row: &Value) -> String {
    let id = match row["pass"].as_u64() {
        Some(pass) => format!("{}#{pass}", row["activity"]),
        None => row["activity"].to_string(),
    };
    match row["name"].as_str() {
        Some(name) if !name.is_empty() => format!("{name} ({id})"),
        _ => format!("activity {id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_that_ends_says_when_and_why_where_a_waiter_says_what_it_waits_behind() {
        let standing = serde_json::json!({"class": "press", "since_ms": 1});
        assert_eq!(holder_row(&standing), standing);
        let ending = serde_json::json!({
            "class": "press",
            "ending": {"at_ms": 1_795_000_000_000_u64, "why": "node P1 was removed by an operator"}
        });
        let row = holder_row(&ending);
        let text = row["behind_text"].as_str().unwrap_or_default();
        let when = mobiwf_book::format_time(1_795_000_000_000);
        assert_eq!(
            text,
            format!("ending at {when}: node P1 was removed by an operator")
        );
    }
}
