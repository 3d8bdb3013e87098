//! The one source of chance of a chaos run: a PCG generator (`rand_pcg::Pcg64Mcg`, pcg64_fast,
//! a fixed and documented algorithm) seeded from the run's seed, so that a seed gives the same
//! schedule of faults on any machine (what the real processes then do is not replayed: their
//! timing is the machine's).

use rand_core::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A seeded source of chance.
pub struct Rng(Pcg64Mcg);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(Pcg64Mcg::seed_from_u64(seed))
    }

    /// A number in `0..n` (0 when `n` is 0), without the bias of a plain remainder.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.0.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// A number in `lo..=hi` (`lo` when `hi` is below it).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// The items in an order drawn from the generator (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = usize::try_from(self.below(i as u64 + 1)).unwrap_or(0);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_their_bounds_and_a_seed_repeats_them() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for n in 1..200 {
            let x = a.below(n);
            assert!(x < n);
            assert_eq!(x, b.below(n));
            let r = a.range(n, n + 3);
            assert!((n..=n + 3).contains(&r));
            assert_eq!(r, b.range(n, n + 3));
        }
        assert_eq!(Rng::new(1).below(0), 0);
        let mut items = [1, 2, 3, 4, 5];
        a.shuffle(&mut items);
        let mut sorted = items;
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 2, 3, 4, 5]);
    }
}
