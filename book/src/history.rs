//! The event history of each instance: every transition the controller learnt or decided,
//! with its time and partner, for `mobiwf-controller history` (MISSION P5-P7, F1 observable).

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, InstanceId, NodeName};
use serde::{Deserialize, Serialize};

/// One entry of an instance's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEvent {
    /// When it happened (for activity transitions: the node's time), ms since the epoch.
    pub at_ms: u64,
    /// The activity it is about, if any.
    pub activity: Option<ActivityId>,
    /// The partner (node name) it happened on or concerns, if any.
    pub partner: Option<NodeName>,
    /// What happened.
    pub what: String,
}

/// Every instance's history, and what was added since the last write.
#[derive(Debug, Default)]
pub struct History {
    events: BTreeMap<InstanceId, Vec<HistoryEvent>>,
    new: Vec<(InstanceId, usize, HistoryEvent)>,
}

impl History {
    /// Rebuilds from stored events, each with its instance (in order).
    pub fn restore(stored: Vec<(InstanceId, HistoryEvent)>) -> History {
        let mut events: BTreeMap<InstanceId, Vec<HistoryEvent>> = BTreeMap::new();
        for (instance, event) in stored {
            events.entry(instance).or_default().push(event);
        }
        History {
            events,
            new: Vec::new(),
        }
    }

    /// Appends an event to an instance's history.
    pub fn push(
        &mut self,
        instance: InstanceId,
        at_ms: u64,
        activity: Option<ActivityId>,
        partner: Option<&NodeName>,
        what: impl Into<String>,
    ) {
        let event = HistoryEvent {
            at_ms,
            activity,
            partner: partner.cloned(),
            what: what.into(),
        };
        let list = self.events.entry(instance).or_default();
        self.new.push((instance, list.len(), event.clone()));
        list.push(event);
    }

    /// One instance's history, in the order the controller learnt it.
    pub fn of(&self, instance: InstanceId) -> &[HistoryEvent] {
        self.events.get(&instance).map_or(&[], Vec::as_slice)
    }

    /// The events added since the last call: (instance, position, event).
    pub fn take_new(&mut self) -> Vec<(InstanceId, usize, HistoryEvent)> {
        std::mem::take(&mut self.new)
    }
}
