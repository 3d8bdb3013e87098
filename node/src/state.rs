//! How a node's engine state lives in the store: keys, encoding, loading.
//!
//! Keys: `run/<instance>/<partition>` (a partition run's state, JSON),
//! `doc/<instance>/<partition>` (its partition document, written once), `known/<instance>`
//! (what the partners and the controller told about the instance, JSON), `item/<instance>/
//! <activity>` (a work item this node hosts, JSON), `token/<role>` (round-robin's last user
//! of a role), `directory` (the organisation directory replica), `desk/...` (the
//! worklists and notices of the users whose device this node is; keys given by
//! `mobiwf_people::desk`), the daemon shell's `seen/<origin>/<incarnation>/<seq>` and
//! `seen-floor/<origin>/<incarnation>` (the messages already applied, `runtime::daemon`),
//! `meta/incarnation` (this store's, in every message id) and `meta/seq` (the last sequence
//! number given to an outgoing message), `epoch/<shard>` (the highest epoch heard from a
//! clustered controller's owner of that shard, `daemon::epochs`), and the outbox's `out/...`.
//! A finished instance's keys stay: the instance leaves memory (`Engine::retire`), is marked
//! `retired/<instance>` (not loaded at start) and is read back with [`load_instance`].
//! Numbers are zero-padded to 20 digits so that key order is numeric order.

use mobiwf_runtime::store::{Batch, Durability, Store, StoreError, unreadable};

use mobiwf_engine::{
    Changes, Engine, Item, Known, RestoredPeople, Run, RunKey, StoredDirectory, StoredInstance,
    StoredItem, StoredToken,
};
use mobiwf_proto::{InstanceId, PartitionId};

fn run_key(instance: InstanceId, partition: PartitionId) -> String {
    let (instance, partition) = (instance.0, partition.0);
    format!("run/{instance:020}/{partition:020}")
}

/// The prefix of every `run/` key of `instance`; also where its runs start in key order.
pub fn runs_prefix(instance: InstanceId) -> String {
    let instance = instance.0;
    format!("run/{instance:020}/")
}

fn doc_key(instance: InstanceId, partition: PartitionId) -> String {
    let (instance, partition) = (instance.0, partition.0);
    format!("doc/{instance:020}/{partition:020}")
}

fn known_key(instance: InstanceId) -> String {
    let instance = instance.0;
    format!("known/{instance:020}")
}

/// Adds the engine's changes (encoded by the engine, which reports a value it cannot encode
/// before anything is staged) to `batch`.
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
        let (instance, activity) = (item.instance.0, item.activity.0);
        let key = format!("{ITEM_PREFIX}{instance:020}/{activity:020}");
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

/// The work items this node hosts: `item/<instance>/<activity>`.
const ITEM_PREFIX: &str = "item/";
/// The round-robin token of each role on this host: `token/<role>`.
const TOKEN_PREFIX: &str = "token/";
/// The organisation directory this node holds.
const DIRECTORY_KEY: &str = "directory";

/// The work items under `prefix` (`item/` or `item/<instance>/`), less those of instances
/// `skip` names.
fn load_items(
    store: &dyn Store,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<Item>, StoreError> {
    let mut items = Vec::new();
    for (k, v) in store.scan_prefix(prefix)? {
        // The key names the instance: a skipped item is not even decoded.
        let instance =
            number_at(&k, ITEM_PREFIX.len()).ok_or_else(|| unreadable(&k, &"bad key"))?;
        if !skip(InstanceId(instance)) {
            items.push(StoredItem::decode(&v).map_err(|e| unreadable(&k, &e))?);
        }
    }
    Ok(items)
}

/// The work items (but those of instances `skip` names), round-robin tokens and directory as
/// the store holds them.
fn load_people(
    store: &dyn Store,
    skip: impl Fn(InstanceId) -> bool,
) -> Result<RestoredPeople, StoreError> {
    let items = load_items(store, ITEM_PREFIX.as_bytes(), skip)?;
    let mut tokens = Vec::new();
    for (k, v) in store.scan_prefix(TOKEN_PREFIX.as_bytes())? {
        let role = String::from_utf8_lossy(&k[TOKEN_PREFIX.len()..]).into_owned();
        let user = StoredToken::decode(&v).map_err(|e| unreadable(&k, &e))?;
        tokens.push((mobiwf_proto::RoleId::new(role), user));
    }
    let directory = match store.get(DIRECTORY_KEY.as_bytes())? {
        Some(v) => Some(
            StoredDirectory::decode(&v).map_err(|e| unreadable(DIRECTORY_KEY.as_bytes(), &e))?,
        ),
        None => None,
    };
    Ok(RestoredPeople {
        items,
        tokens,
        directory,
    })
}

/// Adds the desk's changes (keys under `desk/`, given by the desk) to `batch`.
pub fn stage_desk(batch: &mut Batch, changes: mobiwf_people::DeskChanges) {
    for (key, value) in changes.puts {
        batch.put(key, value);
    }
    for key in changes.deletes {
        batch.delete(key);
    }
}

/// Reads back from the store the instance `input` is about when the core let go of it
/// (retired it from memory, finished), before the core is given `input`.
pub fn readmit_for(
    core: &mut mobiwf_node_core::NodeCore,
    store: &dyn Store,
    input: &mobiwf_node_core::NodeInput,
) -> Result<(), StoreError> {
    if let Some(instance) = core.needs(input) {
        core.readmit(load_instance(store, instance)?);
    }
    Ok(())
}

/// `out` and what the claims it deferred came to: each claim of this node's desk on an
/// instance the engine had let go of is applied once the instance is read back, in order
/// (the claims those defer, after them). `out` comes first.
pub fn with_deferred(
    core: &mut mobiwf_node_core::NodeCore,
    store: &dyn Store,
    now_us: u64,
    out: mobiwf_node_core::Output,
) -> Result<Vec<mobiwf_node_core::Output>, StoreError> {
    let mut outputs = vec![out];
    let mut next = 0;
    while let Some(out) = outputs.get_mut(next) {
        let deferred = std::mem::take(&mut out.deferred);
        next += 1;
        for claim in deferred {
            let input = mobiwf_node_core::NodeInput::OwnClaim(claim);
            readmit_for(core, store, &input)?;
            match core.apply(now_us, input) {
                Ok(out) => outputs.push(out),
                // Only a peer's message can be refused.
                Err(e) => tracing::warn!("a claim of this node's users: {e}"),
            }
        }
    }
    Ok(outputs)
}

/// Stages everything the node's core changed since the last call: the engine's changes, the
/// retired marks of the instances it let go of, the desk's changes. An encoding failure stops
/// the daemon before anything is written (the store is not given an empty value for a run),
/// as a failed write does. True when the desk changed.
pub fn stage_core(
    batch: &mut Batch,
    core: &mut mobiwf_node_core::NodeCore,
) -> Result<bool, StoreError> {
    let changes = core.take_changes().map_err(|e| StoreError::Encode {
        what: "the engine's changes".to_owned(),
        why: e.to_string(),
    })?;
    stage_changes(batch, &changes);
    for (instance, retired) in core.retire_finished(&changes) {
        stage_retired(batch, instance, retired);
    }
    let desk = core.take_desk_changes().map_err(|e| StoreError::Encode {
        what: "the desk's changes".to_owned(),
        why: e.to_string(),
    })?;
    let changed = !desk.is_empty();
    stage_desk(batch, desk);
    Ok(changed)
}

/// The desk (the worklists and notices of this node's users), as the store holds it.
pub fn load_desk(store: &dyn Store) -> Result<mobiwf_people::Desk, StoreError> {
    let prefix = mobiwf_people::desk::PREFIX;
    let mut entries = Vec::new();
    for (k, v) in store.scan_prefix(prefix.as_bytes())? {
        let key = String::from_utf8(k.clone()).map_err(|e| unreadable(&k, &e))?;
        entries.push((key, v));
    }
    mobiwf_people::Desk::restore(entries).map_err(|e| unreadable(e.key.as_bytes(), &e.reason))
}

/// The engine, as the store holds it, with only the live instances in memory: those marked
/// retired (`retired/<instance>`) are left in the store, read back on demand
/// ([`load_instance`]); any other that turns out finished (stored before the marks were) is
/// retired at once and marked, so that the next start does not read it either.
pub fn load(store: &dyn Store) -> Result<Engine, StoreError> {
    let retired = load_retired(store)?;
    let runs = load_runs(store, b"run/", |i| retired.contains(&i))?;
    let known = load_known(store, b"known/", |i| retired.contains(&i))?;
    let instances: std::collections::BTreeSet<InstanceId> =
        runs.iter().map(|r| r.key.instance).collect();
    let people = load_people(store, |i| retired.contains(&i))?;
    let mut engine = Engine::restore(runs, known).with_people(people);
    let mut marks = Batch::default();
    for instance in instances {
        if engine.retire(instance) {
            stage_retired(&mut marks, instance, true);
        }
    }
    if !marks.is_empty() {
        // Their whole state is in the store already: the marks only save the next start work.
        store.write(marks, Durability::Synced)?;
    }
    Ok(engine)
}

/// Key prefix of the instances retired from memory: `retired/<instance>`.
const RETIRED_PREFIX: &str = "retired/";

/// Marks `instance` retired from memory (or live again) in `batch`.
pub fn stage_retired(batch: &mut Batch, instance: InstanceId, retired: bool) {
    let key = format!("{RETIRED_PREFIX}{:020}", instance.0);
    if retired {
        batch.put(key, Vec::new());
    } else {
        batch.delete(key);
    }
}

/// The instances marked retired.
fn load_retired(store: &dyn Store) -> Result<std::collections::BTreeSet<InstanceId>, StoreError> {
    let mut retired = std::collections::BTreeSet::new();
    for (k, _) in store.scan_prefix(RETIRED_PREFIX.as_bytes())? {
        let instance = std::str::from_utf8(&k[RETIRED_PREFIX.len()..])
            .ok()
            .and_then(|s| s.parse().ok())
            .map(InstanceId)
            .ok_or_else(|| unreadable(&k, &"bad key"))?;
        retired.insert(instance);
    }
    Ok(retired)
}

/// One instance's runs, what the node knows of it and the work items it hosts, as the store
/// holds them: for an instance retired from memory, before the engine is given an input about
/// it.
pub fn load_instance(
    store: &dyn Store,
    instance: InstanceId,
) -> Result<StoredInstance, StoreError> {
    let id = instance.0;
    let runs = load_runs(store, runs_prefix(instance).as_bytes(), |_| false)?;
    let known = load_known_of(store, instance)?;
    let items = load_items(store, format!("{ITEM_PREFIX}{id:020}/").as_bytes(), |_| {
        false
    })?;
    Ok(StoredInstance { runs, known, items })
}

/// The runs under `prefix` (`run/` or `run/<instance>/`), each with its document.
/// (less those of instances `skip` names).
fn load_runs(
    store: &dyn Store,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<Run>, StoreError> {
    let mut runs = Vec::new();
    let mut migrated = Batch::default();
    for (k, v) in store.scan_prefix(prefix)? {
        let key = run_key_of(&k)?;
        if skip(key.instance) {
            continue;
        }
        let (mut run, missing) = decode(store, &key, &v)?;
        // Stored by a version that kept the document inside the run: it gets its own key
        // now, so that the run's next change, written without it, loses nothing.
        if let Some(document) = run.take_unwritten_document()
            && missing
        {
            migrated.put(doc_key(key.instance, key.partition), document.as_bytes());
        }
        runs.push(run);
    }
    if !migrated.is_empty() {
        store.write(migrated, Durability::Synced)?;
    }
    Ok(runs)
}

/// The zero-padded 20-digit number at byte `at` of key `k`.
fn number_at(k: &[u8], at: usize) -> Option<u64> {
    k.get(at..at + 20)
        .and_then(|digits| std::str::from_utf8(digits).ok())
        .and_then(|digits| digits.parse().ok())
}

/// The run a `run/<instance>/<partition>` key names.
fn run_key_of(k: &[u8]) -> Result<RunKey, StoreError> {
    let start = b"run/".len();
    match (number_at(k, start), number_at(k, start + 21)) {
        (Some(instance), Some(partition)) => Ok(RunKey {
            instance: InstanceId(instance),
            partition: PartitionId(partition),
        }),
        _ => Err(unreadable(k, &"bad key")),
    }
}

/// Decodes a stored run with its document; true when the document was inside the run's own
/// record (an earlier version's).
fn decode(store: &dyn Store, key: &RunKey, value: &[u8]) -> Result<(Run, bool), StoreError> {
    let doc_key = doc_key(key.instance, key.partition);
    let document = match store.get(doc_key.as_bytes())? {
        Some(d) => Some(String::from_utf8(d).map_err(|e| unreadable(doc_key.as_bytes(), &e))?),
        None => None,
    };
    let missing = document.is_none();
    let run = Run::from_stored(value, document)
        .map_err(|e| unreadable(run_key(key.instance, key.partition).as_bytes(), &e))?;
    Ok((run, missing))
}

/// Decodes the run stored under `key` with `value` (one of [`stored_runs`]).
pub fn decode_run(store: &dyn Store, key: &RunKey, value: &[u8]) -> Result<Run, StoreError> {
    Ok(decode(store, key, value)?.0)
}

/// At most `limit` stored runs under `prefix` (`run/` or `run/<instance>/`) from key `from`
/// on, undecoded, in key order.
pub fn stored_runs(
    store: &dyn Store,
    prefix: &[u8],
    from: &[u8],
    limit: usize,
) -> Result<Vec<(RunKey, Vec<u8>)>, StoreError> {
    let mut runs = Vec::new();
    for (k, v) in store.scan_from(prefix, from, limit)? {
        runs.push((run_key_of(&k)?, v));
    }
    Ok(runs)
}

/// What the node knows of `instance` as the store holds it (its data among it), without its
/// runs.
pub fn load_known_of(
    store: &dyn Store,
    instance: InstanceId,
) -> Result<Option<(InstanceId, Known)>, StoreError> {
    Ok(load_known(store, known_key(instance).as_bytes(), |_| false)?.pop())
}

/// What the node knows of the instances under `prefix` (`known/` or one `known/<instance>`).
fn load_known(
    store: &dyn Store,
    prefix: &[u8],
    skip: impl Fn(InstanceId) -> bool,
) -> Result<Vec<(InstanceId, Known)>, StoreError> {
    let corrupt = |k: &[u8], e: &dyn std::fmt::Display| unreadable(k, e);
    let mut known = Vec::new();
    for (k, v) in store.scan_prefix(prefix)? {
        // The key names the instance: a skipped one is not even decoded.
        let instance = std::str::from_utf8(&k[b"known/".len()..])
            .ok()
            .and_then(|s| s.parse().ok())
            .map(InstanceId)
            .ok_or_else(|| corrupt(&k, &"bad key"))?;
        if skip(instance) {
            continue;
        }
        let value: Known = serde_json::from_slice(&v).map_err(|e| corrupt(&k, &e))?;
        known.push((instance, value));
    }
    Ok(known)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use mobiwf_engine::Input;
    use mobiwf_proto::Outcome;
    use mobiwf_runtime::store::MemoryStore;

    const PARTITION_1: &str = include_str!("../../examples/paper/partition-1.xml");

    /// The paper's partition 1 deployed as instance 18.
    fn deploy_18() -> Input {
        Input::Deploy(mobiwf_proto::Deploy {
            instance: InstanceId(18),
            partition: PartitionId(1),
            document: PARTITION_1.to_owned(),
            responsible: None,
            hour_ms: None,
            inputs: Default::default(),
            runs_on: Vec::new(),
        })
    }

    /// Instance 18's remote activity 19 succeeded: its run then finishes.
    fn heard_19() -> Input {
        Input::Notified(mobiwf_engine::Notified {
            from: None,
            notify: mobiwf_proto::Notify::new(
                InstanceId(18),
                mobiwf_proto::ActivityId(19),
                Outcome::Succeeded,
            ),
            missing: Vec::new(),
        })
    }

    #[test]
    fn the_inputs_a_partition_was_deployed_with_are_there_after_a_restart() {
        let document = r#"<workflow id="4"><activities>
            <activity id="3"><nameActivity>C</nameActivity><command>use</command>
              <reads>reading</reads>
              <preconditions><precondition id="1"><local>0</local></precondition></preconditions>
            </activity></activities>
            <data><value name="reading" type="number" input="true"/></data></workflow>"#;
        let reading = mobiwf_proto::DataValue::Number("5".into());
        let mut engine = Engine::new();
        let deploy = Input::Deploy(mobiwf_proto::Deploy {
            instance: InstanceId(4),
            partition: PartitionId(2),
            document: document.to_owned(),
            responsible: None,
            hour_ms: None,
            runs_on: Vec::new(),
            inputs: [("reading".to_owned(), reading.clone())]
                .into_iter()
                .collect(),
        });
        engine.apply(1000, deploy).expect("deploy");
        let store = MemoryStore::new();
        let mut batch = Batch::default();
        stage_changes(&mut batch, &engine.take_changes().expect("changes"));
        store.write(batch, Durability::Synced).unwrap();

        let data = load(&store).expect("load").data(InstanceId(4));
        assert_eq!(data.len(), 1);
        assert_eq!(
            (&data[0].value, data[0].by),
            (&reading, mobiwf_proto::Writer::Input)
        );
    }

    #[test]
    fn a_run_stored_with_its_document_inside_is_moved_to_its_own_key_on_load() {
        let mut engine = Engine::new();
        engine.apply(1000, deploy_18()).expect("deploy");
        let stored = engine.take_changes().expect("changes").runs.remove(0);
        // What an earlier version wrote: the document inside the run's JSON, no doc/ key.
        let mut old: serde_json::Value = serde_json::from_slice(&stored.state).unwrap();
        old["document"] = PARTITION_1.into();
        let store = MemoryStore::new();
        let mut batch = Batch::default();
        batch.put(
            run_key(InstanceId(18), PartitionId(1)),
            serde_json::to_vec(&old).unwrap(),
        );
        store.write(batch, Durability::Synced).unwrap();

        let mut engine = load(&store).expect("load");
        if !engine.holds(InstanceId(18)) {
            engine.readmit(load_instance(&store, InstanceId(18)).expect("read back"));
        }
        assert!(
            store
                .get(doc_key(InstanceId(18), PartitionId(1)).as_bytes())
                .unwrap()
                .is_some()
        );
        // Its next change is written without the document; it still loads.
        engine.apply(2000, heard_19()).expect("notified");
        let mut batch = Batch::default();
        stage_changes(&mut batch, &engine.take_changes().expect("changes"));
        store.write(batch, Durability::Synced).unwrap();
        let mut reloaded = load(&store).expect("reload");
        if !reloaded.holds(InstanceId(18)) {
            // Finished: left in the store at start, read back on demand.
            reloaded.readmit(load_instance(&store, InstanceId(18)).expect("read back"));
        }
        let records = |e: &Engine| e.runs().next().expect("the run").records();
        assert_eq!(records(&reloaded), records(&engine));
    }

    #[test]
    fn a_finished_instance_stored_without_its_mark_is_marked_at_start_and_not_read_again() {
        let mut engine = Engine::new();
        engine.apply(1000, deploy_18()).expect("deploy");
        engine.apply(2000, heard_19()).expect("notified");
        // Written as a version before the marks did: the state, no `retired/` key.
        let store = MemoryStore::new();
        let mut batch = Batch::default();
        stage_changes(&mut batch, &engine.take_changes().expect("changes"));
        store.write(batch, Durability::Synced).unwrap();
        assert!(load_retired(&store).unwrap().is_empty());

        let first = load(&store).expect("load");
        assert!(!first.holds(InstanceId(18)), "finished: not held");
        assert!(load_retired(&store).unwrap().contains(&InstanceId(18)));

        // The next start does not even decode it: garbage in its keys goes unnoticed.
        let mut batch = Batch::default();
        batch.put(
            run_key(InstanceId(18), PartitionId(1)),
            b"not json".to_vec(),
        );
        batch.put(known_key(InstanceId(18)), b"not json".to_vec());
        store.write(batch, Durability::Synced).unwrap();
        let second = load(&store).expect("a retired instance is not read at start");
        assert!(!second.holds(InstanceId(18)));
    }
}
