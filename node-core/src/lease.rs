//! The lease a task class's grant fences its holder with, counted as the node counts it, pure:
//! the node renews it on round trips with its controller only, up to the latest time it sent
//! something the controller is known to have received (the request a grant answers; an answer
//! to a probe, once a later probe echoes its number), plus the lease, all on the node's own
//! clock. Hearing the controller alone renews nothing: a node that hears it while its own
//! answers are lost does not keep running after the controller suspected it.
//!
//! The node's shell (`mobiwf-node`, `src/lease.rs`) keeps the lease files of its held commands
//! with these decisions, and the simulator (`mobiwf-sim`) keeps its simulated ones with them.

use std::collections::BTreeMap;

use mobiwf_proto::Probe;

/// How many answers to probes whose echo has not come yet are remembered (the latest).
pub const ANSWERS_KEPT: usize = 64;

/// The node's round trips with its controller: the latest time it sent something the
/// controller is known to have received, and when it answered each of the controller's latest
/// probes whose echo has not come yet. Nothing since the start is 0: it is kept in memory
/// only, and a restarted node counts from its grants' requests until a round trip.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundTrips {
    /// The latest time (ms since the epoch) the node sent something the controller is known
    /// to have received (0: nothing since the start).
    confirmed_ms: u64,
    /// When the node answered each probe, by the probe's number.
    answered: BTreeMap<u64, u64>,
}

impl RoundTrips {
    /// No round trip yet.
    pub fn new() -> RoundTrips {
        RoundTrips::default()
    }

    /// The controller is known to have received what the node sent at `sent_ms` (ms since the
    /// epoch, the node's clock): never moves back.
    pub fn confirm(&mut self, sent_ms: u64) {
        self.confirmed_ms = self.confirmed_ms.max(sent_ms);
    }

    /// The latest time the node sent something the controller is known to have received (0:
    /// nothing since the start).
    pub fn confirmed_ms(&self) -> u64 {
        self.confirmed_ms
    }

    /// The controller's probe came at `now_ms` and is answered: its number is noted with that
    /// time, and the answer its echo names, if noted, is confirmed (sent at its noted time).
    /// An echo of a number never noted (another controller's, or one forgotten) confirms
    /// nothing; a probe without numbers renews nothing.
    pub fn probed(&mut self, probe: Probe, now_ms: u64) {
        if probe.echo != 0
            && let Some(&sent) = self.answered.get(&probe.echo)
        {
            self.confirm(sent);
            // Those numbered up to it can only confirm earlier times now.
            self.answered.retain(|seq, _| *seq > probe.echo);
        }
        if probe.seq != 0 {
            self.answered.insert(probe.seq, now_ms);
            while self.answered.len() > ANSWERS_KEPT {
                self.answered.pop_first();
            }
        }
    }

    /// Until when (ms since the epoch) a hold of `lease_ms` whose request was asked at
    /// `asked_ms` (0: not known) may run with the round trips so far.
    pub fn lease_until(&self, asked_ms: u64, lease_ms: u64) -> u64 {
        lease_until(self.confirmed_ms, asked_ms, lease_ms)
    }

    /// Whether a person's activity holding a grant of `lease_ms` asked at `asked_ms` is out at
    /// `now_ms`: no round trip within its lease.
    pub fn person_out(&self, asked_ms: u64, lease_ms: u64, now_ms: u64) -> bool {
        self.lease_until(asked_ms, lease_ms) < now_ms
    }
}

/// Until when a hold of `lease_ms` whose request was asked at `asked_ms` may run, with the
/// round trips confirmed up to `confirmed_ms`: the later of the two, plus the lease.
pub fn lease_until(confirmed_ms: u64, asked_ms: u64, lease_ms: u64) -> u64 {
    confirmed_ms.max(asked_ms).saturating_add(lease_ms)
}

/// What a held command's lease file is made to hold when the node starts holding it (at its
/// start, or watching it again after a restart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtHold {
    /// It keeps the time it holds: later than the round trips give now (written before a
    /// restart: never moved back), or already passed (the watchdog is ending the command:
    /// never made to run again).
    Keep(u64),
    /// It is written with this time.
    Write(u64),
}

impl AtHold {
    /// The time the lease file holds from now on.
    pub fn until_ms(self) -> u64 {
        match self {
            AtHold::Keep(ms) | AtHold::Write(ms) => ms,
        }
    }
}

/// A lease file that holds `written` (none: no file yet) is held at `now_ms` with `due_ms` the
/// time the round trips give now ([`RoundTrips::lease_until`]).
pub fn at_hold(written: Option<u64>, due_ms: u64, now_ms: u64) -> AtHold {
    match written {
        Some(w) if w >= due_ms || w < now_ms => AtHold::Keep(w),
        _ => AtHold::Write(due_ms),
    }
}

/// A kept-up lease file that holds `until_ms`, at `now_ms`, with `due_ms` the time the round
/// trips give now: the time to write, when it moves (only forward, and never once it passed:
/// the watchdog is ending the command then).
pub fn renewed(until_ms: u64, due_ms: u64, now_ms: u64) -> Option<u64> {
    (due_ms > until_ms && now_ms <= until_ms).then_some(due_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_heard_renews_nothing_until_a_later_one_echoes_its_answer() {
        let mut trips = RoundTrips::new();
        // Probes come; their answers never reach the controller: no echo, nothing confirmed.
        for seq in 1..=5 {
            trips.probed(Probe { seq, echo: 0 }, 1_000 * seq);
        }
        assert_eq!(trips.confirmed_ms(), 0);
        // An echo of an answer the node never gave (another controller's number): nothing.
        trips.probed(Probe { seq: 6, echo: 99 }, 6_000);
        assert_eq!(trips.confirmed_ms(), 0);
        // The controller received the answer to probe 4, sent at 4000 on the node's clock.
        trips.probed(Probe { seq: 7, echo: 4 }, 7_000);
        assert_eq!(trips.confirmed_ms(), 4_000);
        // An older echo never moves it back (nor can it: those up to 4 are forgotten); a
        // probe without numbers renews nothing.
        trips.probed(Probe { seq: 8, echo: 2 }, 8_000);
        trips.probed(Probe::default(), 9_000);
        assert_eq!(trips.confirmed_ms(), 4_000);
        trips.probed(Probe { seq: 10, echo: 8 }, 10_000);
        assert_eq!(trips.confirmed_ms(), 8_000);
        trips.confirm(7_000);
        assert_eq!(trips.confirmed_ms(), 8_000, "never back");
    }

    #[test]
    fn only_the_latest_answers_are_remembered() {
        let mut trips = RoundTrips::new();
        let last = ANSWERS_KEPT as u64 + 10;
        for seq in 1..=last {
            trips.probed(Probe { seq, echo: 0 }, seq * 10);
        }
        // The first ones are forgotten: their echo confirms nothing.
        trips.probed(
            Probe {
                seq: last + 1,
                echo: 1,
            },
            0,
        );
        assert_eq!(trips.confirmed_ms(), 0);
        trips.probed(
            Probe {
                seq: last + 2,
                echo: last,
            },
            0,
        );
        assert_eq!(trips.confirmed_ms(), last * 10);
    }

    #[test]
    fn a_lease_counts_from_the_later_of_its_request_and_the_last_round_trip() {
        let mut trips = RoundTrips::new();
        assert_eq!(trips.lease_until(20_000, 500), 20_500);
        assert_eq!(trips.lease_until(0, 500), 500, "nothing known: long passed");
        trips.confirm(21_000);
        assert_eq!(trips.lease_until(20_000, 500), 21_500);
        assert_eq!(trips.lease_until(22_000, 500), 22_500);
        assert_eq!(lease_until(u64::MAX, 0, 500), u64::MAX);
        assert!(!trips.person_out(20_000, 500, 21_500));
        assert!(trips.person_out(20_000, 500, 21_501));
    }

    #[test]
    fn a_lease_file_moves_only_forward_and_never_once_it_passed() {
        // At a hold: no file, or one behind and not passed, is written; one ahead, or passed,
        // is kept.
        assert_eq!(at_hold(None, 10_500, 10_000), AtHold::Write(10_500));
        assert_eq!(at_hold(Some(10_200), 10_500, 10_000), AtHold::Write(10_500));
        assert_eq!(at_hold(Some(11_500), 10_500, 11_000), AtHold::Keep(11_500));
        assert_eq!(at_hold(Some(20_500), 21_050, 20_600), AtHold::Keep(20_500));
        assert_eq!(at_hold(Some(20_500), 21_050, 20_500), AtHold::Write(21_050));
        assert_eq!(AtHold::Keep(3).until_ms(), 3);
        // Kept up: forward only, and not once it passed.
        assert_eq!(renewed(10_500, 10_500, 10_100), None);
        assert_eq!(renewed(10_500, 11_500, 10_200), Some(11_500));
        assert_eq!(renewed(10_500, 10_400, 10_200), None);
        assert_eq!(renewed(20_500, 21_050, 20_500), Some(21_050));
        assert_eq!(renewed(20_500, 21_050, 20_501), None);
    }
}
