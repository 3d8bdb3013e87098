//! A paused activity as the controller sees it: who paused it and when, and what its node's
//! words of the pause make of it (`crate::pause`).

use mobiwf_proto::ActivityState;

use super::{ActivityEvent, ActivityLifecycle, Undecided};

/// Who paused an activity, and when (its node's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PausedBy {
    /// An operator's name or a user id.
    pub by: String,
    /// When, in ms since the epoch.
    pub since_ms: u64,
}

impl ActivityLifecycle {
    /// What its node's word of a pause makes of it: paused in the state it was in, back to
    /// the state it was resumed in; a word of its node from before the pause (messages may
    /// come out of order) leaves it paused, a final one ends it.
    pub(super) fn pause_target(&self, event: &ActivityEvent) -> Option<ActivityLifecycle> {
        use ActivityEvent as E;
        use ActivityLifecycle as L;
        let under = |state: &ActivityState| match state {
            ActivityState::Running => Undecided::Running,
            _ => Undecided::Waiting,
        };
        Some(match (self, event) {
            (L::Waiting | L::Running, E::Paused { pause, state }) => L::Paused {
                under: under(state),
                pause: pause.clone(),
            },
            (L::Paused { .. }, E::Resumed(state)) if !state.is_final() => L::ended(*state, false),
            (L::Paused { pause, .. }, E::NodeSays { state, .. }) if !state.is_final() => {
                L::Paused {
                    under: under(state),
                    pause: pause.clone(),
                }
            }
            (L::Paused { .. }, E::NodeSays { state, by_operator }) => {
                L::ended(*state, *by_operator)
            }
            _ => return None,
        })
    }
}
