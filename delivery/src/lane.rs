//! The decisions of one peer's lane, pure: whether a delivery may try now (and whether it must
//! be the one probe of a failing peer), how long to wait after a failure, when the peer counts
//! as unreachable and when as back, when to ask where it is now. Driven by the lane's events
//! and the time it is given, a [`Moment`]: a plain value, not a clock. The outbox's lane
//! (`mobiwf_runtime::outbox`, its `lanes` module) keeps one behind a lock, reads tokio's clock
//! and converts it at its edge, and does the waiting; a test or the simulator (`mobiwf-sim`)
//! drives these decisions on its own clock.

use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// Failed tries in a row (attempts made together count once) after which a peer counts as
/// unreachable: a host that fails this many deliveries to a device marks its users inactive,
/// a device whose host fails them disables that host's items (*Synchronization and Disconnected
/// Operation in WorkToDo* (IC-03-006), §5.3).
pub const UNREACHABLE_AFTER_FAILURES: u32 = 3;

/// How a lane backs off: the first wait after a failure, and the longest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// First wait after a failure; it doubles on every failed probe.
    pub min: Duration,
    /// Longest wait between probes: the longest a peer whose return nothing announces waits
    /// for its next try.
    pub max: Duration,
}

/// A time on the clock that drives a lane's decisions: how long after that clock started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Moment(Duration);

impl Moment {
    /// The moment `elapsed` after the clock started.
    pub fn after_start(elapsed: Duration) -> Moment {
        Moment(elapsed)
    }

    /// How long after the clock started this is.
    pub fn since_start(self) -> Duration {
        self.0
    }
}

impl Add<Duration> for Moment {
    type Output = Moment;
    fn add(self, wait: Duration) -> Moment {
        Moment(self.0.saturating_add(wait))
    }
}

impl AddAssign<Duration> for Moment {
    fn add_assign(&mut self, wait: Duration) {
        *self = *self + wait;
    }
}

/// How long from `earlier` to this; zero when `earlier` is later.
impl Sub for Moment {
    type Output = Duration;
    fn sub(self, earlier: Moment) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

/// What a delivery may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Nothing before this.
    Wait(Moment),
    /// Try now; `probe`: the peer fails, so only one delivery at a time (the probe) tries.
    Go {
        /// Whether this try must be the lane's one probe.
        probe: bool,
    },
}

/// One peer's backoff and reachability.
#[derive(Debug, Clone)]
pub struct LaneState {
    backoff: Backoff,
    /// The last attempt failed (and no later one got through).
    failing: bool,
    /// The next wait after a failure.
    wait: Duration,
    /// No attempt before this.
    retry_at: Option<Moment>,
    /// When the peer's whereabouts were last asked for.
    located_at: Option<Moment>,
    /// Failed tries in a row.
    failures: u32,
    /// Whether the peer was said to be unreachable (and not yet reachable again).
    told_unreachable: bool,
}

impl LaneState {
    /// A lane nothing failed on.
    pub fn new(backoff: Backoff) -> LaneState {
        LaneState {
            backoff,
            failing: false,
            wait: backoff.min,
            retry_at: None,
            located_at: None,
            failures: 0,
            told_unreachable: false,
        }
    }

    /// What a delivery may do at `now`.
    pub fn gate(&self, now: Moment) -> Gate {
        match self.retry_at {
            Some(at) if at > now => Gate::Wait(at),
            _ => Gate::Go {
                probe: self.failing,
            },
        }
    }

    /// The peer answered: no backoff, everyone goes. True when that changes anything (the
    /// deliveries waiting are to be woken).
    pub fn succeeded(&mut self) -> bool {
        let was_failing = self.failing || self.retry_at.is_some();
        self.failing = false;
        self.wait = self.backoff.min;
        self.retry_at = None;
        self.failures = 0;
        was_failing
    }

    /// An attempt failed at `now`: the lane waits before the next probe, twice as long as the
    /// last time (failures of attempts made together count once). Returns the wait.
    pub fn failed(&mut self, now: Moment) -> Duration {
        self.failing = true;
        match self.retry_at {
            Some(at) if at > now => at - now,
            _ => {
                let wait = self.wait;
                self.failures = self.failures.saturating_add(1);
                self.retry_at = Some(now + wait);
                self.wait = (wait * 2).min(self.backoff.max);
                wait
            }
        }
    }

    /// What the lane's owner has not been told yet: `Some(false)` when the peer just became
    /// unreachable ([`UNREACHABLE_AFTER_FAILURES`] failed tries in a row), `Some(true)` when
    /// it answered again after that; each is told once.
    pub fn reachability_news(&mut self) -> Option<bool> {
        let unreachable = self.failures >= UNREACHABLE_AFTER_FAILURES;
        if unreachable == self.told_unreachable {
            return None;
        }
        self.told_unreachable = unreachable;
        Some(!unreachable)
    }

    /// Whether to ask where the peer is now: not more often than `every`.
    pub fn locate_due(&mut self, now: Moment, every: Duration) -> bool {
        if self.located_at.is_some_and(|at| now - at < every) {
            return false;
        }
        self.located_at = Some(now);
        true
    }

    /// The peer is reachable again (seen, or found at a new address): the backoff starts
    /// over and the next probe goes now.
    pub fn reset(&mut self) {
        self.wait = self.backoff.min;
        self.retry_at = None;
    }

    /// Lets the next try go now, as if the wait were over (tests stand in for the clock).
    pub fn wait_over(&mut self) {
        self.retry_at = None;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn state() -> LaneState {
        LaneState::new(Backoff {
            min: Duration::from_millis(100),
            max: Duration::from_millis(350),
        })
    }

    /// The moment to count from: the decisions read no clock.
    fn t0() -> Moment {
        Moment::after_start(Duration::ZERO)
    }

    #[test]
    fn waits_double_from_the_shortest_up_to_the_longest_and_a_failing_peer_is_probed() {
        let (mut s, t) = (state(), t0());
        assert_eq!(s.gate(t), Gate::Go { probe: false });
        let mut now = t;
        let mut waits = Vec::new();
        for _ in 0..4 {
            let wait = s.failed(now);
            assert_eq!(s.gate(now), Gate::Wait(now + wait));
            waits.push(wait.as_millis());
            now += wait;
            assert_eq!(s.gate(now), Gate::Go { probe: true });
        }
        assert_eq!(waits, vec![100, 200, 350, 350]);
    }

    #[test]
    fn failures_within_one_wait_count_once() {
        let (mut s, t) = (state(), t0());
        let first = s.failed(t);
        let second = s.failed(t + Duration::from_millis(40));
        assert_eq!((first.as_millis(), second.as_millis()), (100, 60));
        assert_eq!(s.failures, 1);
    }

    #[test]
    fn unreachable_after_failures_in_a_row_and_back_are_each_told_once() {
        let (mut s, t) = (state(), t0());
        let mut now = t;
        for _ in 0..UNREACHABLE_AFTER_FAILURES - 1 {
            now += s.failed(now);
            assert_eq!(s.reachability_news(), None);
        }
        s.failed(now);
        assert_eq!(s.reachability_news(), Some(false));
        assert_eq!(s.reachability_news(), None);
        assert!(s.succeeded());
        assert_eq!(s.reachability_news(), Some(true));
        assert_eq!(s.reachability_news(), None);
        assert!(
            !s.succeeded(),
            "a success on a lane that does not fail changes nothing"
        );
    }

    #[test]
    fn a_reset_lets_the_next_probe_go_now_with_the_shortest_wait() {
        let (mut s, t) = (state(), t0());
        let mut now = t;
        now += s.failed(now);
        s.failed(now);
        s.reset();
        assert_eq!(s.gate(now), Gate::Go { probe: true });
        assert_eq!(s.failed(now), Duration::from_millis(100));
    }

    #[test]
    fn the_peer_is_located_at_most_once_per_period() {
        let (mut s, t) = (state(), t0());
        let every = Duration::from_secs(1);
        assert!(s.locate_due(t, every));
        assert!(!s.locate_due(t + Duration::from_millis(999), every));
        assert!(s.locate_due(t + every, every));
    }

    /// What happens to a lane, on a clock the test moves.
    #[derive(Debug, Clone)]
    enum Event {
        /// The clock moves on this many milliseconds.
        Pass(u64),
        Fail,
        Succeed,
        Reset,
        /// Asked whether to locate the peer, at most once a second.
        Locate,
    }

    fn event() -> impl proptest::strategy::Strategy<Value = Event> {
        use proptest::prelude::*;
        prop_oneof![
            3 => (0u64..500).prop_map(Event::Pass),
            3 => Just(Event::Fail),
            1 => Just(Event::Succeed),
            1 => Just(Event::Reset),
            1 => Just(Event::Locate),
        ]
    }

    proptest::proptest! {
        #[test]
        fn on_any_clock_a_lane_waits_within_its_bounds_and_tells_each_change_once(
            events in proptest::collection::vec(event(), 0..120),
        ) {
            let (mut s, mut now) = (state(), t0());
            let (min, max) = (Duration::from_millis(100), Duration::from_millis(350));
            let every = Duration::from_secs(1);
            let (mut news, mut located) = (Vec::new(), None::<Moment>);
            for event in events {
                match event {
                    Event::Pass(ms) => now += Duration::from_millis(ms),
                    Event::Fail => {
                        let wait = s.failed(now);
                        proptest::prop_assert!(!wait.is_zero() && wait <= max, "{wait:?}");
                        proptest::prop_assert_eq!(s.gate(now), Gate::Wait(now + wait));
                        proptest::prop_assert_eq!(s.gate(now + wait), Gate::Go { probe: true });
                    }
                    Event::Succeed => {
                        s.succeeded();
                        proptest::prop_assert_eq!(s.gate(now), Gate::Go { probe: false });
                        proptest::prop_assert_eq!(s.failed(now), min, "the waits start over");
                        s.succeeded();
                    }
                    Event::Reset => {
                        s.reset();
                        let go = matches!(s.gate(now), Gate::Go { .. });
                        proptest::prop_assert!(go, "a reset lets the next try go now");
                    }
                    Event::Locate => {
                        let due = s.locate_due(now, every);
                        let expected = located.is_none_or(|at| now - at >= every);
                        proptest::prop_assert_eq!(due, expected);
                        if due {
                            located = Some(now);
                        }
                    }
                }
                if let Gate::Wait(at) = s.gate(now) {
                    proptest::prop_assert!(at > now && at - now <= max);
                }
                news.extend(s.reachability_news());
            }
            // Unreachable, then back, then unreachable...: never the same news twice in a row.
            let alternating: Vec<bool> = (0..news.len()).map(|i| i % 2 == 1).collect();
            proptest::prop_assert_eq!(news, alternating);
        }
    }
}
