//! Where an activity is in its life, as the wire, the stores and the API name it: WorkToDo's
//! task states ([`ActivityState`]) and the set of the states an activity entered
//! ([`StateSet`]), which partners' dependency rules look at.

use serde::{Deserialize, Serialize};

use crate::TaskState;
use crate::wire::ActivityRecord;

/// Where an activity is in its life: WorkToDo's task states (*Synchronization and Disconnected
/// Operation in WorkToDo* (IC-03-006), §2.1) and our `cancelled`. Stored and sent by name;
/// `waiting`, the name earlier versions wrote for `not_ready`, is still read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityState {
    /// Not started: its preconditions or dependency rule do not hold yet (or it is not yet
    /// deployed).
    #[serde(alias = "waiting")]
    NotReady,
    /// Its preconditions and dependency rule hold; it waits for synchronization.
    Synchronizing,
    /// Nothing holds it back: an automatic one starts at once, a manual one is offered.
    Ready,
    /// Started: its command runs, or a person holds its work item.
    Running,
    /// Finished with success.
    Succeeded,
    /// Finished without success.
    Failed,
    /// Will never run: a predecessor failed with contingency -1 or was cancelled.
    Cancelled,
    /// Will never run: it is on a path not taken (a route led elsewhere).
    Skipped,
}

impl ActivityState {
    /// True once the activity can no longer change.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ActivityState::Succeeded
                | ActivityState::Failed
                | ActivityState::Cancelled
                | ActivityState::Skipped
        )
    }

    /// The word used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityState::NotReady => "not_ready",
            ActivityState::Synchronizing => "synchronizing",
            ActivityState::Ready => "ready",
            ActivityState::Running => "running",
            ActivityState::Succeeded => "succeeded",
            ActivityState::Failed => "failed",
            ActivityState::Cancelled => "cancelled",
            ActivityState::Skipped => "skipped",
        }
    }

    /// Every state, in the order an activity can pass them.
    pub const ALL: [ActivityState; 8] = [
        ActivityState::NotReady,
        ActivityState::Synchronizing,
        ActivityState::Ready,
        ActivityState::Running,
        ActivityState::Succeeded,
        ActivityState::Failed,
        ActivityState::Cancelled,
        ActivityState::Skipped,
    ];

    /// True until the activity has started or ended: not ready, synchronizing or ready.
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            ActivityState::NotReady | ActivityState::Synchronizing | ActivityState::Ready
        )
    }

    /// The state as dependency rules name it.
    pub fn task_state(self) -> TaskState {
        match self {
            ActivityState::NotReady => TaskState::NotReady,
            ActivityState::Synchronizing => TaskState::Synchronizing,
            ActivityState::Ready => TaskState::Ready,
            ActivityState::Running => TaskState::Running,
            ActivityState::Succeeded => TaskState::Succeeded,
            ActivityState::Failed => TaskState::Failed,
            ActivityState::Cancelled => TaskState::Cancelled,
            ActivityState::Skipped => TaskState::Skipped,
        }
    }

    /// The state a dependency rule names.
    pub fn of_task_state(state: TaskState) -> ActivityState {
        match state {
            TaskState::NotReady => ActivityState::NotReady,
            TaskState::Synchronizing => ActivityState::Synchronizing,
            TaskState::Ready => ActivityState::Ready,
            TaskState::Running => ActivityState::Running,
            TaskState::Succeeded => ActivityState::Succeeded,
            TaskState::Failed => ActivityState::Failed,
            TaskState::Cancelled => ActivityState::Cancelled,
            TaskState::Skipped => ActivityState::Skipped,
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// The states an activity has entered, as a set: what its partner tells the partners whose
/// dependency rules name it (a term holds once its activity entered the state). Sent as a
/// number, one bit per state in [`ActivityState::ALL`] order.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct StateSet(u16);

impl StateSet {
    /// No state.
    pub const EMPTY: StateSet = StateSet(0);

    /// True when it holds no state.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Adds `state`.
    pub fn insert(&mut self, state: ActivityState) {
        self.0 |= state.bit();
    }

    /// This set with `state` added.
    #[must_use]
    pub fn with(mut self, state: ActivityState) -> StateSet {
        self.insert(state);
        self
    }

    /// True when it holds `state`.
    pub fn contains(&self, state: ActivityState) -> bool {
        self.0 & state.bit() != 0
    }

    /// Every state of both.
    #[must_use]
    pub fn union(self, other: StateSet) -> StateSet {
        StateSet(self.0 | other.0)
    }

    /// True when it holds a final state: the activity can change no more.
    pub fn has_final(&self) -> bool {
        self.iter().any(ActivityState::is_final)
    }

    /// The states an activity in `state` entered, from the times its record keeps: every
    /// activity entered `not_ready`; a start implies `ready`, `ready` implies
    /// `synchronizing` (the only way there), so a record may leave out a time equal to the
    /// next one's.
    pub fn of_record(record: &ActivityRecord) -> StateSet {
        StateSet::of_times(
            [record.synchronized_ms, record.ready_ms, record.started_ms],
            record.state,
        )
    }

    /// [`StateSet::of_record`] from the times of `synchronizing`, `ready` and `running` and
    /// the state.
    pub fn of_times(
        [synchronized, ready, started]: [Option<u64>; 3],
        state: ActivityState,
    ) -> StateSet {
        let mut set = StateSet::EMPTY.with(ActivityState::NotReady);
        let running = started.is_some();
        let ready = running || ready.is_some();
        let synchronizing = ready || synchronized.is_some();
        for (entered, state) in [
            (synchronizing, ActivityState::Synchronizing),
            (ready, ActivityState::Ready),
            (running, ActivityState::Running),
        ] {
            if entered {
                set.insert(state);
            }
        }
        set.with(state)
    }

    /// Its states, in [`ActivityState::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = ActivityState> + '_ {
        ActivityState::ALL.into_iter().filter(|s| self.contains(*s))
    }
}
