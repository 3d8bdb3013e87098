//! What happens to an activity as the controller sees it: the events of its lifecycle's
//! table, apart from the states and transitions they move.

use mobiwf_proto::{ActivityId, ActivityState};

use super::super::kinds;
use super::{Grace, PausedBy};

/// What happens to an activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActivityEvent {
    /// A contingency activity was placed on a node (the caller sets where).
    Placed,
    /// Its node says it is in `state` (`by_operator`: with the operator's cancel as reason).
    NodeSays {
        /// What the node says.
        state: ActivityState,
        /// The node's reason is the operator's cancel.
        by_operator: bool,
    },
    /// The controller decided it ended (`Failed` or `Cancelled`).
    Decided(ActivityState),
    /// An operator cancelled its instance.
    OperatorCancel,
    /// A successor's node said it waited too long for it.
    SaidOverdue(Grace),
    /// The overdue grace ran out (the controller withdraws it next).
    GraceOver,
    /// Its contingency activity was placed in its place.
    StandInPlaced(ActivityId),
    /// Its contingency activity was in use already.
    StandInInUse,
    /// An operator reruns it (failed), or the failed activity it was cancelled because of.
    Rerun,
    /// Its node says it was paused, in `state` (ready or running).
    Paused {
        /// Who and when.
        pause: PausedBy,
        /// The state it was paused in.
        state: ActivityState,
    },
    /// Its node says it was resumed, in this state (ready or running).
    Resumed(ActivityState),
    /// Its node says it is in a later pass of a loop's body: it waits again.
    NewPass,
}

kinds! {
    /// The kind of an [`ActivityEvent`], without its data.
    pub enum ActivityEventKind {
        /// [`ActivityEvent::Placed`].
        Placed => "placed",
        /// [`ActivityEvent::NodeSays`].
        NodeSays => "node_says",
        /// [`ActivityEvent::Decided`].
        Decided => "decided",
        /// [`ActivityEvent::OperatorCancel`].
        OperatorCancel => "operator_cancel",
        /// [`ActivityEvent::SaidOverdue`].
        SaidOverdue => "said_overdue",
        /// [`ActivityEvent::GraceOver`].
        GraceOver => "grace_over",
        /// [`ActivityEvent::StandInPlaced`].
        StandInPlaced => "stand_in_placed",
        /// [`ActivityEvent::StandInInUse`].
        StandInInUse => "stand_in_in_use",
        /// [`ActivityEvent::Rerun`].
        Rerun => "rerun",
        /// [`ActivityEvent::Paused`].
        Paused => "paused",
        /// [`ActivityEvent::Resumed`].
        Resumed => "resumed",
        /// [`ActivityEvent::NewPass`].
        NewPass => "new_pass",
    }
}

impl ActivityEvent {
    /// The kind of event, as the tables name it.
    pub fn kind(&self) -> ActivityEventKind {
        use ActivityEventKind as K;
        match self {
            ActivityEvent::Placed => K::Placed,
            ActivityEvent::NodeSays { .. } => K::NodeSays,
            ActivityEvent::Decided(_) => K::Decided,
            ActivityEvent::OperatorCancel => K::OperatorCancel,
            ActivityEvent::SaidOverdue(_) => K::SaidOverdue,
            ActivityEvent::GraceOver => K::GraceOver,
            ActivityEvent::StandInPlaced(_) => K::StandInPlaced,
            ActivityEvent::StandInInUse => K::StandInInUse,
            ActivityEvent::Rerun => K::Rerun,
            ActivityEvent::Paused { .. } => K::Paused,
            ActivityEvent::Resumed(_) => K::Resumed,
            ActivityEvent::NewPass => K::NewPass,
        }
    }
}
