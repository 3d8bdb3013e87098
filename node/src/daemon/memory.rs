//! Finished instances leave memory, the daemon's side: after each group the instances it
//! touched that are finished are retired from the engine (their state is in the group's
//! batch), and before the engine is given an input about an instance it no longer holds, the
//! instance is read back from the store (`state::load_instance`) and readmitted. Queries read
//! retired instances from the store. The engine never reads the store itself.

use mobiwf_engine::{Changes, Engine, Input, Run};
use mobiwf_proto::{Datum, InstanceId};
use mobiwf_runtime::store::{Batch, Store, StoreError};

use crate::state;

/// Gives the engine back the instance `input` is about, when it was retired.
pub(super) fn readmit(
    engine: &mut Engine,
    store: &dyn Store,
    input: &Input,
) -> Result<(), StoreError> {
    readmit_instance(engine, store, input.instance())
}

/// Gives the engine back `instance` when it was retired (nothing when the store holds
/// nothing of it: a new instance).
pub(super) fn readmit_instance(
    engine: &mut Engine,
    store: &dyn Store,
    instance: Option<InstanceId>,
) -> Result<(), StoreError> {
    let Some(instance) = instance else {
        return Ok(());
    };
    if engine.holds(instance) {
        return Ok(());
    }
    let (runs, known) = state::load_instance(store, instance)?;
    if !runs.is_empty() || known.is_some() {
        engine.readmit(runs, known);
    }
    Ok(())
}

/// Retires the finished instances among those whose state `changes` writes and those read
/// back for this group, marking them in `batch` (`state::stage_retired`) so that the next
/// start does not load them; a readmitted instance that goes on loses its mark.
pub(super) fn retire_finished(engine: &mut Engine, changes: &Changes, batch: &mut Batch) {
    let readmitted = engine.take_readmitted();
    let mut touched = readmitted.clone();
    touched.extend(changes.runs.iter().map(|r| r.key.instance));
    touched.extend(changes.known.iter().map(|k| k.instance));
    for instance in touched {
        if engine.retire(instance) {
            state::stage_retired(batch, instance, true);
        } else if readmitted.contains(&instance) {
            state::stage_retired(batch, instance, false);
        }
    }
}

/// Every run as `view` shows it, those in memory and the retired ones in the store, in key
/// order.
pub(super) fn all_runs<T>(
    engine: &Engine,
    store: &dyn Store,
    view: impl Fn(&Run) -> T,
) -> Result<Vec<T>, StoreError> {
    let mut runs: Vec<(mobiwf_engine::RunKey, T)> =
        engine.runs().map(|r| (r.key, view(r))).collect();
    for run in state::load_stored_runs(store, |i| engine.holds(i))? {
        runs.push((run.key, view(&run)));
    }
    runs.sort_by_key(|(key, _)| *key);
    Ok(runs.into_iter().map(|(_, v)| v).collect())
}

/// The data of `instance`, from memory or, when it was retired, from the store.
pub(super) fn data(
    engine: &Engine,
    store: &dyn Store,
    instance: InstanceId,
) -> Result<Vec<Datum>, StoreError> {
    if engine.holds(instance) {
        return Ok(engine.data(instance));
    }
    let (_, known) = state::load_instance(store, instance)?;
    Ok(known
        .map(|(_, k)| k.data.into_values().collect())
        .unwrap_or_default())
}
