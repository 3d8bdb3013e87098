//! Where an activity is in its life, as the wire, the stores and the API name it: WorkToDo's
//! task states ([`ActivityState`]) and the set of the states an activity entered
//! ([`StateSet`]), which partners' dependency rules look at.

use serde::{Deserialize, Serialize};

use crate::wire::ActivityRecord;

/// Where an activity is in its life, as the wire, the stores and the API name it: the task
/// state the languages' dependency rules name, one type for both (its words, its stored
/// names and the old `waiting` are there).
pub use crate::TaskState as ActivityState;

/// `state`'s bit in a [`StateSet`]: its place in [`ActivityState::ALL`].
fn bit(state: ActivityState) -> u16 {
    1 << (state as u16)
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
        self.0 |= bit(state);
    }

    /// This set with `state` added.
    #[must_use]
    pub fn with(mut self, state: ActivityState) -> StateSet {
        self.insert(state);
        self
    }

    /// True when it holds `state`.
    pub fn contains(&self, state: ActivityState) -> bool {
        self.0 & bit(state) != 0
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
