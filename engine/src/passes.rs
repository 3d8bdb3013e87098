//! Loops on the node (the SERIAL_NO of *A lightweight workflow engine based on a relational
//! structure* (He, Li, Jiao, Liu), §3.2.3 and §5): when the end of a loop succeeds with its
//! `while` flag and fewer than `max` passes ran, its body runs again as a new pass: each
//! activity of it takes the next serial number and waits again from the start
//! ([`Event::NewPass`]). The end's node starts the pass of what it holds and tells every other
//! partner of the body directly ([`NewPass`], peer to peer like a notification, with the data
//! the next pass reads); its successors outside the body hear of it only when the loop ends
//! with another flag. With the flag after `max` passes the end fails ("loop ran its N
//! passes") and its contingency applies.
//!
//! Every word about an activity names its pass: a word from an earlier pass than this node
//! knows of is stale and ignored, one from a later pass means that pass began (its
//! [`NewPass`] may come after it, from another partner): what was heard of the activity is
//! forgotten and the word kept.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{ActivityId, DataValue, InstanceId, Location, Message, NewPass, Pass};
use mobiwf_xml_schema::Loop;

use crate::data::Carried;
use crate::known::Known;
use crate::lifecycle::{Event, Life};
use crate::progress::report;
use crate::run::RunKey;
use crate::{Effect, Engine, Target};

/// What the success of an activity with a flag means for a loop it ends.
pub(crate) enum Turn {
    /// It ends no loop, or its flag is not the loop's: it succeeds as any activity.
    Out,
    /// Its body runs again: this pass.
    Again(Pass),
    /// Its flag asks for another pass after the last one: it fails.
    Spent(u32),
}

impl Engine {
    /// What the success of `activity` (its flag set) means for the loop it ends.
    pub(crate) fn loop_turn(&self, key: RunKey, activity: ActivityId) -> Turn {
        let Some(run) = self.runs.get(&key) else {
            return Turn::Out;
        };
        let (Some(act), Some(p)) = (run.activity(activity), run.progress(activity)) else {
            return Turn::Out;
        };
        let Some(l) = &act.loop_back else {
            return Turn::Out;
        };
        if p.flag.as_deref() != Some(l.while_flag.as_str()) {
            return Turn::Out;
        }
        if p.pass.0 >= l.max {
            return Turn::Spent(l.max);
        }
        Turn::Again(p.pass.next())
    }

    /// The end of a loop succeeded with its flag: it ends its pass (the controller hears of
    /// it as of any end, its successors do not), and its body starts pass `pass`, here and on
    /// every partner of it.
    pub(crate) fn loop_again(
        &mut self,
        key: RunKey,
        end: ActivityId,
        detail: Option<String>,
        pass: Pass,
        effects: &mut Vec<Effect>,
    ) {
        if !self.step(key, end, Event::Succeed { detail }) {
            return;
        }
        let Some(run) = self.runs.get(&key) else {
            return;
        };
        let (Some(act), Some(record)) = (run.activity(end), run.record(end)) else {
            return;
        };
        if act.response_immediate {
            effects.push(report(key, record));
        }
        let Some(l) = act.loop_back.clone() else {
            return;
        };
        effects.extend(self.pass_messages(key, end, &l, pass));
        let body: Vec<ActivityId> = l.body_ids().collect();
        self.begin_pass(key.instance, &body, pass, effects);
    }

    /// The [`NewPass`] to each partner that holds activities of the body and none of this
    /// node's runs of the instance: the body, and the data its activities there read.
    fn pass_messages(&self, key: RunKey, end: ActivityId, l: &Loop, pass: Pass) -> Vec<Effect> {
        let here: BTreeSet<ActivityId> = self
            .keys_of(key.instance)
            .iter()
            .filter_map(|k| self.runs.get(k))
            .flat_map(|r| r.doc().activities.iter().map(|a| a.id))
            .collect();
        let mut partners: BTreeMap<&str, BTreeSet<&String>> = BTreeMap::new();
        for m in l.body.iter().filter(|m| !here.contains(&m.id)) {
            partners
                .entry(m.location.as_str())
                .or_default()
                .extend(&m.carries);
        }
        let activities: Vec<ActivityId> = l.body_ids().collect();
        partners
            .into_iter()
            .map(|(location, names)| {
                let data = self.carried(key.instance, &names);
                let has_file = data.iter().any(|d| matches!(d.value, DataValue::File(_)));
                Effect::Send {
                    to: Target::Partner(Location::lenient(location)),
                    message: Message::NewPass(NewPass {
                        instance: key.instance,
                        by: end,
                        pass,
                        activities: activities.clone(),
                        data,
                        // The daemon puts the small files' contents inline before sending.
                        files: Vec::new(),
                        holder: has_file.then(|| self.location().clone()),
                    }),
                }
            })
            .collect()
    }

    /// A partner says the loop its activity `by` ends runs again (taken from the peer that
    /// runs `by`, `crate::speakers`): the data it carries is kept, then the body starts
    /// `pass` here.
    pub(crate) fn passed(
        &mut self,
        instance: InstanceId,
        pass: Pass,
        activities: &[ActivityId],
        carried: Carried,
        effects: &mut Vec<Effect>,
    ) {
        self.take_data(instance, carried, effects);
        self.begin_pass(instance, activities, pass, effects);
    }

    /// `activities` of `instance` start `pass`, where they are in an earlier one: what was
    /// heard of their earlier passes is forgotten, and this node's own, which ended their
    /// pass, wait again from the start, their `timeToWait` and preconditions' `timeOut`s
    /// counted from now; the runs go on.
    pub(crate) fn begin_pass(
        &mut self,
        instance: InstanceId,
        activities: &[ActivityId],
        pass: Pass,
        effects: &mut Vec<Effect>,
    ) {
        for &a in activities {
            self.word_pass(instance, a, pass);
        }
        let now_ms = mobiwf_proto::Millis::from_micros(self.now_us).as_u64();
        for key in self.keys_of(instance) {
            let again: Vec<ActivityId> = {
                let Some(run) = self.runs.get(&key) else {
                    continue;
                };
                activities
                    .iter()
                    .copied()
                    .filter(|a| run.progress(*a).is_some_and(|p| p.pass < pass))
                    .collect()
            };
            if again.is_empty() {
                continue;
            }
            if let Some(run) = self.runs.get_mut(&key) {
                run.overdue.retain(|(waiting, _)| !again.contains(waiting));
            }
            for a in again {
                let ordered = self.known.get(&instance).is_some_and(ends_every_pass);
                let ended = self
                    .runs
                    .get(&key)
                    .and_then(|r| r.life(a))
                    .is_some_and(|l| ended_its_pass(l, ordered));
                // The body ends its pass before its end does (it joins with and): one that
                // has not is left to its pass, whose words no longer count.
                if ended
                    && self.step(key, a, Event::NewPass)
                    && let Some(run) = self.runs.get_mut(&key)
                {
                    run.set_pass(a, pass, now_ms);
                }
            }
            // The pass's waiting timers count from now (`set_pass`); the rest of the run's,
            // outside the body, still from its deployment.
            if let Some(run) = self.runs.get_mut(&key) {
                run.reported = false;
            }
            self.touch_run(key);
        }
        self.advance_instance(instance, effects);
    }

    /// This node's activities of `key` that ended their pass after a later one began (its
    /// [`NewPass`] came while they had not ended theirs: their node had not heard yet that
    /// the controller decided it, say) begin that later pass now, as `begin_pass` would have
    /// had them. True when one did.
    pub(crate) fn catch_up_passes(&mut self, key: RunKey) -> bool {
        let (Some(known), Some(run)) = (self.known.get(&key.instance), self.runs.get(&key)) else {
            return false;
        };
        let ordered = ends_every_pass(known);
        let behind: Vec<(ActivityId, Pass)> = known
            .passes
            .iter()
            .filter(|(a, pass)| {
                run.progress(**a)
                    .is_some_and(|p| p.pass < **pass && ended_its_pass(p.life(), ordered))
            })
            .map(|(a, pass)| (*a, *pass))
            .collect();
        if behind.is_empty() {
            return false;
        }
        let now_ms = mobiwf_proto::Millis::from_micros(self.now_us).as_u64();
        let mut moved = false;
        for (a, pass) in behind {
            if self.step(key, a, Event::NewPass)
                && let Some(run) = self.runs.get_mut(&key)
            {
                run.set_pass(a, pass, now_ms);
                // Its partition is not done any more: its result is sent again when it is.
                run.reported = false;
                moved = true;
            }
        }
        if moved {
            self.touch_run(key);
        }
        moved
    }

    /// A word about `activity` of `instance` in `pass`: false when it is stale (an earlier
    /// pass than this node knows of); a later pass forgets what was heard of the earlier.
    pub(crate) fn word_pass(
        &mut self,
        instance: InstanceId,
        activity: ActivityId,
        pass: Pass,
    ) -> bool {
        let known = self.known.entry(instance).or_default();
        let current = known.passes.get(&activity).copied().unwrap_or_default();
        if pass < current {
            return false;
        }
        if pass > current {
            known.heard.remove(&activity);
            known.heard_in.remove(&activity);
            known.flags.remove(&activity);
            known.routed.remove(&activity);
            known.states.remove(&activity);
            known.passes.insert(activity, pass);
            self.touch_known(instance);
        }
        true
    }
}

/// Whether an activity that is `life` ended its pass, so that a later pass begins it. A
/// cancelled one did too: its node may hear a decided end that blocks it (told to a given-up
/// partition's node for a later pass) while the controller decided the pass failed and let the
/// loop's end run on; the later pass waits again and hears that end anew. Not when an operator
/// cancelled the instance or a completion activity completed it (`ordered`): those end every
/// pass.
fn ended_its_pass(life: &Life, ordered: bool) -> bool {
    match life {
        Life::Succeeded { .. } | Life::Failed { .. } => true,
        Life::Cancelled { .. } => !ordered,
        _ => false,
    }
}

/// Whether an order ended the whole instance here (`ended_its_pass`).
fn ends_every_pass(known: &Known) -> bool {
    known.cancelled || known.completed_by.is_some()
}
