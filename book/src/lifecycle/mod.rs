//! The lifecycles of what the controller keeps: an activity (as the controller sees it), a
//! partition and an instance. Each is one enum with one event enum and ONE transition
//! function; every change of state in the book goes through it, so that what can happen to a
//! thing is written in one place (and in `docs/lifecycles.md`, from the tables here).
//!
//! The lifecycle is the stored state: `ActivityView` and `PartitionView` keep theirs in a
//! private field that only its `step` (the transition function applied in place) changes, and
//! `Instance` keeps its [`instance::InstanceState`]. The JSON is what it always was: the views
//! are stored through repr types (`crate::model`) that spell the state out as the old fields.
//!
//! Each lifecycle has a `const` table of its allowed transitions (from, event, to, cause), by
//! kind: an enum of its kinds of state and one of its kinds of event ([`Kind`], with the word
//! each goes by); the transition function refuses what the table does not list. Under
//! `cfg(test)` each transition taken is recorded (`coverage`), and a test fails when an allowed
//! transition is never exercised by the scenario tests.

pub mod activity;
pub mod instance;
pub mod partition;
pub mod tables;

#[cfg(test)]
pub(crate) mod coverage;

pub use activity::{
    ActivityEvent, ActivityEventKind, ActivityKind, ActivityLifecycle, Grace, PausedBy,
    Replacement, Undecided,
};
pub use instance::{InstanceEvent, InstanceEventKind};
pub use partition::{PartitionEvent, PartitionEventKind, PartitionKind, PartitionLifecycle};

/// A transition its lifecycle does not allow: nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, thiserror::Error)]
#[error("{lifecycle}: no transition from {from} on {event}")]
pub struct Refusal {
    /// Which lifecycle (`activity`, `partition`, `instance`).
    pub lifecycle: &'static str,
    /// The kind of state it was in.
    pub from: &'static str,
    /// The kind of event.
    pub event: &'static str,
}

/// A kind of state or event, without its data: what a table of transitions speaks of. Its
/// `name` is the word the tables in `docs/lifecycles.md` use.
pub trait Kind: Copy + Eq + std::fmt::Debug {
    /// The word for it.
    fn name(self) -> &'static str;
}

/// Defines a kind enum with the word each variant goes by (`Kind::name`).
macro_rules! kinds {
    ($(#[$meta:meta])* pub enum $kind:ident { $($(#[$vmeta:meta])* $variant:ident => $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $kind {
            $($(#[$vmeta])* $variant,)*
        }

        impl $kind {
            /// The word for it, as the tables say it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($kind::$variant => $name,)*
                }
            }
        }

        impl $crate::lifecycle::Kind for $kind {
            fn name(self) -> &'static str {
                $kind::name(self)
            }
        }
    };
}
pub(crate) use kinds;

/// One allowed transition: from a kind of state `S`, on a kind of event `E`, to a kind of
/// state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition<S, E> {
    /// The kind of state before.
    pub from: S,
    /// The kind of event.
    pub event: E,
    /// The kind of state after.
    pub to: S,
    /// What causes it, in words (for `docs/lifecycles.md`).
    pub cause: &'static str,
}

impl<S: Kind, E: Kind> Transition<S, E> {
    /// The transition as words: (from, event, to).
    pub fn names(&self) -> (&'static str, &'static str, &'static str) {
        (self.from.name(), self.event.name(), self.to.name())
    }
}

/// Checks `(from, event, to)` against `table`; records it when allowed (under `cfg(test)`).
pub(crate) fn check<S: Kind, E: Kind>(
    lifecycle: &'static str,
    table: &[Transition<S, E>],
    (from, event, to): (S, E, S),
) -> Result<(), Refusal> {
    if table
        .iter()
        .any(|t| t.from == from && t.event == event && t.to == to)
    {
        #[cfg(test)]
        coverage::record(lifecycle, from.name(), event.name(), to.name());
        Ok(())
    } else {
        Err(Refusal {
            lifecycle,
            from: from.name(),
            event: event.name(),
        })
    }
}
