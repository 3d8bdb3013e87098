//! What an activity tells the partners of its successors: at its end one notification per
//! partner (its outcome, the states a rule there names, its flag, where its routes led, and
//! the instance data that partner's activities read), and the non-final states that partners'
//! rules look at as they are entered.

use std::collections::BTreeSet;

use mobiwf_proto::{ActivityId, ActivityState, DataValue, Location, Message, StateSet};
use mobiwf_xml_schema::{PartitionActivity, routed_to};

use crate::run::{self, Progress, Run, RunKey};
use crate::{Effect, Engine, Target};

/// What the partners of an activity's successors hear of its end: one notification per
/// partner, however many of its activities wait for this one, with the states it entered
/// when a rule there names it, its completion flag, and where its routes led. Without an
/// outcome (its successors wait for its contingency activity), only the rules hear of it.
impl Engine {
    pub(crate) fn notifications(
        &self,
        key: RunKey,
        act: &PartitionActivity,
        state: ActivityState,
    ) -> Vec<Effect> {
        let Some(run) = self.runs.get(&key) else {
            return Vec::new();
        };
        let activity = act.id;
        let outcome = run::outcome_of(state, act.contingency);
        let p = run.progress(activity);
        let entered = p.map(Progress::entered).unwrap_or_default();
        let flag = p.and_then(|p| p.flag.clone());
        let pass = p.map(|p| p.pass).unwrap_or_default();
        let routed =
            routed_to(&act.routes, flag.as_deref()).filter(|_| state == ActivityState::Succeeded);
        // Tells a partner's rerun still on its way that this end came after it.
        let rerun = self.known.get(&key.instance).map_or(0, |k| k.rerun);
        let mut out = Vec::new();
        for (location, ruled, carries) in partners(run, act) {
            let entered = if ruled { entered } else { StateSet::EMPTY };
            let data = self.carried(key.instance, &carries);
            let has_file = data.iter().any(|d| matches!(d.value, DataValue::File(_)));
            let message = match outcome {
                Some(outcome) => Message::Notify(mobiwf_proto::Notify {
                    pass,
                    instance: key.instance,
                    activity,
                    outcome,
                    entered,
                    flag: flag.clone(),
                    routed: routed.clone(),
                    data,
                    // The daemon puts the small files' contents inline before sending.
                    files: Vec::new(),
                    holder: has_file.then(|| self.location().clone()),
                    rerun,
                }),
                None if ruled => Message::StateChanged(mobiwf_proto::StateChanged {
                    pass,
                    instance: key.instance,
                    activity,
                    entered,
                }),
                None => continue,
            };
            out.push(Effect::Send {
                to: partner_at(location),
                message,
            });
        }
        out
    }
}

/// The partner at an adjacent's location (its `ip`). The run keeps the document's text, its
/// one copy of the address, and reads the address from it for each message it makes: the node
/// checked the remote adjacents' locations when it took the document
/// (`Engine::set_read_location`), so one that names no peer can only come from a run stored
/// before that check, and goes to the daemon as it always did (whose delivery refuses it and
/// records the refusal).
fn partner_at(location: &str) -> Target {
    Target::Partner(Location::lenient(location))
}

/// The partners of an activity's remote adjacents, each once, in document order: its
/// location, whether a dependency rule there names the activity, and the data names its
/// notification carries.
fn partners<'a>(
    run: &Run,
    act: &'a PartitionActivity,
) -> Vec<(&'a str, bool, BTreeSet<&'a String>)> {
    let mut out: Vec<(&str, bool, BTreeSet<&String>)> = Vec::new();
    for adjacent in act
        .adjacents
        .iter()
        .filter(|a| run.activity(a.id).is_none())
    {
        let ruled = !adjacent.states.is_empty();
        let carries = adjacent.carries.iter();
        match out.iter_mut().find(|(l, _, _)| *l == adjacent.location) {
            Some((_, r, c)) => {
                *r |= ruled;
                c.extend(carries);
            }
            None => out.push((&adjacent.location, ruled, carries.collect())),
        }
    }
    out
}

/// The messages an activity that entered `state` (not final: its end goes with
/// `conclude`) sends: one per partner whose dependency rules look at that state.
pub(crate) fn state_changed(
    run: &Run,
    key: RunKey,
    activity: ActivityId,
    state: ActivityState,
) -> Vec<Effect> {
    let Some(act) = run.activity(activity).filter(|_| !state.is_final()) else {
        return Vec::new();
    };
    let mut locations: Vec<&str> = Vec::new();
    for adjacent in &act.adjacents {
        if run.activity(adjacent.id).is_none()
            && adjacent.states.contains(&state)
            && !locations.contains(&adjacent.location.as_str())
        {
            locations.push(&adjacent.location);
        }
    }
    let entered = run
        .progress(activity)
        .map(Progress::entered)
        .unwrap_or_default();
    let pass = run.progress(activity).map(|p| p.pass).unwrap_or_default();
    locations
        .into_iter()
        .map(|location| Effect::Send {
            to: partner_at(location),
            message: Message::StateChanged(mobiwf_proto::StateChanged {
                pass,
                instance: key.instance,
                activity,
                entered,
            }),
        })
        .collect()
}
