//! A count of the elementary steps reading, checking and deriving take where their cost
//! depends on the input's size (characters scanned for positions, names and activities visited,
//! words of name sets combined, stand-in chains walked). The tests that guard against quadratic
//! blow-up count these steps, at one size and twice it, instead of timing the work: a step
//! count does not change with the machine's load. Outside the crate's own tests nothing is
//! counted and `count` costs nothing. The guards see only the loops that count: a new loop
//! whose work grows with the input must call `count` too.

/// Counts `n` steps of the calling thread (in tests, panicking past the thread's budget).
#[inline]
pub(crate) fn count(n: usize) {
    #[cfg(test)]
    counted::count(n);
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
        static STEPS: Cell<u64> = const { Cell::new(0) };
        // The count past which `count` panics: quadratic work at a large size would otherwise
        // take minutes before its count could be compared.
        static BUDGET: Cell<u64> = const { Cell::new(u64::MAX) };
    }

    pub(super) fn count(n: usize) {
        let now = STEPS.with(|steps| {
            let now = steps.get().saturating_add(n as u64);
            steps.set(now);
            now
        });
        assert!(
            now <= BUDGET.with(Cell::get),
            "over the step budget: the work is not linear"
        );
    }

    /// What `f` returns, and the steps it took.
    pub(crate) fn steps_of<T>(f: impl FnOnce() -> T) -> (T, u64) {
        let before = STEPS.with(Cell::get);
        let value = f();
        (value, STEPS.with(Cell::get) - before)
    }

    /// `small` counts the steps for an input of size `n` (at least one per unit: the count
    /// sees the work), and `large` for the same input at twice the size: linear work about
    /// doubles, quadratic work about quadruples (the bound leaves room for fixed costs). The
    /// large input runs on a budget of that bound, so quadratic work stops early.
    pub(crate) fn assert_linear(
        what: &str,
        n: usize,
        small: impl FnOnce() -> u64,
        large: impl FnOnce() -> u64,
    ) {
        let small = small();
        assert!(
            small >= n as u64,
            "{what}: {small} steps for a size of {n}: the work is not counted"
        );
        let bound = small * 5 / 2;
        let start = STEPS.with(Cell::get);
        BUDGET.with(|b| b.set(start.saturating_add(bound)));
        let large = large();
        BUDGET.with(|b| b.set(u64::MAX));
        assert!(
            large <= bound,
            "{what}: {small} steps for a size of {n}, {large} for twice that: not linear"
        );
    }
}
