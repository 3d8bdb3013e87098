//! Property tests: random sequences of inputs (registrations, submissions of the paper's
//! workflow and small generated ones, deliveries and refusals, node reports and results from
//! the right and wrong peers in any order, overdue words, suspicions, ticks, operator control,
//! restores from the stored changes, operators' reruns, their acknowledgements and nodes'
//! answers about compensations) never change a final activity (but for its node's word after
//! an operator's cancel, and a rerun, which puts it back to waiting), never deploy work for an
//! instance cancelled or interrupted, and a book restored from its changes equals the live
//! one. With the people side
//! (organisations applied, responsible users, work item events, worklist administration):
//! each notice is sent once and only to the responsible user, claims get increasing request
//! numbers and go to the activity's node, and no item summary offers an item to its holder.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_proto::{
    Hold, ItemAction, ItemEvent, ItemEvents, Overdue, PartitionResult, Report, Tell,
};

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
        people_definition(),
        with_compensations(&chain(-1), &[1, 2]),
        with_compensations(
            &wf(
                &[act(1, -1, &[]), act(2, -1, &[1]), act(3, -1, &[2])],
                &[(1, 1, 0, &[1, 3]), (2, 2, 0, &[2])],
            ),
            &[1, 3],
        ),
    ]
}

/// The definition `xml` with a compensation on each of `ids`.
fn with_compensations(xml: &str, ids: &[u64]) -> String {
    let mut def = mobiwf_xml_schema::load_definition(xml.as_bytes())
        .expect("definition")
        .value;
    for a in def.activities.iter_mut().filter(|a| ids.contains(&a.id.0)) {
        a.compensation = Some(format!("undo {}", a.id));
    }
    mobiwf_xml_schema::write_definition(&def)
}

/// A definition whose activities name the role `tech` (manual activities with `<role>`).
fn people_definition() -> String {
    let xml = wf(
        &[
            act(1, 0, &[]),
            act(2, -1, &[1]),
            act(3, 9, &[1]),
            spare(9, -1),
        ],
        &[(1, 1, 0, &[1, 3]), (2, 2, 0, &[2])],
    );
    let people: Vec<(u64, mobiwf_xml_schema::People)> =
        [1, 2, 3, 9].iter().map(|a| (*a, role("tech"))).collect();
    with_people(&xml, &people)
}

/// The users the ops name (`zed` is in no organisation).
const USERS: [&str; 5] = ["ann", "bob", "cid", "dan", "zed"];

/// The organisations applied: the staff, and the staff without bob.
fn organisation(k: usize) -> mobiwf_xml_schema::Organisation {
    let mut org = staff();
    if k != 0 {
        org.users.retain(|u| u.id.as_str() != "bob");
    }
    org
}

/// A work item event by small numbers.
fn item_event(kind: usize, user: usize) -> ItemEvent {
    let u: mobiwf_xml_schema::UserId = USERS[user].into();
    let other: mobiwf_xml_schema::UserId = USERS[(user + 1) % USERS.len()].into();
    match kind {
        0 => ItemEvent::Offered {
            users: vec![u, other],
        },
        1 => ItemEvent::Unassigned {
            why: "nobody".to_owned(),
        },
        2 => ItemEvent::Refused {
            user: u,
            action: "select".to_owned(),
            reason: "no longer available".to_owned(),
        },
        3 => ItemEvent::Revoked { users: vec![u] },
        k => ItemEvent::Acted {
            user: u,
            action: action(k - 4, user),
            offline_ms: (k % 2 == 0).then_some(1_000),
        },
    }
}

/// An item action by small numbers (8 of them).
fn action(k: usize, user: usize) -> ItemAction {
    match k % 8 {
        0 => ItemAction::Select,
        1 => ItemAction::Release,
        2 => ItemAction::Lock,
        3 => ItemAction::Unlock,
        4 => ItemAction::Complete {
            succeeded: true,
            detail: None,
            flag: None,
            data: Default::default(),
        },
        5 => ItemAction::Delegate {
            to: USERS[(user + 2) % USERS.len()].into(),
        },
        6 => ItemAction::Insert,
        _ => ItemAction::Remove,
    }
}

const STATES: [ActivityState; 5] = [
    ActivityState::NotReady,
    ActivityState::Running,
    ActivityState::Succeeded,
    ActivityState::Failed,
    ActivityState::Cancelled,
];

/// One input, by small numbers the runner maps onto what the book has.
#[derive(Debug, Clone)]
enum Op {
    Register(usize),
    Submit(usize, Option<usize>),
    Organisation(usize),
    Items {
        inst: usize,
        act: usize,
        events: Vec<(usize, usize)>,
        peer: Option<usize>,
    },
    Worklist {
        inst: usize,
        act: usize,
        user: usize,
        action: usize,
    },
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
    Rerun {
        inst: usize,
        act: usize,
    },
    RerunDelivered {
        inst: usize,
        part: usize,
    },
    Compensated {
        inst: usize,
        act: usize,
        ok: bool,
        peer: Option<usize>,
    },
    Restore,
}

fn op() -> impl Strategy<Value = Op> {
    let peer = prop::option::weighted(0.2, 0..4usize);
    prop_oneof![
        1 => (0..4usize).prop_map(Op::Register),
        2 => (0..9usize, prop::option::of(0..5usize)).prop_map(|(d, r)| Op::Submit(d, r)),
        1 => (0..2usize).prop_map(Op::Organisation),
        3 => (0..3usize, 0..5usize, prop::collection::vec((0..12usize, 0..5usize), 0..4),
              peer.clone())
            .prop_map(|(inst, act, events, peer)| Op::Items { inst, act, events, peer }),
        2 => (0..3usize, 0..5usize, 0..5usize, 0..8usize)
            .prop_map(|(inst, act, user, action)| Op::Worklist { inst, act, user, action }),
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
        2 => (0..3usize, 0..5usize).prop_map(|(inst, act)| Op::Rerun { inst, act }),
        1 => (0..3usize, 0..5usize).prop_map(|(inst, part)| Op::RerunDelivered { inst, part }),
        2 => (0..3usize, 0..5usize, prop::bool::weighted(0.8), prop::option::weighted(0.1, 0..4usize))
            .prop_map(|(inst, act, ok, peer)| Op::Compensated { inst, act, ok, peer }),
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
    people: Option<String>,
}

impl Stored {
    fn new() -> Stored {
        Stored {
            nodes: BTreeMap::new(),
            instances: BTreeMap::new(),
            definitions: Vec::new(),
            history: Vec::new(),
            last_instance: InstanceId(0),
            people: None,
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
        if let Some(people) = changes.people {
            self.people = Some(serde_json::to_string(&people).expect("people"));
        }
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
        let definitions = super::restore::parsed(&self.definitions);
        let events = self
            .history
            .iter()
            .map(|(id, j)| (*id, serde_json::from_str(j).expect("event")))
            .collect();
        let mut book = Book::restore(
            nodes.collect(),
            instances.collect(),
            definitions,
            History::restore(events),
            self.last_instance,
        );
        if let Some(json) = &self.people {
            let people: PeopleRecord = serde_json::from_str(json).expect("people");
            let directory = people.directory().expect("stored directory");
            book = book.with_people(directory, people.last_request);
        }
        book
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
        Op::Submit(d, responsible) => Input::Submit {
            definition: definitions()[*d].as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: responsible.map(|u| USERS[u].into()),
            inputs: Default::default(),
            starter: crate::Starter::Anyone,
        },
        Op::Organisation(k) => {
            let document = org_doc(&organisation(*k));
            let org = mobiwf_xml_schema::load_organisation(document.as_bytes())
                .expect("organisation document")
                .value;
            Input::Organisation { document, org }
        }
        Op::Items {
            inst: i,
            act,
            events,
            peer,
        } => {
            let inst = inst(*i)?;
            let a = pick(&inst.activities, *act)?;
            let host = a
                .partition
                .and_then(|id| inst.partitions.iter().find(|x| x.id == id));
            let from = match (peer, host) {
                (None, Some(h)) => h.peer.clone(),
                (Some(n), _) => all[*n].peer.clone(),
                (None, None) => all[0].peer.clone(),
            };
            Input::FromNode {
                peer: from,
                message: Message::ItemEvents(ItemEvents {
                    pass: None,
                    instance: inst.id,
                    activity: a.id,
                    at_ms: 7,
                    events: events.iter().map(|(k, u)| item_event(*k, *u)).collect(),
                }),
            }
        }
        Op::Worklist {
            inst: i,
            act,
            user,
            action: k,
        } => {
            let inst = inst(*i)?;
            Input::Worklist {
                instance: inst.id,
                activity: pick(&inst.activities, *act)?.id,
                user: USERS[*user].into(),
                action: action(*k, *user),
            }
        }
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
                message: Message::Report(Report {
                    instance: inst.id,
                    partition: p.id,
                    record: record(a.id.0, STATES[*state]),
                }),
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
                message: Message::PartitionResult(PartitionResult {
                    instance: inst.id,
                    partition: p.id,
                    activities,
                }),
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
                message: Message::Overdue(Overdue {
                    instance: inst.id,
                    waiting: w.id,
                    precondition: p.id,
                    time_out_secs: 10,
                }),
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
        Op::Rerun { inst: i, act } => {
            let inst = inst(*i)?;
            Input::Rerun {
                instance: inst.id,
                activity: pick(&inst.activities, *act)?.id,
            }
        }
        Op::RerunDelivered { inst: i, part } => {
            let inst = inst(*i)?;
            Input::RerunDelivered {
                instance: inst.id,
                partition: pick(&inst.partitions, *part)?.id,
            }
        }
        Op::Compensated {
            inst: i,
            act,
            ok,
            peer,
        } => compensated(inst(*i)?, *act, *ok, peer.map(|n| all[n].peer.clone()))?,
        Op::Restore => return None,
    })
}

/// A node's answer about the compensation of an activity (from its node unless `peer`).
fn compensated(inst: &Instance, act: usize, ok: bool, peer: Option<NodeId>) -> Option<Input> {
    // The one asked for now, mostly; any activity otherwise.
    let asked = inst
        .compensation
        .as_ref()
        .and_then(|c| c.order.get(c.done))
        .copied();
    let a = match asked {
        Some(id) if !act.is_multiple_of(4) => id,
        _ => pick(&inst.activities, act)?.id,
    };
    let p = inst.activities.iter().find(|v| v.id == a)?.partition?;
    let holder = inst.partitions.iter().find(|x| x.id == p)?.peer.clone();
    Some(Input::FromNode {
        peer: peer.unwrap_or(holder),
        message: Message::Compensated(mobiwf_proto::Compensated {
            instance: inst.id,
            partition: p,
            activity: a,
            succeeded: ok,
            detail: (!ok).then(|| "exit status 2".to_owned()),
        }),
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
    assert_eq!(live.directory(), restored.directory(), "directory");
    assert_eq!(live.people_record(), restored.people_record(), "people");
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

/// What the people side has promised so far in a run.
#[derive(Default)]
struct Promises {
    /// Every notice given (sent, or recorded as undelivered): (instance, activity, kind).
    noticed: BTreeSet<(InstanceId, Option<ActivityId>, String)>,
    /// The last claim's request number.
    last_request: u64,
}

impl Promises {
    /// An instance under way again (a rerun, its compensations) will end again, and an
    /// activity rerun may fail again: those notices may be given once more.
    fn again(
        &mut self,
        b: &Book,
        states: &BTreeMap<InstanceId, InstanceState>,
        before: &BTreeMap<(InstanceId, ActivityId), ActivityLifecycle>,
    ) {
        for inst in b.instances() {
            if states.get(&inst.id).is_some_and(|s| s.is_final()) && !inst.state().is_final() {
                self.noticed
                    .remove(&(inst.id, None, crate::notices::ENDED.to_owned()));
            }
            for a in &inst.activities {
                let was_final = before
                    .get(&(inst.id, a.id))
                    .is_some_and(ActivityLifecycle::is_final);
                if was_final && !a.state().is_final() {
                    self.noticed
                        .remove(&(inst.id, Some(a.id), crate::notices::FAILED.to_owned()));
                }
            }
        }
    }

    /// Checks what one input did: notices once each, to the responsible user's device only;
    /// claims numbered upwards and sent to the activity's node; no item offered to its holder.
    fn check(&mut self, b: &Book, input: &Input, applied: &Applied, changes: &Changes) {
        for (id, _, e) in &changes.history {
            if let Event::NoticeUndelivered { notice, .. } = &e.what {
                let key = (*id, e.activity, notice.clone());
                assert!(
                    self.noticed.insert(key),
                    "noticed twice: {e:?} on {input:?}"
                );
            }
        }
        for (to, m) in sent(applied) {
            match m {
                Message::Notice(Tell { notice }) => {
                    let inst = b.instance(notice.instance).expect("noticed instance");
                    assert_eq!(inst.responsible.as_ref(), Some(&notice.user), "{notice:?}");
                    let device = b.directory().device_of(notice.user.as_str());
                    assert_eq!(Some(to), device.map(|d| d.node.to_string()), "{notice:?}");
                    let key = (notice.instance, notice.activity, notice.kind.clone());
                    assert!(
                        self.noticed.insert(key),
                        "noticed twice: {notice:?} on {input:?}"
                    );
                }
                Message::Claim(mobiwf_proto::Claim {
                    instance,
                    activity,
                    request,
                    ..
                }) => {
                    assert_eq!(request, self.last_request + 1, "{input:?}");
                    self.last_request = request;
                    let inst = b.instance(instance).expect("claimed instance");
                    let a = inst.activities.iter().find(|a| a.id == activity);
                    let p = a.and_then(|a| a.partition).expect("placed");
                    let host = inst
                        .partitions
                        .iter()
                        .find(|x| x.id == p)
                        .expect("partition");
                    assert_eq!(to, host.peer.to_string(), "{input:?}");
                }
                _ => {}
            }
        }
        for inst in b.instances() {
            for item in inst.items.values() {
                assert!(item.offered.windows(2).all(|w| w[0] < w[1]), "{item:?}");
                assert!(
                    item.holders.iter().all(|h| !item.offered.contains(&h.user)
                        && matches!(h.hold, Hold::Selected | Hold::Locked)),
                    "offered to its holder: {item:?}"
                );
            }
        }
    }
}

fn run(ops: &[(u64, Op)]) {
    let mut b = Book::new();
    let mut promises = Promises::default();
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
            b.instances().map(|i| (i.id, i.state())).collect();
        let resumed = match &input {
            Input::Control {
                instance,
                action: Control::Resume,
            } => Some(*instance),
            _ => None,
        };
        let applied = b.apply(now, input.clone());
        let changes = b.take_changes();
        if let Ok(applied) = &applied {
            promises.check(&b, &input, applied, &changes);
            promises.again(&b, &states, &before);
        }
        stored.add(changes);
        let Ok(applied) = applied else { continue };
        for e in &applied.effects {
            if let Effect::Send {
                message: Message::Deploy(mobiwf_proto::Deploy { instance, .. }),
                ..
            } = e
            {
                let was = states.get(instance).copied();
                let is = b.instance(*instance).map(|i| i.state());
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
        let rerun = match &input {
            Input::Rerun { instance, .. } => Some(*instance),
            _ => None,
        };
        for (key, was) in &before {
            let is = &after[key];
            match was {
                ActivityLifecycle::CancelledByOperator { .. } => {
                    assert!(is.is_final(), "{key:?}: {was:?} -> {is:?} on {input:?}");
                }
                // A rerun puts what failed, and what it cancelled, back to waiting.
                ActivityLifecycle::Failed { .. } | ActivityLifecycle::Cancelled
                    if rerun == Some(key.0) && *is == ActivityLifecycle::Waiting => {}
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
        all.push((0, Op::Organisation(0)));
        all.push((0, Op::Submit(0, Some(0))));
        all.push((0, Op::Submit(6, Some(1))));
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
