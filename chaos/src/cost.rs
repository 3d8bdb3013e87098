//! What the faults cost the work, pure: the end-to-end time (submitted to final, as the
//! controller records both) of the instances that succeeded, grouped by the faults that were
//! on while each ran (none; hostile peers at a daemon's door and nothing else; another fault,
//! which costs seconds by itself), so that the table shows a flood's cost beside a quiet
//! mesh's times.

use std::collections::BTreeMap;

/// Milliseconds since the epoch (the controller's and the nemesis's clock, one machine's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EpochMs(pub u64);

/// What was going on while an instance ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// No fault.
    Quiet,
    /// Hostile peers at a daemon's door (flood, slow handshakes, slow-loris), no other fault.
    Hostile,
    /// Another fault (a kill, a stall, a cut, a move), hostile peers or not.
    Other,
}

impl Phase {
    /// Every phase, in the order the report lists them.
    pub const ALL: [Phase; 3] = [Phase::Quiet, Phase::Hostile, Phase::Other];

    /// How the report names it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Quiet => "no fault",
            Phase::Hostile => "hostile peers only",
            Phase::Other => "other faults",
        }
    }
}

/// A fault, from its strike to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// A hostile fault or another.
    pub phase: Phase,
    /// The strike.
    pub from: EpochMs,
    /// The end.
    pub to: EpochMs,
}

/// An instance that succeeded: when it was submitted and when it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// Submitted.
    pub submitted: EpochMs,
    /// Final.
    pub finished: EpochMs,
}

/// The end-to-end times of the instances submitted in one phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    /// How many.
    pub count: usize,
    /// The median, in ms.
    pub p50_ms: u64,
    /// The 99th percentile, in ms (nearest rank).
    pub p99_ms: u64,
}

/// Connections hostile peers opened, and how many of them the daemon closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Connections {
    /// Opened (TCP accepted by the daemon's kernel).
    pub opened: usize,
    /// Closed by the daemon (refused at its door, or its handshake deadline passed).
    pub closed: usize,
}

impl std::ops::AddAssign for Connections {
    fn add_assign(&mut self, other: Connections) {
        self.opened += other.opened;
        self.closed += other.closed;
    }
}

/// What was going on while `e` ran: the worst phase of the faults it overlapped.
pub fn phase_over(spans: &[Span], e: &Ended) -> Phase {
    spans
        .iter()
        .filter(|s| s.from <= e.finished && e.submitted <= s.to)
        .map(|s| s.phase)
        .max()
        .unwrap_or(Phase::Quiet)
}

/// The nearest-rank `pct` percentile of sorted `ms`.
fn percentile(sorted: &[u64], pct: usize) -> u64 {
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(0)
}

/// The end-to-end times by what was going on while each instance ran (phases with none are
/// absent).
pub fn latencies(ended: &[Ended], spans: &[Span]) -> BTreeMap<Phase, Latency> {
    let mut by: BTreeMap<Phase, Vec<u64>> = BTreeMap::new();
    for e in ended {
        let took = e.finished.0.saturating_sub(e.submitted.0);
        by.entry(phase_over(spans, e)).or_default().push(took);
    }
    by.into_iter()
        .map(|(phase, mut ms)| {
            ms.sort_unstable();
            let latency = Latency {
                count: ms.len(),
                p50_ms: percentile(&ms, 50),
                p99_ms: percentile(&ms, 99),
            };
            (phase, latency)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(submitted: u64, took: u64) -> Ended {
        Ended {
            submitted: EpochMs(submitted),
            finished: EpochMs(submitted + took),
        }
    }

    #[test]
    fn each_instance_counts_in_the_worst_phase_it_ran_through() {
        let spans = [
            Span {
                phase: Phase::Hostile,
                from: EpochMs(100),
                to: EpochMs(200),
            },
            Span {
                phase: Phase::Other,
                from: EpochMs(300),
                to: EpochMs(400),
            },
        ];
        let all = [
            ended(50, 10),
            ended(60, 30),
            ended(401, 20),
            ended(90, 50),
            ended(150, 40),
            ended(200, 90),
            ended(150, 200),
            ended(350, 5),
        ];
        let l = latencies(&all, &spans);
        assert_eq!(
            l[&Phase::Quiet],
            Latency {
                count: 3,
                p50_ms: 20,
                p99_ms: 30
            }
        );
        assert_eq!(
            l[&Phase::Hostile],
            Latency {
                count: 3,
                p50_ms: 50,
                p99_ms: 90
            }
        );
        // Through a hostile fault into another, or in another alone.
        assert_eq!(l[&Phase::Other].count, 2);
    }

    #[test]
    fn the_percentiles_are_nearest_rank() {
        let ms: Vec<u64> = (1..=200).collect();
        assert_eq!(percentile(&ms, 50), 100);
        assert_eq!(percentile(&ms, 99), 198);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
    }
}
