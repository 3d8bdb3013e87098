//! Dependency rules (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006), §2.2):
//! an activity may wait, beside its `preconditions` (all of them finished, as published), for a
//! rule over other activities' states, written `<depends>` with nestable `<and>`/`<or>` over
//! `<term activity state>`.

use super::common::ActivityId;

/// Where an activity is in its life: WorkToDo's task states (*Synchronization and Disconnected
/// Operation in WorkToDo* (IC-03-006), §2.1) and our `cancelled`, as rules name them and as the
/// wire, the stores and the API do (`mobiwf_proto::ActivityState` is this type). Documents
/// spell them `NOT_READY` ([`TaskState::published`]); messages and stores by their snake-case
/// name ([`TaskState::as_str`]), where `waiting`, the name earlier versions wrote for
/// `not_ready`, is still read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// `NOT_READY`: not started: deployed, its preconditions or dependency rule do not hold
    /// yet (or it is not yet deployed). Every activity enters it first.
    #[serde(alias = "waiting")]
    NotReady,
    /// `SYNCHRONIZING`: its preconditions and dependency rule hold; it waits for
    /// synchronization.
    Synchronizing,
    /// `READY`: nothing holds it back: an automatic one starts at once, a manual one is
    /// offered to people.
    Ready,
    /// `RUNNING`: started: its command runs, or a person holds its work item.
    Running,
    /// `SUCCEEDED`: finished with success.
    Succeeded,
    /// `FAILED`: finished without success.
    Failed,
    /// `CANCELLED`: it will never run: a predecessor failed with contingency -1 or was
    /// cancelled.
    Cancelled,
    /// `SKIPPED`: it will never run: it is on a path not taken (a route led elsewhere).
    Skipped,
}

impl TaskState {
    /// Every state, in the order an activity can pass them.
    pub const ALL: [TaskState; 8] = [
        TaskState::NotReady,
        TaskState::Synchronizing,
        TaskState::Ready,
        TaskState::Running,
        TaskState::Succeeded,
        TaskState::Failed,
        TaskState::Cancelled,
        TaskState::Skipped,
    ];

    /// The published spelling, which documents are written with.
    pub fn published(self) -> &'static str {
        match self {
            TaskState::NotReady => "NOT_READY",
            TaskState::Synchronizing => "SYNCHRONIZING",
            TaskState::Ready => "READY",
            TaskState::Running => "RUNNING",
            TaskState::Succeeded => "SUCCEEDED",
            TaskState::Failed => "FAILED",
            TaskState::Cancelled => "CANCELLED",
            TaskState::Skipped => "SKIPPED",
        }
    }

    /// The state a document names, in any case; `SUCCEDED`, as *WorkToDo: um sistema de
    /// gerenciamento de workflows para ambientes de comunicação sem fio* spells it (§3.1.3), is
    /// taken too.
    pub fn parse(text: &str) -> Option<TaskState> {
        let upper = text.trim().to_ascii_uppercase();
        if upper == "SUCCEDED" {
            return Some(TaskState::Succeeded);
        }
        TaskState::ALL.into_iter().find(|s| s.published() == upper)
    }

    /// True once the activity can no longer change.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskState::Succeeded | TaskState::Failed | TaskState::Cancelled | TaskState::Skipped
        )
    }

    /// True until the activity has started or ended: not ready, synchronizing or ready.
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            TaskState::NotReady | TaskState::Synchronizing | TaskState::Ready
        )
    }

    /// The word used in messages, stores, tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::NotReady => "not_ready",
            TaskState::Synchronizing => "synchronizing",
            TaskState::Ready => "ready",
            TaskState::Running => "running",
            TaskState::Succeeded => "succeeded",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
            TaskState::Skipped => "skipped",
        }
    }
}

/// A dependency rule: a term, or `and`/`or` over at least one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// `<term activity="A" state="S"/>`: holds once activity A entered state S.
    Term {
        /// The activity looked at.
        activity: ActivityId,
        /// The state it must have entered.
        state: TaskState,
    },
    /// `<and>`: every rule holds.
    And(Vec<Rule>),
    /// `<or>`: some rule holds.
    Or(Vec<Rule>),
}

impl Rule {
    /// True when a term names `activity`.
    pub fn names(&self, activity: ActivityId) -> bool {
        match self {
            Rule::Term { activity: a, .. } => *a == activity,
            Rule::And(rules) | Rule::Or(rules) => rules.iter().any(|r| r.names(activity)),
        }
    }

    /// Every term, in document order: (activity, state).
    pub fn terms(&self) -> Vec<(ActivityId, TaskState)> {
        let mut out = Vec::new();
        self.collect_terms(&mut out);
        out
    }

    fn collect_terms(&self, out: &mut Vec<(ActivityId, TaskState)>) {
        match self {
            Rule::Term { activity, state } => out.push((*activity, *state)),
            Rule::And(rules) | Rule::Or(rules) => {
                for rule in rules {
                    rule.collect_terms(out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_are_read_in_any_case_and_with_the_seed_misspelling() {
        assert_eq!(TaskState::parse("failed"), Some(TaskState::Failed));
        assert_eq!(TaskState::parse("Not_Ready"), Some(TaskState::NotReady));
        assert_eq!(TaskState::parse("SUCCEDED"), Some(TaskState::Succeeded));
        assert_eq!(TaskState::parse("DONE"), None);
        for s in TaskState::ALL {
            assert_eq!(TaskState::parse(s.published()), Some(s));
        }
    }
}

/// Extension `merge`: when an activity with several preconditions may start (AND_MERGE, OR_MERGE,
/// VOTE_MERGE of *A lightweight workflow engine based on a relational structure*
/// (He, Li, Jiao, Liu), §3.2.1). Default [`Merge::All`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Merge {
    /// `and` (default, not written): every precondition finished (the published meaning).
    #[default]
    All,
    /// `<merge>or</merge>`: the first precondition to finish starts it (with `flag`: the first
    /// to finish with that completion flag); later ones are discarded.
    First {
        /// `@flag`: the completion flag the predecessor must have finished with.
        flag: Option<String>,
    },
    /// `<merge votes="N">vote</merge>`: N preconditions succeeded; later ones are discarded.
    Vote {
        /// `@votes`: how many, at least 1 and at most the number of preconditions.
        votes: u32,
    },
}

/// One route of an activity's `<routes>` (the post-routing rule of He et al., §3.2.2): when the
/// activity ends with completion flag `flag` (a route without `flag`: with any flag no other route
/// names, or none), the successors listed go on and its other successors are skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// `@flag`; `None` for the route taken otherwise.
    pub flag: Option<String>,
    /// `to`: the successors this route leads to (activities that have this one as a
    /// precondition).
    pub to: Vec<ActivityId>,
}

/// The routes an activity ending with `flag` takes: the route with that flag, else the one
/// without a flag; `None` when no route applies (every routed successor is skipped).
pub fn route_for<'a>(routes: &'a [Route], flag: Option<&str>) -> Option<&'a Route> {
    routes
        .iter()
        .find(|r| r.flag.is_some() && r.flag.as_deref() == flag)
        .or_else(|| routes.iter().find(|r| r.flag.is_none()))
}

/// Where the `routes` of an activity that succeeded with `flag` lead: `None` without routes
/// (every successor goes on), else the successors the route taken lists (none when no route
/// applies). What its partners are told (`Notify.routed`).
pub fn routed_to(routes: &[Route], flag: Option<&str>) -> Option<Vec<ActivityId>> {
    (!routes.is_empty()).then(|| route_for(routes, flag).map_or_else(Vec::new, |r| r.to.clone()))
}
