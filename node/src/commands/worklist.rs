//! `mobiwf-node worklist`: the manual work waiting on a node.

use crate::commands::api_client::{ApiArgs, all_pages};
use mobiwf_engine::WorkItem;

/// Prints the worklist as a table, or as JSON.
pub async fn run(api: &ApiArgs, json: bool) -> anyhow::Result<()> {
    let url = format!("{}/worklist", api.base_url()?);
    let items: Vec<WorkItem> = all_pages(&api.client()?, &url, &[]).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&items)?);
        return Ok(());
    }
    if items.is_empty() {
        println!("nothing to do");
        return Ok(());
    }
    println!(
        "{:<10} {:<10} {:<16} {:<14} DESCRIPTION",
        "INSTANCE", "ACTIVITY", "NAME", "KIND"
    );
    for item in items {
        println!(
            "{:<10} {:<10} {:<16} {:<14} {}",
            item.instance,
            item.pass.of(item.activity),
            item.name,
            item.kind,
            item.description
        );
    }
    Ok(())
}
