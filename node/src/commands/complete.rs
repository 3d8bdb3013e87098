//! `mobiwf-node complete INSTANCE ACTIVITY [--failed] [--flag F] [--set NAME=VALUE]
//! [--file NAME=PATH]`: a person finishes a manual activity of the node's worklist, setting the
//! instance data it writes.

use std::collections::BTreeMap;

use anyhow::Context as _;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mobiwf_proto::data::MAX_FILE_BYTES;

use crate::commands::api_client::{ApiArgs, check};
use mobiwf_node::api::Completion;

/// Completes the activity through the node's API.
pub async fn run(
    api: &ApiArgs,
    instance: u64,
    activity: u64,
    body: Completion,
) -> anyhow::Result<()> {
    let url = format!(
        "{}/instances/{instance}/activities/{activity}/complete",
        api.base_url()?
    );
    check(api.client()?.post(&url).json(&body).send().await?).await?;
    let verb = if body.failed { "failed" } else { "completed" };
    println!("activity {activity} of instance {instance} {verb}");
    Ok(())
}

/// The `--set NAME=VALUE` values and the `--file NAME=PATH` contents (base64), by name.
pub fn data_args(
    set: &[String],
    file: &[String],
) -> anyhow::Result<(BTreeMap<String, String>, BTreeMap<String, String>)> {
    let split = |arg: &str, option: &str, what: &str| {
        arg.split_once('=')
            .map(|(n, v)| (n.trim().to_owned(), v.to_owned()))
            .with_context(|| format!("{option} {arg}: write {option} NAME={what}"))
    };
    let mut values = BTreeMap::new();
    for arg in set {
        let (name, value) = split(arg, "--set", "VALUE")?;
        values.insert(name, value);
    }
    let mut files = BTreeMap::new();
    for arg in file {
        let (name, path) = split(arg, "--file", "PATH")?;
        let size = std::fs::metadata(&path)
            .with_context(|| format!("--file {arg}: cannot read {path}"))?
            .len();
        anyhow::ensure!(
            size <= MAX_FILE_BYTES,
            "--file {arg}: {path} holds {size} bytes, over the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)"
        );
        let bytes =
            std::fs::read(&path).with_context(|| format!("--file {arg}: cannot read {path}"))?;
        files.insert(name, STANDARD.encode(bytes));
    }
    Ok((values, files))
}
