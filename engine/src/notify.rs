//! A partner says an activity finished, or entered a state a dependency rule here names: the
//! first word about an end is kept (unless a later one was said after a rerun its sender
//! applied: the new end) and what waited for it goes on; a word about an activity a
//! contingency activity replaced is a *late word*, recorded and ignored by preconditions.
//! The states an activity entered are merged whatever the order the words come in (each
//! says every state entered so far): rules name an activity's own states, replaced or not.

use std::collections::btree_map::Entry;

use mobiwf_proto::{ActivityId, InstanceId, Outcome, StateSet};

use crate::{Effect, Engine};

/// What a partner's notification says about an activity's end.
pub(crate) struct Word {
    /// What it means for its successors.
    pub(crate) outcome: Outcome,
    /// The states it entered (for rules here).
    pub(crate) entered: StateSet,
    /// The completion flag it ended with.
    pub(crate) flag: Option<String>,
    /// Where its routes led.
    pub(crate) routed: Option<Vec<ActivityId>>,
    /// The sender's latest rerun of the instance applied when it said this.
    pub(crate) rerun: u64,
}

impl Engine {
    /// `activity` of `instance` ended as `word` says, says a partner.
    pub(crate) fn notified(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        word: Word,
        carried: crate::data::Carried,
        effects: &mut Vec<Effect>,
    ) {
        let Word {
            outcome,
            entered,
            flag,
            routed,
            rerun,
        } = word;
        // A word about an activity a contingency activity replaced is recorded, not used: nor
        // is what it carries.
        let replaced = self
            .known
            .get(&instance)
            .is_some_and(|k| k.replaced.contains_key(&activity));
        let took = !replaced && self.take_data(instance, carried, effects);
        let learnt = self.learn_states(instance, activity, entered) || took;
        let known = self.known.entry(instance).or_default();
        let heard = if known.replaced.contains_key(&activity) {
            // Its contingency activity took over: the word is recorded, never used.
            if let Entry::Vacant(e) = known.late.entry(activity) {
                e.insert(outcome);
                self.touch_known(instance);
            }
            false
        } else if !known.heard.contains_key(&activity)
            || rerun > known.heard_in.get(&activity).copied().unwrap_or_default()
        {
            // The first word wins, but an end said after a rerun the sender applied replaces
            // one from before it: this node's own rerun, still on its way, keeps the newer.
            known.heard.insert(activity, outcome);
            match flag {
                Some(flag) => known.flags.insert(activity, flag),
                None => known.flags.remove(&activity),
            };
            match routed {
                Some(routed) => known.routed.insert(activity, routed),
                None => known.routed.remove(&activity),
            };
            if rerun > 0 {
                known.heard_in.insert(activity, rerun);
            }
            self.touch_known(instance);
            true
        } else {
            false
        };
        if heard || learnt {
            self.advance_instance(instance, effects);
        }
    }

    /// `activity` of `instance` entered the states `entered`, says a partner.
    pub(crate) fn state_changed(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        entered: StateSet,
        effects: &mut Vec<Effect>,
    ) {
        if self.learn_states(instance, activity, entered) {
            self.advance_instance(instance, effects);
        }
    }

    /// Merges what a partner said an activity entered; true when it is news.
    fn learn_states(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        entered: StateSet,
    ) -> bool {
        if entered.is_empty() {
            return false;
        }
        let known = self.known.entry(instance).or_default();
        let was = known.states.get(&activity).copied().unwrap_or_default();
        let now = was.union(entered);
        if now == was {
            return false;
        }
        known.states.insert(activity, now);
        self.touch_known(instance);
        true
    }
}
