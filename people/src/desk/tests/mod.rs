//! The desk's tests, by topic. Every input goes through [`Fixture::apply`], which writes the
//! desk's changes into a map as the daemon writes them into its store and checks that a desk
//! restored from the map equals the live one: a device killed after any input and restarted
//! shows the same worklists, notices and claims under way.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod application;
mod claims;
mod deadlines;
mod items;
mod offline;
mod store;
mod views;

use std::collections::BTreeMap;

use mobiwf_proto::{
    ActivityId, Answer, Hold, Holder, InstanceId, ItemAction, ItemInfo, ItemStatus, Location,
    Message, NodeName, Notice, PartitionId, UserId, Verdict,
};
use mobiwf_xml_schema::{Organisation, RoleGrant, RoleId, User};

use super::{Applied, Desk, DeskEffect, DeskInput, DeskRefusal, ItemSnapshot, LocalClaim};
use crate::Directory;

/// The host of the test items.
pub(super) const HOST: &str = "/ip4/10.0.0.9/tcp/4001/p2p/12D3KooWHost";

fn person(id: &str, device: Option<&str>, roles: &[&str]) -> User {
    User {
        id: UserId::new(id),
        name: id.to_owned(),
        department: None,
        teams: Vec::new(),
        device: device.map(str::to_owned),
        on_leave: false,
        logged_on: true,
        roles: roles
            .iter()
            .map(|r| RoleGrant {
                role: RoleId::new(*r),
                priority: 0,
            })
            .collect(),
    }
}

/// alice, bob and dave (an administrator) on N2, carol on N3, erin without a device.
pub(super) fn directory() -> Directory {
    Directory {
        version: 3,
        document: String::new(),
        org: Organisation {
            users: vec![
                person("alice", Some("N2"), &["tech"]),
                person("bob", Some("N2"), &["tech"]),
                person("carol", Some("N3"), &["tech"]),
                person("dave", Some("N2"), &["administrator"]),
                person("erin", None, &["tech"]),
            ],
            ..Organisation::default()
        },
        devices: BTreeMap::new(),
        unreachable: Default::default(),
    }
}

/// The host's address, as items carry it.
pub(super) fn host() -> Location {
    Location::parse(HOST).unwrap()
}

/// An item of `instance`, activity `activity`, ready at 1000 ms.
pub(super) fn info(instance: u64, activity: u64) -> ItemInfo {
    ItemInfo {
        pass: Default::default(),
        instance: InstanceId(instance),
        partition: PartitionId(1),
        activity: ActivityId(activity),
        name: format!("Inspect {instance}.{activity}"),
        description: "look at the pump".to_owned(),
        kind: "manual".to_owned(),
        priority: 0,
        disconnected: false,
        ready_ms: 1000,
        deadline_ms: None,
        host: host(),
        due: None,
        application: None,
        paused_ms: None,
    }
}

pub(super) fn users(ids: &[&str]) -> Vec<UserId> {
    ids.iter().map(|u| UserId::new(*u)).collect()
}

pub(super) fn holder(user: &str, hold: Hold, since_ms: u64, grantor: Option<&str>) -> Holder {
    Holder {
        user: UserId::new(user),
        hold,
        since_ms,
        grantor: grantor.map(UserId::new),
    }
}

/// A snapshot without an answer.
pub(super) fn snap(
    info: &ItemInfo,
    version: u64,
    offered: &[&str],
    holders: Vec<Holder>,
    status: ItemStatus,
) -> ItemSnapshot {
    ItemSnapshot {
        info: info.clone(),
        version,
        offered: users(offered),
        holders,
        status,
        answer: None,
    }
}

pub(super) fn answering(
    mut snapshot: ItemSnapshot,
    user: &str,
    request: u64,
    verdict: Verdict,
) -> ItemSnapshot {
    snapshot.answer = Some(Answer {
        user: UserId::new(user),
        request,
        verdict,
    });
    snapshot
}

pub(super) fn claim(user: &str, info: &ItemInfo, action: ItemAction) -> DeskInput {
    DeskInput::Claim(LocalClaim {
        user: UserId::new(user),
        instance: info.instance,
        activity: info.activity,
        action,
    })
}

pub(super) fn done(by: &str) -> ItemStatus {
    ItemStatus::Done {
        by: UserId::new(by),
        succeeded: true,
    }
}

/// A plain completion: succeeded, no detail, flag or data.
pub(super) fn completion() -> ItemAction {
    ItemAction::Complete {
        succeeded: true,
        detail: None,
        flag: None,
        data: Default::default(),
    }
}

pub(super) fn notice(user: &str, instance: u64, text: &str, at_ms: u64) -> Notice {
    Notice {
        user: UserId::new(user),
        instance: InstanceId(instance),
        activity: None,
        kind: "started".to_owned(),
        text: text.to_owned(),
        at_ms,
    }
}

/// A device N2 with its desk and its store.
pub(super) struct Fixture {
    pub(super) desk: Desk,
    pub(super) dir: Directory,
    pub(super) me: NodeName,
    pub(super) store: BTreeMap<String, Vec<u8>>,
    pub(super) now_ms: u64,
}

impl Fixture {
    pub(super) fn new() -> Fixture {
        Fixture {
            desk: Desk::new(),
            dir: directory(),
            me: NodeName::new("N2"),
            store: BTreeMap::new(),
            now_ms: 10_000,
        }
    }

    /// Applies an input a second later than the last, commits its changes to the store and
    /// checks that the desk restored from the store equals this one.
    pub(super) fn apply(&mut self, input: DeskInput) -> Result<Applied, DeskRefusal> {
        self.now_ms += 1000;
        let applied = self.desk.apply(self.now_ms, &self.dir, &self.me, input);
        self.commit();
        applied
    }

    /// Applies `user`'s claim of `action` on the item of `info`, one the host must answer:
    /// the number of its request.
    pub(super) fn claim(&mut self, user: &str, info: &ItemInfo, action: ItemAction) -> u64 {
        self.apply(claim(user, info, action))
            .unwrap()
            .request
            .expect("a claim the host answers")
    }

    pub(super) fn item(&mut self, snapshot: ItemSnapshot) -> Applied {
        self.apply(DeskInput::Item(Box::new(snapshot))).unwrap()
    }

    pub(super) fn commit(&mut self) {
        let changes = self.desk.take_changes().unwrap();
        for key in &changes.deletes {
            assert!(
                !changes.puts.iter().any(|(k, _)| k == key),
                "{key} is both written and deleted"
            );
            self.store.remove(key);
        }
        for (key, value) in changes.puts {
            assert!(key.starts_with(super::PREFIX), "{key}");
            self.store.insert(key, value);
        }
        let mut restored = Desk::restore(self.store.clone()).unwrap();
        // What the device is comes from the daemon's configuration at each start.
        restored.set_device(self.desk.device().clone());
        assert_eq!(
            restored, self.desk,
            "the desk restored from its store differs"
        );
    }

    /// The kinds and texts of a user's notices.
    pub(super) fn told(&self, user: &str) -> Vec<(String, String)> {
        self.desk
            .notices(user)
            .iter()
            .map(|n| (n.kind.clone(), n.text.clone()))
            .collect()
    }
}

/// The claim messages among the effects, with where they go.
pub(super) fn sent(applied: &Applied) -> Vec<(Location, Message)> {
    applied
        .effects
        .iter()
        .filter_map(|e| match e {
            DeskEffect::Send { to, claim } => Some((to.clone(), Message::Claim((**claim).clone()))),
            DeskEffect::Answered { .. } => None,
        })
        .collect()
}

/// The answers among the effects.
pub(super) fn answers(applied: &Applied) -> Vec<(u64, UserId, Verdict)> {
    applied
        .effects
        .iter()
        .filter_map(|e| match e {
            DeskEffect::Answered {
                request,
                user,
                verdict,
            } => Some((*request, user.clone(), verdict.clone())),
            DeskEffect::Send { .. } => None,
        })
        .collect()
}

/// The reason of a verdict that is not `Done`.
pub(super) fn reason(verdict: &Verdict) -> &str {
    match verdict {
        Verdict::Done => "",
        Verdict::Unavailable { reason }
        | Verdict::Forbidden { reason }
        | Verdict::Invalid { reason } => reason,
    }
}

/// The activity ids of a user's worklist, in order.
pub(super) fn listed(desk: &Desk, user: &str, order: super::Order) -> Vec<(u64, u64)> {
    desk.worklist(user, order)
        .iter()
        .map(|e| (e.info.instance.0, e.info.activity.0))
        .collect()
}

pub(super) fn selected(user: &str, since_ms: u64) -> Vec<Holder> {
    vec![holder(user, Hold::Selected, since_ms, None)]
}
