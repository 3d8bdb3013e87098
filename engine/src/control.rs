//! What the controller and the operator order for a whole instance: withdraw activities (the
//! controller decided they failed), substitute a contingency activity for a failed one, and
//! interrupt, resume or cancel. The orders are kept in `Known` (an order can overtake the
//! deployment it applies to) and carried out by `end_by_order` at each advance.

use std::collections::BTreeMap;

use mobiwf_proto::{
    ActivityId, CANCELLED_BY_OPERATOR, Control, InstanceId, NodeId, Withdraw, completed_reason,
};

use crate::lifecycle::{Event, Life, PausedFrom};
use crate::progress::runs_command;
use crate::run::RunKey;
use crate::{Effect, Engine};

impl Engine {
    /// The controller decided that `activities` failed, each in the pass the withdrawal names
    /// (that pass and any earlier one still here are withdrawn, a later one is not).
    pub(crate) fn withdraw(&mut self, w: Withdraw, effects: &mut Vec<Effect>) {
        let instance = w.instance;
        let known = self.known.entry(instance).or_default();
        for &activity in &w.activities {
            // The first word about a pass stands; one about a later pass replaces it.
            let pass = w.pass_of(activity);
            let was = known.withdrawn_passes.get(&activity).copied();
            if known.withdrawn.contains_key(&activity) && pass <= was.unwrap_or_default() {
                continue;
            }
            known.withdrawn.insert(activity, w.reason.clone());
            if pass.is_first() {
                known.withdrawn_passes.remove(&activity);
            } else {
                known.withdrawn_passes.insert(activity, pass);
            }
        }
        self.touch_known(instance);
        self.advance_instance(instance, effects);
    }

    /// Contingency activity `by` runs in place of failed `replaced` on `peer` (whose word
    /// about it is taken from now on).
    pub(crate) fn substitute_at(
        &mut self,
        instance: InstanceId,
        replaced: ActivityId,
        by: ActivityId,
        peer: Option<NodeId>,
        effects: &mut Vec<Effect>,
    ) {
        self.substitute(instance, replaced, by, effects);
        if let Some(peer) = peer {
            self.learn_speakers(instance, BTreeMap::from([(by, peer)]));
            self.replay_early(instance, effects);
        }
    }

    /// Contingency activity `by` runs in place of failed `replaced`; the first word stands.
    fn substitute(
        &mut self,
        instance: InstanceId,
        replaced: ActivityId,
        by: ActivityId,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        if known.replaced.contains_key(&replaced) {
            return;
        }
        known.replaced.insert(replaced, by);
        self.touch_known(instance);
        self.advance_instance(instance, effects);
    }

    /// An operator interrupted, resumed or cancelled the instance (its `order`-th control, 0
    /// when the controller did not count them). An interrupt or a resumption older than the
    /// newest control taken is not taken: the controller's messages arrive in any order, and
    /// the last the operator gave is what holds.
    pub(crate) fn control(
        &mut self,
        instance: InstanceId,
        action: Control,
        order: u64,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        let overtaken = order != 0 && order <= known.control_order;
        if overtaken && action != Control::Cancel {
            return;
        }
        known.control_order = known.control_order.max(order);
        match action {
            Control::Interrupt => known.interrupted = true,
            Control::Resume => known.interrupted = false,
            Control::Cancel => {
                known.cancelled = true;
                // Nothing starts any more: no file is waited for.
                known.missing.clear();
            }
        }
        self.touch_known(instance);
        self.advance_instance(instance, effects);
    }

    /// Completion activity `by` succeeded (here, or the controller says so): every activity
    /// of the instance not final is cancelled; the first word stands.
    pub(crate) fn complete_instance(
        &mut self,
        instance: InstanceId,
        by: ActivityId,
        effects: &mut Vec<Effect>,
    ) {
        let known = self.known.entry(instance).or_default();
        if known.completed_by.is_some() {
            return;
        }
        known.completed_by = Some(by);
        known.missing.clear();
        self.touch_known(instance);
        self.advance_instance(instance, effects);
    }

    /// Ends the activities an operator cancelled or the controller withdrew. Nobody is
    /// notified: the controller knows, and decides for their successors elsewhere.
    pub(crate) fn end_by_order(&mut self, key: RunKey, effects: &mut Vec<Effect>) {
        let (Some(known), Some(run)) = (self.known.get(&key.instance), self.runs.get(&key)) else {
            return;
        };
        let (mut ended, mut kills) = (Vec::new(), Vec::new());
        for act in &run.doc().activities {
            let Some(p) = run.progress(act.id).filter(|p| !p.life().is_final()) else {
                continue;
            };
            let event = if known.cancelled {
                Event::Cancel {
                    detail: CANCELLED_BY_OPERATOR.to_owned(),
                }
            } else if let Some(by) = known.completed_by {
                Event::Cancel {
                    detail: completed_reason(by),
                }
            } else if let Some(reason) = known.withdrawal(act.id, p.pass) {
                Event::Withdraw {
                    detail: format!("withdrawn by the controller: {reason}"),
                }
            } else {
                continue;
            };
            let runs = matches!(
                p.life(),
                Life::Running { .. }
                    | Life::Paused {
                        resume: PausedFrom::Running { .. },
                        ..
                    }
            );
            if runs && runs_command(act) {
                let why = match &event {
                    Event::Cancel { detail } | Event::Withdraw { detail } => detail.clone(),
                    _ => String::new(),
                };
                kills.push((act.id, p.try_number(), why));
            }
            ended.push((act.id, event));
        }
        // Killed first: a held try's request then waits for the try's end (`sync`).
        for (activity, attempt, why) in kills {
            self.kill_try(key, activity, attempt, why, effects);
        }
        for (activity, event) in ended {
            self.step(key, activity, event);
        }
    }
}
