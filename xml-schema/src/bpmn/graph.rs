//! What the import reads out of a BPMN process before it maps it onto the definition model:
//! the flow nodes it supports, the sequence flows between them and the lanes, each with where
//! it was written.

use crate::diagnostic::Pos;
use crate::model::{ActivityKind, People, Retries};

/// The one process of a BPMN file, as far as the import supports it.
#[derive(Debug, Default)]
pub(crate) struct Process {
    /// Where `<process>` starts.
    pub pos: Pos,
    /// `process@id`.
    pub id: String,
    /// `process@name`, white space made single spaces; empty when absent.
    pub name: String,
    /// `definitions@name`, the file's name for what it holds; empty when absent.
    pub file_name: String,
    /// The process's `documentation`; empty when absent.
    pub description: String,
    /// Flow nodes (events, tasks, gateways), in document order.
    pub nodes: Vec<FlowNode>,
    /// `sequenceFlow`s, in document order.
    pub flows: Vec<Flow>,
    /// `laneSet/lane`, in document order.
    pub lanes: Vec<Lane>,
}

/// One flow node.
#[derive(Debug)]
pub(crate) struct FlowNode {
    /// `@id`.
    pub id: String,
    /// `@name`, white space made single spaces; empty when absent.
    pub name: String,
    /// How messages name it (`<bpmn:task id="T1"> ("Check")`).
    pub label: String,
    /// Where it starts.
    pub pos: Pos,
    pub kind: Kind,
}

/// What a flow node is.
#[derive(Debug)]
pub(crate) enum Kind {
    /// A none start event.
    Start,
    /// A none end event.
    End,
    /// A task of any supported type.
    Task(Box<Task>),
    /// A parallel or exclusive gateway; `default` is an exclusive gateway's default flow id.
    Gateway {
        /// Parallel (all branches) or exclusive (one branch).
        parallel: bool,
        /// `@default`, with where it is written.
        default: Option<(String, Pos)>,
    },
    /// An interrupting boundary timer event on the task `attached` (its id).
    Timer {
        /// `@attachedToRef`, with where it is written.
        attached: (String, Pos),
        /// `timeDuration` in seconds.
        secs: u32,
    },
}

/// What a task does and who does it.
#[derive(Debug, Default)]
pub(crate) struct Task {
    /// Automatic (`task`, `serviceTask`, `scriptTask`) or manual (`userTask`, `manualTask`).
    pub kind: ActivityKind,
    /// Its `documentation`.
    pub description: String,
    /// `mobiwf:command`, or a shell `script`; with where it is written.
    pub command: Option<(String, Pos)>,
    /// `mobiwf:compensation`, with where it is written.
    pub compensation: Option<(String, Pos)>,
    /// `mobiwf:retries`.
    pub retries: Retries,
    /// Candidate groups, `potentialOwner` and the people extensions.
    pub people: People,
    /// Where who does it is said (the first of the attribute or elements that say it).
    pub people_pos: Option<Pos>,
}

/// One sequence flow.
#[derive(Debug)]
pub(crate) struct Flow {
    /// `@id`.
    pub id: String,
    /// `@name`, white space made single spaces; empty when absent.
    pub name: String,
    /// How messages name it.
    pub label: String,
    /// Where it starts.
    pub pos: Pos,
    /// `@sourceRef`, with where it is written.
    pub source: (String, Pos),
    /// `@targetRef`, with where it is written.
    pub target: (String, Pos),
    /// The completion flag its `conditionExpression` tests, with where it is written; `None`
    /// without a condition (or an empty one).
    pub condition: Option<(String, Pos)>,
}

/// One lane: a partner of the workflow.
#[derive(Debug)]
pub(crate) struct Lane {
    /// `@name`, else `@id`.
    pub name: String,
    /// Where it starts.
    pub pos: Pos,
    /// Its `flowNodeRef`s, with where each is written.
    pub nodes: Vec<(String, Pos)>,
}
