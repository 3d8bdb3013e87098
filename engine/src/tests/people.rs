//! Helpers of the work-item scenarios: directories read from organisation documents (users,
//! roles, devices), partition documents that carry people extensions, claims, what the
//! effects say to devices and to the controller, and a store that keeps everything the engine
//! hands over (restarts).

use std::collections::BTreeMap;

use mobiwf_people::Directory;
use mobiwf_proto::{
    DeviceEntry, DirectoryVersion, Hold, ItemAction, ItemEvent, ItemEvents, ItemStatus, Location,
    NodeId, NodeName, RoleId, UserId, Verdict,
};
use mobiwf_xml_schema::{Method, Organisation, People, Policy, Role, RoleGrant, User};

use super::*;

/// This node's own address in the scenarios.
pub(super) const HOST: &str = "/ip4/10.0.0.9/tcp/4001/p2p/peer-host";

/// The address of device `name`.
pub(super) fn location_of(device: &str) -> Location {
    Location::parse(format!("/ip4/10.0.0.1/tcp/4001/p2p/peer-{device}")).unwrap()
}

/// The host's address, as it is set on its engine.
pub(super) fn host_location() -> Location {
    Location::parse(HOST).unwrap()
}

/// The peer id of device `name`.
pub(super) fn node_of(device: &str) -> NodeId {
    NodeId::new(format!("peer-{device}"))
}

/// A user with a device and roles `(role, priority)`.
pub(super) fn user(id: &str, device: &str, roles: &[(&str, i64)]) -> User {
    User {
        id: UserId::from(id),
        name: id.to_uppercase(),
        department: None,
        teams: Vec::new(),
        device: Some(device.to_owned()),
        on_leave: false,
        logged_on: true,
        roles: roles
            .iter()
            .map(|(r, p)| RoleGrant {
                role: RoleId::from(*r),
                priority: *p,
            })
            .collect(),
    }
}

/// The same user, on leave.
pub(super) fn on_leave(mut u: User) -> User {
    u.on_leave = true;
    u
}

/// Directory `version` with these users, as a node takes it from the controller: their
/// organisation document (written with `write_organisation`, every role they play declared)
/// read by `Directory::parse`; each device they name is registered (connected once, at 0 ms).
pub(super) fn directory(version: u64, users: Vec<User>) -> Directory {
    let mut roles: Vec<Role> = Vec::new();
    let mut devices = Vec::new();
    for u in &users {
        for g in &u.roles {
            if !roles.iter().any(|r| r.id == g.role) {
                roles.push(Role {
                    id: g.role.clone(),
                    name: String::new(),
                });
            }
        }
        if let Some(d) = &u.device {
            devices.push(DeviceEntry {
                name: NodeName::from(d.as_str()),
                node: node_of(d),
                location: location_of(d),
                connections: 1,
                last_connected_ms: 0,
                away: Vec::new(),
                presence_seq: 0,
            });
        }
    }
    let org = Organisation {
        roles,
        departments: Vec::new(),
        teams: Vec::new(),
        users,
    };
    let document = mobiwf_xml_schema::write_organisation(&org);
    let dir = Directory::parse(DirectoryVersion {
        version,
        document,
        devices,
    })
    .expect("organisation document");
    assert_eq!(dir.org, org, "the document says what the scenario means");
    dir
}

/// Alice, Bob and Carol of role `tech` on devices N1, N2, N3.
pub(super) fn three() -> Vec<User> {
    vec![
        user("alice", "N1", &[("tech", 1)]),
        user("bob", "N2", &[("tech", 1)]),
        user("carol", "N3", &[("tech", 1)]),
    ]
}

/// People extensions: role `tech` with a method.
pub(super) fn tech(method: Method) -> People {
    People {
        role: Some(RoleId::from("tech")),
        method,
        ..People::default()
    }
}

/// Role `tech`, fcfa with a policy.
pub(super) fn tech_policy(policy: Policy) -> People {
    People {
        policy,
        ..tech(Method::Fcfa)
    }
}

/// `document` (a partition document) with these people extensions on its activities, as a
/// controller writes it (`write_partition`): the engine reads them from the document.
pub(super) fn with_extensions(document: &str, given: &[(u64, &People)]) -> String {
    let mut doc = mobiwf_xml_schema::load_partition(document.as_bytes())
        .expect("a partition document")
        .value;
    for (id, people) in given {
        let act = doc.activities.iter_mut().find(|a| a.id == ActivityId(*id));
        act.expect("the activity given people").people = (*people).clone();
    }
    let written = mobiwf_xml_schema::write_partition(&doc);
    let read = mobiwf_xml_schema::load_partition(written.as_bytes());
    assert_eq!(read.expect("written document loads").value, doc);
    written
}

/// A host (address [`HOST`]) that took `dir` at 500 ms.
pub(super) fn host(dir: Directory) -> Engine {
    let mut e = Engine::new();
    e.set_location(host_location());
    at(&mut e, 500, Input::Directory(dir));
    e
}

/// A partition of `instance`: manual activity `id` with people extensions `people`
/// (successors: local automatic 40 + id, remote 90 + id at `/remote/b`), its successor, and
/// its `timeOut` if any.
pub(super) fn manual_doc(instance: u64, (id, people): (u64, &People), time_out: u32) -> String {
    let next = 40 + id;
    let remote = 90 + id;
    let adj: &'static [(u64, &'static str)] =
        Box::leak(vec![(next, "/local"), (remote, "/remote/b")].into_boxed_slice());
    let pre: &'static [(u64, bool)] = Box::leak(vec![(id, true)].into_boxed_slice());
    let document = doc(
        instance,
        &[
            A {
                id,
                extra: "<kind>manual</kind>",
                adj,
                time_out,
                ..A::default()
            },
            A {
                id: next,
                pre,
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    with_extensions(&document, &[(id, people)])
}

/// Deploys [`manual_doc`] (partition 1, no `timeOut`) at `now_ms`.
pub(super) fn deploy_manual(
    e: &mut Engine,
    now_ms: u64,
    instance: u64,
    activity: (u64, &People),
) -> Vec<Effect> {
    let input = Input::Deploy(mobiwf_proto::Deploy {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        document: manual_doc(instance, activity, 0),
        responsible: None,
        hour_ms: None,
        inputs: Default::default(),
        runs_on: Vec::new(),
    });
    at(e, now_ms, input)
}

/// A claim on activity `id` of `instance`; `device` `None` = from the controller.
pub(super) fn try_claim(
    e: &mut Engine,
    now_ms: u64,
    (instance, id): (u64, u64),
    user: &str,
    action: ItemAction,
    device: Option<&str>,
) -> Result<Vec<Effect>, Refusal> {
    e.apply(
        now_ms,
        Input::Claim(crate::Claimed {
            claim: mobiwf_proto::Claim {
                instance: InstanceId(instance),
                activity: ActivityId(id),
                user: UserId::from(user),
                action,
                request: now_ms,
                offline_ms: None,
                offered_ms: None,
            },
            from: device.map(node_of),
            missing: Vec::new(),
        }),
    )
}

/// [`try_claim`], which must be taken (whatever its verdict).
pub(super) fn claim(
    e: &mut Engine,
    now_ms: u64,
    item: (u64, u64),
    user: &str,
    action: ItemAction,
    device: Option<&str>,
) -> Vec<Effect> {
    try_claim(e, now_ms, item, user, action, device).expect("claim taken")
}

/// One `Message::Item` sent, as a device receives it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Sent {
    pub(super) device: String,
    pub(super) version: u64,
    pub(super) offered: Vec<String>,
    /// (user, hold, grantor).
    pub(super) holders: Vec<(String, Hold, Option<String>)>,
    pub(super) status: ItemStatus,
    pub(super) verdict: Option<Verdict>,
    pub(super) host: String,
    pub(super) ready_ms: u64,
    pub(super) deadline_ms: Option<u64>,
}

/// Every item view sent to a device, in order.
pub(super) fn sent(effects: &[Effect]) -> Vec<Sent> {
    let prefix = location_of("");
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send {
                to: Target::Partner(loc),
                message:
                    Message::Item(mobiwf_proto::ItemSnapshot {
                        info,
                        version,
                        offered,
                        holders,
                        status,
                        answer,
                    }),
            } => Some(Sent {
                device: loc
                    .as_str()
                    .strip_prefix(prefix.as_str())
                    .unwrap_or(loc.as_str())
                    .to_owned(),
                version: *version,
                offered: offered.iter().map(|u| u.to_string()).collect(),
                holders: holders
                    .iter()
                    .map(|h| {
                        let grantor = h.grantor.as_ref().map(|g| g.to_string());
                        (h.user.to_string(), h.hold, grantor)
                    })
                    .collect(),
                status: status.clone(),
                verdict: answer.as_ref().map(|a| a.verdict.clone()),
                host: info.host.to_string(),
                ready_ms: info.ready_ms,
                deadline_ms: info.deadline_ms,
            }),
            _ => None,
        })
        .collect()
}

/// The view sent to one device, if any.
pub(super) fn sent_to(effects: &[Effect], device: &str) -> Option<Sent> {
    sent(effects).into_iter().find(|s| s.device == device)
}

/// The devices that got a view, in order.
pub(super) fn devices(effects: &[Effect]) -> Vec<String> {
    sent(effects).into_iter().map(|s| s.device).collect()
}

/// The answer a device got.
pub(super) fn verdict(effects: &[Effect]) -> Option<Verdict> {
    sent(effects).into_iter().find_map(|s| s.verdict)
}

/// The events of each `Message::ItemEvents` sent to the controller.
pub(super) fn item_events(effects: &[Effect]) -> Vec<Vec<ItemEvent>> {
    to_controller(effects)
        .into_iter()
        .filter_map(|m| match m {
            Message::ItemEvents(ItemEvents { events, .. }) => Some(events.clone()),
            _ => None,
        })
        .collect()
}

/// The users of an event list's `Offered` (empty when none).
pub(super) fn offered_in(events: &[ItemEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ItemEvent::Offered { users } => Some(users.iter().map(|u| u.to_string())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The users of an event list's `Revoked` (empty when none).
pub(super) fn revoked_in(events: &[ItemEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            ItemEvent::Revoked { users } => Some(users.iter().map(|u| u.to_string())),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The work item of activity `id` of `instance`.
pub(super) fn item(e: &Engine, instance: u64, id: u64) -> Item {
    e.item(InstanceId(instance), ActivityId(id))
        .expect("item")
        .clone()
}

/// The users each copy of an item is offered to.
pub(super) fn offered(e: &Engine, instance: u64, id: u64) -> Vec<Vec<String>> {
    item(e, instance, id)
        .copies
        .iter()
        .map(|c| c.offered().iter().map(|u| u.to_string()).collect())
        .collect()
}

/// The holder of each copy (user, grantor).
pub(super) fn holders(e: &Engine, instance: u64, id: u64) -> Vec<Option<(String, Option<String>)>> {
    item(e, instance, id)
        .copies
        .iter()
        .map(|c| {
            c.holder().map(|h| {
                let grantor = h.grantor.as_ref().map(|g| g.to_string());
                (h.user.to_string(), grantor)
            })
        })
        .collect()
}

/// Whether a verdict is "no longer available".
pub(super) fn unavailable(v: &Option<Verdict>) -> bool {
    matches!(v, Some(Verdict::Unavailable { reason }) if reason.contains("no longer available"))
}

/// What the daemon's store holds of an engine, filled from every change it handed over.
#[derive(Default)]
pub(super) struct Disk {
    runs: BTreeMap<RunKey, Vec<u8>>,
    docs: BTreeMap<RunKey, String>,
    known: BTreeMap<InstanceId, Vec<u8>>,
    items: BTreeMap<ItemKey, Vec<u8>>,
    tokens: BTreeMap<RoleId, Vec<u8>>,
    directory: Option<Vec<u8>>,
}

impl Disk {
    /// Writes what the engine changed.
    pub(super) fn commit(&mut self, e: &mut Engine) {
        let changes = e.take_changes().expect("changes");
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
        for token in changes.tokens {
            self.tokens.insert(token.role, token.state);
        }
        if let Some(dir) = changes.directory {
            self.directory = Some(dir.state);
        }
    }

    /// The engine a restarted node builds (address set again).
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
        let people = RestoredPeople {
            items: self
                .items
                .values()
                .map(|v| StoredItem::decode(v).expect("item"))
                .collect(),
            tokens: self
                .tokens
                .iter()
                .map(|(r, v)| (r.clone(), StoredToken::decode(v).expect("token")))
                .collect(),
            directory: self
                .directory
                .as_deref()
                .map(|v| StoredDirectory::decode(v).expect("directory")),
        };
        let mut e = Engine::restore(runs, known).with_people(people);
        e.set_location(host_location());
        e
    }

    /// Writes what changed, and gives the engine a restarted node builds from the store.
    pub(super) fn restart(&mut self, e: &mut Engine) -> Engine {
        self.commit(e);
        self.load()
    }
}
