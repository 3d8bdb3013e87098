//! A small world for tests of the node's core and of the daemon around it: a node that is
//! both the host of a work item and the device of its user alice, its controller, a partner
//! that is bob's device, the directory that says so and a deployment with a work item.
#![allow(clippy::expect_used)] // fixtures: a failure is the test's report

use mobiwf_engine::{Engine, Target};
use mobiwf_people::{Desk, Directory};
use mobiwf_proto::{
    DeviceEntry, DirectoryVersion, InstanceId, ItemAction, Location, Message, Millis, NodeId,
    NodeName, PartitionId, RoleId, UserId,
};
use mobiwf_xml_schema::{Organisation, People, Role, RoleGrant, User};

use crate::{Identity, NodeCore, NodeInput, Output};

/// This node's address: the host of the items and the device of alice.
pub const ME: &str = "/ip4/127.0.0.1/tcp/4001/p2p/peer-me";
/// A partner's address: the device of bob.
pub const PARTNER: &str = "/ip4/127.0.0.2/tcp/4001/p2p/peer-partner";

/// Reads a location a document gives as the daemon would, short of libp2p's own checks (the
/// fixtures' peer ids are no real keys): it must end in `/p2p/<peer id>`.
pub fn read_location(text: &str) -> Result<Location, String> {
    Location::parse(text).map_err(|e| e.to_string())
}

/// An address of these fixtures (one of [`ME`], [`PARTNER`]), read.
pub fn at(address: &str) -> Location {
    Location::parse(address).expect("a fixture's address")
}

/// This node's peer id.
pub fn me() -> NodeId {
    NodeId::new("peer-me")
}

/// The controller's peer id.
pub fn controller() -> NodeId {
    NodeId::new("peer-controller")
}

/// The partner's peer id.
pub fn partner() -> NodeId {
    NodeId::new("peer-partner")
}

/// Who this node is.
pub fn identity() -> Identity {
    Identity {
        me: me(),
        name: NodeName::from("me"),
        controller: controller(),
        read_location,
    }
}

/// A node that knows nothing yet, at [`ME`].
pub fn node() -> NodeCore {
    let mut engine = Engine::new();
    engine.set_location(at(ME));
    NodeCore::new(engine, Desk::default(), identity())
}

fn user(id: &str, device: &str) -> User {
    User {
        id: UserId::from(id),
        name: id.to_uppercase(),
        department: None,
        teams: Vec::new(),
        device: Some(device.to_owned()),
        on_leave: false,
        logged_on: true,
        roles: vec![RoleGrant {
            role: RoleId::from("tech"),
            priority: 1,
        }],
    }
}

/// The controller's directory message: alice (role tech) on this node, bob on the partner.
pub fn directory() -> Message {
    let org = Organisation {
        roles: vec![Role {
            id: RoleId::from("tech"),
            name: String::new(),
        }],
        departments: Vec::new(),
        teams: Vec::new(),
        users: vec![user("alice", "me"), user("bob", "partner")],
    };
    let device = |name: &str, node: NodeId, location: &str| DeviceEntry {
        name: NodeName::from(name),
        node,
        location: at(location),
        connections: 1,
        last_connected_ms: 0,
        away: Vec::new(),
        presence_seq: 0,
    };
    let devices = vec![
        device("me", me(), ME),
        device("partner", partner(), PARTNER),
    ];
    let document = mobiwf_xml_schema::write_organisation(&org);
    let sent = DirectoryVersion {
        version: 1,
        document,
        devices,
    };
    assert!(Directory::parse(sent.clone()).is_ok());
    Message::Directory(sent)
}

/// The controller's deployment of `instance`: activity 1, manual, for role tech (first come,
/// first assigned), then activity 2, automatic, on this node.
pub fn deployment(instance: u64) -> Message {
    let base = format!(
        "<workflow id=\"{instance}\"><activities>\
         <activity id=\"1\"><nameActivity>Inspect</nameActivity><status>0</status>\
         <responseImmediate>0</responseImmediate><timeToWait>0</timeToWait>\
         <contingencyActivityId>-1</contingencyActivityId><kind>manual</kind>\
         <preconditions/><adjacents><adjacent id=\"2\"><ip>{ME}</ip></adjacent></adjacents>\
         </activity>\
         <activity id=\"2\"><nameActivity>File</nameActivity><status>0</status>\
         <responseImmediate>0</responseImmediate><timeToWait>0</timeToWait>\
         <contingencyActivityId>-1</contingencyActivityId><command>true</command>\
         <preconditions><precondition id=\"1\"><status>0</status><local>1</local>\
         <timeOut>0</timeOut></precondition></preconditions><adjacents/></activity>\
         </activities></workflow>"
    );
    let mut doc = mobiwf_xml_schema::load_partition(base.as_bytes())
        .expect("a partition document")
        .value;
    doc.activities[0].people = People {
        role: Some(RoleId::from("tech")),
        ..People::default()
    };
    Message::Deploy(mobiwf_proto::Deploy {
        instance: InstanceId(instance),
        partition: PartitionId(1),
        document: mobiwf_xml_schema::write_partition(&doc),
        responsible: None,
        hour_ms: None,
        inputs: Default::default(),
        runs_on: Default::default(),
    })
}

/// Gives `message` from `from` to the core at `now_ms`, as the daemon does.
pub fn hear(
    core: &mut NodeCore,
    now_ms: u64,
    from: &NodeId,
    message: Message,
) -> Result<Output, crate::NotTaken> {
    let input = core.accept(from, message, Ok(Vec::new()))?;
    core.apply(Millis(now_ms).as_micros(), input)
}

/// A node that took the directory and instance 1's deployment (its item offered to alice
/// and bob), with those changes taken.
pub fn deployed() -> NodeCore {
    let mut core = node();
    hear(&mut core, 1_000, &controller(), directory()).expect("the directory");
    hear(&mut core, 2_000, &controller(), deployment(1)).expect("the deployment");
    core.take_changes().expect("changes");
    core.take_desk_changes().expect("desk changes");
    core
}

/// Alice's action on activity 1 of `instance` through this node.
pub fn alice(instance: u64, action: ItemAction) -> NodeInput {
    NodeInput::Claim(mobiwf_people::LocalClaim {
        user: UserId::from("alice"),
        instance: InstanceId(instance),
        activity: mobiwf_proto::ActivityId(1),
        action,
    })
}

/// The messages `out` sends to this node's own address (none should: those go locally).
pub fn sent_to_me(out: &Output) -> Vec<&Message> {
    out.sends
        .iter()
        .filter(|s| matches!(&s.to, Target::Partner(l) if l.as_str() == ME))
        .map(|s| &s.message)
        .collect()
}

/// A snapshot of item (instance 9, activity 1) hosted by `host`, offered to alice when
/// nobody holds it.
pub fn item_from(
    host: &str,
    holders: Vec<mobiwf_proto::Holder>,
    answer: Option<mobiwf_proto::Answer>,
) -> Message {
    Message::Item(mobiwf_proto::ItemSnapshot {
        info: mobiwf_proto::ItemInfo {
            pass: Default::default(),
            instance: InstanceId(9),
            partition: PartitionId(1),
            activity: mobiwf_proto::ActivityId(1),
            name: "Inspect".to_owned(),
            description: String::new(),
            kind: "manual".to_owned(),
            priority: 0,
            disconnected: false,
            ready_ms: 0,
            deadline_ms: None,
            host: at(host),
            due: None,
            application: None,
            paused_ms: None,
        },
        version: 1,
        offered: if holders.is_empty() {
            vec![UserId::from("alice")]
        } else {
            Vec::new()
        },
        holders,
        status: mobiwf_proto::ItemStatus::Open,
        answer,
    })
}
