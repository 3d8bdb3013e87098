//! Ordering requirements between definitions in the synchronization manager (*Synchronization
//! and Disconnected Operation in WorkToDo* (IC-03-006), §6.2): the ordering document an
//! operator applies, the tasks it names marked `ordered` in the partitions of an instance
//! started by name (with `responseImmediate`, so the controller hears their ends at once and
//! its view of them is current), and the requests of those tasks: each goes through the
//! relative order of its instance first ([`OrderingBook::request`], tickets stored with the
//! manager's state), waits while earlier instances' paired tasks are not over (an ordering
//! waiter, kept apart from the class waiters), then goes on to its class, or is granted at once
//! when it has none. A wait for the relative order is never refused by time: it ends when the
//! tasks before it end or their instances do. Instances placed before a document was applied
//! (and those submitted without a name) take no part.

use std::collections::BTreeMap;
use std::sync::Arc;

use mobiwf_proto::{ActivityId, ActivityState, InstanceId, NodeId, NodeName, SyncTicket};
use mobiwf_xml_schema::{
    ClassName, DefinitionName, DerivedPartition, Diagnostics, Orderings, WorkflowDefinition,
    load_orderings_named, resolve_orderings,
};
use serde::{Deserialize, Serialize};

use crate::history::Event;
use crate::lifecycle::ActivityEvent;
use crate::ordering::{OrderingBook, Request, Running, Wait, describe};
use crate::recovery::label;
use crate::{Applied, Book, BookError, Instance};

/// How the words of a wait for the relative order begin ([`describe`]).
const WAITS_FOR_ORDER: &str = "waits for the relative order of its instance";

/// The ordering document as the store keeps it (`meta/orderings`): as an operator applied it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderingsRecord {
    /// The document (empty: none applied yet).
    pub document: String,
    /// Its name as applied (a file name): its extension says its language.
    pub source: String,
    /// When it was applied, ms since the epoch.
    pub applied_ms: u64,
}

impl OrderingsRecord {
    /// What the stored document says (none applied: no orderings).
    pub fn orderings(&self) -> Result<Orderings, Diagnostics> {
        if self.document.is_empty() {
            return Ok(Orderings::default());
        }
        load_orderings_named(&self.source, self.document.as_bytes()).map(|l| l.value)
    }
}

/// A request that waits for its instance's relative order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderWaiter {
    /// The request.
    pub ticket: SyncTicket,
    /// Its class, asked for once its order allows it; none: granted then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassName>,
    /// The node that runs its partition.
    pub node: NodeName,
    /// That node's peer id.
    pub peer: NodeId,
    /// When it asked, ms since the epoch.
    pub since_ms: u64,
}

impl OrderWaiter {
    fn same_activity(&self, t: &SyncTicket) -> bool {
        let m = &self.ticket;
        m.instance == t.instance && m.partition == t.partition && m.activity == t.activity
    }
}

/// The orderings in force, the tickets, and the document as applied.
#[derive(Debug, Default)]
pub(crate) struct Ordering {
    book: OrderingBook,
    record: OrderingsRecord,
    /// True when the document changed since the last `take_changes`.
    dirty: bool,
}

impl Ordering {
    /// The document as applied, when it changed since the last call (for the store).
    pub(crate) fn take_dirty(&mut self) -> Option<OrderingsRecord> {
        std::mem::take(&mut self.dirty).then(|| self.record.clone())
    }
}

/// The book's instances as the ordering reads them: a running instance started by name, its
/// definition, and whether its activities are final.
struct Live<'a> {
    instances: &'a BTreeMap<InstanceId, Instance>,
    definitions: &'a BTreeMap<InstanceId, Arc<WorkflowDefinition>>,
}

impl Running for Live<'_> {
    fn definition(&self, instance: InstanceId) -> Option<(&DefinitionName, &WorkflowDefinition)> {
        let inst = self.instances.get(&instance)?;
        if inst.state().is_final() {
            return None;
        }
        let name = &inst.definition.as_ref()?.name;
        Some((name, self.definitions.get(&instance)?))
    }

    fn is_final(&self, instance: InstanceId, activity: ActivityId) -> bool {
        self.instances
            .get(&instance)
            .and_then(|i| i.activities.iter().find(|a| a.id == activity))
            .is_none_or(|a| a.state().is_final())
    }
}

/// The name `t`'s instance was started by and the definition it runs; none when it was
/// submitted whole (it takes no part in orderings).
fn started_by_name<'b>(
    instances: &'b BTreeMap<InstanceId, Instance>,
    definitions: &'b BTreeMap<InstanceId, Arc<WorkflowDefinition>>,
    t: SyncTicket,
) -> Option<(&'b DefinitionName, &'b WorkflowDefinition)> {
    let at = instances.get(&t.instance)?.definition.as_ref()?;
    Some((&at.name, definitions.get(&t.instance)?))
}

/// Request `t` as the relative order sees it, with the running instances it is decided
/// against; none when its instance was not started by name (it takes no part).
fn ordering_request<'b>(
    instances: &'b BTreeMap<InstanceId, Instance>,
    definitions: &'b BTreeMap<InstanceId, Arc<WorkflowDefinition>>,
    t: SyncTicket,
) -> Option<(Request<'b>, Live<'b>)> {
    let (name, workflow) = started_by_name(instances, definitions, t)?;
    let request = Request {
        instance: t.instance,
        definition: name,
        workflow,
        activity: t.activity,
    };
    Some((
        request,
        Live {
            instances,
            definitions,
        },
    ))
}

impl Book {
    /// The book restored with its stored ordering document (the tickets come with the
    /// manager's state: call after [`Book::with_sync`]).
    pub fn with_orderings(mut self, record: OrderingsRecord, parsed: Orderings) -> Book {
        let tickets = self.sync.state().tickets.clone();
        self.ordering = Ordering {
            book: OrderingBook::restore(parsed, tickets),
            record,
            dirty: false,
        };
        self
    }

    /// The orderings in force.
    pub fn orderings(&self) -> &Orderings {
        self.ordering.book.orderings()
    }

    /// The ordering tickets given.
    pub fn ordering_tickets(&self) -> &crate::ordering::Tickets {
        self.ordering.book.tickets()
    }

    /// The ordering document as applied (its text, name, when).
    pub fn orderings_record(&self) -> &OrderingsRecord {
        &self.ordering.record
    }

    /// An operator applies an ordering document (XML or PDL, by `source`'s extension or the
    /// text): read, checked, and resolved against the definitions deployed now, every problem
    /// at `source:line:col`. It replaces the last; it applies to instances placed from now on.
    pub(crate) fn apply_orderings(
        &mut self,
        now_ms: u64,
        source: String,
        document: String,
    ) -> Result<Applied, BookError> {
        let loaded = load_orderings_named(&source, document.as_bytes())
            .map_err(|d| BookError::Invalid(d.render(&source)))?;
        let registry = &self.registry;
        resolve_orderings(&loaded.value, &loaded.source_map, |name| {
            registry.startable(name, None).map(|(_, d)| &*d.definition)
        })
        .map_err(|d| BookError::Invalid(d.render(&source)))?;
        self.ordering.book.apply(loaded.value);
        self.ordering.record = OrderingsRecord {
            document,
            source,
            applied_ms: now_ms,
        };
        self.ordering.dirty = true;
        Ok(Applied::default())
    }

    /// Marks `ordered` (and `responseImmediate`) every activity of a new instance of `name`
    /// that an ordering names; the activities marked, which the instance keeps.
    pub(crate) fn mark_ordered(
        &self,
        derived: &mut [DerivedPartition],
        name: &DefinitionName,
        workflow: &WorkflowDefinition,
        instance: InstanceId,
    ) -> Vec<ActivityId> {
        let mut marked = Vec::new();
        for act in derived
            .iter_mut()
            .flat_map(|d| d.document.activities.iter_mut())
        {
            let request = Request {
                instance,
                definition: name,
                workflow,
                activity: act.id,
            };
            if self.ordering.book.is_ordered(&request) {
                act.ordered = true;
                act.response_immediate = true;
                marked.push(act.id);
            }
        }
        marked
    }

    /// A request of a task marked ordered at its instance's placement goes through its
    /// relative order: true when it waits for it now (or waited already, or a later round
    /// does), false when it may go on to its class (or its grant).
    pub(crate) fn begin_ordered(&mut self, now_ms: u64, waiter: &OrderWaiter) -> bool {
        let t = waiter.ticket;
        let marked = self
            .instances
            .get(&t.instance)
            .is_some_and(|i| i.ordered.contains(&t.activity));
        if !marked {
            return false;
        }
        let state = &self.sync.state;
        if state
            .ordered
            .iter()
            .any(|w| w.same_activity(&t) && w.ticket.round >= t.round)
        {
            return true;
        }
        let earlier: Vec<OrderWaiter> = state
            .ordered
            .iter()
            .filter(|w| w.same_activity(&t))
            .cloned()
            .collect();
        for old in earlier {
            self.end_order_wait(now_ms, &old, "a later request of the activity came");
        }
        let waits = self.order_request(t);
        if waits.is_empty() {
            return false;
        }
        self.sync.state.ordered.push(waiter.clone());
        self.sync.dirty = true;
        let after = describe(&waits);
        self.order_event(now_ms, waiter, |activity| Event::OrderWaiting {
            activity,
            after: after.clone(),
        });
        self.show_waiting(t, after);
        true
    }

    /// The request `t` asks for its relative order: its instance gets a ticket if it holds
    /// none (stored with the manager's state); what it waits for.
    fn order_request(&mut self, t: SyncTicket) -> Vec<Wait> {
        let Some((request, live)) = ordering_request(&self.instances, &self.definitions, t) else {
            return Vec::new();
        };
        let decision = self.ordering.book.request(&request, &live);
        if decision.assigned {
            self.sync.state.tickets = self.ordering.book.tickets().clone();
            self.sync.dirty = true;
        }
        decision.waits
    }

    /// What the request `t` waits for in its relative order now.
    pub(crate) fn order_waits(&self, t: SyncTicket) -> Vec<Wait> {
        match ordering_request(&self.instances, &self.definitions, t) {
            Some((request, live)) => self.ordering.book.waits(&request, &live),
            None => Vec::new(),
        }
    }

    /// After every input: the tickets of instances that ended go; the ordering waiters whose
    /// activity or instance is over leave; those with nothing left to wait for go on, to
    /// their class's stage or granted at once (in arrival order).
    pub(crate) fn ordering_after(&mut self, now_ms: u64, effects: &mut Vec<crate::Effect>) {
        if self.sync.state.ordered.is_empty() && self.ordering.book.tickets().held.is_empty() {
            return;
        }
        let ended: Vec<InstanceId> = self
            .ordering
            .book
            .tickets()
            .held
            .keys()
            .copied()
            .filter(|i| self.instances.get(i).is_none_or(|x| x.state().is_final()))
            .collect();
        for instance in ended {
            self.ordering.book.ended(instance);
            self.sync.state.tickets = self.ordering.book.tickets().clone();
            self.sync.dirty = true;
        }
        for waiter in self.sync.state.ordered.clone() {
            if let Some(why) = super::book::release_reason(self, &waiter.ticket) {
                self.end_order_wait(now_ms, &waiter, &why);
                continue;
            }
            if !self.order_waits(waiter.ticket).is_empty() {
                continue;
            }
            self.sync
                .state
                .ordered
                .retain(|w| w.ticket != waiter.ticket);
            self.sync.dirty = true;
            let class = waiter.class.clone();
            self.order_event(now_ms, &waiter, |activity| Event::OrderPassed {
                activity,
                class,
            });
            self.clear_waiting(waiter.ticket);
            self.go_on(now_ms, waiter, effects);
        }
    }

    /// An ordering waiter leaves (its activity or instance is over, or a later round came).
    fn end_order_wait(&mut self, now_ms: u64, waiter: &OrderWaiter, why: &str) {
        self.sync
            .state
            .ordered
            .retain(|w| w.ticket != waiter.ticket);
        self.sync.dirty = true;
        self.order_event(now_ms, waiter, |activity| Event::OrderReleased {
            activity,
            why: why.to_owned(),
        });
        self.clear_waiting(waiter.ticket);
    }

    /// The activity of `t`, as the controller shows it, is synchronizing and says what it
    /// waits for (its node said nothing of it: it asked the manager).
    fn show_waiting(&mut self, t: SyncTicket, after: String) {
        let Some(inst) = self.instances.get_mut(&t.instance) else {
            return;
        };
        let Some(a) = inst.activities.iter_mut().find(|a| a.id == t.activity) else {
            return;
        };
        if !a.state().is_pending() {
            return;
        }
        let said = ActivityEvent::NodeSays {
            state: ActivityState::Synchronizing,
            by_operator: false,
        };
        if a.step(&said).is_ok() {
            a.detail = Some(after);
            self.dirty_instances.insert(t.instance);
        }
    }

    /// The wait's words leave the activity once it no longer waits for its order (its node's
    /// or the controller's own words about its end replace them anyway).
    fn clear_waiting(&mut self, t: SyncTicket) {
        let Some(inst) = self.instances.get_mut(&t.instance) else {
            return;
        };
        let Some(a) = inst.activities.iter_mut().find(|a| a.id == t.activity) else {
            return;
        };
        let waiting = a
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with(WAITS_FOR_ORDER));
        if waiting {
            a.detail = None;
            self.dirty_instances.insert(t.instance);
        }
    }

    /// Adds an event about `waiter`'s activity to its instance's history.
    pub(super) fn order_event(
        &mut self,
        now_ms: u64,
        waiter: &OrderWaiter,
        what: impl FnOnce(crate::Label) -> Event,
    ) {
        let t = waiter.ticket;
        let Some(inst) = self.instances.get(&t.instance) else {
            return;
        };
        let event = what(label(inst, t.activity));
        let node = Some(&waiter.node);
        self.history
            .push(t.instance, now_ms, Some(t.activity), node, event);
    }
}
