//! Pausing one activity (the PAUSING state of *A lightweight workflow engine based on a
//! relational structure* (He, Li, Jiao, Liu); *Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §5.3, case 2: a person suspends work on a task they selected): what
//! an operator's order carries to the activity's node, and what that node tells the
//! controller of it. A person's pause travels as a claim (`ItemAction::Pause`,
//! `ItemAction::Resume`) from their device to the item's host, as every claim does.

use serde::{Deserialize, Serialize};

use crate::{ActivityId, ActivityState, InstanceId};

/// Pause or resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum PauseAction {
    /// Hold the activity where it is: its holder keeps its work item; a running command
    /// runs on (its end is held until the resumption) unless `kill`.
    Pause {
        /// Kill a running command: it runs again, as a new try, when resumed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        kill: bool,
    },
    /// Go on from where it was paused.
    Resume,
}

impl PauseAction {
    /// The word used on the command line, in the API and in histories.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseAction::Pause { .. } => "pause",
            PauseAction::Resume => "resume",
        }
    }
}

/// Controller → node: an operator pauses or resumes one activity
/// ([`crate::Message::Pause`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseOrder {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// Pause or resume.
    pub action: PauseAction,
    /// Who ordered it (the operator's name, for the history).
    pub by: String,
}

/// What became of a pause or a resumption on the activity's node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PauseOutcome {
    /// It is paused.
    Paused {
        /// The state it was paused in (ready or running): where it goes back to.
        state: ActivityState,
        /// Its running command was killed (it runs again when resumed).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        killed: bool,
        /// Its `<deadline>` stops while it is paused (`<pauseStopsDeadline>`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        clock_stopped: bool,
    },
    /// It goes on, in `state` (ready or running).
    Resumed {
        /// The state it went back to.
        state: ActivityState,
        /// How far its `<deadline>` moved (the time it was paused), in ms; 0 when its clock
        /// did not stop.
        #[serde(default, skip_serializing_if = "is_zero")]
        moved_ms: u64,
    },
    /// Nothing changed: why, and what to do.
    Refused {
        /// The reason.
        reason: String,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Node → controller: an activity was paused or resumed, or the order was refused
/// ([`crate::Message::PauseReport`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseReport {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// Who paused or resumed it (an operator's name or a user id).
    pub by: String,
    /// When, in ms since the epoch (the node's clock).
    pub at_ms: u64,
    /// What became of it.
    pub outcome: PauseOutcome,
    /// The activity's pass (left out for the first, as before loops): the controller may hear
    /// of a loop's next pass first from it.
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::Message;

    #[test]
    fn an_order_and_a_report_travel_as_these_bytes() {
        let order = Message::Pause(PauseOrder {
            instance: InstanceId(7),
            activity: ActivityId(3),
            action: PauseAction::Pause { kill: true },
            by: "op".into(),
        });
        let line = r#"{"kind":"pause","instance":7,"activity":3,"action":{"action":"pause","kill":true},"by":"op"}"#;
        assert_eq!(serde_json::to_string(&order).unwrap(), line);
        assert_eq!(serde_json::from_str::<Message>(line).unwrap(), order);
        let plain =
            r#"{"kind":"pause","instance":7,"activity":3,"action":{"action":"pause"},"by":"op"}"#;
        assert!(matches!(
            serde_json::from_str::<Message>(plain).unwrap(),
            Message::Pause(PauseOrder {
                action: PauseAction::Pause { kill: false },
                ..
            })
        ));

        let report = Message::PauseReport(PauseReport {
            instance: InstanceId(7),
            activity: ActivityId(3),
            by: "ana".into(),
            at_ms: 5,
            outcome: PauseOutcome::Resumed {
                state: ActivityState::Running,
                moved_ms: 40,
            },
            pass: crate::Pass::FIRST,
        });
        let line = r#"{"kind":"pause_report","instance":7,"activity":3,"by":"ana","at_ms":5,"outcome":{"outcome":"resumed","state":"running","moved_ms":40}}"#;
        assert_eq!(serde_json::to_string(&report).unwrap(), line);
        assert_eq!(serde_json::from_str::<Message>(line).unwrap(), report);

        // A later pass is named; the first is left out, as before loops.
        let Message::PauseReport(mut later) = report else {
            unreachable!("built above")
        };
        later.pass = crate::Pass(2);
        let line = r#"{"kind":"pause_report","instance":7,"activity":3,"by":"ana","at_ms":5,"outcome":{"outcome":"resumed","state":"running","moved_ms":40},"pass":2}"#;
        let later = Message::PauseReport(later);
        assert_eq!(serde_json::to_string(&later).unwrap(), line);
        assert_eq!(serde_json::from_str::<Message>(line).unwrap(), later);
    }
}
