//! Property tests: random sequences of inputs (registrations, submissions of the paper's
//! workflow and small generated ones, deliveries and refusals, node reports and results from
//! the right and wrong peers in any order, overdue words, suspicions, ticks, operator control,
//! restores from the stored changes) never change a final activity (but for its node's word
//! after an operator's cancel), never deploy work for an instance cancelled or interrupted,
//! and a book restored from its changes equals the live one.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// The nodes: the paper's partners, a spare with the contingency skill only, another one.
fn nodes() -> [NodeInfo; 4] {
    [
        node("peerA", "P1", &[1, 2, 3]),
        node("peerB", "P2", &[1, 2, 3]),
        node("peerC", "spare", &[2]),
        node("peerD", "other", &[1, 3]),
    ]
}

/// The definitions submitted: the paper's and small ones with contingencies.
fn definitions() -> Vec<String> {
    vec![
        PAPER.to_owned(),
        chain(-1),
        chain(0),
        chain(9),
        wf(
            &[act(1, 9, &[]), act(2, -1, &[1]), spare(9, 8), spare(8, -1)],
            &[(1, 1, 5, &[1]), (2, 2, 0, &[2])],
        ),
        wf(
            &[
                act(1, -1, &[]),
                act(3, 9, &[1]),
                act(2, 0, &[3]),
                spare(9, -1),
            ],
            &[(1, 1, 0, &[1, 3]), (2, 2, 3, &[2])],
        ),
    ]
}

const STATES: [ActivityState; 5] = [
    ActivityState::Waiting,
    ActivityState::Running,
    ActivityState::Succeeded,
    ActivityState::Failed,
    ActivityState::Cancelled,
];

/// One input, by small numbers the runner maps onto what the book has.
#[derive(Debug, Clone)]
enum Op {
    Register(usize),
    Submit(usize),
    Delivered {
        inst: usize,
        part: usize,
        refused: bool,
    },
    Report {
        inst: usize,
        part: usize,
        act: usize,
        state: usize,
        peer: Option<usize>,
    },
    Result {
        inst: usize,
        part: usize,
        states: Vec<usize>,
        peer: Option<usize>,
    },
    Overdue {
        inst: usize,
        waiting: usize,
        pre: usize,
        peer: Option<usize>,
    },
    Suspect(usize),
    Answering(usize),
    Tick,
    Control {
        inst: usize,
        action: usize,
    },
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    let peer = prop::option::weighted(0.2, 0..4usize);
    prop_oneof![
        1 => (0..4usize).prop_map(Op::Register),
        2 => (0..6usize).prop_map(Op::Submit),
        3 => (0..3usize, 0..5usize, prop::bool::weighted(0.1))
            .prop_map(|(inst, part, refused)| Op::Delivered { inst, part, refused }),
        6 => (0..3usize, 0..5usize, 0..8usize, 0..5usize, peer.clone())
            .prop_map(|(inst, part, act, state, peer)| Op::Report { inst, part, act, state, peer }),
        4 => (0..3usize, 0..5usize, prop::collection::vec(0..5usize, 0..5), peer.clone())
            .prop_map(|(inst, part, states, peer)| Op::Result { inst, part, states, peer }),
        2 => (0..3usize, 0..8usize, 0..8usize, peer)
            .prop_map(|(inst, waiting, pre, peer)| Op::Overdue { inst, waiting, pre, peer }),
        1 => (0..4usize).prop_map(Op::Suspect),
        1 => (0..4usize).prop_map(Op::Answering),
        3 => Just(Op::Tick),
        1 => (0..3usize, 0..3usize).prop_map(|(inst, action)| Op::Control { inst, action }),
        1 => Just(Op::Restore),
    ]
}

/// What the store holds: the changes, accumulated as the controller writes them (JSON).
struct Stored {
    nodes: BTreeMap<String, String>,
    instances: BTreeMap<u64, String>,
    definitions: Vec<(InstanceId, Vec<u8>)>,
    history: Vec<(InstanceId, String)>,
    last_instance: InstanceId,
}

impl Stored {
    fn new() -> Stored {
        Stored {
            nodes: BTreeMap::new(),
            instances: BTreeMap::new(),
            definitions: Vec::new(),
            history: Vec::new(),
            last_instance: InstanceId(0),
        }
    }

    fn add(&mut self, changes: Changes) {
        for n in changes.nodes {
            let json = serde_json::to_string(&n).expect("node");
            self.nodes.insert(n.peer.to_string(), json);
        }
        for i in changes.instances {
            let json = serde_json::to_string(&i).expect("instance");
            self.instances.insert(i.id.0, json);
        }
        self.definitions.extend(changes.definitions);
        for (id, _, e) in changes.history {
            self.history
                .push((id, serde_json::to_string(&e).expect("event")));
        }
        self.last_instance = changes.last_instance;
    }

    /// The book rebuilt as `controller/src/state.rs` does.
    fn restore(&self) -> Book {
        let nodes = self
            .nodes
            .values()
            .map(|j| serde_json::from_str(j).expect("node"));
        let instances = self
            .instances
            .values()
            .map(|j| serde_json::from_str(j).expect("instance"));
        let definitions = self
            .definitions
            .iter()
            .map(|(id, xml)| {
                let def = mobiwf_xml_schema::load_definition(xml).expect("definition");
                (*id, std::sync::Arc::new(def.value))
            })
            .collect();
        let events = self
            .history
            .iter()
            .map(|(id, j)| (*id, serde_json::from_str(j).expect("event")))
            .collect();
        Book::restore(
            nodes.collect(),
            instances.collect(),
            definitions,
            History::restore(events),
            self.last_instance,
        )
    }
}

fn pick<T: Clone>(items: &[T], i: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[i % items.len()].clone())
}

/// The input an op stands for in the book as it is (none when it has nothing to name).
fn input(b: &Book, op: &Op) -> Option<Input> {
    let all = nodes();
    let ids: Vec<InstanceId> = b.instances().map(|i| i.id).collect();
    let inst = |i: usize| pick(&ids, i).and_then(|id| b.instance(id));
    let peer_for = |p: &PartitionView, other: Option<usize>| match other {
        Some(n) => all[n].peer.clone(),
        None => p.peer.clone(),
    };
    Some(match op {
        Op::Register(n) => Input::Register(all[*n].clone()),
        Op::Submit(d) => Input::Submit {
            definition: definitions()[*d].as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: None,
        },
        Op::Delivered {
            inst: i,
            part,
            refused,
        } => {
            let inst = inst(*i)?;
            Input::Delivered {
                instance: inst.id,
                partition: pick(&inst.partitions, *part)?.id,
                refused: refused.then(|| "no room".to_owned()),
            }
        }
        Op::Report {
            inst: i,
            part,
            act,
            state,
            peer,
        } => {
            let inst = inst(*i)?;
            let p = pick(&inst.partitions, *part)?;
            let a = pick(&inst.activities, *act)?;
            Input::FromNode {
                peer: peer_for(&p, *peer),
                message: Message::Report {
                    instance: inst.id,
                    partition: p.id,
                    record: record(a.id.0, STATES[*state]),
                },
            }
        }
        Op::Result {
            inst: i,
            part,
            states,
            peer,
        } => {
            let inst = inst(*i)?;
            let p = pick(&inst.partitions, *part)?;
            let mine: Vec<&ActivityView> = inst
                .activities
                .iter()
                .filter(|a| a.partition == Some(p.id))
                .collect();
            let activities = mine
                .iter()
                .zip(states.iter().chain(std::iter::repeat(&2)))
                .map(|(a, s)| record(a.id.0, STATES[*s]))
                .collect();
            Input::FromNode {
                peer: peer_for(&p, *peer),
                message: Message::PartitionResult {
                    instance: inst.id,
                    partition: p.id,
                    activities,
                },
            }
        }
        Op::Overdue {
            inst: i,
            waiting,
            pre,
            peer,
        } => {
            let inst = inst(*i)?;
            let w = pick(&inst.activities, *waiting)?;
            let p = pick(&inst.activities, *pre)?;
            let holder = w
                .partition
                .and_then(|id| inst.partitions.iter().find(|x| x.id == id));
            let from = match (peer, holder) {
                (None, Some(h)) => h.peer.clone(),
                (Some(n), _) => all[*n].peer.clone(),
                (None, None) => all[0].peer.clone(),
            };
            Input::FromNode {
                peer: from,
                message: Message::Overdue {
                    instance: inst.id,
                    waiting: w.id,
                    precondition: p.id,
                    time_out_secs: 10,
                },
            }
        }
        Op::Suspect(n) => Input::Suspect {
            peer: all[*n].peer.clone(),
            reason: "no answer".to_owned(),
        },
        Op::Answering(n) => Input::Answering {
            peer: all[*n].peer.clone(),
        },
        Op::Tick => Input::Tick,
        Op::Control { inst: i, action } => Input::Control {
            instance: inst(*i)?.id,
            action: [Control::Interrupt, Control::Resume, Control::Cancel][*action],
        },
        Op::Restore => return None,
    })
}

/// The restored book equals the live one.
fn same(live: &Book, restored: &Book) {
    let l: Vec<&Instance> = live.instances().collect();
    let r: Vec<&Instance> = restored.instances().collect();
    assert_eq!(l, r, "instances");
    let ln: Vec<&NodeInfo> = live.nodes().collect();
    let rn: Vec<&NodeInfo> = restored.nodes().collect();
    assert_eq!(ln, rn, "nodes");
    for i in live.instances() {
        assert_eq!(
            live.history(i.id),
            restored.history(i.id),
            "history of {}",
            i.id
        );
    }
    assert_eq!(
        live.next_deadline(),
        restored.next_deadline(),
        "next deadline"
    );
    assert_eq!(live.watched(), restored.watched(), "watched");
}

/// Each activity's (lifecycle, state), by instance and id.
fn snapshot(b: &Book) -> BTreeMap<(InstanceId, ActivityId), ActivityLifecycle> {
    b.instances()
        .flat_map(|i| {
            i.activities
                .iter()
                .map(move |a| ((i.id, a.id), a.lifecycle()))
        })
        .collect()
}

fn run(ops: &[(u64, Op)]) {
    let mut b = Book::new();
    let mut stored = Stored::new();
    let mut now = T0;
    for (dt, op) in ops {
        now += dt;
        let Some(input) = input(&b, op) else {
            stored.add(b.take_changes());
            let restored = stored.restore();
            same(&b, &restored);
            b = restored;
            continue;
        };
        let before = snapshot(&b);
        let states: BTreeMap<InstanceId, InstanceState> =
            b.instances().map(|i| (i.id, i.state)).collect();
        let resumed = match &input {
            Input::Control {
                instance,
                action: Control::Resume,
            } => Some(*instance),
            _ => None,
        };
        let applied = b.apply(now, input.clone());
        stored.add(b.take_changes());
        let Ok(applied) = applied else { continue };
        for e in &applied.effects {
            if let Effect::Send {
                message: Message::Deploy { instance, .. },
                ..
            } = e
            {
                let was = states.get(instance).copied();
                let is = b.instance(*instance).map(|i| i.state);
                assert_ne!(
                    was,
                    Some(InstanceState::Cancelled),
                    "deploy after cancel: {input:?}"
                );
                assert_ne!(
                    is,
                    Some(InstanceState::Cancelled),
                    "deploy with cancel: {input:?}"
                );
                assert_ne!(
                    is,
                    Some(InstanceState::Interrupted),
                    "deploy while interrupted: {input:?}"
                );
                if resumed != Some(*instance) {
                    assert_ne!(
                        was,
                        Some(InstanceState::Interrupted),
                        "deploy while interrupted: {input:?}"
                    );
                }
            }
        }
        let after = snapshot(&b);
        for (key, was) in &before {
            let is = &after[key];
            match was {
                ActivityLifecycle::CancelledByOperator { .. } => {
                    assert!(is.is_final(), "{key:?}: {was:?} -> {is:?} on {input:?}");
                }
                was if was.state().is_final() => {
                    assert_eq!(
                        was.state(),
                        is.state(),
                        "{key:?}: a final state changed on {input:?}"
                    );
                }
                _ => {}
            }
        }
    }
    let restored = stored.restore();
    same(&b, &restored);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_keep_final_states_deploy_nothing_cancelled_and_restore_the_same_book(
        ops in prop::collection::vec((0..4000u64, op()), 1..40)
    ) {
        // Register the partners first most of the time, so that submissions are placed.
        let mut all: Vec<(u64, Op)> = (0..4).map(|n| (0, Op::Register(n))).collect();
        all.push((0, Op::Submit(0)));
        all.extend(ops);
        run(&all);
    }

    #[test]
    fn random_inputs_without_a_head_start_hold_too(
        ops in prop::collection::vec((0..4000u64, op()), 1..30)
    ) {
        run(&ops);
    }
}
