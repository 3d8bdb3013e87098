//! Passes of a loop (the SERIAL_NO of *A lightweight workflow engine based on a relational
//! structure* (He, Li, Jiao, Liu), §3.2.3): each time a loop's body runs again its activities
//! take the next serial number, and every word about an activity names the pass it is about,
//! so that one from an earlier pass never counts for a later one. Messages and records from
//! before loops carry none: they are about the first pass.

use serde::{Deserialize, Serialize};

use crate::data::{Datum, FileBody};
use crate::{ActivityId, InstanceId, Location};

/// The serial number of an activity's pass: 1 the first (what a word without one is about).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pass(pub u32);

impl Pass {
    /// The first pass, which every activity runs.
    pub const FIRST: Pass = Pass(1);

    /// True for the first pass (left out of messages and records, as before loops).
    pub fn is_first(&self) -> bool {
        *self == Pass::FIRST
    }

    /// The pass after this one.
    pub fn next(self) -> Pass {
        Pass(self.0.saturating_add(1))
    }

    /// How people read activity `activity` in this pass: `3` in the first, `3#2` after.
    pub fn of(self, activity: ActivityId) -> String {
        if self.is_first() {
            activity.to_string()
        } else {
            format!("{activity}#{}", self.0)
        }
    }
}

impl Default for Pass {
    fn default() -> Pass {
        Pass::FIRST
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Node → node: the loop that activity `by` ends runs again: `activities` (its body, or the
/// part of it the receiver holds) start pass `pass`, each waiting again from the start; the
/// receiver forgets what it heard of their earlier passes ([`crate::Message::NewPass`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPass {
    /// The instance.
    pub instance: InstanceId,
    /// The loop's end, whose flag ran the loop again.
    pub by: ActivityId,
    /// The pass that starts.
    pub pass: Pass,
    /// The activities of the loop's body.
    pub activities: Vec<ActivityId>,
    /// The instance data the receiver's activities of the body read, as the sender knows it
    /// (the `carries` of the loop's members say which names).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<Datum>,
    /// The contents of the files among `data` that travel inline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileBody>,
    /// Where the files among `data` not carried inline are fetched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<Location>,
}
