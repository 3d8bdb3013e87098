//! The one source of chance of a run: a PCG generator (`rand_pcg::Pcg64Mcg`, pcg64_fast, a
//! fixed and documented algorithm tested against reference vectors) seeded from the run's
//! seed, so that a seed replays byte for byte on any machine. Every choice of a run (the
//! workload, the faults, the network's delays, the commands' ends) is drawn from it, in the
//! order the run makes them; the workload draws from a stream of its own, forked first, so
//! that what is run does not shift when the faults change. The chaos run (`mobiwf-chaos`)
//! draws its plan of faults from it too: one generator, one algorithm, for both.

use rand_core::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A seeded source of chance.
pub struct Rng(Pcg64Mcg);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(Pcg64Mcg::seed_from_u64(seed))
    }

    /// A generator of its own for one purpose, drawn from this one.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.u64())
    }

    /// The next 64 random bits.
    pub fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (0 when `n` is 0), without the bias of a plain remainder.
    pub fn below(&mut self, n: u64) -> u64 {
        if n <= 1 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.u64();
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

    /// True `per_mille` times in a thousand.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }

    /// One of `items`, `None` when there are none.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        let n = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if n == 0 {
            return None;
        }
        usize::try_from(self.below(n))
            .ok()
            .and_then(|i| items.get(i))
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
    fn the_algorithm_is_pcg64_fast_as_its_reference_vector_says() {
        // The reference value of rand_pcg's documentation: a seed replays the same numbers
        // whatever version of the crate or machine runs it.
        let mut pcg = Pcg64Mcg::seed_from_u64(0);
        assert_eq!(pcg.next_u64(), 0x5603_f242_407d_eca2);
    }

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
        assert_eq!(a.pick::<u8>(&[]), None);
        assert_eq!(Rng::new(1).below(0), 0);
        let mut items = [1, 2, 3, 4, 5];
        a.shuffle(&mut items);
        let mut sorted = items;
        sorted.sort_unstable();
        assert_eq!(sorted, [1, 2, 3, 4, 5]);
    }
}
