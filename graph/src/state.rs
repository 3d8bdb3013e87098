//! The states a graph colours, with the one fixed legend both renderers use: the words are
//! those of `status` (an activity's task state, or `paused` while its node holds it so), so
//! that a graph and a table of the same instance say the same.

use mobiwf_book::ActivityView;
use mobiwf_proto::ActivityState;

/// An activity's state as the graph shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shown {
    /// Not started; its preconditions or dependency rule do not hold yet (or a contingency
    /// activity nothing called for).
    NotReady,
    /// Its preconditions hold; it waits for synchronization.
    Synchronizing,
    /// Nothing holds it back: starting, or offered to people.
    Ready,
    /// Its command runs, or a person holds its work item.
    Running,
    /// Held where it was by an operator or its item's holder, until resumed.
    Paused,
    /// Finished with success.
    Succeeded,
    /// Finished without success.
    Failed,
    /// Will never run: a predecessor blocks it, or an operator cancelled it.
    Cancelled,
    /// Will never run: it is on a path not taken.
    Skipped,
}

/// How one state is drawn: fill, border and text colours, and a dashed border.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// The box's fill.
    pub fill: &'static str,
    /// The box's border.
    pub stroke: &'static str,
    /// The text's colour.
    pub text: &'static str,
    /// True for a dashed border (a state off the path the instance took).
    pub dashed: bool,
}

impl Shown {
    /// Every state, in the order the legend lists them (the order an activity passes them).
    pub const ALL: [Shown; 9] = [
        Shown::NotReady,
        Shown::Synchronizing,
        Shown::Ready,
        Shown::Running,
        Shown::Paused,
        Shown::Succeeded,
        Shown::Failed,
        Shown::Cancelled,
        Shown::Skipped,
    ];

    /// What the graph shows of `activity`: `paused` while its node holds it paused, else its
    /// state.
    pub fn of(activity: &ActivityView) -> Shown {
        if activity.paused().is_some() {
            Shown::Paused
        } else {
            Shown::from(activity.state())
        }
    }

    /// The word `status` and the API use (`data-state`, `state-WORD`).
    pub fn word(self) -> &'static str {
        match self {
            Shown::NotReady => ActivityState::NotReady.as_str(),
            Shown::Synchronizing => ActivityState::Synchronizing.as_str(),
            Shown::Ready => ActivityState::Ready.as_str(),
            Shown::Running => ActivityState::Running.as_str(),
            Shown::Paused => "paused",
            Shown::Succeeded => ActivityState::Succeeded.as_str(),
            Shown::Failed => ActivityState::Failed.as_str(),
            Shown::Cancelled => ActivityState::Cancelled.as_str(),
            Shown::Skipped => ActivityState::Skipped.as_str(),
        }
    }

    /// The legend's words for it.
    pub fn label(self) -> &'static str {
        match self {
            Shown::NotReady => "not ready",
            Shown::Synchronizing => "synchronizing",
            Shown::Ready => "ready",
            Shown::Running => "running",
            Shown::Paused => "paused",
            Shown::Succeeded => "succeeded",
            Shown::Failed => "failed",
            Shown::Cancelled => "cancelled",
            Shown::Skipped => "skipped",
        }
    }

    /// True for a state off the path the instance took: its box and edges are greyed.
    pub fn is_greyed(self) -> bool {
        self == Shown::Skipped
    }

    /// Its colours: the legend.
    pub fn style(self) -> Style {
        let (fill, stroke, text) = match self {
            Shown::NotReady => ("#ffffff", "#868e96", "#212529"),
            Shown::Synchronizing => ("#fff3bf", "#f08c00", "#212529"),
            Shown::Ready => ("#d0ebff", "#1c7ed6", "#212529"),
            Shown::Running => ("#4dabf7", "#1864ab", "#000000"),
            Shown::Paused => ("#ffd8a8", "#e8590c", "#212529"),
            Shown::Succeeded => ("#b2f2bb", "#2b8a3e", "#212529"),
            Shown::Failed => ("#ffa8a8", "#c92a2a", "#212529"),
            Shown::Cancelled => ("#ced4da", "#495057", "#212529"),
            Shown::Skipped => ("#f1f3f5", "#adb5bd", "#868e96"),
        };
        Style {
            fill,
            stroke,
            text,
            dashed: self.is_greyed(),
        }
    }
}

impl From<ActivityState> for Shown {
    fn from(state: ActivityState) -> Shown {
        match state {
            ActivityState::NotReady => Shown::NotReady,
            ActivityState::Synchronizing => Shown::Synchronizing,
            ActivityState::Ready => Shown::Ready,
            ActivityState::Running => Shown::Running,
            ActivityState::Succeeded => Shown::Succeeded,
            ActivityState::Failed => Shown::Failed,
            ActivityState::Cancelled => Shown::Cancelled,
            ActivityState::Skipped => Shown::Skipped,
        }
    }
}
