//! The apply-once rule, pure: given what the receiver knows of a sender's messages (its floor,
//! the ids applied earlier in this group) and one message's id and `answered_below`, whether
//! the floor rises and what the message is: new, a duplicate, too far ahead, or a question
//! only the message's own stored record answers. No store inside: the daemons' shell
//! (`mobiwf_runtime::daemon`, its `seen` module) reads the floor and the record and writes what
//! the rule decided, and the simulator (`mobiwf-sim`) drives the same rule on its own disk.
//!
//! Why the rule holds (what the sender's outbox guarantees) is the shell's module doc.

use std::collections::{BTreeSet, HashMap};

use mobiwf_proto::{MessageId, NodeId};

/// How far above a sender's floor a message may be numbered and still be taken; the keys kept
/// per sender and incarnation are fewer. The numbers count all the sender's messages (to every
/// receiver), so this is large; reaching it means one message of the sender's to this daemon
/// stayed unanswered while it sent a million others.
pub const MAX_SEEN_ABOVE_FLOOR: u64 = 1_000_000;

/// What to make of an inbound message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not applied before: apply it.
    New,
    /// Applied (or answered) before: acknowledge it without applying it.
    Duplicate,
    /// Too far above the floor: leave it unanswered, the sender tries again.
    TooFarAhead,
}

/// A sender's floor moving up: every message of it numbered in `[from, to)` is known answered,
/// so the records of those numbers can go, from the batch that records the new floor on (a
/// shell may delete a bounded number per batch and the rest later: a record below the floor
/// is never looked at again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raise {
    /// The floor before (the records below it are gone already, or left by the shell for
    /// later).
    pub from: u64,
    /// The floor after.
    pub to: u64,
    /// The ids applied earlier in this group below `to`: their records, staged in this
    /// group's batch, go too.
    pub forgotten: Vec<MessageId>,
}

/// What the floor and this group say of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Decided: below the floor, or applied earlier in this group.
    Decided(Verdict),
    /// At or above the floor and not applied in this group: its stored record decides.
    ByRecord(ByRecord),
}

/// A message the stored record of its id decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByRecord {
    /// It is [`MAX_SEEN_ABOVE_FLOOR`] or more above the floor.
    too_far: bool,
}

impl ByRecord {
    /// The verdict once it is known whether the store records the id as applied (`stored`):
    /// a recorded id is a duplicate; one not recorded is new unless it is too far ahead.
    pub fn verdict(self, stored: bool) -> Verdict {
        if stored && !broken::lets_duplicates_through() {
            Verdict::Duplicate
        } else if self.too_far {
            Verdict::TooFarAhead
        } else {
            Verdict::New
        }
    }
}

/// The guard broken on purpose, to show that the simulator catches a broken guard (its test
/// `sim/tests/broken_guard.rs`): with the `broken-dedup` feature, a switch (off unless a test
/// turns it on) makes a message applied before new again (below the floor, applied earlier in
/// the group, or recorded). Without the feature there is no switch, and the guard always
/// holds.
pub mod broken {
    #[cfg(feature = "broken-dedup")]
    static LET_THROUGH: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    /// From now on, in this whole process, a message recorded as applied is applied again
    /// (`on`), or the guard holds again.
    #[cfg(feature = "broken-dedup")]
    pub fn let_duplicates_through(on: bool) {
        LET_THROUGH.store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the guard is broken now.
    pub(crate) fn lets_duplicates_through() -> bool {
        #[cfg(feature = "broken-dedup")]
        return LET_THROUGH.load(std::sync::atomic::Ordering::SeqCst);
        #[cfg(not(feature = "broken-dedup"))]
        false
    }
}

/// What the rule makes of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The sender's floor raised by what the message says, if it was.
    pub raise: Option<Raise>,
    /// What the message is, or that its record decides.
    pub look: Look,
}

/// One sender: its peer id and the incarnation of its store (a new store numbers afresh).
type Sender = (NodeId, u64);

fn sender(id: &MessageId) -> Sender {
    (id.origin.clone(), id.incarnation)
}

/// What one group knows of the applied ids beyond the store: the floors it read or raised,
/// and the ids it applied (both written with it).
#[derive(Debug, Default)]
pub struct Ledger {
    applied: BTreeSet<MessageId>,
    floors: HashMap<Sender, u64>,
}

impl Ledger {
    /// The floor of `id`'s sender as this group knows it (read or raised in it); `None`: the
    /// shell reads the stored one and gives it to [`Ledger::judge`].
    pub fn floor(&self, id: &MessageId) -> Option<u64> {
        self.floors.get(&sender(id)).copied()
    }

    /// Judges `id`, its sender's floor being `floor` ([`Ledger::floor`], or the stored one
    /// when this group does not know it), after raising that floor to what the sender says
    /// was answered: `answered_below`, never past the message's own number (it is not
    /// answered yet), never down.
    pub fn judge(&mut self, id: &MessageId, floor: u64, answered_below: u64) -> Judgement {
        let wanted = answered_below.min(id.seq);
        let raise = (wanted > floor).then(|| self.raise(id, floor, wanted));
        let floor = floor.max(wanted);
        self.floors.insert(sender(id), floor);
        let seen = id.seq < floor || self.applied.contains(id);
        let look = if seen && !broken::lets_duplicates_through() {
            Look::Decided(Verdict::Duplicate)
        } else {
            Look::ByRecord(ByRecord {
                too_far: id.seq - floor >= MAX_SEEN_ABOVE_FLOOR,
            })
        };
        Judgement { raise, look }
    }

    /// Records `id` as applied in this group (the shell stages its record in the batch).
    pub fn applied(&mut self, id: MessageId) {
        self.applied.insert(id);
    }

    /// The floor of `id`'s sender goes from `from` up to `to`: the ids of that sender applied
    /// in this group below `to` are forgotten.
    fn raise(&mut self, id: &MessageId, from: u64, to: u64) -> Raise {
        let at = |seq| MessageId { seq, ..id.clone() };
        let forgotten: Vec<MessageId> = self.applied.range(at(0)..at(to)).cloned().collect();
        for gone in &forgotten {
            self.applied.remove(gone);
        }
        Raise {
            from,
            to,
            forgotten,
        }
    }
}

/// Why a message is refused before its id is judged: its id names another sender than the
/// peer it came from (`from`, as text), so that no peer can spend another's numbers.
pub fn foreign_id(id: &MessageId, from: &str) -> Option<String> {
    (id.origin.as_str() != from).then(|| {
        format!(
            "the message id names {} as its sender but it came from {from}",
            id.origin
        )
    })
}

#[cfg(test)]
mod tests;
