//! Property tests: random sequences of inputs (deployments of the paper's partitions and of
//! small generated ones, notifications, ends of tries and of people's work, ticks as time
//! passes, withdrawals, substitutions, operator control, reruns and compensations) with
//! restarts in between, rebuilt from the changes the engine handed over as the daemon does
//! (`node/src/state.rs`). Whatever happens: a final activity never changes again except by a
//! rerun, no work starts after a cancel or while the
//! instance is interrupted, a refused input changes nothing, and the engine rebuilt from its
//! stored changes is the live engine.

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityRecord, ControlInstance, PartitionId, StateSet, Withdraw};
use proptest::prelude::*;

use super::*;

/// Activity ids a generated document may hold, and the ids its remote preconditions and its
/// contingency name.
const LOCAL_IDS: [u64; 4] = [1, 2, 3, 4];
const CONTINGENCY_ID: u64 = 50;
const REMOTE_BASE: u64 = 100;

/// One generated activity: (kind, preconditions as (id, local), contingency, remote adjacent,
/// timeOut, timeToWait, retries, remote precondition timeOut).
#[derive(Debug, Clone)]
struct GenActivity {
    kind: u8,
    local_pre: Vec<u64>,
    remote_pre: bool,
    contingency: i64,
    remote_adjacent: bool,
    time_out: u32,
    time_to_wait: u32,
    retries: Option<(u32, u32)>,
    pre_time_out: u32,
    /// 0: nothing more; 1: a dependency rule; 2: an or-merge; 3: a 2-vote merge (merges
    /// only with two preconditions or more); the remote adjacent's rule names RUNNING when odd.
    process: u8,
}

fn gen_activity(index: usize) -> impl Strategy<Value = GenActivity> {
    let lower: Vec<u64> = LOCAL_IDS[..index].to_vec();
    (
        0u8..3,
        proptest::sample::subsequence(lower.clone(), 0..=lower.len()),
        any::<bool>(),
        prop_oneof![Just(-1i64), Just(0), Just(CONTINGENCY_ID as i64)],
        any::<bool>(),
        prop_oneof![Just(0u32), 1u32..4],
        prop_oneof![Just(0u32), 1u32..6],
        proptest::option::of((1u32..3, 0u32..3)),
        prop_oneof![Just(0u32), 1u32..5],
        0u8..4,
    )
        .prop_map(
            |(kind, local_pre, remote_pre, contingency, remote_adjacent, t, w, r, p, process)| {
                GenActivity {
                    kind,
                    local_pre,
                    remote_pre,
                    contingency,
                    remote_adjacent,
                    time_out: t,
                    time_to_wait: w,
                    retries: r,
                    pre_time_out: p,
                    process,
                }
            },
        )
}

fn leak<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

/// The document of generated activities `1..=n` for `instance`.
fn gen_doc(instance: u64, acts: &[GenActivity]) -> String {
    let acts: Vec<A> = acts
        .iter()
        .zip(LOCAL_IDS)
        .map(|(g, id)| {
            let mut pre: Vec<(u64, bool)> = g.local_pre.iter().map(|p| (*p, true)).collect();
            let mut pre_time_out = Vec::new();
            if g.remote_pre {
                pre.push((REMOTE_BASE + id, false));
                pre_time_out.push((REMOTE_BASE + id, g.pre_time_out));
            }
            let (kind, command) = match g.kind {
                0 => ("", Some("true")),
                1 => ("", None),
                _ => ("<kind>manual</kind>", None),
            };
            let merge = match (g.process, pre.len() >= 2) {
                (2, true) => "<merge>or</merge>",
                (3, true) => r#"<merge votes="2">vote</merge>"#,
                _ => "",
            };
            let extra: &'static str = Box::leak(format!("{kind}{merge}").into_boxed_str());
            // A rule over the remote predecessor-to-be and a lower local activity.
            let depends = (g.process == 1).then(|| {
                let lower = g.local_pre.first().copied().unwrap_or(REMOTE_BASE + id + 50);
                let rule = format!(
                    r#"<or><term activity="{}" state="RUNNING"/><and><term activity="{lower}" state="SUCCEEDED"/><term activity="{}" state="FAILED"/></and></or>"#,
                    REMOTE_BASE + id,
                    REMOTE_BASE + id
                );
                &*Box::leak(rule.into_boxed_str())
            });
            A {
                id,
                extra,
                contingency: g.contingency,
                pre: leak(pre),
                adj: if g.remote_adjacent {
                    &[(200, "/remote/b")]
                } else {
                    &[]
                },
                command,
                time_out: g.time_out,
                time_to_wait: g.time_to_wait,
                retries: g.retries,
                pre_time_out: leak(pre_time_out),
                depends,
                adj_states: if g.process % 2 == 1 {
                    &[(200, "RUNNING")]
                } else {
                    &[]
                },
                class: None,
            }
        })
        .collect();
    doc(instance, &acts)
}

/// What happens to the engine.
#[derive(Debug, Clone)]
enum Op {
    /// Deploy document `n` of the case's documents.
    Deploy(usize),
    Notify(u64, u64, Outcome),
    Finish {
        instance: u64,
        activity: u64,
        ok: bool,
        person: bool,
        attempt: u32,
    },
    /// Time passes by this many ms, then a tick.
    Tick(u64),
    Withdraw(u64, u64),
    Substitute(u64, u64, u64),
    Control(u64, Control),
    /// An operator reruns activities of a partition of an instance.
    Rerun(u64, u64, Vec<u64>),
    /// The controller asks for an activity's compensation, or its command ends.
    Compensate(u64, u64, u64),
    CompensationEnded(u64, u64, u64, bool),
    /// The node restarts from what it stored.
    Restart,
}

/// The instances of a case: 18 (the paper's two partitions) and the generated 1 to 3.
const INSTANCES: [u64; 4] = [18, 1, 2, 3];

fn activity_of(instance: u64) -> impl Strategy<Value = u64> {
    if instance == 18 {
        (16u64..=20).boxed()
    } else {
        prop_oneof![
            1u64..=4,
            Just(CONTINGENCY_ID),
            (REMOTE_BASE + 1)..=(REMOTE_BASE + 4)
        ]
        .boxed()
    }
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Succeeded),
        Just(Outcome::Released),
        Just(Outcome::Blocked)
    ]
}

fn op(docs: usize) -> impl Strategy<Value = Op> {
    let instance = proptest::sample::select(INSTANCES.to_vec());
    let with_activity = instance
        .clone()
        .prop_flat_map(|i| (Just(i), activity_of(i)));
    prop_oneof![
        3 => (0..docs).prop_map(Op::Deploy),
        3 => (with_activity.clone(), outcome()).prop_map(|((i, a), o)| Op::Notify(i, a, o)),
        4 => (with_activity.clone(), any::<bool>(), any::<bool>(), 0u32..3).prop_map(
            |((instance, activity), ok, person, attempt)| Op::Finish {
                instance,
                activity,
                ok,
                person,
                attempt,
            }
        ),
        4 => (0u64..4000).prop_map(Op::Tick),
        1 => with_activity.clone().prop_map(|(i, a)| Op::Withdraw(i, a)),
        1 => with_activity.clone().prop_map(|(i, a)| Op::Substitute(i, a, CONTINGENCY_ID)),
        1 => (
            proptest::sample::select(INSTANCES.to_vec()),
            prop_oneof![
                3 => Just(Control::Interrupt),
                3 => Just(Control::Resume),
                1 => Just(Control::Cancel)
            ]
        )
            .prop_map(|(i, c)| Op::Control(i, c)),
        1 => instance
            .clone()
            .prop_flat_map(|i| (Just(i), 1u64..=2, proptest::collection::vec(activity_of(i), 1..4)))
            .prop_map(|(i, p, activities)| Op::Rerun(i, p, activities)),
        1 => (with_activity.clone(), 1u64..=2).prop_map(|((i, a), p)| Op::Compensate(i, p, a)),
        1 => (with_activity, 1u64..=2, any::<bool>())
            .prop_map(|((i, a), p, ok)| Op::CompensationEnded(i, p, a, ok)),
        1 => Just(Op::Restart),
    ]
}

/// The documents of a case: the paper's two partitions and one generated per instance.
fn case() -> impl Strategy<Value = (Vec<(u64, u64, String)>, Vec<Op>)> {
    let generated = proptest::collection::vec(
        (1usize..=4).prop_flat_map(|n| (0..n).map(gen_activity).collect::<Vec<_>>()),
        3,
    );
    generated.prop_flat_map(|gens| {
        let mut docs = vec![
            (18, 1, PARTITION_1.to_owned()),
            (18, 2, PARTITION_2.to_owned()),
        ];
        for (g, instance) in gens.iter().zip([1u64, 2, 3]) {
            docs.push((instance, 1, gen_doc(instance, g)));
        }
        let n = docs.len();
        (Just(docs), proptest::collection::vec(op(n), 1..60))
    })
}

/// The daemon's store, as far as the engine's state goes (also the recovery scenarios').
#[derive(Default)]
pub(super) struct Store {
    runs: BTreeMap<RunKey, Vec<u8>>,
    docs: BTreeMap<RunKey, String>,
    known: BTreeMap<InstanceId, Vec<u8>>,
    items: BTreeMap<crate::ItemKey, Vec<u8>>,
}

impl Store {
    pub(super) fn commit(&mut self, changes: Changes) {
        for run in changes.runs {
            if let Some(document) = run.document {
                self.docs.insert(run.key, document);
            }
            self.runs.insert(run.key, run.state);
        }
        for known in changes.known {
            self.known.insert(known.instance, known.state);
        }
        for item in changes.items {
            self.items
                .insert((item.instance, item.activity), item.state);
        }
    }

    /// One instance as the store holds it, for [`Engine::readmit`].
    pub(super) fn instance(&self, instance: InstanceId) -> crate::StoredInstance {
        let runs = self
            .runs
            .iter()
            .filter(|(k, _)| k.instance == instance)
            .map(|(k, state)| Run::from_stored(state, self.docs.get(k).cloned()).expect("run"))
            .collect();
        let known = self
            .known
            .get(&instance)
            .map(|v| (instance, serde_json::from_slice(v).expect("known")));
        let items = self
            .items
            .iter()
            .filter(|((i, _), _)| *i == instance)
            .map(|(_, state)| crate::StoredItem::decode(state).expect("item"))
            .collect();
        crate::StoredInstance { runs, known, items }
    }

    pub(super) fn load(&self) -> Engine {
        let runs = self
            .runs
            .iter()
            .map(|(k, state)| Run::from_stored(state, self.docs.get(k).cloned()).expect("run"))
            .collect();
        let known = self
            .known
            .iter()
            .map(|(i, v)| (*i, serde_json::from_slice(v).expect("known")))
            .collect();
        Engine::restore(runs, known)
    }
}

/// Everything that matters of an engine's state, comparable.
#[derive(Debug, PartialEq)]
struct Snapshot {
    runs: Vec<(
        RunKey,
        mobiwf_xml_schema::PartitionDocument,
        serde_json::Value,
        Vec<Option<Progress>>,
    )>,
    known: Vec<(u64, Known)>,
    next_deadline: Option<u64>,
}

fn snapshot(e: &Engine) -> Snapshot {
    let runs = e
        .runs()
        .map(|r| {
            let progress = r
                .doc()
                .activities
                .iter()
                .map(|a| r.progress(a.id).cloned())
                .collect();
            let json = serde_json::to_value(r).expect("json");
            (r.key, r.doc().clone(), json, progress)
        })
        .collect();
    let known = INSTANCES
        .iter()
        .map(|i| (*i, e.known(InstanceId(*i)).cloned().unwrap_or_default()))
        .collect();
    Snapshot {
        runs,
        known,
        next_deadline: e.next_deadline(),
    }
}

fn input_of(op: &Op, docs: &[(u64, u64, String)]) -> Option<Input> {
    Some(match op.clone() {
        Op::Deploy(n) => {
            let (instance, partition, document) = docs.get(n)?.clone();
            Input::Deploy(mobiwf_proto::Deploy {
                instance: InstanceId(instance),
                partition: PartitionId(partition),
                document,
                responsible: None,
                hour_ms: None,
                inputs: Default::default(),
                runs_on: Vec::new(),
            })
        }
        Op::Notify(i, a, outcome) => Input::Notified(crate::Notified {
            from: None,
            notify: mobiwf_proto::Notify {
                entered: entered_for(outcome),
                ..mobiwf_proto::Notify::new(InstanceId(i), ActivityId(a), outcome)
            },
            missing: Vec::new(),
        }),
        Op::Finish {
            instance,
            activity,
            ok,
            person,
            attempt,
        } => Input::Finished(crate::Ended {
            written: Vec::new(),
            instance: InstanceId(instance),
            activity: ActivityId(activity),
            finish: crate::Finish::of(ok, (!ok).then(|| "exit status 1".to_owned()), None),
            by: [Finisher::Command, Finisher::Person][usize::from(person)],
            attempt,
        }),
        Op::Tick(_) => Input::Tick,
        Op::Withdraw(i, a) => Input::Withdraw(Withdraw {
            instance: InstanceId(i),
            partition: PartitionId(1),
            activities: vec![ActivityId(a)],
            reason: "too slow".to_owned(),
            passes: std::collections::BTreeMap::new(),
        }),
        Op::Substitute(i, replaced, by) => Input::Substitute {
            peer: None,
            instance: InstanceId(i),
            replaced: ActivityId(replaced),
            by: ActivityId(by),
        },
        Op::Control(i, action) => Input::Control(ControlInstance {
            instance: InstanceId(i),
            action,
            order: 0,
        }),
        Op::Rerun(i, p, activities) => Input::Rerun(mobiwf_proto::Rerun {
            instance: InstanceId(i),
            partition: PartitionId(p),
            activities: activities.into_iter().map(ActivityId).collect(),
            controls: 0,
            rerun: 0,
        }),
        Op::Compensate(i, p, a) => Input::Compensate(mobiwf_proto::Compensate {
            instance: InstanceId(i),
            partition: PartitionId(p),
            activity: ActivityId(a),
        }),
        Op::CompensationEnded(i, p, a, ok) => Input::CompensationEnded(mobiwf_proto::Compensated {
            instance: InstanceId(i),
            partition: PartitionId(p),
            activity: ActivityId(a),
            succeeded: ok,
            detail: (!ok).then(|| "exit status 1".to_owned()),
        }),
        Op::Restart => return None,
    })
}

/// What the test knows of the orders given, to check the engine against.
#[derive(Default)]
struct Orders {
    cancelled: std::collections::BTreeSet<InstanceId>,
    interrupted: std::collections::BTreeSet<InstanceId>,
    finals: BTreeMap<(RunKey, ActivityId), ActivityRecord>,
}

impl Orders {
    fn note(&mut self, input: &Input) {
        if let Input::Rerun(mobiwf_proto::Rerun {
            instance,
            partition,
            activities,
            ..
        }) = input
        {
            // The one way out of a final state; the instance's interruption is over.
            let key = RunKey {
                instance: *instance,
                partition: *partition,
            };
            self.finals
                .retain(|(k, a), _| *k != key || !activities.contains(a));
            self.interrupted.remove(instance);
        }
        if let Input::Control(ControlInstance {
            instance, action, ..
        }) = input
        {
            match action {
                Control::Cancel => {
                    self.cancelled.insert(*instance);
                }
                Control::Interrupt => {
                    self.interrupted.insert(*instance);
                }
                Control::Resume => {
                    self.interrupted.remove(instance);
                }
            }
        }
    }

    fn held(&self, instance: InstanceId) -> bool {
        self.cancelled.contains(&instance) || self.interrupted.contains(&instance)
    }

    /// No work started where none may start.
    fn check_starts(&self, effects: &[Effect], transitions: &[Transition]) {
        for effect in effects {
            if let Effect::Execute { key, activity, .. } = effect {
                assert!(
                    !self.held(key.instance),
                    "activity {activity} of {key:?} executed after a cancel or while interrupted"
                );
            }
        }
        for t in transitions {
            if t.state == ActivityState::Running {
                assert!(
                    !self.held(t.key.instance),
                    "activity {} of {:?} started after a cancel or while interrupted",
                    t.activity,
                    t.key
                );
            }
        }
    }

    /// A final activity never changes again (but by a rerun, which `note` takes).
    fn check_finals(&mut self, e: &Engine) {
        for run in e.runs() {
            for record in run.records() {
                let id = (run.key, record.activity);
                if let Some(first) = self.finals.get(&id) {
                    assert_eq!(first, &record, "a final activity changed");
                } else if record.state.is_final() {
                    self.finals.insert(id, record);
                }
            }
        }
    }
}

fn play(docs: &[(u64, u64, String)], ops: &[Op]) {
    let mut e = Engine::new();
    let mut store = Store::default();
    let mut orders = Orders::default();
    let mut now_ms = 1000;
    for op in ops {
        if let Op::Tick(ms) = op {
            now_ms += ms;
        }
        let Some(input) = input_of(op, docs) else {
            let restored = store.load();
            assert_eq!(snapshot(&restored), snapshot(&e), "restored != live");
            e = restored;
            continue;
        };
        let before = snapshot(&e);
        match e.apply(now_ms, input.clone()) {
            Ok(effects) => {
                orders.note(&input);
                orders.check_starts(&effects, &e.take_transitions());
            }
            Err(_) => assert_eq!(snapshot(&e), before, "a refusal changed something"),
        }
        store.commit(e.take_changes().expect("changes"));
        orders.check_finals(&e);
    }
    assert_eq!(snapshot(&store.load()), snapshot(&e), "restored != live");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_inputs_keep_finals_orders_and_restores(case in case()) {
        let (docs, ops) = case;
        play(&docs, &ops);
    }
}

/// The states an activity that ended with `outcome` entered, as its partner would say.
fn entered_for(outcome: Outcome) -> StateSet {
    use mobiwf_proto::ActivityState as S;
    let ran = StateSet::EMPTY
        .with(S::NotReady)
        .with(S::Synchronizing)
        .with(S::Ready)
        .with(S::Running);
    match outcome {
        Outcome::Succeeded => ran.with(S::Succeeded),
        Outcome::Released => ran.with(S::Failed),
        Outcome::Blocked => StateSet::EMPTY.with(S::NotReady).with(S::Cancelled),
        Outcome::Skipped => StateSet::EMPTY.with(S::NotReady).with(S::Skipped),
    }
}
