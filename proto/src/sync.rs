//! What the synchronization messages carry (*Synchronization and Disconnected Operation in
//! WorkToDo* (IC-03-006), §4.8): before an activity of a task class is ready, its node asks the
//! controller's synchronization manager for the class (beginSync); the manager grants it when no
//! activity of a conflicting class holds one, or refuses it when the wait ran past the class's
//! bound; the node releases it when the activity is final (endSync). Apart from `wire` so that
//! the one enum of messages only names them.
//!
//! An activity an ordering between definitions names (§6.2) asks the same way before it is
//! ready, with its class if it has one, else with none: the manager then admits it once the
//! tasks it must follow are over.
//!
//! One request is named by (instance, partition, activity, round): the round counts the
//! activity's requests on its node (a rerun, or a loop's next pass, asks again with the next
//! one), so that a release or an answer meant for an earlier request is never taken for a later
//! one. A request also names the activity's pass, as every word about an activity does: the
//! controller may hear of a loop's next pass first from it.
//!
//! A grant fences its holder with a lease, which the node renews only on round trips: up to
//! the time it sent something the controller is known to have received (the request the
//! grant answers; an answer to a [`Probe`], which the controller's next probe echoes), plus
//! the lease, all on the node's own clock. How long after the last such time the holder's
//! command is certainly dead is [`fence_ms`], which both sides count with.

use serde::{Deserialize, Serialize};

use crate::{ActivityId, InstanceId, PartitionId, Pass};
pub use mobiwf_xml_schema::ClassName;

/// One request for a class, as every synchronization message names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SyncTicket {
    /// The instance.
    pub instance: InstanceId,
    /// The partition that holds the activity.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Which of the activity's requests (0 the first).
    pub round: u32,
}

/// Node → controller: this activity's preconditions hold; may it run (beginSync)?
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeginSync {
    /// The request.
    pub ticket: SyncTicket,
    /// The activity's class; none for an activity without one that an ordering between
    /// definitions names (it asks only for its relative order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassName>,
    /// The activity's pass (left out for the first, as before loops).
    #[serde(default, skip_serializing_if = "Pass::is_first")]
    pub pass: Pass,
}

/// Controller → node: the class is held for this request; the activity may run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncGranted {
    /// The request granted.
    pub ticket: SyncTicket,
    /// How long the holder may go without a round trip with the controller before it must
    /// have stopped the activity (ms; see the module's doc): the controller counts a silent
    /// holder's class free only after its failure detector suspected the node, which is later
    /// than this, so that two conflicting activities never run at once, even when the holder
    /// is cut off.
    pub lease_ms: u64,
}

/// Controller → node: the request waited past its class's bound: the activity fails
/// ("synchronization failed") and its contingency applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncRefused {
    /// The request refused.
    pub ticket: SyncTicket,
    /// Why, in words (which class, how long it waited, who held it).
    pub detail: String,
}

/// Node → controller: the activity is final (or will not run): its class is free of it
/// (endSync).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndSync {
    /// The request whose hold (or wait) ends.
    pub ticket: SyncTicket,
}

/// Controller → node: the failure detector's probe (answered at once, never stored). Its
/// numbers let the node renew a held grant's lease on round trips only: the node notes when it
/// answered probe `seq`, and once a later probe's `echo` names it, it knows the controller
/// received that answer, sent at that time on its own clock. Both numbers are left out when 0
/// (a probe of a controller before them: `{"kind":"probe"}`, which renews nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// This probe's number, unique for its controller (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seq: u64,
    /// The number of the latest probe whose answer from this node the controller received
    /// (0: none yet).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub echo: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// How often a held command's watchdog looks at its lease: a tenth of the lease, from 20 ms to
/// half a second.
pub fn watchdog_period_ms(lease_ms: u64) -> u64 {
    (lease_ms / 10).clamp(20, 500)
}

/// How long after the last time from which a holder's lease may count (the last send of its
/// node the controller is known to have received) its command is certainly dead: the lease,
/// one watchdog period until the watchdog's next look, and one more for that look and its
/// kill to take effect. The controller ends the hold of a removed node this long after the
/// removal; a node releases a killed try's class this long after the kill at the latest.
pub fn fence_ms(lease_ms: u64) -> u64 {
    lease_ms.saturating_add(watchdog_period_ms(lease_ms).saturating_mul(2))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::Message;

    #[test]
    fn a_probe_carries_its_numbers_and_one_without_reads_as_before() {
        let probe = Message::Probe(Probe { seq: 12, echo: 11 });
        let line = serde_json::to_string(&probe).unwrap();
        assert_eq!(line, r#"{"kind":"probe","seq":12,"echo":11}"#);
        assert_eq!(serde_json::from_str::<Message>(&line).unwrap(), probe);
        let bare = Message::Probe(Probe::default());
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"kind":"probe"}"#);
        assert_eq!(
            serde_json::from_str::<Message>(r#"{"kind":"probe"}"#).unwrap(),
            bare
        );
    }

    /// A node of the code before the numbers reads a probe as a unit kind: it must take one
    /// that carries them.
    #[test]
    fn a_probe_with_numbers_reads_as_the_earlier_unit_probe() {
        #[derive(Debug, PartialEq, Deserialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum Earlier {
            Probe,
        }
        let line = r#"{"kind":"probe","seq":12,"echo":11}"#;
        assert_eq!(
            serde_json::from_str::<Earlier>(line).unwrap(),
            Earlier::Probe
        );
    }

    #[test]
    fn the_fence_is_the_lease_and_two_watchdog_periods() {
        // (lease, period, fence)
        let cases = [
            (100, 20, 140),
            (1_500, 150, 1_800),
            (5_000, 500, 6_000),
            (60_000, 500, 61_000),
        ];
        for (lease, period, fence) in cases {
            assert_eq!(watchdog_period_ms(lease), period, "{lease}");
            assert_eq!(fence_ms(lease), fence, "{lease}");
        }
        assert_eq!(fence_ms(u64::MAX), u64::MAX);
    }
}
