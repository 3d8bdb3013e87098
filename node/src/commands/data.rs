//! `mobiwf-node data INSTANCE [--json] [--save DIR]`: the instance data this node knows, for
//! the person doing an activity that reads it; `--save` writes each file's content (and each
//! value's text) to `DIR/<name>`.

use std::path::Path;

use anyhow::Context as _;
use mobiwf_proto::{DataValue, Datum};

use crate::commands::api_client::{ApiArgs, check};

/// Prints the instance's data as a table (or JSON), and saves it when asked.
pub async fn run(
    api: &ApiArgs,
    instance: u64,
    json: bool,
    save: Option<&Path>,
) -> anyhow::Result<()> {
    let base = api.base_url()?;
    let url = format!("{base}/instances/{instance}/data");
    let data: Vec<Datum> = check(api.client()?.get(&url).send().await?)
        .await?
        .json()
        .await?;
    if let Some(dir) = save {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for d in &data {
            let to = dir.join(&d.name);
            match &d.value {
                DataValue::String(t) | DataValue::Number(t) => std::fs::write(&to, t),
                DataValue::File(f) => {
                    let url = format!("{base}/files/{}", f.sha256);
                    let bytes = check(api.client()?.get(&url).send().await?)
                        .await?
                        .bytes()
                        .await?;
                    std::fs::write(&to, bytes)
                }
            }
            .with_context(|| format!("cannot write {}", to.display()))?;
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&data)?);
        return Ok(());
    }
    if data.is_empty() {
        println!("no data of instance {instance} on this node");
        return Ok(());
    }
    println!("{:<16} {:<8} {:<10} VALUE", "NAME", "TYPE", "BY");
    for d in data {
        let (kind, value) = d.value.shown();
        let by = d.writer();
        println!(
            "{:<16} {:<8} {:<10} {}",
            d.name,
            kind,
            by,
            value.escape_debug()
        );
    }
    if let Some(dir) = save {
        println!("saved to {}", dir.display());
    }
    Ok(())
}
