//! Loops (the SERIAL_NO of *A lightweight workflow engine based on a relational structure* (He,
//! Li, Jiao, Liu), §3.2.3 and §5): a routing edge that goes back. The activity that ends a loop
//! declares `<loop to="T" while="FLAG" max="N"/>`; when it succeeds with that completion flag
//! and fewer than N passes ran, the loop's body (the activities on the paths from T to it)
//! runs again as a new pass, each of its activities under the next serial number.

use super::common::ActivityId;

/// An activity's `<loop>`: the back edge from it (the loop's end) to `to` (its head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    /// `@to`: the loop's head, the first activity of each pass.
    pub to: ActivityId,
    /// `@while`: the completion flag that starts another pass.
    pub while_flag: String,
    /// `@max`: how many passes may run, the first one included; 2 to
    /// [`crate::limits::MAX_LOOP_PASSES`].
    pub max: u32,
    /// `<member>`s (partition documents only, derived): the loop's body, every activity on a
    /// path from `to` to the loop's end (both included), each with where its partner is
    /// reached, in document order of the definition. Empty in a definition.
    pub body: Vec<LoopMember>,
}

/// An activity of a loop's body, as the partition document of its end names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopMember {
    /// `@id`: the activity.
    pub id: ActivityId,
    /// `@ip`: where the partner that runs it is reached (as an adjacent's `ip`).
    pub location: String,
    /// `@carries` (derived): the instance data names the message that starts its next pass
    /// carries to its partner (what it or an activity after it reads that the loop's end or
    /// an activity before it writes). Empty: no data.
    pub carries: Vec<String>,
}

impl Loop {
    /// The ids of the body's activities, in the document's order.
    pub fn body_ids(&self) -> impl Iterator<Item = ActivityId> + '_ {
        self.body.iter().map(|m| m.id)
    }
}
