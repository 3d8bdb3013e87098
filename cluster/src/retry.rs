//! What a member does while etcd does not answer: how long it waits before asking again (a
//! backoff that grows to a cap, so a member neither gives up nor spins), how often it says
//! so (at most once every few seconds, however often it asks), and until when its lease
//! surely holds (so that an owner that cannot renew it stops acting before another member
//! may claim its shard). The shell reads the clock and passes the instants in.

use std::time::{Duration, Instant};

/// The first wait after a failed call to etcd.
pub const FIRST_WAIT: Duration = Duration::from_millis(200);
/// The longest wait between two calls to an etcd that does not answer.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5);
/// The least time between two messages saying etcd still does not answer.
pub const COMPLAIN_EVERY: Duration = Duration::from_secs(5);

/// The waits between calls to an etcd that does not answer: doubling from [`FIRST_WAIT`] to
/// [`LONGEST_WAIT`], back to the first once a call got through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_WAIT }
    }
}

impl Backoff {
    /// The wait after one more failure.
    pub fn failed(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST_WAIT);
        wait
    }

    /// A call got through: the next failure waits the least again.
    pub fn succeeded(&mut self) {
        self.next = FIRST_WAIT;
    }
}

/// Whether to say that etcd still does not answer: the first failure is said at once, the
/// next ones at most every [`COMPLAIN_EVERY`], and the first success after failures once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Complaints {
    last_said: Option<Instant>,
    failing: bool,
}

impl Complaints {
    /// A call failed at `now`: true when this one is to be said.
    pub fn failed(&mut self, now: Instant) -> bool {
        self.failing = true;
        let say = self
            .last_said
            .is_none_or(|said| now.saturating_duration_since(said) >= COMPLAIN_EVERY);
        if say {
            self.last_said = Some(now);
        }
        say
    }

    /// A call got through: true when failures came before it (say that etcd answers again).
    pub fn succeeded(&mut self) -> bool {
        let was = self.failing;
        self.failing = false;
        self.last_said = None;
        was
    }
}

/// Until when a lease surely holds, as its holder can know: etcd counts a lease's time to live
/// from when it handles the grant or renewal, which is after the holder `sent` it, so the
/// lease lasts at least until `sent + left` (`left`: the time to live etcd answered). A margin
/// of an eighth of it covers the holder's own delay in acting on the instant.
pub fn lease_holds_until(sent: Instant, left: Duration) -> Instant {
    sent + left - left / 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_waits_double_to_a_cap_and_start_over_after_a_success() {
        let mut backoff = Backoff::default();
        let waits: Vec<Duration> = (0..8).map(|_| backoff.failed()).collect();
        assert_eq!(waits[0], FIRST_WAIT);
        assert_eq!(waits[1], FIRST_WAIT * 2);
        assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
        assert_eq!(waits[7], LONGEST_WAIT);
        backoff.succeeded();
        assert_eq!(backoff.failed(), FIRST_WAIT);
    }

    #[test]
    fn failures_are_said_at_most_every_few_seconds_and_recovery_once() {
        let start = Instant::now();
        let mut complaints = Complaints::default();
        assert!(!complaints.succeeded(), "no failure to recover from");
        assert!(complaints.failed(start));
        assert!(!complaints.failed(start + Duration::from_secs(1)));
        assert!(!complaints.failed(start + COMPLAIN_EVERY - Duration::from_millis(1)));
        assert!(complaints.failed(start + COMPLAIN_EVERY));
        assert!(complaints.succeeded());
        assert!(!complaints.succeeded());
        assert!(
            complaints.failed(start + COMPLAIN_EVERY + Duration::from_millis(1)),
            "a new outage is said at once"
        );
    }

    #[test]
    fn a_lease_holds_a_little_less_than_its_time_to_live_after_the_renewal_was_sent() {
        let sent = Instant::now();
        let until = lease_holds_until(sent, Duration::from_secs(8));
        assert_eq!(until, sent + Duration::from_secs(7));
        assert!(until < sent + Duration::from_secs(8));
    }
}
