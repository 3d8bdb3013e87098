//! The people side of the languages: the organisation document (users, roles, departments,
//! teams; *WorkToDo: um sistema de gerenciamento de workflows para ambientes de comunicação sem
//! fio*, §3.2.1; *A lightweight workflow engine based on a relational structure*
//! (He, Li, Jiao, Liu), §3.1) and the activity extensions that say who does a manual activity and
//! how it is offered (`<role>`, `<assignment>`, `<policy>`, `<priority>`, `<disconnected>`,
//! `<deadline>`; *Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), Table 2;
//! He et al., §3.3).

/// Declares a text identifier: a `String` newtype that serializes as the bare text, with
/// `new`, `as_str`, `Display`, conversions from text and comparisons with `str`. Shared with
/// `mobiwf-proto` (node ids and names), so every text id behaves alike.
#[macro_export]
#[doc(hidden)]
macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, ::serde::Serialize, ::serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps the text as it is.
            pub fn new(text: impl Into<String>) -> Self {
                Self(text.into())
            }

            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> Self {
                Self(text.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> Self {
                Self(text)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

text_id!(
    /// `user@id`: a person of the organisation.
    UserId
);
text_id!(
    /// `role@id`.
    RoleId
);
/// Why `id` cannot be a role id (`None` when it can), as the organisation document's ids are
/// checked: one word, at most [`crate::limits::MAX_ID_CHARS`] characters. An empty id is each
/// caller's to word.
pub fn role_id_problem(id: &str) -> Option<String> {
    use crate::limits::MAX_ID_CHARS;
    let chars = id.chars().count();
    if id.chars().any(char::is_whitespace) {
        let word: Vec<&str> = id.split_whitespace().collect();
        Some(format!(
            "role id \"{}\" contains white space; a role id is one word, as in the organisation \
             document, e.g. \"{}\"",
            crate::read::abbreviate(id),
            crate::read::abbreviate(&word.join("-"))
        ))
    } else if chars > MAX_ID_CHARS {
        Some(format!(
            "role id \"{}\" has {chars} characters, more than the {MAX_ID_CHARS} allowed \
             (MAX_ID_CHARS); name a role of the organisation document",
            crate::read::abbreviate(id)
        ))
    } else {
        None
    }
}

text_id!(
    /// `department@id`.
    DepartmentId
);
text_id!(
    /// `team@id`.
    TeamId
);

/// The organisation document: who works here, in which roles, departments and teams, and
/// on which device each person's worklist lives. The controller keeps it and replicates it to
/// every node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Organisation {
    /// `roles/role`, in document order.
    pub roles: Vec<Role>,
    /// `departments/department`, in document order; a tree by `parent`.
    pub departments: Vec<Department>,
    /// `teams/team`, in document order; a tree by `parent`.
    pub teams: Vec<Team>,
    /// `users/user`, in document order.
    pub users: Vec<User>,
}

/// A role people play (`tech`, `supervisor`, `administrator`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Role {
    /// `@id`.
    pub id: RoleId,
    /// `@name`; empty when absent.
    pub name: String,
}

/// A department; departments form a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Department {
    /// `@id`.
    pub id: DepartmentId,
    /// `@name`; empty when absent.
    pub name: String,
    /// `@parent`: the department this one is part of; none for a root.
    pub parent: Option<DepartmentId>,
}

/// A team; teams form a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Team {
    /// `@id`.
    pub id: TeamId,
    /// `@name`; empty when absent.
    pub name: String,
    /// `@parent`: the team this one is part of; none for a root.
    pub parent: Option<TeamId>,
}

/// A person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// `@id`.
    pub id: UserId,
    /// `@name`; empty when absent.
    pub name: String,
    /// `@department`; none when absent.
    pub department: Option<DepartmentId>,
    /// `@team` and `team/@id` children, in document order (a user may be in several teams).
    pub teams: Vec<TeamId>,
    /// `@device`: the name of the node that holds this user's worklist; a user without one is
    /// never offered work.
    pub device: Option<String>,
    /// `@onLeave` (default false): on leave, offered nothing new.
    pub on_leave: bool,
    /// `@loggedOn` (default true): whether the person is working (He et al.'s `LOGGING_ON`, §3.1).
    pub logged_on: bool,
    /// `role` children: the roles this user plays, each with a priority.
    pub roles: Vec<RoleGrant>,
}

/// A user's membership of a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleGrant {
    /// `@id`.
    pub role: RoleId,
    /// `@priority` (default 0): the higher, the sooner assignment method `priority` chooses
    /// this user.
    pub priority: i64,
}

/// Whose people an activity is offered to (`assignment@basis`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Basis {
    /// `role` (default): the members of the activity's `<role>`.
    #[default]
    Role,
    /// `department`: the members of the activity's `<department>` and the departments under
    /// it (filtered by `<role>` when there is one).
    Department,
    /// `team`: the members of the activity's `<team>` and the teams under it (filtered by
    /// `<role>` when there is one).
    Team,
}

impl Basis {
    /// The spelling the documents use.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Role => "role",
            Basis::Department => "department",
            Basis::Team => "team",
        }
    }

    /// The basis a document spelling stands for.
    pub fn parse(text: &str) -> Option<Basis> {
        match text {
            "role" => Some(Basis::Role),
            "department" => Some(Basis::Department),
            "team" => Some(Basis::Team),
            _ => None,
        }
    }
}

/// How an activity's candidates become its executor (`assignment@method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Method {
    /// `fcfa` (default): offered to the candidates the policy names; the first to select wins.
    #[default]
    Fcfa,
    /// `all`: every candidate gets a copy of their own; the activity ends when every copy is
    /// done.
    All,
    /// `least-working`: the candidate with the fewest open items.
    LeastWorking,
    /// `priority` (basis role only): the candidate with the highest role priority.
    Priority,
    /// `round-robin` (basis role only): the members of the role in turn.
    RoundRobin,
}

impl Method {
    /// The spelling the documents use.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Fcfa => "fcfa",
            Method::All => "all",
            Method::LeastWorking => "least-working",
            Method::Priority => "priority",
            Method::RoundRobin => "round-robin",
        }
    }

    /// The method a document spelling stands for.
    pub fn parse(text: &str) -> Option<Method> {
        match text {
            "fcfa" => Some(Method::Fcfa),
            "all" => Some(Method::All),
            "least-working" => Some(Method::LeastWorking),
            "priority" => Some(Method::Priority),
            "round-robin" => Some(Method::RoundRobin),
            _ => None,
        }
    }
}

/// To whom an `fcfa` item is offered (`<policy>`; WorkToDo's five notification policies).
/// Ties are broken by user id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Policy {
    /// `all` (default): every candidate.
    #[default]
    All,
    /// `fewest-assigned N`: the N candidates with the fewest items offered to or held by them.
    FewestAssigned(u32),
    /// `fewest-selected N`: the N candidates holding the fewest items.
    FewestSelected(u32),
    /// `most-frequent N`: the N candidates whose device connected most often.
    MostFrequent(u32),
    /// `most-recent N`: the N candidates whose device connected most recently.
    MostRecent(u32),
}

impl Policy {
    /// The text the documents use (`all`, `fewest-assigned 2`, ...).
    pub fn to_text(self) -> String {
        match self {
            Policy::All => "all".to_owned(),
            Policy::FewestAssigned(n) => format!("fewest-assigned {n}"),
            Policy::FewestSelected(n) => format!("fewest-selected {n}"),
            Policy::MostFrequent(n) => format!("most-frequent {n}"),
            Policy::MostRecent(n) => format!("most-recent {n}"),
        }
    }

    /// The policy a document text stands for (words separated by white space; N at least 1).
    pub fn parse(text: &str) -> Option<Policy> {
        let mut words = text.split_whitespace();
        let name = words.next()?;
        let n = words.next().map(str::parse::<u32>);
        if words.next().is_some() {
            return None;
        }
        let n = match n {
            None => None,
            Some(Ok(n)) if n >= 1 => Some(n),
            Some(_) => return None,
        };
        match (name, n) {
            ("all", None) => Some(Policy::All),
            ("fewest-assigned", Some(n)) => Some(Policy::FewestAssigned(n)),
            ("fewest-selected", Some(n)) => Some(Policy::FewestSelected(n)),
            ("most-frequent", Some(n)) => Some(Policy::MostFrequent(n)),
            ("most-recent", Some(n)) => Some(Policy::MostRecent(n)),
            _ => None,
        }
    }
}

/// The people extensions of a manual or semi-automatic activity, in both languages. The
/// default (no element) keeps the activity off every user's worklist: anyone on its node
/// completes it, as before.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct People {
    /// `<role>`: the role whose members do it (basis role), or that filters the basis group.
    pub role: Option<RoleId>,
    /// `<department>`: the group of basis `department`.
    pub department: Option<DepartmentId>,
    /// `<team>`: the group of basis `team`.
    pub team: Option<TeamId>,
    /// `<assignment basis=".." method=".."/>`; default role + fcfa.
    pub basis: Basis,
    /// See [`People::basis`].
    pub method: Method,
    /// `<policy>`; default all. Only with method fcfa.
    pub policy: Policy,
    /// `<priority>`: orders worklists by priority (higher first); default 0.
    pub priority: i64,
    /// `<disconnected>`: may the item be locked for work without the network; default false.
    pub disconnected: bool,
    /// `<deadline>`: hours from when the item is offered until it must be done (notices at
    /// 48, 24, 12, 6 and 0 hours left; at 24 left it passes to the instance's responsible
    /// user); `None`, the default, for none. From 1 to [`crate::limits::MAX_DEADLINE_HOURS`].
    pub deadline: Option<u32>,
    /// `<pauseStopsDeadline>`: while the activity is paused its `<deadline>` stops (the
    /// thresholds and the hand-over move by the time it was paused); default false: it runs
    /// on. Only with a `<deadline>`.
    pub pause_stops_deadline: bool,
}

impl People {
    /// Whether the activity goes to people's worklists at all (a role, department or team
    /// names who); without, the activity is done by anyone on its node.
    pub fn assigned(&self) -> bool {
        self.role.is_some() || self.department.is_some() || self.team.is_some()
    }

    /// Whether nothing is set: nothing to write.
    pub fn is_default(&self) -> bool {
        *self == People::default()
    }
}
