//! A node's state on its simulated disk, with the keys and the rules of the node daemon's
//! store (`mobiwf-node`, `src/state.rs`): `run/`, `doc/`, `known/`, `item/`, `token/`,
//! `directory`, `desk/...`, `retired/`. The encoding and the decoding are the cores' own
//! (`Engine::take_changes`, `Run::from_stored`, `StoredItem::decode`, `Desk::restore`), so a
//! restart goes through the load the daemon does: the live instances read at start, a finished
//! one retired and marked (not read again at the next start), read back on demand before any
//! input about it.

use std::collections::BTreeSet;

use mobiwf_engine::{
    Changes, Engine, Item, Known, RestoredPeople, Run, RunKey, StoredDirectory, StoredInstance,
    StoredItem, StoredToken,
};
use mobiwf_node_core::{NodeCore, NodeInput, Output};
use mobiwf_proto::{InstanceId, PartitionId, RoleId};

use crate::disk::{Batch, Disk};

const ITEM_PREFIX: &str = "item/";
const TOKEN_PREFIX: &str = "token/";
const DIRECTORY_KEY: &str = "directory";
const RETIRED_PREFIX: &str = "retired/";

/// What the disk holds that does not read back: a bug of the encoding, reported by the checks.
pub type Unreadable = String;

fn run_key(instance: InstanceId, partition: PartitionId) -> String {
    format!("run/{:020}/{:020}", instance.0, partition.0)
}

fn doc_key(instance: InstanceId, partition: PartitionId) -> String {
    format!("doc/{:020}/{:020}", instance.0, partition.0)
}

fn known_key(instance: InstanceId) -> String {
    format!("known/{:020}", instance.0)
}

/// Adds the engine's changes to `batch` (`state::stage_changes`).
pub fn stage_changes(batch: &mut Batch, changes: &Changes) {
    for run in &changes.runs {
        let (instance, partition) = (run.key.instance, run.key.partition);
        if let Some(document) = &run.document {
            batch.put(doc_key(instance, partition), document.as_bytes());
        }
        batch.put(run_key(instance, partition), run.state.as_slice());
    }
    for known in &changes.known {
        batch.put(known_key(known.instance), known.state.as_slice());
    }
    for item in &changes.items {
        let key = format!(
            "{ITEM_PREFIX}{:020}/{:020}",
            item.instance.0, item.activity.0
        );
        batch.put(key, item.state.as_slice());
    }
    for token in &changes.tokens {
        batch.put(
            format!("{TOKEN_PREFIX}{}", token.role),
            token.state.as_slice(),
        );
    }
    if let Some(directory) = &changes.directory {
        batch.put(DIRECTORY_KEY, directory.state.as_slice());
    }
}

/// What a group changed, as the checks look at it: the runs written (their records) and the
/// work items written, read before the finished instances leave memory.
#[derive(Debug, Default)]
pub struct Touched {
    /// Each run written, with its activities' records.
    pub runs: Vec<(RunKey, Vec<mobiwf_proto::ActivityRecord>)>,
    /// Each work item written.
    pub items: Vec<Item>,
}

/// Stages everything the core changed (`state::stage_core`): the engine's changes, the
/// retired marks, the desk's changes. Gives what was written, for the checks.
pub fn stage_core(batch: &mut Batch, core: &mut NodeCore) -> Result<Touched, Unreadable> {
    let changes = core
        .take_changes()
        .map_err(|e| format!("the engine's changes: {e}"))?;
    stage_changes(batch, &changes);
    let engine = core.engine();
    let touched = Touched {
        runs: changes
            .runs
            .iter()
            .filter_map(|r| Some((r.key, engine.run(&r.key)?.records())))
            .collect(),
        items: changes
            .items
            .iter()
            .filter_map(|i| engine.item(i.instance, i.activity).cloned())
            .collect(),
    };
    for (instance, retired) in core.retire_finished(&changes) {
        stage_retired(batch, instance, retired);
    }
    let desk = core
        .take_desk_changes()
        .map_err(|e| format!("the desk's changes: {e}"))?;
    for (key, value) in desk.puts {
        batch.put(key, value);
    }
    for key in desk.deletes {
        batch.delete(key);
    }
    Ok(touched)
}

fn stage_retired(batch: &mut Batch, instance: InstanceId, retired: bool) {
    let key = format!("{RETIRED_PREFIX}{:020}", instance.0);
    if retired {
        batch.put(key, Vec::new());
    } else {
        batch.delete(key);
    }
}

fn number_at(k: &[u8], at: usize) -> Option<u64> {
    k.get(at..at + 20)
        .and_then(|d| std::str::from_utf8(d).ok())
        .and_then(|d| d.parse().ok())
}

/// The engine as the disk holds it, the live instances in memory (`state::load`); the
/// finished ones not marked yet are retired and marked in a synced write.
pub fn load(disk: &mut Disk) -> Result<Engine, Unreadable> {
    let retired: BTreeSet<InstanceId> = disk
        .keys(RETIRED_PREFIX.as_bytes())
        .filter_map(|k| number_at(k, RETIRED_PREFIX.len()))
        .map(InstanceId)
        .collect();
    let skip = |i: InstanceId| retired.contains(&i);
    let runs = load_runs(disk, b"run/", skip)?;
    let known = load_known(disk, b"known/", skip)?;
    let instances: BTreeSet<InstanceId> = runs.iter().map(|r| r.key.instance).collect();
    let people = load_people(disk, skip)?;
    let mut engine = Engine::restore(runs, known).with_people(people);
    let mut marks = Batch::default();
    for instance in instances {
        if engine.retire(instance) {
            stage_retired(&mut marks, instance, true);
        }
    }
    if !marks.is_empty() {
        disk.write_synced(marks);
    }
    Ok(engine)
}

fn load_runs(
    disk: &Disk,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<Run>, Unreadable> {
    let mut runs = Vec::new();
    for (k, v) in disk.scan(prefix) {
        let (Some(instance), Some(partition)) = (number_at(&k, 4), number_at(&k, 25)) else {
            return Err(format!("bad key {}", String::from_utf8_lossy(&k)));
        };
        let key = RunKey {
            instance: InstanceId(instance),
            partition: PartitionId(partition),
        };
        if skip(key.instance) {
            continue;
        }
        let document = disk
            .get(doc_key(key.instance, key.partition).as_bytes())
            .map(|d| String::from_utf8_lossy(d).into_owned());
        let run = Run::from_stored(&v, document)
            .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(&k)))?;
        runs.push(run);
    }
    Ok(runs)
}

fn load_known(
    disk: &Disk,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<(InstanceId, Known)>, Unreadable> {
    let mut known = Vec::new();
    for (k, v) in disk.scan(prefix) {
        let instance = number_at(&k, b"known/".len())
            .map(InstanceId)
            .ok_or_else(|| format!("bad key {}", String::from_utf8_lossy(&k)))?;
        if skip(instance) {
            continue;
        }
        let value: Known = serde_json::from_slice(&v)
            .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(&k)))?;
        known.push((instance, value));
    }
    Ok(known)
}

fn load_items(
    disk: &Disk,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<Item>, Unreadable> {
    let mut items = Vec::new();
    for (k, v) in disk.scan(prefix) {
        let instance = number_at(&k, ITEM_PREFIX.len())
            .map(InstanceId)
            .ok_or_else(|| format!("bad key {}", String::from_utf8_lossy(&k)))?;
        if !skip(instance) {
            items.push(StoredItem::decode(&v)?);
        }
    }
    Ok(items)
}

fn load_people(
    disk: &Disk,
    skip: impl Fn(InstanceId) -> bool,
) -> Result<RestoredPeople, Unreadable> {
    let items = load_items(disk, ITEM_PREFIX.as_bytes(), skip)?;
    let mut tokens = Vec::new();
    for (k, v) in disk.scan(TOKEN_PREFIX.as_bytes()) {
        let role = String::from_utf8_lossy(&k[TOKEN_PREFIX.len()..]).into_owned();
        tokens.push((RoleId::new(role), StoredToken::decode(&v)?));
    }
    let directory = match disk.get(DIRECTORY_KEY.as_bytes()) {
        Some(v) => Some(StoredDirectory::decode(v)?),
        None => None,
    };
    Ok(RestoredPeople {
        items,
        tokens,
        directory,
    })
}

/// The desk as the disk holds it (`state::load_desk`).
pub fn load_desk(disk: &Disk) -> Result<mobiwf_people::Desk, Unreadable> {
    let entries = disk
        .scan(mobiwf_people::desk::PREFIX.as_bytes())
        .into_iter()
        .map(|(k, v)| (String::from_utf8_lossy(&k).into_owned(), v));
    mobiwf_people::Desk::restore(entries).map_err(|e| format!("{}: {}", e.key, e.reason))
}

/// One retired instance read back (`state::load_instance`).
pub fn load_instance(disk: &Disk, instance: InstanceId) -> Result<StoredInstance, Unreadable> {
    let id = instance.0;
    let runs = load_runs(disk, format!("run/{id:020}/").as_bytes(), |_| false)?;
    let known = load_known(disk, known_key(instance).as_bytes(), |_| false)?.pop();
    let items = load_items(disk, format!("{ITEM_PREFIX}{id:020}/").as_bytes(), |_| {
        false
    })?;
    Ok(StoredInstance { runs, known, items })
}

/// Reads back the instance `input` is about when the core let go of it (`state::readmit_for`).
pub fn readmit_for(core: &mut NodeCore, disk: &Disk, input: &NodeInput) -> Result<(), Unreadable> {
    if let Some(instance) = core.needs(input) {
        core.readmit(load_instance(disk, instance)?);
    }
    Ok(())
}

/// `out` and what the claims it deferred came to (`state::with_deferred`).
pub fn with_deferred(
    core: &mut NodeCore,
    disk: &Disk,
    now_us: u64,
    out: Output,
) -> Result<Vec<Output>, Unreadable> {
    let mut outputs = vec![out];
    let mut next = 0;
    while let Some(out) = outputs.get_mut(next) {
        let deferred = std::mem::take(&mut out.deferred);
        next += 1;
        for claim in deferred {
            let input = NodeInput::OwnClaim(claim);
            readmit_for(core, disk, &input)?;
            if let Ok(out) = core.apply(now_us, input) {
                outputs.push(out);
            }
        }
    }
    Ok(outputs)
}
