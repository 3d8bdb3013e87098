//! What the node shows of the engine's state: its runs, the worklist, what it knows of an
//! instance, the record of one activity. Read only.

use mobiwf_proto::{ActivityId, ActivityRecord, ActivityState, InstanceId};
use mobiwf_xml_schema::ActivityKind;

use crate::known::Known;
use crate::run::Run;
use crate::{Engine, WorkItem};

impl Engine {
    /// Every partition run, in key order.
    pub fn runs(&self) -> impl Iterator<Item = &Run> {
        self.runs.values()
    }

    /// The manual and semi-automatic activities waiting for a person.
    pub fn worklist(&self) -> Vec<WorkItem> {
        let mut items = Vec::new();
        for run in self.runs.values() {
            for act in &run.doc().activities {
                let Some(p) = run.progress(act.id) else {
                    continue;
                };
                if p.life.wire() == ActivityState::Running && act.kind != ActivityKind::Automatic {
                    items.push(WorkItem {
                        instance: run.key.instance,
                        partition: run.key.partition,
                        activity: act.id,
                        name: act.name.clone(),
                        description: act.description.clone(),
                        kind: act.kind.as_str().to_owned(),
                        offered_ms: p.started_ms,
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
}
