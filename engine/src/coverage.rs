//! Which transitions the scenario tests took, one recorder per thread for every lifecycle of
//! the engine (an activity's, a work item copy's), so that the coverage tests can run each
//! scenario on a thread of its own and know exactly what it exercised. A lifecycle's
//! transitions are told apart from another's by their type.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

thread_local! {
    /// Per type of transition, a `BTreeSet` of those taken.
    static TAKEN: RefCell<HashMap<TypeId, Box<dyn Any>>> = RefCell::new(HashMap::new());
}

/// Notes that this thread took `transition`.
pub(crate) fn record<T: Ord + 'static>(transition: T) {
    TAKEN.with(|t| {
        t.borrow_mut()
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(BTreeSet::<T>::new()))
            .downcast_mut::<BTreeSet<T>>()
            .expect("the set under a type's id holds that type")
            .insert(transition);
    });
}

/// The transitions of type `T` this thread took since the last call.
pub(crate) fn take<T: Ord + 'static>() -> BTreeSet<T> {
    TAKEN.with(|t| {
        t.borrow_mut()
            .remove(&TypeId::of::<T>())
            .map(|set| {
                *set.downcast::<BTreeSet<T>>()
                    .expect("the set under a type's id holds that type")
            })
            .unwrap_or_default()
    })
}
