//! A count of the elementary steps reading, checking and deriving take where their cost
//! depends on the input's size (characters scanned for positions, names and activities visited,
//! words of name sets combined, stand-in chains walked). The tests that guard against quadratic
//! blow-up count these steps, at one size and twice it, instead of timing the work: a step
//! count does not change with the machine's load. Outside the crate's own tests nothing is
//! counted and `count` costs nothing.

/// Counts `n` steps of the calling thread.
#[inline]
pub(crate) fn count(n: usize) {
    #[cfg(test)]
    counted::STEPS.with(|steps| steps.set(steps.get().saturating_add(n as u64)));
    #[cfg(not(test))]
    let _ = n;
}

#[cfg(test)]
pub(crate) use counted::{assert_linear, steps_of};

#[cfg(test)]
mod counted {
    use std::cell::Cell;

    thread_local! {
        // Per thread: tests run in parallel, each on its own thread.
        pub(super) static STEPS: Cell<u64> = const { Cell::new(0) };
    }

    /// What `f` returns, and the steps it took.
    pub(crate) fn steps_of<T>(f: impl FnOnce() -> T) -> (T, u64) {
        let before = STEPS.with(Cell::get);
        let value = f();
        (value, STEPS.with(Cell::get) - before)
    }

    /// `small` steps were counted for an input of size `n` (at least one per unit: the count
    /// sees the work), and `large` for the same input at twice the size: linear work about
    /// doubles, quadratic work about quadruples (the bound leaves room for fixed costs).
    pub(crate) fn assert_linear(what: &str, n: usize, small: u64, large: u64) {
        assert!(
            small >= n as u64,
            "{what}: {small} steps for a size of {n}: the work is not counted"
        );
        assert!(
            large <= small * 5 / 2,
            "{what}: {small} steps for a size of {n}, {large} for twice that: not linear"
        );
    }
}
