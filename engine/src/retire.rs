//! Finished instances leave memory: an instance whose runs here can no longer change by themselves
//! is *retired*, its runs and what the node knows of it dropped from the engine once they are
//! written; the daemon reads them back from its store (*readmits* them) before it gives the engine
//! any input about that instance (a late notification, an operator's rerun, a compensation the
//! controller asks for, a query). The engine stays pure: it never reads the store, it is given what
//! it needs.

use std::collections::BTreeSet;

use mobiwf_proto::InstanceId;

use crate::compensate::Undo;
use crate::items::{Item, ItemKey};
use crate::known::Known;
use crate::run::{Run, RunKey};
use crate::{Engine, Input};

/// What the store holds of one retired instance, read back for [`Engine::readmit`].
#[derive(Debug, Default)]
pub struct StoredInstance {
    /// Its partition runs here.
    pub runs: Vec<Run>,
    /// What the node knew of it.
    pub known: Option<(InstanceId, Known)>,
    /// The work items of its activities this node hosted.
    pub items: Vec<Item>,
}

impl StoredInstance {
    /// True when the store held nothing of the instance (a new one).
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty() && self.known.is_none() && self.items.is_empty()
    }
}

impl Engine {
    /// How many partition runs are in memory (the live ones, and the retired ones readmitted
    /// until they are retired again).
    pub fn runs_in_memory(&self) -> usize {
        self.runs.len()
    }

    /// True when the engine holds a run of `instance`, or what it knows of it.
    pub fn holds(&self, instance: InstanceId) -> bool {
        self.known.contains_key(&instance) || self.runs_of(instance).next().is_some()
    }

    /// True when `instance` has runs here and none of them can change without an input
    /// about it: every activity final, no compensation running, no timer, no file still
    /// fetched, every work item it hosts ended, and all of it written.
    pub fn retirable(&self, instance: InstanceId) -> bool {
        let mut runs = self.runs_of(instance).peekable();
        if runs.peek().is_none() {
            return false;
        }
        let runs_done = runs.all(|(key, run)| {
            run.all_final()
                && run
                    .compensations
                    .values()
                    .all(|u| !matches!(u, Undo::Running))
                && !self.deadline_of.contains_key(key)
                && !self.timers_stale.contains(key)
                && !self.dirty_runs.contains(key)
        });
        let known_done = self
            .known
            .get(&instance)
            .is_none_or(|k| k.missing.is_empty() && !k.interrupted);
        let no_items = self.items_of(instance).all(|(key, item)| {
            !item.is_open()
                && !self.host.dirty_items.contains(key)
                && !self.item_deadline_of.contains_key(key)
        });
        runs_done
            && known_done
            && no_items
            && !self.dirty_known.contains(&instance)
            && !self.timers_stale_instances.contains(&instance)
    }

    /// Drops `instance` from memory when it is [`Engine::retirable`]; true when it did. Its
    /// state is in the store (nothing of it is unwritten), to be [`Engine::readmit`]ted.
    pub fn retire(&mut self, instance: InstanceId) -> bool {
        if !self.retirable(instance) {
            return false;
        }
        let keys: Vec<RunKey> = self.runs_of(instance).map(|(key, _)| *key).collect();
        for key in keys {
            self.runs.remove(&key);
        }
        let items: Vec<ItemKey> = self.items_of(instance).map(|(key, _)| *key).collect();
        for key in items {
            self.host.items.remove(&key);
        }
        self.known.remove(&instance);
        true
    }

    /// Takes back an instance the daemon read from its store (its runs, what the node knew
    /// of it, the work items it hosted), retired before. Whatever of it the engine holds
    /// already stays as it is.
    pub fn readmit(&mut self, stored: StoredInstance) {
        let StoredInstance { runs, known, items } = stored;
        for item in items {
            self.readmitted.insert(item.instance);
            let key = item.key();
            if let std::collections::btree_map::Entry::Vacant(slot) = self.host.items.entry(key) {
                slot.insert(item);
                self.index_item(key);
            }
        }
        for run in runs {
            self.readmitted.insert(run.key.instance);
            if !self.runs.contains_key(&run.key) {
                self.timers_stale.insert(run.key);
                self.runs.insert(run.key, run);
            }
        }
        if let Some((instance, known)) = known {
            self.readmitted.insert(instance);
            self.known.entry(instance).or_insert(known);
        }
        self.refresh_deadlines();
    }

    /// The instances readmitted since the last call: to retire again once written, whether
    /// or not the input about them changed anything.
    pub fn take_readmitted(&mut self) -> BTreeSet<InstanceId> {
        std::mem::take(&mut self.readmitted)
    }

    fn items_of(&self, instance: InstanceId) -> impl Iterator<Item = (&ItemKey, &Item)> {
        self.host
            .items
            .range((instance, mobiwf_proto::ActivityId(0))..)
            .take_while(move |((i, _), _)| *i == instance)
    }

    fn runs_of(&self, instance: InstanceId) -> impl Iterator<Item = (&RunKey, &Run)> {
        let from = RunKey {
            instance,
            partition: mobiwf_proto::PartitionId(0),
        };
        self.runs
            .range(from..)
            .take_while(move |(key, _)| key.instance == instance)
    }
}

impl Input {
    /// The instance this input is about, if it is about one (the daemon readmits it first).
    pub fn instance(&self) -> Option<InstanceId> {
        match self {
            Input::Deploy(deploy) => Some(deploy.instance),
            Input::Notified(notified) => Some(notified.notify.instance),
            Input::StateChanged(changed) => Some(changed.change.instance),
            Input::Finished(ended) => Some(ended.instance),
            Input::Compensate(c) => Some(c.instance),
            Input::CompensationEnded(c) => Some(c.instance),
            Input::Rerun(r) => Some(r.instance),
            Input::NewPass(p) => Some(p.new_pass.instance),
            Input::Claim(claimed) => Some(claimed.claim.instance),
            Input::Withdraw(w) => Some(w.instance),
            Input::Completed(c) => Some(c.instance),
            Input::Control(c) => Some(c.instance),
            Input::SyncGranted(g) | Input::SyncLapsed(g) => Some(g.ticket.instance),
            Input::SyncRefused(r) => Some(r.ticket.instance),
            Input::SyncLost(l) => Some(l.instance),
            Input::Pause(order) => Some(order.instance),
            Input::Fetched { instance, .. } | Input::Substitute { instance, .. } => Some(*instance),
            Input::Tick | Input::Directory(_) | Input::Link { .. } => None,
        }
    }
}
