//! Identifiers and small value types shared by both languages.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type!(
    /// `workflow@id`: in a definition, the workflow; in a partition document, the instance.
    WorkflowId
);
id_type!(
    /// `activity@id`. Activity ids start at 1: `contingencyActivityId` 0 has its own meaning.
    ActivityId
);
id_type!(
    /// `activityType@id`, matched against partners' skills.
    ActivityTypeId
);
id_type!(
    /// `partition@id`.
    PartitionId
);
id_type!(
    /// `partner@id`.
    PartnerId
);

/// `status` of an activity or precondition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Status {
    /// 0: running or not yet run.
    #[default]
    Pending,
    /// 1: executed successfully.
    Succeeded,
    /// 2: executed without success.
    Failed,
}

impl Status {
    /// The number the documents use.
    pub fn code(self) -> u8 {
        match self {
            Status::Pending => 0,
            Status::Succeeded => 1,
            Status::Failed => 2,
        }
    }

    /// The status a document number stands for.
    pub fn from_code(code: i128) -> Option<Status> {
        match code {
            0 => Some(Status::Pending),
            1 => Some(Status::Succeeded),
            2 => Some(Status::Failed),
            _ => None,
        }
    }
}

/// `contingencyActivityId`: what happens when an activity fails (its partner does not answer,
/// its command fails, or it times out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Contingency {
    /// -1: abort the activity and block its successors (they are cancelled, transitively).
    /// The default when the element is absent, because it never lets work run on a failure.
    #[default]
    Block,
    /// 0: abort the activity and release its successors from this precondition.
    Release,
    /// x > 0: run activity x instead, on another partner with the skill.
    Run(ActivityId),
}

impl Contingency {
    /// The number the documents use.
    pub fn code(self) -> i128 {
        match self {
            Contingency::Block => -1,
            Contingency::Release => 0,
            Contingency::Run(id) => i128::from(id.0),
        }
    }

    /// The rule a document number stands for; `None` below -1 or beyond the id range.
    pub fn from_code(code: i128) -> Option<Contingency> {
        match code {
            -1 => Some(Contingency::Block),
            0 => Some(Contingency::Release),
            x => u64::try_from(x)
                .ok()
                .map(|id| Contingency::Run(ActivityId(id))),
        }
    }
}

/// Extension `kind`: who performs an activity. Default [`ActivityKind::Automatic`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ActivityKind {
    /// Runs its `command` (or succeeds at once without one).
    #[default]
    Automatic,
    /// A person starts it from a worklist; then it runs like an automatic one.
    SemiAutomatic,
    /// A person does it and reports the outcome through a worklist.
    Manual,
    /// Does nothing and passes at once (the DUMMY activity of *A lightweight workflow engine based
    /// on a relational structure* (He, Li, Jiao, Liu), §3.2.1): a routing point, e.g. a merge that
    /// only joins branches. No command, no people.
    Dummy,
}

impl ActivityKind {
    /// The spelling the documents use.
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityKind::Automatic => "automatic",
            ActivityKind::SemiAutomatic => "semiAutomatic",
            ActivityKind::Manual => "manual",
            ActivityKind::Dummy => "dummy",
        }
    }

    /// The kind a document spelling stands for.
    pub fn parse(text: &str) -> Option<ActivityKind> {
        match text {
            "automatic" => Some(ActivityKind::Automatic),
            "semiAutomatic" => Some(ActivityKind::SemiAutomatic),
            "manual" => Some(ActivityKind::Manual),
            "dummy" => Some(ActivityKind::Dummy),
            _ => None,
        }
    }
}

/// Extension `retries`: how an automatic activity that fails is tried again before its
/// contingency applies. The default (no element) is no retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Retries {
    /// `retries/count`: how many more tries after the first failed one, 0 to
    /// [`crate::limits::MAX_RETRIES`]; default 0 (fail at the first failure).
    pub count: u32,
    /// `retries/wait` in seconds: the pause between a failed try and the next; default 0.
    pub wait_secs: u32,
}

impl Retries {
    /// Whether this is the default (no retry, no wait): nothing to write, nothing to check.
    pub fn is_default(self) -> bool {
        self == Retries::default()
    }
}
