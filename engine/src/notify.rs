//! A partner says an activity finished: the first word about it is kept and what waited for
//! it goes on; a word about an activity a contingency activity replaced is a *late word*,
//! recorded and ignored.

use std::collections::btree_map::Entry;

use mobiwf_proto::{ActivityId, InstanceId, Outcome};

use crate::{Effect, Engine};

impl Engine {
    /// `activity` of `instance` ended with `outcome`, says a partner.
    pub(crate) fn notified(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        outcome: Outcome,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        if known.replaced.contains_key(&activity) {
            // Its contingency activity took over: the word is recorded, never used.
            if let Entry::Vacant(e) = known.late.entry(activity) {
                e.insert(outcome);
                self.touch_known(instance);
            }
            return;
        }
        if known.heard.contains_key(&activity) {
            return;
        }
        known.heard.insert(activity, outcome);
        self.touch_known(instance);
        self.advance_instance(instance, effects);
    }
}
