//! The lifecycles of what the controller keeps: an activity (as the controller sees it), a
//! partition and an instance. Each is one enum with one event enum and ONE transition
//! function; every change of state in the book goes through it, so that what can happen to a
//! thing is written in one place (and in `docs/lifecycles.md`, from the tables here).
//!
//! The stored and shown structs (`ActivityView`, `PartitionView`, `Instance`) keep their
//! fields, so the JSON is what it always was: a lifecycle value is derived from the fields
//! (`lifecycle()`) and written back to them by the transition (`step`).
//!
//! Each lifecycle has a `const` table of its allowed transitions (from, event, to, cause), by
//! kind; the transition function refuses what the table does not list. Under `cfg(test)` each
//! transition taken is recorded (`coverage`), and a test fails when an allowed transition is
//! never exercised by the scenario tests.

pub mod activity;
pub mod instance;
pub mod partition;
pub mod tables;

#[cfg(test)]
pub(crate) mod coverage;

pub use activity::{ActivityEvent, ActivityLifecycle, Grace, Replacement, Undecided};
pub use instance::InstanceEvent;
pub use partition::{PartitionEvent, PartitionLifecycle};

/// A transition its lifecycle does not allow: nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{lifecycle}: no transition from {from} on {event}")]
pub struct Refusal {
    /// Which lifecycle (`activity`, `partition`, `instance`).
    pub lifecycle: &'static str,
    /// The kind of state it was in.
    pub from: &'static str,
    /// The kind of event.
    pub event: &'static str,
}

/// One allowed transition, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The kind of state before.
    pub from: &'static str,
    /// The kind of event.
    pub event: &'static str,
    /// The kind of state after.
    pub to: &'static str,
    /// What causes it, in words (for `docs/lifecycles.md`).
    pub cause: &'static str,
}

/// Checks `(from, event, to)` against `table`; records it when allowed (under `cfg(test)`).
pub(crate) fn check(
    lifecycle: &'static str,
    table: &[Transition],
    (from, event, to): (&'static str, &'static str, &'static str),
) -> Result<(), Refusal> {
    if table
        .iter()
        .any(|t| t.from == from && t.event == event && t.to == to)
    {
        #[cfg(test)]
        coverage::record(lifecycle, from, event, to);
        Ok(())
    } else {
        Err(Refusal {
            lifecycle,
            from,
            event,
        })
    }
}
