//! Which transitions the tests took: a thread-local recorder, so that the coverage test can
//! run each scenario on its own thread and know exactly what it exercised.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// One transition taken: (lifecycle, from, event, to).
pub(crate) type Taken = (&'static str, &'static str, &'static str, &'static str);

thread_local! {
    static TAKEN: RefCell<BTreeSet<Taken>> = const { RefCell::new(BTreeSet::new()) };
}

/// Notes a transition taken on this thread.
pub(crate) fn record(
    lifecycle: &'static str,
    from: &'static str,
    event: &'static str,
    to: &'static str,
) {
    TAKEN.with(|t| t.borrow_mut().insert((lifecycle, from, event, to)));
}

/// The transitions taken on this thread so far.
pub(crate) fn taken() -> BTreeSet<Taken> {
    TAKEN.with(|t| t.borrow().clone())
}
