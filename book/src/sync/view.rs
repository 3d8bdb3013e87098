//! What `GET /sync` and `mobiwf-controller sync show` show: every holder (class, instance,
//! activity, node, since when; when and why its hold ends, once its node is suspected or gone)
//! and every waiter (the same, and what it waits behind), the
//! waiters in the order they will be looked at; then the requests that wait for their
//! instance's relative order (an ordering between definitions), with what they wait after.
//! Each names its activity's pass, as the book knows it (a request of a loop's later pass
//! started that pass in the activity's view): left out for the first.

use mobiwf_proto::{ActivityId, InstanceId, NodeName, PartitionId, Pass};
use mobiwf_xml_schema::ClassName;
use serde::Serialize;

use super::{Blocker, Ending, OrderWaiter, SyncEntry};
use crate::Book;

/// The synchronization manager's state, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncView {
    /// The lease a grant carries, ms.
    pub lease_ms: u64,
    /// The requests that hold their class.
    pub holders: Vec<SyncHolder>,
    /// The requests that wait, the oldest first.
    pub waiters: Vec<SyncWaiter>,
    /// The requests that wait for their instance's relative order, the oldest first (left
    /// out while none does, as before orderings).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ordered: Vec<OrderWaiterView>,
}

/// One request waiting for its instance's relative order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderWaiterView {
    /// Its class, asked for once its order allows it (none: granted then).
    pub class: Option<ClassName>,
    /// The instance.
    pub instance: InstanceId,
    /// Its partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// The activity's name (empty when it has none).
    pub name: String,
    /// The request's round.
    pub round: u32,
    /// The activity's pass (left out for the first).
    #[serde(skip_serializing_if = "Pass::is_first")]
    pub pass: Pass,
    /// The node that runs it.
    pub node: NodeName,
    /// When it asked, ms since the epoch.
    pub since_ms: u64,
    /// Each task it waits after: `after instance 12's T11`.
    pub after: Vec<String>,
    /// The same, in words: `waits for the relative order of its instance: after ...`.
    pub after_text: String,
}

/// One holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncHolder {
    /// Its class.
    pub class: ClassName,
    /// The instance.
    pub instance: InstanceId,
    /// Its partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// The activity's name (empty when it has none).
    pub name: String,
    /// The request's round.
    pub round: u32,
    /// The activity's pass (left out for the first).
    #[serde(skip_serializing_if = "Pass::is_first")]
    pub pass: Pass,
    /// The node that runs it.
    pub node: NodeName,
    /// When it was granted, ms since the epoch.
    pub since_ms: u64,
    /// A hold whose node is suspected or gone: when it ends and why (left out while it
    /// stands; never for a waiter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending: Option<Ending>,
}

/// One waiter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncWaiter {
    /// What it is, as a holder would be (`since_ms`: when it asked).
    #[serde(flatten)]
    pub request: SyncHolder,
    /// When its class's `maxWait` runs out and it is refused, ms since the epoch.
    pub refused_at_ms: u64,
    /// What it waits behind: holders of a conflicting class, then earlier waiters of one.
    pub behind: Vec<Blocker>,
    /// The same, in words.
    pub behind_text: String,
}

impl Book {
    /// The holders and waiters, for people.
    pub fn sync_view(&self) -> SyncView {
        let state = self.sync.state();
        let waiters = state
            .waiters
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let behind = self.sync.blockers(&self.classes, &w.class, i);
                SyncWaiter {
                    request: self.sync_holder(w),
                    refused_at_ms: w.refused_at_ms(&self.classes),
                    behind_text: self.behind_text(&behind),
                    behind,
                }
            })
            .collect();
        let ordered = state.ordered.iter().map(|w| self.order_waiter(w)).collect();
        SyncView {
            lease_ms: self.lease_ms,
            holders: state.holders.iter().map(|h| self.sync_holder(h)).collect(),
            waiters,
            ordered,
        }
    }

    fn order_waiter(&self, w: &OrderWaiter) -> OrderWaiterView {
        let t = w.ticket;
        let waits = self.order_waits(t);
        OrderWaiterView {
            class: w.class.clone(),
            instance: t.instance,
            partition: t.partition,
            activity: t.activity,
            name: self.activity_name(t.instance, t.activity),
            round: t.round,
            pass: self.activity_pass(t.instance, t.activity),
            node: w.node.clone(),
            since_ms: w.since_ms,
            after: waits.iter().map(ToString::to_string).collect(),
            after_text: crate::ordering::describe(&waits),
        }
    }

    fn activity_name(&self, instance: InstanceId, activity: ActivityId) -> String {
        self.instances
            .get(&instance)
            .and_then(|i| i.activities.iter().find(|a| a.id == activity))
            .map(|a| a.name.clone())
            .unwrap_or_default()
    }

    fn activity_pass(&self, instance: InstanceId, activity: ActivityId) -> Pass {
        self.instances
            .get(&instance)
            .and_then(|i| i.activities.iter().find(|a| a.id == activity))
            .map(|a| a.pass)
            .unwrap_or_default()
    }

    fn sync_holder(&self, e: &SyncEntry) -> SyncHolder {
        let t = e.ticket;
        let name = self.activity_name(t.instance, t.activity);
        SyncHolder {
            class: e.class.clone(),
            instance: t.instance,
            partition: t.partition,
            activity: t.activity,
            name,
            round: t.round,
            pass: self.activity_pass(t.instance, t.activity),
            node: e.node.clone(),
            since_ms: e.since_ms,
            ending: e.ending.clone(),
        }
    }
}
