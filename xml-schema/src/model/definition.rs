//! The workflow definition language (*MobiWfMS*, "Linguagem de workflow do MobiWfMS", §4.1,
//! Figure 9), kept by the controller.

use std::collections::{HashMap, HashSet};

use crate::limits::MAX_DEFINITION_NAME_CHARS;

use super::common::{
    ActivityId, ActivityKind, ActivityTypeId, Contingency, PartitionId, PartnerId, Retries, Status,
    WorkflowId,
};

/// A whole workflow: its activities, their types, how they are partitioned, and the partners.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowDefinition {
    /// `workflow@id`.
    pub id: WorkflowId,
    /// `description`; empty when absent.
    pub description: String,
    /// Extension `name`: what the controller deploys the definition under and operators
    /// start it by; default none (then the operator names it when deploying).
    pub name: Option<DefinitionName>,
    /// Extension `creatorRole`: the role whose members may start instances of it; default
    /// none (any operator may).
    pub creator_role: Option<super::people::RoleId>,
    /// `activities/activity`, in document order.
    pub activities: Vec<Activity>,
    /// `activityTypes/activityType` (also spelled `actitivityType`).
    pub activity_types: Vec<ActivityType>,
    /// `partitions/partition`. Empty means the controller partitions the workflow itself.
    pub partitions: Vec<Partition>,
    /// `partners/partner`.
    pub partners: Vec<Partner>,
    /// Extension `data` (after `partners`): the instance data its activities read and write,
    /// in document order; default none.
    pub data: Vec<super::data::DataItem>,
    /// Extension `applications` (after `data`): the programs its semi-automatic activities
    /// start on their user's device, in document order; default none.
    pub applications: Vec<super::applications::Application>,
}

/// One activity of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activity {
    /// `@id`, at least 1.
    pub id: ActivityId,
    /// `nameActivity`; empty when absent.
    pub name: String,
    /// `descriptionActivity`; empty when absent.
    pub description: String,
    /// `activityTypeId` (required): the skill a partner needs to run it.
    pub activity_type: ActivityTypeId,
    /// `status`; default pending (0).
    pub status: Status,
    /// `timeToWait` in seconds; > 0 is an emergency trigger; default 0.
    pub time_to_wait_secs: u32,
    /// `contingencyActivityId`; default -1 (block).
    pub contingency: Contingency,
    /// `timeOut` in seconds: longest run, 0 = none; default 0.
    pub time_out_secs: u32,
    /// `preconditions/preconditionId`, in document order.
    pub preconditions: Vec<ActivityId>,
    /// Extension `depends`: a dependency rule over other activities' states, which must hold
    /// beside the preconditions; default none.
    pub depends: Option<super::rules::Rule>,
    /// Extension `merge`: how its preconditions combine; default all of them.
    pub merge: super::rules::Merge,
    /// Extension `routes`: which successors a completion flag leads to; default none (every
    /// successor goes on).
    pub routes: Vec<super::rules::Route>,
    /// Extension `completion`: when it succeeds, the instance ends and every activity not
    /// final is cancelled (the COMPLETION activity of *A lightweight workflow engine based on a
    /// relational structure* (He, Li, Jiao, Liu), §3.2.1); default false.
    pub completion: bool,
    /// Extension `loop`: the back edge of a loop this activity ends; default none.
    pub loop_back: Option<super::loops::Loop>,
    /// Extension `kind`; default automatic.
    pub kind: ActivityKind,
    /// Extension `command`: run with `sh -c` by automatic activities; absent = succeed at once.
    pub command: Option<String>,
    /// Extension `compensation`: a command (`sh -c`) that undoes the activity's work, run on
    /// its partner when its instance is cancelled or fails after it succeeded (backward
    /// recovery); default none.
    pub compensation: Option<String>,
    /// Extension `retries` (automatic activities only): tries after a failed one; default none.
    pub retries: Retries,
    /// Extension `class`: its task class, which the synchronization manager keeps apart from
    /// the classes it conflicts with before it is ready; default none (no synchronization).
    pub class: Option<super::classes::ClassName>,
    /// Extension `application` (semi-automatic activities): the application of the
    /// definition's `applications` that its user's device starts when they select it; default
    /// none (the user does the work and completes it).
    pub application: Option<super::applications::ApplicationId>,
    /// Extensions `reads` and `writes`: the instance data it uses; default none.
    pub data: super::data::DataAccess,
    /// Extensions `role`, `department`, `team`, `assignment`, `policy`, `priority`,
    /// `disconnected` (manual and semi-automatic activities): who does it; default none.
    pub people: super::people::People,
}

/// A type of activity, which partners list among their skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityType {
    /// `@id`.
    pub id: ActivityTypeId,
    /// `description`; empty when absent.
    pub description: String,
}

/// A set of activities given to one partner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    /// `@id`.
    pub id: PartitionId,
    /// `name`; empty when absent.
    pub name: String,
    /// `partnerId` (required).
    pub partner: PartnerId,
    /// `timeOut` in seconds: longest run of the whole partition, 0 = none; default 0.
    pub time_out_secs: u32,
    /// `activityId`, in document order.
    pub activities: Vec<ActivityId>,
}

/// A participant that can run activities of the types in its skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partner {
    /// `@id`.
    pub id: PartnerId,
    /// `name`; empty when absent. Nodes register under a name and are matched by it.
    pub name: String,
    /// `description`; empty when absent.
    pub description: String,
    /// `ip`: where the partner is reached (an IP, host name or libp2p multiaddr); may be empty
    /// when the runtime finds the partner by name.
    pub location: String,
    /// `skills/activityTypeId`.
    pub skills: Vec<ActivityTypeId>,
}

crate::text_id!(
    /// A deployed definition's name, which operators start instances by: 1 to
    /// [`MAX_DEFINITION_NAME_CHARS`] of `A-Z a-z 0-9 _ . -` (see [`definition_name_problem`]).
    DefinitionName
);

/// What is wrong with `name` as a definition's name, in words with what to do, or `None`
/// when it is one.
pub fn definition_name_problem(name: &str) -> Option<String> {
    let chars = name.chars().count();
    let fault = if name.is_empty() {
        "a definition name cannot be empty".to_owned()
    } else if chars > MAX_DEFINITION_NAME_CHARS {
        format!(
            "definition name of {chars} characters is over the limit of \
             {MAX_DEFINITION_NAME_CHARS} (MAX_DEFINITION_NAME_CHARS)"
        )
    } else {
        let bad = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))?;
        format!("definition name {name:?} holds {bad:?}")
    };
    Some(format!(
        "{fault}; a name is 1 to {MAX_DEFINITION_NAME_CHARS} of the characters A-Z, a-z, 0-9, _, \
         . and -, e.g. maintenance"
    ))
}

impl WorkflowDefinition {
    /// The activities some activity names as its contingency (`contingencyActivityId` x > 0):
    /// they run only when a failure calls for them, so no partition needs to hold them.
    pub fn contingency_activities(&self) -> HashSet<ActivityId> {
        self.activities
            .iter()
            .filter_map(|a| match a.contingency {
                Contingency::Run(x) => Some(x),
                _ => None,
            })
            .collect()
    }

    /// The activity with this id, if any (the first, should ids repeat).
    pub fn activity(&self, id: ActivityId) -> Option<&Activity> {
        self.activities.iter().find(|a| a.id == id)
    }

    /// Every activity by id (the first, should ids repeat, as [`Self::activity`] does): for
    /// lookups inside loops, where a scan per lookup would be quadratic.
    pub fn activities_by_id(&self) -> HashMap<ActivityId, &Activity> {
        let mut index = HashMap::with_capacity(self.activities.len());
        for a in &self.activities {
            index.entry(a.id).or_insert(a);
        }
        index
    }

    /// The application with this id, if any.
    pub fn application(
        &self,
        id: &super::applications::ApplicationId,
    ) -> Option<&super::applications::Application> {
        self.applications.iter().find(|a| &a.id == id)
    }

    /// The partner with this id, if any.
    pub fn partner(&self, id: PartnerId) -> Option<&Partner> {
        self.partners.iter().find(|p| p.id == id)
    }
}
