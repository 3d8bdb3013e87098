//! The partition document (*MobiWfMS*, "Linguagem de workflow do MobiWfMS", §4.2, Figure 10): the
//! part of a workflow one partner runs.

use super::common::{ActivityId, ActivityKind, Contingency, Retries, Status, WorkflowId};

/// What a partner receives: its activities, with everything needed to run them and to notify
/// the partners of their successors directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionDocument {
    /// `workflow@id`: the instance this partition belongs to.
    pub workflow_id: WorkflowId,
    /// `startTime` as written by the controller (opaque text); absent when not started.
    pub start_time: Option<String>,
    /// `activities/activity` (also accepted directly under `workflow`).
    pub activities: Vec<PartitionActivity>,
    /// Extension `data` (after `activities`): the declarations of the instance data its
    /// activities read, write or carry; default none.
    pub data: Vec<super::data::DataItem>,
}

impl PartitionDocument {
    /// What the data name `name` holds, as the document's `<data>` declares it.
    pub fn data_kind(&self, name: &str) -> Option<super::data::DataKind> {
        self.data.iter().find(|d| d.name == name).map(|d| d.kind)
    }
}

/// One activity of a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionActivity {
    /// `@id`.
    pub id: ActivityId,
    /// `nameActivity`.
    pub name: String,
    /// `descriptionActivity`.
    pub description: String,
    /// `status`.
    pub status: Status,
    /// `responseImmediate`: tell the controller as soon as this activity finishes (it has an
    /// adjacent in another partition).
    pub response_immediate: bool,
    /// `timeToWait` in seconds (emergency trigger); 0 = none.
    pub time_to_wait_secs: u32,
    /// `contingencyActivityId`.
    pub contingency: Contingency,
    /// `preconditions/precondition`.
    pub preconditions: Vec<Precondition>,
    /// `adjacents/adjacent`: the activities that wait for this one, and where they run.
    pub adjacents: Vec<Adjacent>,
    /// Extension `depends`: the activity's dependency rule, as in the definition; default
    /// none.
    pub depends: Option<super::rules::Rule>,
    /// Extension `merge`, as in the definition.
    pub merge: super::rules::Merge,
    /// Extension `routes`, as in the definition (each `to` is one of its adjacents).
    pub routes: Vec<super::rules::Route>,
    /// Extension `completion`, as in the definition.
    pub completion: bool,
    /// Extension `loop`, as in the definition, with its body's members (derived).
    pub loop_back: Option<super::loops::Loop>,
    /// Extension `timeOut`: the activity's longest run in seconds, 0 = none (default).
    pub time_out_secs: u32,
    /// Extension `kind`; default automatic.
    pub kind: ActivityKind,
    /// Extension `command`; absent = succeed at once.
    pub command: Option<String>,
    /// Extension `compensation`, as in the definition: what undoes the activity's work.
    pub compensation: Option<String>,
    /// Extension `retries` (automatic activities only); default none.
    pub retries: Retries,
    /// Extension `class`, as in the definition.
    pub class: Option<super::classes::ClassName>,
    /// Extension `application`: the whole application the definition's activity names (its
    /// id, command, size and os), so that the device of the user who selects the item can run
    /// it; default none.
    pub application: Option<super::applications::Application>,
    /// Extension `ordered` (partition documents only): a task an ordering between
    /// definitions names, for this instance's definition. The controller sets it when it
    /// places an instance of a deployed definition; the node then asks the controller before
    /// the activity is ready, as for a task class (with no class when it has none).
    pub ordered: bool,
    /// Extensions `reads` and `writes`, as in the definition.
    pub data: super::data::DataAccess,
    /// Extensions `role`, `department`, `team`, `assignment`, `policy`, `priority`,
    /// `disconnected` (manual and semi-automatic activities): who does it; default none.
    pub people: super::people::People,
}

/// A precondition of a partition activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Precondition {
    /// `@id` (also spelled `Id`): the activity waited for.
    pub id: ActivityId,
    /// `status` of that activity as far as this document knows.
    pub status: Status,
    /// `local`: the activity is in this same partition.
    pub local: bool,
    /// `timeOut` (also spelled `connectDelay`): longest wait in seconds, 0 = none.
    pub time_out_secs: u32,
}

/// A successor of a partition activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adjacent {
    /// `@id` (also spelled `Id`): the successor activity.
    pub id: ActivityId,
    /// `ip`: where the partner that runs the successor is reached.
    pub location: String,
    /// Extension `states`: the states of this activity that the successor's dependency rule
    /// names (derived). Empty: the successor waits for this one's end only (a precondition).
    /// Not empty: its partner is told when this activity enters each non-final state listed,
    /// and of its end with every state it entered.
    pub states: Vec<super::rules::TaskState>,
    /// Extension `carries` (derived): the instance data names the notification to the
    /// successor's partner carries (what it or the activities after it read, and this
    /// activity or one before it wrote). Empty: no data.
    pub carries: Vec<String>,
}
