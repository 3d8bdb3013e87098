//! Finished instances leave memory, the daemon's side of what the API reads: the node core
//! retires finished instances after each group and the actor reads one back before an input
//! about it (`NodeCore::needs`); the API's pages of runs and an instance's data read retired
//! instances from the store. The engine never reads the store itself.

use mobiwf_engine::{Engine, Run};
use mobiwf_proto::{Datum, InstanceId};
use mobiwf_runtime::store::{Store, StoreError};

use crate::state;

/// The most runs one page of `GET /runs` holds, and what a page holds when the caller does not
/// say.
pub const MAX_RUNS_PAGE: usize = 1000;

/// Which runs a page of `GET /runs` holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunsWanted {
    /// Only this instance's runs.
    pub instance: Option<InstanceId>,
    /// Only instances numbered above this one (the `next` of the page before).
    pub after: Option<InstanceId>,
    /// At most this many runs (at most [`MAX_RUNS_PAGE`]).
    pub limit: Option<usize>,
}

/// One page of runs, in key order, as `view` shows them (those in memory from the engine,
/// the retired ones decoded from the store), and the instance the next page starts after
/// when there are more. A page ends between two instances (unless one instance alone has more
/// runs than the page holds).
pub(super) fn runs_page<T>(
    engine: &Engine,
    store: &dyn Store,
    wanted: RunsWanted,
    view: impl Fn(&Run) -> T,
) -> Result<(Vec<T>, Option<InstanceId>), StoreError> {
    let limit = wanted
        .limit
        .unwrap_or(MAX_RUNS_PAGE)
        .clamp(1, MAX_RUNS_PAGE);
    let (prefix, from) = match (wanted.instance, wanted.after) {
        (Some(only), after) if after.is_some_and(|a| a >= only) => return Ok((Vec::new(), None)),
        (Some(only), _) => (state::runs_prefix(only), String::new()),
        (None, Some(after)) => match after.0.checked_add(1) {
            Some(first) => ("run/".to_owned(), state::runs_prefix(InstanceId(first))),
            None => return Ok((Vec::new(), None)),
        },
        (None, None) => ("run/".to_owned(), String::new()),
    };
    let mut stored = state::stored_runs(store, prefix.as_bytes(), from.as_bytes(), limit + 1)?;
    let mut next = None;
    if stored.len() > limit {
        let cut = stored[limit].0.instance;
        let whole = stored[..limit]
            .iter()
            .filter(|(k, _)| k.instance != cut)
            .count();
        if whole == 0 {
            // One instance fills the page: all of its runs (a page never splits one).
            let prefix = state::runs_prefix(cut);
            stored = state::stored_runs(store, prefix.as_bytes(), b"", usize::MAX)?;
            next = Some(cut);
        } else {
            stored.truncate(whole);
            next = stored.last().map(|(k, _)| k.instance);
        }
    }
    let mut page = Vec::with_capacity(stored.len());
    for (key, value) in stored {
        match engine.run(&key) {
            Some(run) => page.push(view(run)),
            None => page.push(view(&state::decode_run(store, &key, &value)?)),
        }
    }
    Ok((page, next))
}

/// What a node knows of an instance's data: the latest write of each name, and what earlier
/// passes of its loops wrote (`mobiwf_proto::data_passes`).
pub(super) struct KnownData {
    pub(super) latest: Vec<Datum>,
    pub(super) earlier: Vec<Datum>,
}

/// The data of `instance`, from memory or, when it was retired, from the store.
pub(super) fn data(
    engine: &Engine,
    store: &dyn Store,
    instance: InstanceId,
) -> Result<KnownData, StoreError> {
    if engine.holds(instance) {
        return Ok(KnownData {
            latest: engine.data(instance),
            earlier: engine.earlier_data(instance),
        });
    }
    let known = state::load_known_of(store, instance)?;
    Ok(known.map_or(
        KnownData {
            latest: Vec::new(),
            earlier: Vec::new(),
        },
        |(_, k)| KnownData {
            latest: k.data.into_values().collect(),
            earlier: k.earlier,
        },
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use mobiwf_engine::Input;
    use mobiwf_proto::PartitionId;
    use mobiwf_runtime::store::{Batch, Durability, MemoryStore};

    const PARTITION_1: &str = include_str!("../../../examples/paper/partition-1.xml");

    /// A store holding runs of instances 1 to 5, instance 3 with two partitions, and an
    /// engine that holds only instances 4 and 5 (1 to 3 as if retired).
    fn five_instances() -> (Engine, MemoryStore) {
        let mut writer = Engine::new();
        let mut engine = Engine::new();
        let store = MemoryStore::new();
        let runs = [(1, 1), (2, 1), (3, 1), (3, 2), (4, 1), (5, 1)];
        for (instance, partition) in runs {
            let deploy = Input::Deploy(mobiwf_proto::Deploy {
                instance: InstanceId(instance),
                partition: PartitionId(partition),
                document: PARTITION_1.replace(
                    "<workflow id=\"18\">",
                    &format!("<workflow id=\"{instance}\">"),
                ),
                responsible: None,
                hour_ms: None,
                inputs: Default::default(),
                runs_on: Vec::new(),
            });
            if instance >= 4 {
                engine.apply(1000, deploy.clone()).expect("deploy");
            }
            writer.apply(1000, deploy).expect("deploy");
            let mut batch = Batch::default();
            state::stage_changes(&mut batch, &writer.take_changes().expect("changes"));
            store.write(batch, Durability::Synced).unwrap();
        }
        (engine, store)
    }

    fn page(
        engine: &Engine,
        store: &MemoryStore,
        wanted: RunsWanted,
    ) -> (Vec<(u64, u64)>, Option<u64>) {
        let (runs, next) = runs_page(engine, store, wanted, |r| {
            (r.key.instance.0, r.key.partition.0)
        })
        .unwrap();
        (runs, next.map(|i| i.0))
    }

    #[test]
    fn pages_of_runs_end_between_instances_and_read_retired_runs_from_the_store() {
        let (engine, store) = five_instances();
        assert!(!engine.holds(InstanceId(2)) && engine.holds(InstanceId(4)));
        let all = page(&engine, &store, RunsWanted::default());
        assert_eq!(
            all,
            (vec![(1, 1), (2, 1), (3, 1), (3, 2), (4, 1), (5, 1)], None)
        );

        let limit = |after: Option<u64>, limit| RunsWanted {
            instance: None,
            after: after.map(InstanceId),
            limit: Some(limit),
        };
        // Three runs would split instance 3: the page stops after instance 2.
        assert_eq!(
            page(&engine, &store, limit(None, 3)),
            (vec![(1, 1), (2, 1)], Some(2))
        );
        assert_eq!(
            page(&engine, &store, limit(Some(2), 3)),
            (vec![(3, 1), (3, 2), (4, 1)], Some(4))
        );
        assert_eq!(
            page(&engine, &store, limit(Some(4), 3)),
            (vec![(5, 1)], None)
        );
        // A page of one: instance 3 comes whole.
        assert_eq!(
            page(&engine, &store, limit(Some(2), 1)),
            (vec![(3, 1), (3, 2)], Some(3))
        );
        assert_eq!(
            page(&engine, &store, limit(Some(u64::MAX), 1)),
            (vec![], None)
        );

        let only = RunsWanted {
            instance: Some(InstanceId(3)),
            ..RunsWanted::default()
        };
        assert_eq!(page(&engine, &store, only), (vec![(3, 1), (3, 2)], None));
    }
}
