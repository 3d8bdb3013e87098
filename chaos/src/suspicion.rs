//! The checker's rule for the failure detector, pure: the controller gives up a node's
//! partitions ("partner P stopped answering") only when that node was struck. Every
//! suspicion must fall within a window of a fault of that node (from its strike to its end,
//! plus a grace of the suspect-after period and a few probe rounds: a probe sent before the
//! fault may hold the node's silence that long); a suspicion with no such fault is a false one
//! (a node that was up, reachable and answering had its work given up).

use std::collections::BTreeSet;

/// The controller gave up a node's partitions, at a time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Suspicion {
    /// The node's name.
    pub partner: String,
    /// When (ms since the epoch, the controller's history's `at_ms`).
    pub at_ms: u64,
}

/// A node was struck (killed, stalled, cut off, moved) from one time to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The node's name.
    pub partner: String,
    /// The strike (ms since the epoch).
    pub from_ms: u64,
    /// The fault's end: the node started again, continued, its link restored.
    pub to_ms: u64,
}

/// The suspicion a history event records, if it is one: `partition N given up: partner P
/// stopped answering (...)` by partner `P` at `at_ms`.
pub fn suspicion_in(what: &str, partner: Option<&str>, at_ms: u64) -> Option<Suspicion> {
    let (_, rest) = what.split_once("given up: partner ")?;
    let (named, _) = rest.split_once(" stopped answering")?;
    let partner = partner.unwrap_or(named);
    Some(Suspicion {
        partner: partner.to_owned(),
        at_ms,
    })
}

/// The violations: each suspicion (once per node and time) no fault of its node explains.
pub fn false_suspicions(
    suspicions: &[Suspicion],
    windows: &[Window],
    grace_ms: u64,
) -> Vec<String> {
    let distinct: BTreeSet<&Suspicion> = suspicions.iter().collect();
    distinct
        .into_iter()
        .filter(|s| {
            !windows.iter().any(|w| {
                w.partner == s.partner && w.from_ms <= s.at_ms && s.at_ms <= w.to_ms + grace_ms
            })
        })
        .map(|s| {
            format!(
                "the controller gave up {}'s partitions at {} ms since the epoch, and no fault \
                 struck {} then: a false suspicion",
                s.partner, s.at_ms, s.partner
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(partner: &str, at_ms: u64) -> Suspicion {
        Suspicion {
            partner: partner.to_owned(),
            at_ms,
        }
    }

    #[test]
    fn a_history_event_names_its_suspicion() {
        let what = "partition 2 given up: partner P2 stopped answering (no answer to probes for 10.7 s: no answer)";
        assert_eq!(suspicion_in(what, Some("P2"), 7), Some(s("P2", 7)));
        assert_eq!(suspicion_in(what, None, 7), Some(s("P2", 7)));
        assert_eq!(
            suspicion_in("c2 (2) failed: partner P2 stopped answering", Some("P2"), 7),
            None
        );
        assert_eq!(suspicion_in("partition 2 deployed", Some("P2"), 7), None);
    }

    #[test]
    fn a_suspicion_within_a_fault_of_its_node_is_explained_and_any_other_is_false() {
        let windows = [Window {
            partner: "P2".to_owned(),
            from_ms: 1_000,
            to_ms: 5_000,
        }];
        let explained = [s("P2", 1_000), s("P2", 4_000), s("P2", 7_000)];
        assert!(false_suspicions(&explained, &windows, 2_000).is_empty());
        let wrong = [s("P1", 4_000), s("P2", 7_001), s("P2", 999), s("P1", 4_000)];
        let v = false_suspicions(&wrong, &windows, 2_000);
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v[0].contains("gave up P1's partitions at 4000 ms"), "{v:?}");
    }
}
