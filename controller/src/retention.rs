//! Retention of finished instances (`serve --retain-finished DURATION`): a periodic sweep
//! deletes the settled instances that finished longer ago than that, with their summary,
//! definition and history, [`RETENTION_BATCH`] at a time (one group of the actor each, so the
//! controller goes on answering in between).
//!
//! A deployed definition is never deleted here: the sweep tells the book which versions the
//! deleted instances named, and the book lets a removed version go with the last of them.
//!
//! The sweep walks the `fin/<ms>/<id>` index oldest first and stops at the first one too
//! young. An index key whose instance was rerun since (not settled any more, or settled at
//! another time) is stale: it is deleted and the instance left alone.

use std::time::Duration;

use mobiwf_book::DefinitionRef;
use mobiwf_proto::InstanceId;
use mobiwf_runtime::store::{Batch, Store, StoreError, unreadable};

use crate::{listing, state};

/// The most instances one sweep deletes (then it sweeps again at once while more are due).
pub const RETENTION_BATCH: usize = 256;
/// The shortest time between sweeps.
pub const MIN_SWEEP_EVERY: Duration = Duration::from_secs(1);
/// The longest time between sweeps.
pub const MAX_SWEEP_EVERY: Duration = Duration::from_secs(60);
/// The longest retention `--retain-finished` takes (ten years).
pub const MAX_RETAIN: Duration = Duration::from_secs(10 * 366 * 86_400);

/// How often to sweep for a retention of `retain`: a quarter of it, within
/// [`MIN_SWEEP_EVERY`] and [`MAX_SWEEP_EVERY`].
pub fn sweep_every(retain: Duration) -> Duration {
    (retain / 4).clamp(MIN_SWEEP_EVERY, MAX_SWEEP_EVERY)
}

/// A duration as `--retain-finished` takes it: a whole number and a unit, `ms`, `s`, `m`,
/// `h` or `d` (`30d`, `12h`, `90s`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || {
        format!(
            "{text:?} is not a duration: write a whole number and a unit, ms, s, m, h or d (e.g. 30d, 12h, 90s)"
        )
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    let unit_ms: u64 = match unit {
        "ms" => 1,
        "s" => 1000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(bad()),
    };
    let duration = Duration::from_millis(n.saturating_mul(unit_ms));
    if duration.is_zero() || duration > MAX_RETAIN {
        return Err(format!(
            "{text:?}: the retention must be more than 0 and at most 3660d"
        ));
    }
    Ok(duration)
}

/// What one sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// The instances deleted.
    pub deleted: Vec<InstanceId>,
    /// The deployed definition versions they named, one entry per instance: the book is told
    /// (`Book::released`), so that a removed version goes with its last instance.
    pub released: Vec<DefinitionRef>,
    /// True when more may be due: sweep again at once.
    pub more: bool,
}

/// Stages into `batch` the deletion of up to [`RETENTION_BATCH`] settled instances that
/// finished before `cutoff_ms`, leaving those `held` says the book holds (recalled or deleted
/// in this group: they go in a later sweep, or are gone), and the stale index keys.
pub fn sweep(
    store: &dyn Store,
    batch: &mut Batch,
    cutoff_ms: u64,
    held: &dyn Fn(InstanceId) -> bool,
) -> Result<Swept, StoreError> {
    let entries = store.scan_from(b"fin/", b"fin/", RETENTION_BATCH)?;
    let full = entries.len() == RETENTION_BATCH;
    let mut swept = Swept::default();
    // More may be due only when this page was full and did something: a page of instances
    // all held in memory would otherwise be read again and again at once.
    let mut progressed = false;
    let mut young = false;
    for (key, _) in &entries {
        let (ms, id) = parse_finished_key(key).ok_or_else(|| unreadable(key, &"bad key"))?;
        if ms >= cutoff_ms {
            young = true;
            break;
        }
        let summary = listing::summary_of(store, id)?;
        let current = summary
            .as_ref()
            .is_some_and(|s| s.settled && state::finished_at(s) == ms);
        if !current {
            // Stale (rerun since, held or not): the store says it is not settled then.
            batch.delete(key.clone());
            progressed = true;
            continue;
        }
        if held(id) {
            continue;
        }
        batch.delete(key.clone());
        progressed = true;
        for (k, _) in store.scan_prefix(state::history_prefix(id).as_bytes())? {
            batch.delete(k);
        }
        batch.delete(state::instance_key(id));
        batch.delete(state::summary_key(id));
        batch.delete(state::definition_key(id));
        swept.deleted.push(id);
        swept.released.extend(summary.and_then(|s| s.definition));
    }
    swept.more = full && progressed && !young;
    Ok(swept)
}

/// `fin/<ms>/<id>` → (ms, id).
fn parse_finished_key(key: &[u8]) -> Option<(u64, InstanceId)> {
    let ms = state::number_after(key, b"fin/")?;
    let id = state::number_after(key, b"fin/00000000000000000000/")?;
    Some((ms, InstanceId(id)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use mobiwf_book::{InstanceState, InstanceSummary};
    use mobiwf_runtime::store::{Durability, MemoryStore};

    /// Writes instance `id`'s summary and its `fin/<ms>/<id>` key.
    fn finished(store: &MemoryStore, id: u64, ms: u64, settled: bool) {
        let summary = InstanceSummary {
            id: InstanceId(id),
            workflow: mobiwf_xml_schema::WorkflowId(1),
            description: String::new(),
            state: if settled {
                InstanceState::Succeeded
            } else {
                InstanceState::Running
            },
            detail: None,
            submitted_ms: 1,
            finished_ms: Some(ms),
            responsible: None,
            settled,
            definition: None,
        };
        let mut batch = Batch::default();
        batch.put(
            state::summary_key(InstanceId(id)),
            serde_json::to_vec(&summary).unwrap(),
        );
        batch.put(state::finished_key(ms, InstanceId(id)), Vec::new());
        store.write(batch, Durability::Synced).unwrap();
    }

    /// One sweep at `cutoff`, written.
    fn sweep_once(store: &MemoryStore, cutoff: u64, held: &dyn Fn(InstanceId) -> bool) -> Swept {
        let mut batch = Batch::default();
        let swept = sweep(store, &mut batch, cutoff, held).unwrap();
        store.write(batch, Durability::Synced).unwrap();
        swept
    }

    #[test]
    fn stale_keys_of_instances_held_in_memory_go_and_a_page_that_does_nothing_is_not_read_again_at_once()
     {
        let store = MemoryStore::default();
        // A full page of instances rerun since they finished (not settled, so in memory),
        // then one settled long ago.
        let page = u64::try_from(RETENTION_BATCH).unwrap();
        for id in 1..=page {
            finished(&store, id, 10, false);
        }
        finished(&store, 1000, 20, true);
        let rerun = |id: InstanceId| id.0 <= page;
        let first = sweep_once(&store, 100, &rerun);
        assert!(first.deleted.is_empty());
        assert!(first.more, "the stale keys went: the next page is due");
        let second = sweep_once(&store, 100, &rerun);
        assert_eq!(second.deleted, [InstanceId(1000)]);
        assert!(!second.more);
        assert!(store.scan_prefix(b"fin/").unwrap().is_empty());

        // A full page of settled instances that are all in memory right now: nothing to do,
        // and no sweep again at once.
        for id in 2000..2000 + page {
            finished(&store, id, 30, true);
        }
        let held = sweep_once(&store, 100, &|_| true);
        assert!(held.deleted.is_empty());
        assert!(!held.more);
        assert_eq!(store.scan_prefix(b"fin/").unwrap().len(), RETENTION_BATCH);
    }

    #[test]
    fn durations_read_with_their_units_and_bad_ones_say_how_to_write_them() {
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("12h"), Ok(Duration::from_secs(12 * 3600)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        for bad in ["", "30", "d", "3.5h", "12 hours", "-1d"] {
            let e = parse_duration(bad).expect_err(bad);
            assert!(e.contains("e.g. 30d"), "{e}");
        }
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("4000d").is_err());
    }

    #[test]
    fn sweeps_come_every_quarter_of_the_retention_within_bounds() {
        assert_eq!(sweep_every(Duration::from_secs(2)), MIN_SWEEP_EVERY);
        assert_eq!(sweep_every(Duration::from_secs(8)), Duration::from_secs(2));
        assert_eq!(sweep_every(Duration::from_secs(86_400)), MAX_SWEEP_EVERY);
    }
}
