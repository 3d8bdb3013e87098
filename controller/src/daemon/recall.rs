//! Settled instances read back for the book: the book lets a settled instance go once its changes
//! are on disk, and the actor hands it back (`Input::Recall`) before it applies an input that names
//! it: a late report, a rerun, a compensation's answer, an operator's control (refused then with
//! the reason). The store reads are here, so the book stays pure.

use std::collections::BTreeSet;

use mobiwf_book::{Book, Input};
use mobiwf_proto::InstanceId;
use mobiwf_runtime::store::{Store, StoreError};

use crate::state;

/// What a recall needs besides the book.
pub(super) struct Recaller<'a> {
    /// The store.
    pub(super) store: &'a dyn Store,
    /// Instances the retention sweep deletes in this group: not read back.
    pub(super) swept: &'a BTreeSet<InstanceId>,
    /// The instances recalled in this group, let go again after it.
    pub(super) recalled: &'a mut Vec<InstanceId>,
}

impl Recaller<'_> {
    /// Reads the instance `input` names back into `book` when the book let it go. An
    /// instance the store does not have either stays unknown (the book says so).
    pub(super) fn recall(
        &mut self,
        book: &mut Book,
        now: u64,
        input: &Input,
    ) -> Result<(), StoreError> {
        let Some(id) = input.instance() else {
            return Ok(());
        };
        if book.holds(id) || self.swept.contains(&id) {
            return Ok(());
        }
        let Some(recalled) = state::recall(self.store, id)? else {
            return Ok(());
        };
        match book.apply(now, Input::Recall(Box::new(recalled))) {
            Ok(_) => self.recalled.push(id),
            Err(e) => tracing::warn!(instance = %id, "cannot take a stored instance back: {e}"),
        }
        Ok(())
    }
}
