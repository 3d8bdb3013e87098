//! Scenario tests of the partition engine: documents in, effects out, no I/O. This file
//! holds the helpers, the `scenarios!` macro and the list of every scenario; the scenarios
//! are in one file per topic, `coverage` checks the lifecycle's transitions against them, and
//! `props` holds the property tests.

/// Declares scenario tests: each fn is a `#[test]` and goes into the module's `SCENARIOS`, so
/// that the coverage test can run them all again (see [`ALL_SCENARIOS`]).
macro_rules! scenarios {
    ($($(#[$meta:meta])* fn $name:ident() $body:block)*) => {
        $($(#[$meta])* #[test] fn $name() $body)*

        /// Every scenario of this module, by name.
        pub(super) const SCENARIOS: &[super::Scenario] = &[$((stringify!($name), $name as fn())),*];
    };
}

mod claims;
mod control;
mod coverage;
mod coverage_items;
mod data;
mod deadlines;
mod execution;
mod failures;
mod fence;
mod inputs;
mod items;
mod loops;
mod loops_combined;
mod pause;
mod people;
mod props;
mod props_items;
mod recovery;
mod retire;
mod routing;
mod rules;
mod speakers;
mod storage;
mod stored_items;
mod sync;
mod timers;

/// A scenario test: its name and its body.
pub(crate) type Scenario = (&'static str, fn());

/// Every scenario test, module by module.
pub(crate) const ALL_SCENARIOS: &[&[Scenario]] = &[
    claims::SCENARIOS,
    deadlines::SCENARIOS,
    control::SCENARIOS,
    data::SCENARIOS,
    execution::SCENARIOS,
    failures::SCENARIOS,
    fence::SCENARIOS,
    inputs::SCENARIOS,
    items::SCENARIOS,
    pause::SCENARIOS,
    loops::SCENARIOS,
    loops_combined::SCENARIOS,
    recovery::SCENARIOS,
    routing::SCENARIOS,
    rules::SCENARIOS,
    speakers::SCENARIOS,
    storage::SCENARIOS,
    sync::SCENARIOS,
    timers::SCENARIOS,
];

use super::*;
use mobiwf_proto::{
    ActivityId, ControlInstance, InstanceId, Overdue, PartitionId, PartitionResult, Report,
    Withdraw,
};
use mobiwf_proto::{ActivityState, Control, Message, Outcome, StateSet};

const PARTITION_1: &str = include_str!("../../../examples/paper/partition-1.xml");
const PARTITION_2: &str = include_str!("../../../examples/paper/partition-2.xml");

/// One activity of a test document; `..A::default()` for what a test does not care about
/// (contingency -1, no command, no timers, no retries).
struct A {
    id: u64,
    /// More child elements, as XML (`<kind>manual</kind>`).
    extra: &'static str,
    contingency: i64,
    /// (precondition, local).
    pre: &'static [(u64, bool)],
    /// (adjacent, location); a location starting with `/remote` is another partner.
    adj: &'static [(u64, &'static str)],
    /// `<command>`.
    command: Option<&'static str>,
    /// The activity's `<timeOut>`, seconds.
    time_out: u32,
    /// `<timeToWait>`, seconds.
    time_to_wait: u32,
    /// `<retries>`: (count, wait in seconds).
    retries: Option<(u32, u32)>,
    /// (precondition, `timeOut` in seconds) for preconditions that have one.
    pre_time_out: &'static [(u64, u32)],
    /// `<depends>` content (a rule as XML), if any.
    depends: Option<&'static str>,
    /// (adjacent, `<states>` text) for adjacents that a rule names this activity for.
    adj_states: &'static [(u64, &'static str)],
    /// `<class>`, its task class.
    class: Option<&'static str>,
}

impl Default for A {
    fn default() -> A {
        A {
            id: 0,
            extra: "",
            contingency: -1,
            pre: &[],
            adj: &[],
            command: None,
            time_out: 0,
            time_to_wait: 0,
            retries: None,
            pre_time_out: &[],
            depends: None,
            adj_states: &[],
            class: None,
        }
    }
}

fn doc(instance: u64, acts: &[A]) -> String {
    let mut s = format!("<workflow id=\"{instance}\"><activities>");
    for a in acts {
        let mut extra = a.extra.to_owned();
        if a.time_out > 0 {
            extra += &format!("<timeOut>{}</timeOut>", a.time_out);
        }
        if let Some(command) = a.command {
            extra += &format!("<command>{command}</command>");
        }
        if let Some((count, wait)) = a.retries {
            extra += &format!("<retries><count>{count}</count><wait>{wait}</wait></retries>");
        }
        if let Some(class) = a.class {
            extra += &format!("<class>{class}</class>");
        }
        s += &format!(
            "<activity id=\"{}\"><nameActivity>N{}</nameActivity><status>0</status>\
             <responseImmediate>{}</responseImmediate><timeToWait>{}</timeToWait>\
             <contingencyActivityId>{}</contingencyActivityId>{extra}<preconditions>",
            a.id,
            a.id,
            u8::from(a.adj.iter().any(|(_, l)| l.starts_with("/remote"))),
            a.time_to_wait,
            a.contingency,
        );
        for (p, local) in a.pre {
            let time_out = a
                .pre_time_out
                .iter()
                .find(|(id, _)| id == p)
                .map_or(0, |(_, t)| *t);
            s += &format!(
                "<precondition id=\"{p}\"><status>0</status><local>{}</local>\
                 <timeOut>{time_out}</timeOut></precondition>",
                u8::from(*local)
            );
        }
        s += "</preconditions>";
        if let Some(rule) = a.depends {
            s += &format!("<depends>{rule}</depends>");
        }
        s += "<adjacents>";
        for (id, loc) in a.adj {
            let states = a
                .adj_states
                .iter()
                .find(|(a, _)| a == id)
                .map_or(String::new(), |(_, s)| format!("<states>{s}</states>"));
            s += &format!("<adjacent id=\"{id}\"><ip>{loc}</ip>{states}</adjacent>");
        }
        s += "</adjacents></activity>";
    }
    s + "</activities></workflow>"
}

fn deploy(e: &mut Engine, instance: u64, partition: u64, document: &str) -> Vec<Effect> {
    e.apply(
        1000,
        Input::Deploy(mobiwf_proto::Deploy {
            instance: InstanceId(instance),
            partition: PartitionId(partition),
            document: document.to_owned(),
            responsible: None,
            hour_ms: None,
            inputs: Default::default(),
            runs_on: Vec::new(),
        }),
    )
    .expect("deploy")
}

fn notified(e: &mut Engine, instance: u64, activity: u64, outcome: Outcome) -> Vec<Effect> {
    e.apply(
        2000,
        Input::Notified(crate::Notified {
            from: None,
            notify: mobiwf_proto::Notify::new(InstanceId(instance), ActivityId(activity), outcome),
            missing: Vec::new(),
        }),
    )
    .expect("notified")
}

fn finished(
    e: &mut Engine,
    instance: u64,
    activity: u64,
    ok: bool,
    by: Finisher,
) -> Result<Vec<Effect>, Refusal> {
    e.apply(
        3000,
        Input::Finished(crate::Ended {
            written: Vec::new(),
            instance: InstanceId(instance),
            activity: ActivityId(activity),
            finish: crate::Finish::of(ok, (!ok).then(|| "exit status 1".to_owned()), None),
            by,
            attempt: 0,
        }),
    )
}

fn notifies(effects: &[Effect]) -> Vec<(String, u64, Outcome)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Partner(loc),
                message:
                    Message::Notify(mobiwf_proto::Notify {
                        activity, outcome, ..
                    }),
            } => Some((loc.to_string(), activity.0, *outcome)),
            _ => None,
        })
        .collect()
}

fn to_controller(effects: &[Effect]) -> Vec<&Message> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Controller,
                message,
            } => Some(message),
            _ => None,
        })
        .collect()
}

fn state(e: &Engine, instance: u64, activity: u64) -> ActivityState {
    e.record(InstanceId(instance), ActivityId(activity))
        .expect("record")
        .state
}

fn detail(e: &Engine, instance: u64, activity: u64) -> String {
    let rec = e
        .record(InstanceId(instance), ActivityId(activity))
        .expect("record");
    rec.detail.clone().unwrap_or_default()
}

/// Applies an input at a time of the virtual clock (ms).
fn at(e: &mut Engine, now_ms: u64, input: Input) -> Vec<Effect> {
    e.apply(now_ms, input).expect("applied")
}

fn tick(e: &mut Engine, now_ms: u64) -> Vec<Effect> {
    at(e, now_ms, Input::Tick)
}

fn notify_at(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    outcome: Outcome,
) -> Vec<Effect> {
    let input = Input::Notified(crate::Notified {
        from: None,
        notify: mobiwf_proto::Notify::new(InstanceId(instance), ActivityId(activity), outcome),
        missing: Vec::new(),
    });
    at(e, now_ms, input)
}

/// Try `attempt` of an activity's command ended.
fn ended(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: u64,
    ok: bool,
    attempt: u32,
) -> Vec<Effect> {
    let input = Input::Finished(crate::Ended {
        written: Vec::new(),
        instance: InstanceId(instance),
        activity: ActivityId(activity),
        finish: crate::Finish::of(ok, (!ok).then(|| "exit status 1".to_owned()), None),
        by: Finisher::Command,
        attempt,
    });
    at(e, now_ms, input)
}

fn substitute(e: &mut Engine, now_ms: u64, instance: u64, replaced: u64, by: u64) -> Vec<Effect> {
    let input = Input::Substitute {
        peer: None,
        instance: InstanceId(instance),
        replaced: ActivityId(replaced),
        by: ActivityId(by),
    };
    at(e, now_ms, input)
}

fn withdraw(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activities: &[u64],
    reason: &str,
) -> Vec<Effect> {
    let input = Input::Withdraw(Withdraw {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activities: activities.iter().copied().map(ActivityId).collect(),
        reason: reason.to_owned(),
        passes: std::collections::BTreeMap::new(),
    });
    at(e, now_ms, input)
}

fn control(e: &mut Engine, now_ms: u64, instance: u64, action: Control) -> Vec<Effect> {
    let instance = InstanceId(instance);
    at(
        e,
        now_ms,
        Input::Control(ControlInstance {
            instance,
            action,
            order: 0,
        }),
    )
}

/// (activity, attempt) of each command started.
fn executes(effects: &[Effect]) -> Vec<(u64, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Execute {
                activity, attempt, ..
            } => Some((activity.0, *attempt)),
            _ => None,
        })
        .collect()
}

/// (activity, attempt) of each command killed.
fn kills(effects: &[Effect]) -> Vec<(u64, u32)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Kill {
                activity, attempt, ..
            } => Some((activity.0, *attempt)),
            _ => None,
        })
        .collect()
}

/// (activity, state) of each immediate report to the controller.
fn reports(effects: &[Effect]) -> Vec<(u64, ActivityState)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::Report(Report { record, .. }) => Some((record.activity.0, record.state)),
            _ => None,
        })
        .collect()
}

/// The states in the partition result sent, if one was.
fn result_of(effects: &[Effect]) -> Option<Vec<(u64, ActivityState)>> {
    to_controller(effects).into_iter().find_map(|m| match m {
        Message::PartitionResult(PartitionResult { activities, .. }) => {
            Some(activities.iter().map(|r| (r.activity.0, r.state)).collect())
        }
        _ => None,
    })
}

/// (waiting, precondition, timeOut) of each overdue report.
fn overdues(effects: &[Effect]) -> Vec<(u64, u64, u32)> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::Overdue(Overdue {
                waiting,
                precondition,
                time_out_secs,
                ..
            }) => Some((waiting.0, precondition.0, *time_out_secs)),
            _ => None,
        })
        .collect()
}

/// The engine a restarted node builds from what the first one wrote (through JSON, as the
/// store holds it). Call it once per engine: it writes what changed since the start.
fn restart(e: &mut Engine) -> Engine {
    let changes = e.take_changes().expect("changes");
    let runs = changes
        .runs
        .into_iter()
        .map(|r| Run::from_stored(&r.state, r.document).expect("stored run"))
        .collect();
    let known = decode_known(changes.known);
    Engine::restore(runs, known)
}

/// What is known of each instance, decoded from the store's form.
fn decode_known(stored: Vec<StoredKnown>) -> Vec<(InstanceId, Known)> {
    stored
        .into_iter()
        .map(|k| (k.instance, serde_json::from_slice(&k.state).expect("known")))
        .collect()
}

/// Activity 2 waits for activity 1 of another partner.
fn waits_for_remote_1(instance: u64) -> String {
    doc(
        instance,
        &[A {
            id: 2,
            command: Some("true"),
            pre: &[(1, false)],
            ..A::default()
        }],
    )
}
