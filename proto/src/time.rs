//! Times and lengths of time in milliseconds, as a type: the stores and the wire hold bare
//! numbers of milliseconds (times since the Unix epoch, as the daemons' clocks give them),
//! the documents speak in seconds, the clocks and the activity records (`started_us`,
//! `finished_us`) in microseconds, and [`Millis`] is where one becomes the other, so that no
//! caller multiplies or divides by 1000 itself.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A number of milliseconds: a time (since the Unix epoch) or a length of time. Serialized as
/// the bare number, so stored and wire formats do not change where it replaces a `u64`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Millis(pub u64);

impl Millis {
    /// No time at all (or the epoch).
    pub const ZERO: Millis = Millis(0);

    /// `secs` seconds (saturating at the largest number of milliseconds).
    pub const fn from_secs(secs: u64) -> Millis {
        Millis(secs.saturating_mul(1000))
    }

    /// The whole seconds in it (rounded down).
    pub const fn as_secs(self) -> u64 {
        self.0 / 1000
    }

    /// The whole milliseconds in `us` microseconds (rounded down): a time read to the
    /// microsecond, as the decisions and the stores take it.
    pub const fn from_micros(us: u64) -> Millis {
        Millis(us / 1000)
    }

    /// The microseconds in it (saturating at the largest number of microseconds).
    pub const fn as_micros(self) -> u64 {
        self.0.saturating_mul(1000)
    }

    /// The bare number of milliseconds.
    pub const fn as_u64(self) -> u64 {
        self.0
    }

    /// `length` later (saturating: a time past the largest one is the largest one).
    pub fn saturating_add(self, length: Duration) -> Millis {
        let ms = u64::try_from(length.as_millis()).unwrap_or(u64::MAX);
        Millis(self.0.saturating_add(ms))
    }

    /// How long after `earlier` this is; zero when it is not after it.
    pub const fn since(self, earlier: Millis) -> Millis {
        Millis(self.0.saturating_sub(earlier.0))
    }
}

impl From<Millis> for Duration {
    fn from(ms: Millis) -> Duration {
        Duration::from_millis(ms.0)
    }
}

/// Seconds with three decimals: `1.234s`.
impl std::fmt::Display for Millis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1000, self.0 % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_become_milliseconds_and_back() {
        assert_eq!(Millis::from_secs(3), Millis(3000));
        assert_eq!(Millis(3999).as_secs(), 3);
        assert_eq!(Millis::from_secs(u64::MAX), Millis(u64::MAX));
        assert_eq!(Duration::from(Millis(1500)), Duration::from_millis(1500));
    }

    #[test]
    fn microseconds_become_milliseconds_rounded_down_and_back() {
        assert_eq!(Millis::from_micros(1_234_999), Millis(1_234));
        assert_eq!(Millis::from_micros(999), Millis::ZERO);
        assert_eq!(Millis(1_234).as_micros(), 1_234_000);
        assert_eq!(Millis(u64::MAX).as_micros(), u64::MAX);
        // What the callers divided by hand before: the same for every number.
        for us in [0u64, 1, 999, 1000, 1001, 1_700_000_000_123_456, u64::MAX] {
            assert_eq!(Millis::from_micros(us).as_u64(), us / 1000);
            assert_eq!(Millis(us).as_micros(), us.saturating_mul(1000));
        }
    }

    #[test]
    fn adding_and_subtracting_saturate() {
        let t = Millis(10_000);
        assert_eq!(t.saturating_add(Duration::from_secs(2)), Millis(12_000));
        assert_eq!(
            Millis(u64::MAX - 1).saturating_add(Duration::from_secs(1)),
            Millis(u64::MAX)
        );
        assert_eq!(Millis(12_345).since(t), Millis(2_345));
        assert_eq!(t.since(Millis(12_345)), Millis::ZERO);
    }

    #[test]
    fn it_shows_as_seconds_with_three_decimals() {
        assert_eq!(Millis(8).to_string(), "0.008s");
        assert_eq!(Millis(61_005).to_string(), "61.005s");
        // What the tables printed before, as a float: the same text for every millisecond.
        for ms in [0u64, 1, 999, 1000, 1005, 123_456, 86_399_999] {
            assert_eq!(
                Millis(ms).to_string(),
                format!("{:.3}s", ms as f64 / 1000.0)
            );
        }
    }

    #[test]
    fn it_is_stored_as_the_bare_number() {
        assert_eq!(serde_json::to_string(&Millis(1234)).unwrap(), "1234");
        assert_eq!(
            serde_json::from_str::<Millis>("1234").unwrap(),
            Millis(1234)
        );
    }
}
