//! The ordering document (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006),
//! §6.2, ordering requirements between definitions): pairs of deployed definitions, and for each
//! pair the tasks whose runs keep one relative order between related running instances.
//!
//! Which instance goes first is decided at run time (the controller's book, by ordering
//! tickets); this is only what an operator wrote.

use std::fmt;

use super::common::ActivityId;
use super::definition::DefinitionName;

/// Every ordering the controller keeps, as one document (`<orderings>`, or a PDL text of
/// `WORKFLOW_DEFINITIONS` and `RELATIVE_ORDER` blocks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Orderings {
    /// The orderings, in document order.
    pub orderings: Vec<Ordering>,
}

/// `WORKFLOW_DEFINITIONS first : second; RELATIVE_ORDER { ... }`: the relative order of tasks
/// between the instances of two deployed definitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ordering {
    /// The first definition, by the name it is deployed under.
    pub first: DefinitionName,
    /// The second definition.
    pub second: DefinitionName,
    /// `first-task : second-task` pairs, in document order.
    pub pairs: Vec<OrderPair>,
}

/// One `T11 : T21` of a `RELATIVE_ORDER`: a task of the first definition and one of the
/// second, which run in the order of their instances' ordering tickets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPair {
    /// A task of [`Ordering::first`].
    pub first: TaskRef,
    /// A task of [`Ordering::second`].
    pub second: TaskRef,
}

/// How an ordering names a task of a definition: by its activity name, or by its id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskRef {
    /// The activity's name (`nameActivity`, PDL's task name).
    Name(String),
    /// The activity's id.
    Id(ActivityId),
}

impl fmt::Display for TaskRef {
    /// The name as written, or `activity 3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskRef::Name(name) => f.write_str(name),
            TaskRef::Id(id) => write!(f, "activity {id}"),
        }
    }
}

/// Which side of an ordering a definition or task is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Side {
    /// The `first` of `WORKFLOW_DEFINITIONS first : second`.
    First,
    /// The `second`.
    Second,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }

    /// `first` or `second`, as the XML's attributes are named.
    pub fn word(self) -> &'static str {
        match self {
            Side::First => "first",
            Side::Second => "second",
        }
    }
}

impl Ordering {
    /// The definition on `side`.
    pub fn definition(&self, side: Side) -> &DefinitionName {
        match side {
            Side::First => &self.first,
            Side::Second => &self.second,
        }
    }
}

impl OrderPair {
    /// The task on `side`.
    pub fn task(&self, side: Side) -> &TaskRef {
        match side {
            Side::First => &self.first,
            Side::Second => &self.second,
        }
    }
}
