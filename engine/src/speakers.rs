//! Who may say what about an activity: a partner's word (a notification, a state change, a loop's
//! new pass) about an
//! activity is taken only from the peer that runs it, as the controller said when it deployed the
//! instance here (`Deploy::runs_on`) or placed a contingency activity (`Substitute`), or from the
//! controller itself. A word that comes before this node knows who runs the activity (its
//! deployment is still on the way) is kept, bounded, and judged when it does; a word from another
//! peer is refused and said so ([`Effect::Refused`] for a kept one).

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, Datum, InstanceId, NodeId, Outcome, Pass, StateSet};
use serde::{Deserialize, Serialize};

use crate::data::{Carried, Missing};
use crate::notify::Word;
use crate::{Changed, Effect, Engine, Notified, Passed, Refusal};

/// The most words kept for one instance before this node knows who runs their activities.
pub const MAX_EARLY_WORDS: usize = 256;

/// The most instances with words kept while they are not deployed here. A word past either
/// limit is [`Refusal::TooEarly`], which the node leaves unanswered rather than refused: its
/// sender tries again, by when the deployment may have come (a stranger's flood of words about
/// made-up instances must not make a partner's real word be dropped).
pub const MAX_EARLY_INSTANCES: usize = 1024;

/// Whether a word is taken now.
pub(crate) enum Say {
    /// From the controller or the activity's peer.
    Yes,
    /// Who runs the activity is not known yet: keep it.
    Early(NodeId),
}

/// A word kept until this node knows who runs its activity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlyWord {
    /// Who said it.
    pub from: NodeId,
    /// About which activity.
    pub activity: ActivityId,
    /// What.
    pub said: Said,
}

/// What a kept word says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Said {
    /// The activity ended (a notification).
    End {
        /// What it means for the successors.
        outcome: Outcome,
        /// The states it entered.
        #[serde(default, skip_serializing_if = "StateSet::is_empty")]
        entered: StateSet,
        /// Its completion flag.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flag: Option<String>,
        /// Where its routes led.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        routed: Option<Vec<ActivityId>>,
        /// The data it carried.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        data: Vec<Datum>,
        /// The files among them not held here yet.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        missing: Vec<Missing>,
        /// The pass it ended (the first when absent).
        #[serde(default, skip_serializing_if = "Pass::is_first")]
        pass: Pass,
        /// The sender's latest rerun applied (`Notify::rerun`; absent: none).
        #[serde(default, skip_serializing_if = "is_zero")]
        rerun: u64,
    },
    /// The activity entered states.
    States {
        /// Every state entered so far.
        entered: StateSet,
        /// The pass it is in (the first when absent).
        #[serde(default, skip_serializing_if = "Pass::is_first")]
        pass: Pass,
    },
    /// The loop the activity ends runs again: its body starts `pass`.
    NewPass {
        /// The pass that starts.
        pass: Pass,
        /// The loop's body.
        activities: Vec<ActivityId>,
        /// The data it carried.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        data: Vec<Datum>,
        /// The files among them not held here yet.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        missing: Vec<Missing>,
    },
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Engine {
    /// A partner's word that an activity ended ([`Input::Notified`]): taken, kept for
    /// later, or refused.
    pub(crate) fn notified_by(
        &mut self,
        notified: Notified,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Notified {
            from,
            notify,
            missing,
        } = notified;
        let said = Said::End {
            outcome: notify.outcome,
            entered: notify.entered,
            flag: notify.flag,
            routed: notify.routed,
            data: notify.data,
            missing,
            pass: notify.pass,
            rerun: notify.rerun,
        };
        self.partner_word(from, notify.instance, notify.activity, said, fx)
    }

    /// A partner's word that the loop its activity ends runs again ([`Input::NewPass`]):
    /// taken from the peer that runs the loop's end, kept for later, or refused.
    pub(crate) fn new_pass_by(
        &mut self,
        passed: Passed,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Passed {
            from,
            new_pass,
            missing,
        } = passed;
        let said = Said::NewPass {
            pass: new_pass.pass,
            activities: new_pass.activities,
            data: new_pass.data,
            missing,
        };
        self.partner_word(from, new_pass.instance, new_pass.by, said, fx)
    }

    /// A partner's word that an activity entered states ([`Input::StateChanged`]): taken,
    /// kept for later, or refused.
    pub(crate) fn changed_by(
        &mut self,
        changed: Changed,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Changed { from, change } = changed;
        let said = Said::States {
            entered: change.entered,
            pass: change.pass,
        };
        self.partner_word(from, change.instance, change.activity, said, fx)
    }

    /// A partner's word about `activity` of `instance`: taken, kept for later, or refused.
    fn partner_word(
        &mut self,
        from: Option<NodeId>,
        instance: InstanceId,
        activity: ActivityId,
        said: Said,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        match self.may_say(instance, activity, from.as_ref())? {
            Say::Yes => self.take_word(instance, activity, said, fx),
            Say::Early(from) => self.keep_early(instance, from, activity, said)?,
        }
        Ok(())
    }

    /// Whether `from` (`None`: the controller) may speak of `activity` of `instance`.
    fn may_say(
        &self,
        instance: InstanceId,
        activity: ActivityId,
        from: Option<&NodeId>,
    ) -> Result<Say, Refusal> {
        let Some(from) = from else {
            return Ok(Say::Yes);
        };
        let runs_on = self.known.get(&instance).map(|k| &k.runs_on);
        match runs_on.and_then(|r| r.get(&activity)) {
            Some(peer) if peer == from => Ok(Say::Yes),
            Some(peer) => Err(Refusal::NotTheSpeaker {
                from: from.clone(),
                reason: format!(
                    "peer {from} does not run activity {activity} of instance {instance} \
                     ({peer} does): its word about it is refused"
                ),
            }),
            // Deployed here before deployments said who runs what: everyone's word.
            None if runs_on.is_none_or(BTreeMap::is_empty) && self.has_runs(instance) => {
                Ok(Say::Yes)
            }
            // Not known yet (the deployment, or the contingency activity's placement, is on
            // its way): kept and judged then.
            None => Ok(Say::Early(from.clone())),
        }
    }

    fn has_runs(&self, instance: InstanceId) -> bool {
        self.runs.keys().any(|k| k.instance == instance)
    }

    /// Keeps a word until who runs its activity is known.
    fn keep_early(
        &mut self,
        instance: InstanceId,
        from: NodeId,
        activity: ActivityId,
        said: Said,
    ) -> Result<(), Refusal> {
        let known = self.known.get(&instance);
        let kept = known.map_or(0, |k| k.early.len());
        if kept >= MAX_EARLY_WORDS {
            return Err(Refusal::TooEarly {
                what: format!("{MAX_EARLY_WORDS} words kept for instance {instance}"),
            });
        }
        if kept == 0 {
            let instances = self.known.values().filter(|k| !k.early.is_empty()).count();
            if instances >= MAX_EARLY_INSTANCES {
                return Err(Refusal::TooEarly {
                    what: format!("{MAX_EARLY_INSTANCES} instances with words kept"),
                });
            }
        }
        let word = EarlyWord {
            from,
            activity,
            said,
        };
        self.known.entry(instance).or_default().early.push(word);
        self.touch_known(instance);
        Ok(())
    }

    /// Takes a word whose speaker is known to be right.
    fn take_word(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        said: Said,
        fx: &mut Vec<Effect>,
    ) {
        match said {
            Said::End {
                outcome,
                entered,
                flag,
                routed,
                data,
                missing,
                pass,
                rerun,
            } => {
                if !self.word_pass(instance, activity, pass) {
                    return;
                }
                let word = Word {
                    outcome,
                    entered,
                    flag,
                    routed,
                    rerun,
                };
                self.notified(instance, activity, word, Carried { data, missing }, fx);
            }
            Said::States { entered, pass } => {
                if self.word_pass(instance, activity, pass) {
                    self.state_changed(instance, activity, entered, fx);
                }
            }
            Said::NewPass {
                pass,
                activities,
                data,
                missing,
            } => self.passed(instance, pass, &activities, Carried { data, missing }, fx),
        }
    }

    /// Who runs which activity of `instance`, as the controller says (a later word wins).
    pub(crate) fn learn_speakers(
        &mut self,
        instance: InstanceId,
        runs_on: BTreeMap<ActivityId, NodeId>,
    ) {
        if runs_on.is_empty() {
            return;
        }
        let known = self.known.entry(instance).or_default();
        let before = known.runs_on.clone();
        known.runs_on.extend(runs_on);
        if known.runs_on != before {
            self.touch_known(instance);
        }
    }

    /// Judges the words kept for `instance` now that more is known of who runs what: taken,
    /// refused (said as [`Effect::Refused`]), or kept still.
    pub(crate) fn replay_early(&mut self, instance: InstanceId, fx: &mut Vec<Effect>) {
        let Some(known) = self.known.get_mut(&instance) else {
            return;
        };
        if known.early.is_empty() {
            return;
        }
        let words = std::mem::take(&mut known.early);
        self.touch_known(instance);
        for word in words {
            match self.may_say(instance, word.activity, Some(&word.from)) {
                Ok(Say::Yes) => self.take_word(instance, word.activity, word.said, fx),
                Ok(Say::Early(_)) => {
                    self.known.entry(instance).or_default().early.push(word);
                }
                Err(refusal) => fx.push(Effect::Refused {
                    from: word.from,
                    instance,
                    activity: word.activity,
                    reason: refusal.to_string(),
                }),
            }
        }
    }
}
