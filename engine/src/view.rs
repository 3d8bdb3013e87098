//! What the node shows of the engine's state: its runs, the worklist, what it knows of an
//! instance, the record of one activity, the work items it hosts and its directory replica.
//! Read only, but for the node's own address, which the daemon sets.

use std::collections::BTreeMap;

use mobiwf_people::Directory;
use mobiwf_proto::{ActivityId, ActivityRecord, InstanceId, Location, RoleId, UserId};
use mobiwf_xml_schema::ActivityKind;

use crate::known::Known;
use crate::lifecycle::Life;
use crate::run::Run;
use crate::{Engine, Item, WorkItem};

impl Engine {
    /// Every partition run, in key order.
    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.runs.values()
    }

    /// The partition run `key`, when it is in memory.
    pub fn run(&self, key: &crate::RunKey) -> Option<&Run> {
        self.runs.get(key)
    }

    /// The manual and semi-automatic activities waiting for a person, anyone on this node:
    /// those without people extensions (the others are work items on their users'
    /// worklists, [`Engine::items`]).
    pub fn worklist(&self) -> Vec<WorkItem> {
        let mut items = Vec::new();
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let Some(p) = run.progress(act.id) else {
                    continue;
                };
                let anyone = act.kind != ActivityKind::Automatic && !act.people.assigned();
                // Ready; or running as versions before task states stored it while offered.
                let waiting = matches!(p.life(), Life::Ready | Life::Running { .. });
                if waiting && anyone {
                    items.push(WorkItem {
                        instance: run.key.instance,
                        partition: run.key.partition,
                        activity: act.id,
                        name: act.name.clone(),
                        description: act.description.clone(),
                        kind: act.kind.as_str().to_owned(),
                        offered_ms: p.ready_ms,
                        pass: p.pass,
                    });
                }
            }
        }
        items
    }

    /// What this node knows about an instance beyond its partitions.
    pub fn known(&self, instance: InstanceId) -> Option<&Known> {
        self.known.get(&instance)
    }

    /// The record of one activity, wherever it is on this node.
    pub fn record(&self, instance: InstanceId, activity: ActivityId) -> Option<ActivityRecord> {
        self.keys_of(instance)
            .into_iter()
            .find_map(|k| self.runs.get(&k).and_then(|r| r.record(activity)))
    }

    /// Every work item this node hosts (ended ones too), by instance and activity.
    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.host.items.values()
    }

    /// The work item of an activity hosted here.
    pub fn item(&self, instance: InstanceId, activity: ActivityId) -> Option<&Item> {
        self.host.items.get(&(instance, activity))
    }

    /// The organisation directory this node holds (version 0: none received yet). The
    /// node's desk reads its users from it.
    pub fn directory(&self) -> &Directory {
        &self.host.directory
    }

    /// Per role, the last user round-robin gave an item to on this node.
    pub fn tokens(&self) -> &BTreeMap<RoleId, UserId> {
        &self.host.tokens
    }

    /// This node's own full libp2p address (`.../p2p/<peer id>`), which work items carry
    /// (`ItemInfo::host`) so that devices know where to send claims. Not stored: the daemon
    /// sets it at every start, before applying inputs.
    pub fn set_location(&mut self, location: Location) {
        self.host.location = location;
    }

    /// The address set with [`Engine::set_location`].
    pub fn location(&self) -> &Location {
        &self.host.location
    }
}
