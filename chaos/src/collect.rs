//! After the faults: the settle period (the mesh whole again, until every instance the
//! controller knows is final or the period is over), then what the controller shows of each
//! instance (`list --all --json` and `status ID --json`), read into the checker's terms, and
//! when each instance that succeeded was submitted and finished.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::mesh::Controller;
use mobiwf_chaos::cost::{Ended, EpochMs};
use mobiwf_chaos::suspicion::{Suspicion, suspicion_in};
use mobiwf_chaos::verdict::{ActivitySeen, FINAL, Seen};
use mobiwf_chaos::workflows::Workflow;

/// How long one read of the controller may take.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Every instance the controller lists, as `list --all --json` shows it.
fn listed(controller: &Controller) -> anyhow::Result<Vec<Value>> {
    let out = controller.cli(&["list", "--all", "--json"], READ_TIMEOUT)?;
    if out.code != Some(0) {
        bail!("list --all --json: {}{}", out.stdout, out.stderr);
    }
    let mut all = Vec::new();
    // `--all` prints one page after the other.
    let pages = serde_json::Deserializer::from_str(&out.stdout).into_iter::<Value>();
    for page in pages {
        let page = page.context("list --all --json printed invalid JSON")?;
        all.extend(
            page["instances"]
                .as_array()
                .context("no instances")?
                .clone(),
        );
    }
    Ok(all)
}

/// Every instance the controller lists: (id, description, state).
fn list(controller: &Controller) -> anyhow::Result<Vec<(u64, String, String)>> {
    let mut all = Vec::new();
    for i in listed(controller)? {
        let id = i["id"].as_u64().context("an instance without id")?;
        let description = i["description"].as_str().unwrap_or_default().to_owned();
        let state = i["state"].as_str().unwrap_or_default().to_owned();
        all.push((id, description, state));
    }
    Ok(all)
}

/// When each instance that succeeded was submitted and finished (the controller's times).
pub fn ended(controller: &Controller) -> anyhow::Result<Vec<Ended>> {
    Ok(listed(controller)?
        .iter()
        .filter(|i| i["state"].as_str() == Some("succeeded"))
        .filter_map(|i| {
            Some(Ended {
                submitted: EpochMs(i["submitted_ms"].as_u64()?),
                finished: EpochMs(i["finished_ms"].as_u64()?),
            })
        })
        .collect())
}

/// Waits until every instance the controller lists is final, at most `period`; how long it
/// took (`None`: some were not final in time).
pub fn settle(controller: &Controller, period: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < period {
        if let Ok(all) = list(controller)
            && all.iter().all(|(_, _, s)| FINAL.contains(&s.as_str()))
        {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    None
}

/// What the controller shows of every instance it knows.
pub fn seen(controller: &Controller) -> anyhow::Result<Vec<Seen>> {
    let mut all = Vec::new();
    for (id, description, _) in list(controller)? {
        let out = controller.cli(&["status", &id.to_string(), "--json"], READ_TIMEOUT)?;
        if out.code != Some(0) {
            bail!("status {id} --json: {}{}", out.stdout, out.stderr);
        }
        let status: Value = serde_json::from_str(&out.stdout)
            .with_context(|| format!("status {id} --json printed invalid JSON"))?;
        let abandoned: Vec<u64> = status["partitions"]
            .as_array()
            .context("no partitions")?
            .iter()
            .filter(|p| !p["abandoned"].is_null())
            .filter_map(|p| p["id"].as_u64())
            .collect();
        let mut activities = std::collections::BTreeMap::new();
        for a in status["activities"].as_array().context("no activities")? {
            let shown = ActivitySeen {
                state: a["state"].as_str().unwrap_or_default().to_owned(),
                retried: a["retried"]
                    .as_u64()
                    .and_then(|r| u32::try_from(r).ok())
                    .unwrap_or(0),
                given_up: a["partition"]
                    .as_u64()
                    .is_some_and(|p| abandoned.contains(&p)),
            };
            activities.insert(a["id"].as_u64().context("an activity without id")?, shown);
        }
        all.push(Seen {
            id,
            workflow: Workflow::from_description(&description),
            state: status["state"].as_str().unwrap_or_default().to_owned(),
            activities,
        });
    }
    Ok(all)
}

/// Commands the nodes started that have not recorded their exit (a run directory's `claim`
/// without `exit`, as the node's executor leaves them).
fn commands_running(node_dirs: &[std::path::PathBuf]) -> usize {
    node_dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d.join("runs")).ok())
        .flat_map(|entries| entries.filter_map(Result::ok))
        .filter(|e| e.path().join("claim").exists() && !e.path().join("exit").exists())
        .count()
}

/// Waits, at most `period`, until no command of the nodes runs: a command of a partition the
/// controller gave up may still be on its way to its mark.
pub fn commands_done(node_dirs: &[std::path::PathBuf], period: Duration) {
    let start = Instant::now();
    while commands_running(node_dirs) > 0 && start.elapsed() < period {
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every time the controller gave up a node's partitions, from the histories of `instances`.
pub fn suspicions(controller: &Controller, instances: &[u64]) -> anyhow::Result<Vec<Suspicion>> {
    let mut all = Vec::new();
    for id in instances {
        let out = controller.cli(&["history", &id.to_string(), "--json"], READ_TIMEOUT)?;
        if out.code != Some(0) {
            bail!("history {id} --json: {}{}", out.stdout, out.stderr);
        }
        let events: Value = serde_json::from_str(&out.stdout)
            .with_context(|| format!("history {id} --json printed invalid JSON"))?;
        for e in events.as_array().context("history is no array")? {
            let what = e["what"].as_str().unwrap_or_default();
            let at = e["at_ms"].as_u64().unwrap_or_default();
            all.extend(suspicion_in(what, e["partner"].as_str(), at));
        }
    }
    Ok(all)
}
