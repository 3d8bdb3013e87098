//! Property tests of work items: random assignments (every method, policy and
//! `<disconnected>`), claims of every kind from the right device, a wrong one, an unknown
//! one or the controller, newer and older directories (users going on and off leave), time
//! passing (`timeOut`s), withdrawals, cancels and restarts from what the engine handed over.
//! Whatever happens: the engine rebuilt from its stored changes is the live one (items,
//! round-robin tokens, directory, runs); a refused input changes nothing; an item's version
//! grows by exactly one per change; an item is open exactly while its activity runs; a copy's
//! holder is never offered it, and it is offered only to its audience; nobody unavailable is
//! ever offered anything; and every view goes to a registered device, naming only its users.

use std::collections::BTreeMap;

use mobiwf_proto::{
    ControlInstance, Hold, ItemAction, ItemEvent, ItemEvents, Message, PartitionId, UserId,
    Withdraw,
};
use mobiwf_xml_schema::{Method, People, Policy, RoleId};
use proptest::prelude::*;

use super::people::*;
use super::*;

/// A user: (id, device, roles with priorities).
type UserSpec = (&'static str, &'static str, &'static [(&'static str, i64)]);

/// The users.
const USERS: [UserSpec; 5] = [
    ("alice", "N1", &[("tech", 1)]),
    ("bob", "N2", &[("tech", 3)]),
    ("carol", "N3", &[("tech", 2)]),
    ("dave", "N4", &[("administrator", 0)]),
    ("erin", "N5", &[("tech", 0)]),
];

fn users(leave: u8) -> Vec<mobiwf_xml_schema::User> {
    USERS
        .iter()
        .enumerate()
        .map(|(i, (id, device, roles))| {
            let u = user(id, device, roles);
            if leave & (1 << i) != 0 {
                on_leave(u)
            } else {
                u
            }
        })
        .collect()
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::Fcfa),
        Just(Method::All),
        Just(Method::LeastWorking),
        Just(Method::Priority),
        Just(Method::RoundRobin),
    ]
}

fn policy() -> impl Strategy<Value = Policy> {
    prop_oneof![
        Just(Policy::All),
        (1u32..3).prop_map(Policy::FewestAssigned),
        (1u32..3).prop_map(Policy::FewestSelected),
        (1u32..3).prop_map(Policy::MostFrequent),
        (1u32..3).prop_map(Policy::MostRecent),
    ]
}

fn people() -> impl Strategy<Value = People> {
    (method(), policy(), any::<bool>(), -2i64..3).prop_map(|(method, policy, disconnected, p)| {
        People {
            role: Some(RoleId::from("tech")),
            method,
            policy: if method == Method::Fcfa {
                policy
            } else {
                Policy::All
            },
            priority: p,
            disconnected,
            ..People::default()
        }
    })
}

/// Instance `i`'s partition: manual 1, then manual 2 (with a `timeOut`), then automatic 3;
/// 1 and 2 have the people extensions `assigned`.
fn item_doc(instance: u64, time_out: u32, assigned: &[People; 2]) -> String {
    let document = doc(
        instance,
        &[
            A {
                id: 1,
                extra: "<kind>manual</kind>",
                ..A::default()
            },
            A {
                id: 2,
                extra: "<kind>manual</kind>",
                pre: &[(1, true)],
                adj: &[(9, "/remote/b")],
                time_out,
                ..A::default()
            },
            A {
                id: 3,
                pre: &[(2, true)],
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    with_extensions(&document, &[(1, &assigned[0]), (2, &assigned[1])])
}

#[derive(Debug, Clone)]
enum Op {
    Deploy(u64),
    /// (instance, activity, user index (5 = an unknown user), action, sender: 0 own device,
    /// 1 the controller, 2 device N1, 3 an unregistered node).
    Claim(u64, u64, usize, u8, u8),
    /// (instance, activity, pick, n): a user the item involves acts as they might: one it is
    /// offered to selects or locks it; a holder completes, releases, unlocks or delegates it.
    Work(u64, u64, usize, u64),
    /// A directory: newer (else one version older than the last), users on leave (bits).
    Directory(bool, u8),
    Tick(u64),
    Withdraw(u64, u64),
    Cancel(u64),
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    let instance = 1u64..=3;
    prop_oneof![
        2 => instance.clone().prop_map(Op::Deploy),
        8 => (instance.clone(), 1u64..=3, 0usize..6, 0u8..8, prop_oneof![6 => Just(0u8), 2 => Just(1), 1 => Just(2), 1 => Just(3)])
            .prop_map(|(i, a, u, act, s)| Op::Claim(i, a, u, act, s)),
        12 => (instance.clone(), 1u64..=2, any::<usize>(), any::<u64>())
            .prop_map(|(i, a, pick, n)| Op::Work(i, a, pick, n)),
        2 => (any::<bool>(), any::<u8>()).prop_map(|(n, l)| Op::Directory(n, l & 0b1_0111)),
        2 => (0u64..8000).prop_map(Op::Tick),
        1 => (instance.clone(), 1u64..=2).prop_map(|(i, a)| Op::Withdraw(i, a)),
        1 => instance.prop_map(Op::Cancel),
        1 => Just(Op::Restart),
    ]
}

fn action(kind: u8, n: u64) -> ItemAction {
    let to = UserId::from(["alice", "bob", "carol", "dave", "erin", "zed"][(n % 6) as usize]);
    match kind {
        0 => ItemAction::Select,
        1 => ItemAction::Release,
        2 => ItemAction::Lock,
        3 => ItemAction::Unlock,
        4 => ItemAction::Complete {
            succeeded: !n.is_multiple_of(3),
            detail: Some("words".to_owned()),
            flag: None,
            data: Default::default(),
        },
        5 => ItemAction::Delegate { to },
        6 => ItemAction::Insert,
        _ => ItemAction::Remove,
    }
}

/// Everything of the engine's state that a restart must keep, comparable.
#[derive(Debug, PartialEq)]
struct State {
    items: Vec<Item>,
    tokens: BTreeMap<RoleId, UserId>,
    directory: mobiwf_people::Directory,
    runs: Vec<serde_json::Value>,
    next_deadline: Option<u64>,
}

fn state_of(e: &Engine) -> State {
    State {
        items: e.items().cloned().collect(),
        tokens: e.tokens().clone(),
        directory: e.directory().clone(),
        runs: e
            .runs()
            .map(|r| serde_json::to_value(r).expect("json"))
            .collect(),
        next_deadline: e.next_deadline(),
    }
}

/// The case's world: the extensions of manual activities 1 and 2, the engine, its disk, the
/// clock, the directory versions given.
struct World {
    assigned: [People; 2],
    e: Engine,
    disk: Disk,
    now_ms: u64,
    version: u64,
    n: u64,
}

impl World {
    fn input(&mut self, op: &Op) -> Option<Input> {
        self.n += 1;
        Some(match *op {
            Op::Deploy(i) => Input::Deploy(mobiwf_proto::Deploy {
                instance: InstanceId(i),
                partition: PartitionId(1),
                document: item_doc(i, 5 * u32::try_from(i).unwrap_or(1), &self.assigned),
                responsible: None,
                hour_ms: None,
                inputs: Default::default(),
                runs_on: Vec::new(),
            }),
            Op::Claim(i, a, u, kind, sender) => {
                let (name, device) = USERS.get(u).map_or(("zed", "N1"), |(n, d, _)| (*n, *d));
                let from = match sender {
                    0 => Some(node_of(device)),
                    1 => None,
                    2 => Some(node_of("N1")),
                    _ => Some(node_of("N7")),
                };
                Input::Claim(crate::Claimed {
                    claim: mobiwf_proto::Claim {
                        instance: InstanceId(i),
                        activity: ActivityId(a),
                        user: UserId::from(name),
                        action: action(kind, self.n),
                        request: self.n,
                        offline_ms: None,
                        offered_ms: None,
                    },
                    from,
                    missing: Vec::new(),
                })
            }
            Op::Work(i, a, pick, n) => return self.work((i, a), pick, n),
            Op::Directory(newer, leave) => {
                let dir = if newer {
                    self.version += 1;
                    directory(self.version, users(leave))
                } else {
                    directory(self.version.saturating_sub(1), users(leave))
                };
                Input::Directory(dir)
            }
            Op::Tick(ms) => {
                self.now_ms += ms;
                Input::Tick
            }
            Op::Withdraw(i, a) => Input::Withdraw(Withdraw {
                instance: InstanceId(i),
                partition: PartitionId(1),
                activities: vec![ActivityId(a)],
                reason: "too slow".to_owned(),
                passes: std::collections::BTreeMap::new(),
            }),
            Op::Cancel(i) => Input::Control(ControlInstance {
                instance: InstanceId(i),
                action: Control::Cancel,
                order: 0,
            }),
            Op::Restart => return None,
        })
    }
}

impl World {
    /// The claim of [`Op::Work`], when the item involves anyone; a tick otherwise.
    fn work(&self, (i, a): (u64, u64), pick: usize, n: u64) -> Option<Input> {
        let Some(item) = self.e.item(InstanceId(i), ActivityId(a)) else {
            return Some(Input::Tick);
        };
        let mut who: Vec<(UserId, Option<Hold>)> = Vec::new();
        for copy in item.copies.iter().filter(|c| c.is_open()) {
            who.extend(copy.holder().iter().map(|h| (h.user.clone(), Some(h.hold))));
            who.extend(copy.offered().iter().map(|u| (u.clone(), None)));
        }
        if who.is_empty() {
            return Some(Input::Tick);
        }
        let (user, hold) = who.swap_remove(pick % who.len());
        let action = match (hold, n % 5) {
            (None, k) => action(if k % 2 == 0 { 0 } else { 2 }, n),
            (Some(Hold::Selected), 0) => ItemAction::Release,
            (Some(Hold::Locked), 0) => ItemAction::Unlock,
            (Some(_), 1) => action(5, n),
            (Some(_), _) => action(4, n),
        };
        let device = self
            .e
            .directory()
            .device_of(user.as_str())
            .map(|d| d.node.clone());
        Some(Input::Claim(crate::Claimed {
            claim: mobiwf_proto::Claim {
                instance: InstanceId(i),
                activity: ActivityId(a),
                user,
                action,
                request: n,
                offline_ms: None,
                offered_ms: None,
            },
            from: device,
            missing: Vec::new(),
        }))
    }
}

/// Versions grow by exactly one per change; a new item starts at 1.
fn check_versions(before: &State, after: &State) {
    for item in &after.items {
        match before.items.iter().find(|b| b.key() == item.key()) {
            Some(old) if old != item => assert_eq!(item.version, old.version + 1, "{item:?}"),
            Some(_) => {}
            None => assert_eq!(item.version, 1, "{item:?}"),
        }
    }
}

/// An item is open exactly while its activity runs; holders are not offered; offers go to
/// the audience; `unassigned` says whether nobody is offered or holds it; its stored JSON
/// reads back as the same item.
fn check_items(e: &Engine) {
    for item in e.items() {
        let json = serde_json::to_vec(item).expect("encode");
        assert_eq!(&crate::StoredItem::decode(&json).expect("decode"), item);
        let life = e
            .runs()
            .find(|r| r.key == item.run_key())
            .and_then(|r| r.life(item.activity))
            .expect("its activity");
        assert_eq!(item.is_open(), !life.is_final(), "{item:?} {life:?}");
        let mut nobody = true;
        for copy in &item.copies {
            if let Some(h) = copy.holder() {
                assert!(!copy.offered().contains(&h.user), "{item:?}");
            }
            assert!(copy.offered().is_subset(copy.audience()), "{item:?}");
            if copy.is_open() {
                nobody &= copy.offered().is_empty() && copy.holder().is_none();
            } else {
                assert!(copy.offered().is_empty(), "{item:?}");
            }
            assert!(item.is_open() || !copy.is_open(), "{item:?}");
        }
        assert_eq!(
            item.unassigned().is_some(),
            item.is_open() && nobody,
            "{item:?}"
        );
    }
}

/// Nobody unavailable is offered anything; views go to registered devices and name only
/// their users.
fn check_sends(e: &Engine, effects: &[Effect]) {
    let dir = e.directory();
    for effect in effects {
        let Effect::Send { to, message } = effect else {
            continue;
        };
        match (to, message) {
            (_, Message::ItemEvents(ItemEvents { events, .. })) => {
                for user in events.iter().flat_map(|ev| match ev {
                    ItemEvent::Offered { users } => users.clone(),
                    _ => Vec::new(),
                }) {
                    let u = dir.user(user.as_str()).expect("offered a known user");
                    assert!(dir.available(u), "{user} offered while unavailable");
                }
            }
            (
                Target::Partner(loc),
                Message::Item(mobiwf_proto::ItemSnapshot {
                    offered,
                    holders,
                    info,
                    ..
                }),
            ) => {
                let device = dir
                    .devices
                    .values()
                    .find(|d| &d.location == loc)
                    .expect("a registered device");
                let on = |u: &UserId| {
                    dir.device_of(u.as_str())
                        .is_some_and(|d| d.name == device.name)
                };
                assert!(offered.iter().all(on), "{offered:?} to {loc}");
                assert!(holders.iter().all(|h| on(&h.user)), "{holders:?} to {loc}");
                assert_eq!(info.host.as_str(), HOST);
            }
            _ => {}
        }
    }
}

fn play(assigned: [People; 2], ops: &[Op]) {
    let mut w = World {
        assigned,
        e: host(directory(1, users(0))),
        disk: Disk::default(),
        now_ms: 1000,
        version: 1,
        n: 0,
    };
    for op in ops {
        let Some(input) = w.input(op) else {
            w.disk.commit(&mut w.e);
            let restored = w.disk.load();
            assert_eq!(state_of(&restored), state_of(&w.e), "restored != live");
            w.e = restored;
            continue;
        };
        let before = state_of(&w.e);
        match w.e.apply(w.now_ms, input) {
            Ok(effects) => {
                let after = state_of(&w.e);
                check_versions(&before, &after);
                check_sends(&w.e, &effects);
            }
            Err(_) => assert_eq!(state_of(&w.e), before, "a refusal changed something"),
        }
        check_items(&w.e);
        w.disk.commit(&mut w.e);
    }
    assert_eq!(state_of(&w.disk.load()), state_of(&w.e), "restored != live");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_claims_keep_items_consistent_and_restores_exact(
        assigned in (people(), people()),
        ops in proptest::collection::vec(op(), 1..70),
    ) {
        play([assigned.0, assigned.1], &ops);
    }
}
