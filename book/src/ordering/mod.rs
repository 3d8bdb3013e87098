//! Ordering requirements between definitions (*Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §6.2), as the controller decides them: between a running instance of
//! one definition and one of the other, the instance that asked first to run any ordered task
//! goes first on every pair of the ordering; the other's task waits until the earlier one is
//! final or its instance ended.
//!
//! "Asked first" is an ordering ticket: a number from one counter, given to an instance the
//! first time it asks to run a task an ordering names, never given again. An instance without
//! a ticket counts as last. Tickets from one counter are one total order, so waits only ever
//! point from a later ticket to an earlier one: no cycle, even across three or more
//! definitions, and the instance with the smallest ticket never waits on an ordering.
//!
//! Pure: the book's synchronization manager asks [`OrderingBook::request`] when an activity
//! is about to run (and [`OrderingBook::waits`] again whenever an activity becomes final or an
//! instance ends), and calls [`OrderingBook::ended`] when an instance ends. What it needs of the
//! other instances it reads through [`Running`]. The tickets are stored ([`Tickets`], its own
//! serde form); the applied document is stored as its text, as the organisation is.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use mobiwf_proto::InstanceId;
use mobiwf_xml_schema::{ActivityId, DefinitionName, Orderings, Side, TaskRef, WorkflowDefinition};
use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

/// An instance's place in the relative order: the smaller, the earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Ticket(pub u64);

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The tickets given: the next number, and the ticket of each instance that holds one (until
/// it ends). Stored as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tickets {
    /// The number the next ticket gets; a ticket is never given twice.
    pub next: u64,
    /// Each running instance's ticket.
    pub held: BTreeMap<InstanceId, Ticket>,
}

/// What the ordering needs to know of the other running instances.
pub trait Running {
    /// The name a running instance's definition is deployed under, and that definition (the
    /// version the instance runs); `None` when the instance ended or is not known.
    fn definition(&self, instance: InstanceId) -> Option<(&DefinitionName, &WorkflowDefinition)>;
    /// Whether an activity of a running instance is final (succeeded, failed, cancelled,
    /// skipped, withdrawn...).
    fn is_final(&self, instance: InstanceId, activity: ActivityId) -> bool;
}

/// An activity about to run: which, in which instance, of which definition.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The instance.
    pub instance: InstanceId,
    /// The name its definition is deployed under.
    pub definition: &'a DefinitionName,
    /// The definition (the version the instance runs).
    pub workflow: &'a WorkflowDefinition,
    /// The activity.
    pub activity: ActivityId,
}

/// One task a request waits for: an earlier instance's task of the same pair, not final yet.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Wait {
    /// The earlier instance.
    pub instance: InstanceId,
    /// Its activity the request waits for.
    pub activity: ActivityId,
    /// The task as the ordering names it.
    pub task: TaskRef,
}

impl fmt::Display for Wait {
    /// `after instance 12's T11`, or `after instance 12's activity 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "after instance {}'s {}", self.instance, self.task)
    }
}

/// What [`OrderingBook::request`] decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The requesting instance's ticket; `None` when the activity is in no ordering (and the
    /// instance held none).
    pub ticket: Option<Ticket>,
    /// True when this request gave the instance its ticket: the tickets changed, to store.
    pub assigned: bool,
    /// What the activity waits for; empty when it may go on now.
    pub waits: Vec<Wait>,
}

/// Words for a request's waits, for status and history: `waits for the relative order of
/// its instance: after instance 12's T11 and after instance 14's T11`.
pub fn describe(waits: &[Wait]) -> String {
    let each: Vec<String> = waits.iter().map(ToString::to_string).collect();
    format!(
        "waits for the relative order of its instance: {}",
        each.join(" and ")
    )
}

/// The applied orderings and the tickets given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderingBook {
    orderings: Orderings,
    tickets: Tickets,
}

/// A task of another definition that an ordered activity is paired with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Partner<'a> {
    definition: &'a DefinitionName,
    task: &'a TaskRef,
}

impl OrderingBook {
    /// The book as stored: the applied document (read back from its text) and the tickets.
    pub fn restore(orderings: Orderings, tickets: Tickets) -> Self {
        OrderingBook { orderings, tickets }
    }

    /// The applied orderings.
    pub fn orderings(&self) -> &Orderings {
        &self.orderings
    }

    /// The tickets, to store after a change.
    pub fn tickets(&self) -> &Tickets {
        &self.tickets
    }

    /// An operator applies an ordering document (checked, and resolved against the deployed
    /// definitions, by the caller): it replaces the last. The tickets stay: the instances
    /// running keep their places.
    pub fn apply(&mut self, orderings: Orderings) {
        self.orderings = orderings;
    }

    /// The ticket of `instance`, if it holds one.
    pub fn ticket(&self, instance: InstanceId) -> Option<Ticket> {
        self.tickets.held.get(&instance).copied()
    }

    /// Whether `request`'s activity is a task some ordering names.
    pub fn is_ordered(&self, request: &Request<'_>) -> bool {
        !self.partners(request).is_empty()
    }

    /// An activity is about to run: gives its instance a ticket if the activity is ordered and
    /// the instance holds none yet, and says what it waits for (nothing: it goes on).
    pub fn request(&mut self, request: &Request<'_>, running: &impl Running) -> Decision {
        let ordered = self.is_ordered(request);
        let mut assigned = false;
        if ordered && !self.tickets.held.contains_key(&request.instance) {
            let ticket = Ticket(self.tickets.next);
            self.tickets.next = self.tickets.next.saturating_add(1);
            self.tickets.held.insert(request.instance, ticket);
            assigned = true;
        }
        Decision {
            ticket: self.ticket(request.instance),
            assigned,
            waits: self.waits(request, running),
        }
    }

    /// What `request`'s activity waits for now: for each pair that names it, the paired task
    /// of every running instance of the other definition with an earlier ticket, unless that
    /// task is final. Empty when the activity is in no ordering. An instance without a ticket
    /// counts as last.
    pub fn waits(&self, request: &Request<'_>, running: &impl Running) -> Vec<Wait> {
        let partners = self.partners(request);
        if partners.is_empty() {
            return Vec::new();
        }
        let mine = self.ticket(request.instance);
        let mut waits = BTreeSet::new();
        for (&instance, &ticket) in &self.tickets.held {
            let earlier = mine.is_none_or(|mine| ticket < mine);
            if instance == request.instance || !earlier {
                continue;
            }
            let Some((name, workflow)) = running.definition(instance) else {
                continue;
            };
            for partner in partners.iter().filter(|p| p.definition == name) {
                // A task the version it runs does not have is none to wait for.
                let Ok(activity) = mobiwf_xml_schema::task_id(workflow, partner.task) else {
                    continue;
                };
                if !running.is_final(instance, activity) {
                    waits.insert(Wait {
                        instance,
                        activity,
                        task: partner.task.clone(),
                    });
                }
            }
        }
        waits.into_iter().collect()
    }

    /// An instance ended (completed, cancelled, failed, or left the book): its ticket goes,
    /// and is never given again. Returns whether it held one (the tickets changed).
    pub fn ended(&mut self, instance: InstanceId) -> bool {
        self.tickets.held.remove(&instance).is_some()
    }

    /// The tasks of other definitions `request`'s activity is paired with.
    fn partners(&self, request: &Request<'_>) -> BTreeSet<Partner<'_>> {
        let mut out = BTreeSet::new();
        for ordering in &self.orderings.orderings {
            for side in [Side::First, Side::Second] {
                if ordering.definition(side) != request.definition {
                    continue;
                }
                let other = side.other();
                for pair in &ordering.pairs {
                    let here = mobiwf_xml_schema::task_id(request.workflow, pair.task(side));
                    if here == Ok(request.activity) {
                        out.insert(Partner {
                            definition: ordering.definition(other),
                            task: pair.task(other),
                        });
                    }
                }
            }
        }
        out
    }
}
