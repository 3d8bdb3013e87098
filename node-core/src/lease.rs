//! The lease a task class's grant fences its holder with, counted as the node counts it, pure:
//! the node renews it on round trips with its controller only, up to the latest time it sent
//! something the controller is known to have received (the request a grant answers; an answer
//! to a probe, once a later probe echoes its number), plus the lease, all on the node's own
//! clock. Hearing the controller alone renews nothing: a node that hears it while its own
//! answers are lost does not keep running after the controller suspected it.
//!
//! A grant may also come late: it waited in the controller's outbox while the node was cut
//! off, the controller suspected the node and counted the class free, and the link healed.
//! Round trips after the suspicion would make its lease look fresh, so the node also keeps the
//! silences between its round trips ([`RoundTrips::lapsed_at`]): a grant whose lease ran out
//! at any instant since its request was asked is not used (the engine releases it and asks
//! again), as a lease file that passed is never renewed.
//!
//! The node's shell (`mobiwf-node`, `src/lease.rs`) keeps the lease files of its held commands
//! with these decisions, and the simulator (`mobiwf-sim`) keeps its simulated ones with them.

use std::collections::BTreeMap;

use mobiwf_proto::Probe;

/// How many answers to probes whose echo has not come yet are remembered (the latest).
pub const ANSWERS_KEPT: usize = 64;

/// How many silences between round trips are kept, each longer than every later one (a
/// shorter, earlier one can lapse no lease a later, longer one does not): past it, the two
/// oldest are taken as one, longer than both, so a grant is refused sooner, never used later.
pub const SILENCES_KEPT: usize = 64;

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
    /// The silences between round trips, oldest first, each longer than every later one.
    silences: Vec<Silence>,
}

/// A stretch of the node's clock without a round trip: from the latest confirmed send to
/// when the next confirmation came. A lease counted from before it ran out within it when it
/// is longer than the lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Silence {
    /// The latest confirmed send then (ms since the epoch, 0: none since the start).
    from_ms: u64,
    /// When the next confirmation came.
    to_ms: u64,
}

impl Silence {
    fn len(&self) -> u64 {
        self.to_ms.saturating_sub(self.from_ms)
    }
}

impl RoundTrips {
    /// No round trip yet.
    pub fn new() -> RoundTrips {
        RoundTrips::default()
    }

    /// The controller is known to have received what the node sent at `sent_ms` (ms since the
    /// epoch, the node's clock), as the node learned at `now_ms`: never moves back. The silence
    /// up to now is kept.
    pub fn confirm(&mut self, sent_ms: u64, now_ms: u64) {
        if sent_ms <= self.confirmed_ms {
            return;
        }
        let silence = Silence {
            from_ms: self.confirmed_ms,
            to_ms: now_ms.max(sent_ms),
        };
        // An earlier silence no longer than this one lapses no lease this one does not.
        while self
            .silences
            .last()
            .is_some_and(|s| s.len() <= silence.len())
        {
            self.silences.pop();
        }
        self.silences.push(silence);
        if self.silences.len() > SILENCES_KEPT {
            let second = self.silences.remove(1);
            let first = &mut self.silences[0];
            first.to_ms = first.to_ms.max(second.to_ms);
        }
        self.confirmed_ms = sent_ms;
    }

    /// When the lease `lease_ms` of a request asked at `asked_ms` ran out at some instant up
    /// to `now_ms`, if it did: a silence since the request longer than the lease, or no round
    /// trip within the lease up to now. A grant for it must not be used: the controller may
    /// have counted its class free meanwhile. A request whose time is not known (0: stored
    /// before requests kept it) counts from the latest round trip alone, as it did then.
    pub fn lapsed_at(&self, asked_ms: u64, lease_ms: u64, now_ms: u64) -> Option<u64> {
        let ran_out = |from_ms: u64, to_ms: u64| {
            let out = from_ms.max(asked_ms).saturating_add(lease_ms);
            (to_ms > asked_ms && to_ms > out).then_some(out)
        };
        let silences = if asked_ms == 0 {
            &[][..]
        } else {
            &self.silences[..]
        };
        silences
            .iter()
            .find_map(|s| ran_out(s.from_ms, s.to_ms))
            .or_else(|| ran_out(self.confirmed_ms, now_ms))
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
            self.confirm(sent, now_ms);
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

    /// The time a held command's lease file is made to hold when it starts at `now_ms` (or is
    /// watched again after a restart, [`at_hold`] keeping a later or passed time written
    /// before): when its lease ran out since its request, that instant (passed: the command
    /// does not start), else the round trips' due time ([`RoundTrips::lease_until`]).
    pub fn due_at_hold(&self, asked_ms: u64, lease_ms: u64, now_ms: u64) -> u64 {
        self.lapsed_at(asked_ms, lease_ms, now_ms)
            .unwrap_or_else(|| self.lease_until(asked_ms, lease_ms))
    }

    /// Whether a person's activity holding a grant of `lease_ms` asked at `asked_ms` is out at
    /// `now_ms`: its lease ran out at some instant since (no round trip within it).
    pub fn person_out(&self, asked_ms: u64, lease_ms: u64, now_ms: u64) -> bool {
        self.lapsed_at(asked_ms, lease_ms, now_ms).is_some()
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
        trips.confirm(7_000, 11_000);
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
        trips.confirm(20_300, 20_400);
        assert_eq!(trips.lease_until(20_000, 500), 20_800);
        assert_eq!(trips.lease_until(22_000, 500), 22_500);
        assert_eq!(lease_until(u64::MAX, 0, 500), u64::MAX);
        assert!(!trips.person_out(20_000, 500, 20_800));
        assert!(trips.person_out(20_000, 500, 20_801));
        // At a hold: the due time while it never ran out, the instant it did once it has.
        assert_eq!(trips.due_at_hold(20_000, 500, 20_800), 20_800);
        assert_eq!(trips.due_at_hold(20_000, 500, 20_801), 20_800);
        assert_eq!(
            trips.due_at_hold(20_000, 200, 20_450),
            20_200,
            "a silence lapsed it"
        );
    }

    #[test]
    fn a_lease_that_ran_out_since_its_request_stays_out_whatever_round_trips_came_after() {
        let mut trips = RoundTrips::new();
        // Round trips every 200 ms up to 10 s; then none until 13 s (cut off); then again.
        for t in (200..=10_000).step_by(200) {
            trips.confirm(t - 100, t);
        }
        trips.confirm(12_900, 13_000);
        for t in (13_200..=15_000).step_by(200) {
            trips.confirm(t - 100, t);
        }
        // Asked before the cut: its lease of 500 ran out at 9,900 + 500, whatever came after.
        assert_eq!(trips.lapsed_at(9_500, 500, 15_000), Some(10_400));
        assert!(trips.person_out(9_500, 500, 15_000));
        // A lease longer than the cut did not run out.
        assert_eq!(trips.lapsed_at(9_500, 3_200, 15_000), None);
        // Asked during the cut: out from its request plus the lease.
        assert_eq!(trips.lapsed_at(11_000, 500, 15_000), Some(11_500));
        // Asked after it: fresh, until the round trips stop for longer than the lease.
        assert_eq!(trips.lapsed_at(13_100, 500, 15_000), None);
        assert_eq!(trips.lapsed_at(13_100, 500, 15_401), Some(15_400));
        // Asked long before, on a lease longer than any silence: never out.
        assert_eq!(trips.lapsed_at(100, 5_000, 15_000), None);
        // Nothing known of the request (0): counted from the latest round trip alone.
        assert_eq!(trips.lapsed_at(0, 500, 15_000), None);
        assert_eq!(trips.lapsed_at(0, 500, 15_401), Some(15_400));
    }

    #[test]
    fn after_a_start_a_request_counts_from_itself_until_a_round_trip() {
        let mut trips = RoundTrips::new();
        assert_eq!(trips.lapsed_at(1_000, 500, 1_500), None);
        assert_eq!(trips.lapsed_at(1_000, 500, 1_501), Some(1_500));
        // The first round trip came late: a request asked before it ran out meanwhile.
        trips.confirm(1_800, 1_900);
        assert_eq!(trips.lapsed_at(1_000, 500, 1_900), Some(1_500));
        assert_eq!(trips.lapsed_at(1_600, 500, 1_900), None);
    }

    #[test]
    fn past_the_silences_kept_the_oldest_are_taken_as_one_longer() {
        let mut trips = RoundTrips::new();
        // Silences each shorter than the one before: every one is kept, up to the bound.
        let mut t = 0;
        let mut first_end = 0;
        for i in 0..(SILENCES_KEPT as u64 + 10) {
            let len = 10_000 - i * 10;
            t += len;
            trips.confirm(t, t);
            if i == 0 {
                first_end = t;
            }
        }
        assert_eq!(trips.silences.len(), SILENCES_KEPT);
        // Never shorter than what they stand for: a lease of 9,995 asked at the first
        // round trip ran out in the second silence (9,990 long) only if it is merged.
        assert!(trips.lapsed_at(first_end, 9_995, t).is_some());
        // A longer silence drops all the earlier, shorter ones (the merged one too).
        let end = 2 * t;
        trips.confirm(end, end);
        assert_eq!(trips.silences.len(), 1);
        assert_eq!(trips.lapsed_at(1, t - 1, end), Some(2 * t - 1));
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
