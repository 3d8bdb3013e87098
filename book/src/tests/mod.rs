//! Scenario tests of the controller's bookkeeping: inputs in, messages out, no I/O. Shared
//! helpers here; the scenarios by topic in the modules.

#![allow(clippy::too_many_lines)]

/// Scenario tests: each `fn` becomes a `#[test]` and joins the module's `ALL`, the list the
/// coverage test runs (`coverage.rs`), each on its own thread.
macro_rules! scenarios {
    ($($(#[$meta:meta])* fn $name:ident() $body:block)*) => {
        $($(#[$meta])* #[test] fn $name() $body)*

        /// Every scenario of this module: (name, test).
        pub(super) const ALL: &[super::Scenario] = &[$((stringify!($name), $name as fn())),*];
    };
}

mod compensation;
mod coverage;
mod definitions;
mod failures;
mod fence;
mod hub;
mod inputs;
mod lifecycles;
mod loops;
mod loops_combined;
mod operator;
mod orderings;
mod overdue;
mod paper;
mod pause;
mod people;
mod properties;
mod rerun;
mod restore;
mod retained;
mod routing;
mod stored;
mod sync;
mod transitions;

/// A scenario: its name and its test.
type Scenario = (&'static str, fn());

/// Every scenario, by module.
const ALL_SCENARIOS: &[&[Scenario]] = &[
    compensation::ALL,
    definitions::ALL,
    failures::ALL,
    fence::ALL,
    hub::ALL,
    inputs::ALL,
    lifecycles::ALL,
    loops::ALL,
    loops_combined::ALL,
    operator::ALL,
    overdue::ALL,
    paper::ALL,
    pause::ALL,
    people::ALL,
    rerun::ALL,
    restore::ALL,
    retained::ALL,
    routing::ALL,
    sync::ALL,
];

use super::*;
use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, ActivityTypeId, Control, InstanceId, Message,
    NodeId, NodeName, Outcome, PartitionId, PartitionResult, Report, Tell,
};

const PAPER: &str = include_str!("../../../examples/paper/workflow.xml");

fn node(peer: &str, name: &str, skills: &[u64]) -> NodeInfo {
    NodeInfo {
        peer: NodeId::new(peer),
        name: NodeName::new(name),
        skills: skills.iter().map(|s| ActivityTypeId(*s)).collect(),
        addrs: vec![format!("/ip4/127.0.0.1/tcp/1/p2p/{peer}")],
        registered_ms: 0,
        seq: 1,
        suspected: None,
    }
}

fn book_with(nodes: &[NodeInfo]) -> Book {
    let mut b = Book::new();
    for n in nodes {
        b.apply(1, Input::Register(n.clone())).expect("register");
    }
    b
}

fn submit(b: &mut Book, xml: &str) -> Result<Applied, BookError> {
    b.apply(
        1_173_543_574_000,
        Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: None,
            inputs: Default::default(),
            starter: crate::Starter::Anyone,
        },
    )
}

fn deploys(applied: &Applied) -> Vec<(String, u64, String)> {
    applied
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { to, message, .. } => Some((to, message)),
            _ => None,
        })
        .map(|(to, message)| match message {
            Message::Deploy(mobiwf_proto::Deploy {
                partition,
                document,
                ..
            }) => (to.to_string(), partition.0, document.clone()),
            other => panic!("expected a deployment, got {other:?}"),
        })
        .collect()
}

fn record(activity: u64, state: ActivityState) -> ActivityRecord {
    ActivityRecord {
        pass: Default::default(),
        activity: ActivityId(activity),
        state,
        synchronized_ms: None,
        ready_ms: None,
        started_ms: Some(5),
        started_us: None,
        finished_us: None,
        finished_ms: Some(6),
        detail: None,
        emergency: false,
        retried: 0,
        flag: None,
    }
}

fn peer_of(b: &Book, instance: u64, partition: u64) -> String {
    let inst = b.instance(InstanceId(instance)).expect("instance");
    let p = inst
        .partitions
        .iter()
        .find(|p| p.id == PartitionId(partition))
        .expect("partition");
    p.peer.to_string()
}

fn result(b: &mut Book, instance: u64, partition: u64, records: Vec<ActivityRecord>) {
    let peer = peer_of(b, instance, partition);
    b.apply(
        9,
        Input::FromNode {
            peer: NodeId::new(peer),
            message: Message::PartitionResult(PartitionResult {
                instance: InstanceId(instance),
                partition: PartitionId(partition),
                activities: records,
            }),
        },
    )
    .expect("result");
}

// Failure handling: scenarios on small definitions.

/// When `submit` submits, ms since the epoch; later inputs count from it.
const T0: u64 = 1_173_543_574_000;

/// An activity of a test definition: type 1 runs in partitions, type 2 is for contingency
/// activities (left out of every partition).
struct D {
    id: u64,
    ty: u64,
    contingency: i64,
    pre: &'static [u64],
}

/// An activity of type 1.
const fn act(id: u64, contingency: i64, pre: &'static [u64]) -> D {
    D {
        id,
        ty: 1,
        contingency,
        pre,
    }
}

/// A contingency activity (type 2).
const fn spare(id: u64, contingency: i64) -> D {
    D {
        id,
        ty: 2,
        contingency,
        pre: &[],
    }
}

/// A definition with partners P1 (id 1) and P2 (id 2), both with skills 1 and 2, and these
/// partitions: (id, partner, timeOut in seconds, activities).
fn wf(acts: &[D], partitions: &[(u64, u64, u32, &[u64])]) -> String {
    let mut s = "<workflow id=\"77\"><description>test</description><activities>".to_owned();
    for a in acts {
        s += &format!(
            "<activity id=\"{id}\"><nameActivity>N{id}</nameActivity>\
             <descriptionActivity>d</descriptionActivity><activityTypeId>{}</activityTypeId>\
             <status>0</status><timeToWait>0</timeToWait>\
             <contingencyActivityId>{}</contingencyActivityId><timeOut>0</timeOut><preconditions>",
            a.ty,
            a.contingency,
            id = a.id
        );
        for p in a.pre {
            s += &format!("<preconditionId>{p}</preconditionId>");
        }
        s += "</preconditions></activity>";
    }
    s += "</activities><activityTypes><activityType id=\"1\"><description>work</description>\
          </activityType><activityType id=\"2\"><description>rescue</description>\
          </activityType></activityTypes><partitions>";
    for (id, partner, time_out, acts) in partitions {
        s += &format!(
            "<partition id=\"{id}\"><name>p{id}</name><partnerId>{partner}</partnerId>\
             <timeOut>{time_out}</timeOut>"
        );
        for a in *acts {
            s += &format!("<activityId>{a}</activityId>");
        }
        s += "</partition>";
    }
    s += "</partitions><partners>";
    for p in [1, 2] {
        s += &format!(
            "<partner id=\"{p}\"><name>P{p}</name><description>d</description><ip>10.0.0.{p}</ip>\
             <skills><activityTypeId>1</activityTypeId><activityTypeId>2</activityTypeId>\
             </skills></partner>"
        );
    }
    s + "</partners></workflow>"
}

/// 1 on P1 (partition 1) → 2 on P2 (partition 2); activity 1 fails with `contingency`, and
/// when that is 9, contingency activity 9 (which blocks when it fails) stands by.
fn chain(contingency: i64) -> String {
    let mut acts = vec![act(1, contingency, &[]), act(2, -1, &[1])];
    if contingency == 9 {
        acts.push(spare(9, -1));
    }
    wf(&acts, &[(1, 1, 0, &[1]), (2, 2, 0, &[2])])
}

/// P1 (peerA) and P2 (peerB) can run everything; `spare` (peerC) only contingency activities.
fn three_nodes() -> Book {
    book_with(&[
        node("peerA", "P1", &[1, 2]),
        node("peerB", "P2", &[1, 2]),
        node("peerC", "spare", &[2]),
    ])
}

fn addr(peer: &str) -> String {
    format!("/ip4/127.0.0.1/tcp/1/p2p/{peer}")
}

/// Every message sent: (to, message).
fn sent(applied: &Applied) -> Vec<(String, Message)> {
    applied
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { to, message, .. } => Some((to.to_string(), message.clone())),
            _ => None,
        })
        .collect()
}

/// The deployments among the messages: (to, partition, document).
fn deployed(applied: &Applied) -> Vec<(String, u64, String)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Deploy(mobiwf_proto::Deploy {
                partition,
                document,
                ..
            }) => Some((to, partition.0, document)),
            _ => None,
        })
        .collect()
}

/// Who each deployment says runs what, by partition: (partition, [(activity, peer)]).
fn told_runs_on(applied: &Applied) -> BTreeMap<u64, Vec<(u64, String)>> {
    sent(applied)
        .into_iter()
        .filter_map(|(_, m)| match m {
            Message::Deploy(d) => Some((
                d.partition.0,
                d.runs_on
                    .iter()
                    .map(|(a, peer)| (a.0, peer.to_string()))
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

fn from_node(b: &mut Book, now_ms: u64, peer: &str, message: Message) -> Applied {
    let input = Input::FromNode {
        peer: NodeId::new(peer),
        message,
    };
    b.apply(now_ms, input).expect("from node")
}

fn suspect(b: &mut Book, now_ms: u64, peer: &str) -> Applied {
    let input = Input::Suspect {
        peer: NodeId::new(peer),
        reason: "no answer to 3 probes".to_owned(),
    };
    b.apply(now_ms, input).expect("suspect")
}

fn failed(activity: u64, detail: &str) -> ActivityRecord {
    ActivityRecord {
        detail: Some(detail.to_owned()),
        ..record(activity, ActivityState::Failed)
    }
}

/// A node reports that an activity of instance 1 failed.
fn report_failure(b: &mut Book, now_ms: u64, activity: u64, partition: u64, peer: &str) -> Applied {
    let message = Message::Report(Report {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        record: failed(activity, "exit status 1"),
    });
    from_node(b, now_ms, peer, message)
}

fn partition_result(
    b: &mut Book,
    now_ms: u64,
    partition: u64,
    records: Vec<ActivityRecord>,
) -> Applied {
    let peer = peer_of(b, 1, partition);
    let message = Message::PartitionResult(PartitionResult {
        instance: InstanceId(1),
        partition: PartitionId(partition),
        activities: records,
    });
    from_node(b, now_ms, &peer, message)
}

fn activity(b: &Book, id: u64) -> ActivityView {
    let inst = b.instance(InstanceId(1)).expect("instance");
    let found = inst.activities.iter().find(|a| a.id == ActivityId(id));
    found.expect("activity").clone()
}

fn partition_view(b: &Book, id: u64) -> PartitionView {
    let inst = b.instance(InstanceId(1)).expect("instance");
    let found = inst.partitions.iter().find(|p| p.id == PartitionId(id));
    found.expect("partition").clone()
}

fn state_of(b: &Book) -> InstanceState {
    b.instance(InstanceId(1)).expect("instance").state()
}

/// The history of instance 1, one event per line.
fn story(b: &Book) -> Vec<Event> {
    let events = b.history(InstanceId(1)).expect("history");
    events.iter().map(|e| e.what.clone()).collect()
}

/// Activity `id` of the test definitions (`wf`), as history events name it.
fn l(id: u64) -> Label {
    Label {
        id: ActivityId(id),
        name: format!("N{id}"),
        pass: mobiwf_proto::Pass::FIRST,
    }
}

const WHY: &str = "partner P1 stopped answering (no answer to 3 probes)";

// The people side.

/// The organisation document of `org`, as an operator writes it.
fn org_doc(org: &mobiwf_xml_schema::Organisation) -> String {
    mobiwf_xml_schema::write_organisation(org)
}

/// Applies an organisation as the controller does: its document ([`org_doc`]) and what
/// `load_organisation` reads in it (which must be `org`).
fn apply_org(
    b: &mut Book,
    now_ms: u64,
    org: &mobiwf_xml_schema::Organisation,
) -> Result<Applied, BookError> {
    let document = org_doc(org);
    let loaded = mobiwf_xml_schema::load_organisation(document.as_bytes())
        .expect("organisation document")
        .value;
    assert_eq!(&loaded, org, "the document says what the test means");
    b.apply(
        now_ms,
        Input::Organisation {
            document,
            org: loaded,
        },
    )
}

/// A user: id, device (a node's name), roles.
fn user(id: &str, device: Option<&str>, roles: &[&str]) -> mobiwf_xml_schema::User {
    mobiwf_xml_schema::User {
        id: id.into(),
        name: id.to_uppercase(),
        department: Some("ops".into()),
        teams: vec!["blue".into()],
        device: device.map(str::to_owned),
        on_leave: false,
        logged_on: true,
        roles: roles
            .iter()
            .map(|r| mobiwf_xml_schema::RoleGrant {
                role: (*r).into(),
                priority: 0,
            })
            .collect(),
    }
}

/// The organisation of the people tests: role tech (ann on P1, bob on P2), administrator
/// (adm on P1), cid without a device, dan on device `tab` (not registered); department ops,
/// team blue.
fn staff() -> mobiwf_xml_schema::Organisation {
    use mobiwf_xml_schema::{Department, Role, Team};
    mobiwf_xml_schema::Organisation {
        roles: ["tech", "administrator"]
            .iter()
            .map(|r| Role {
                id: (*r).into(),
                name: String::new(),
            })
            .collect(),
        departments: vec![Department {
            id: "ops".into(),
            name: String::new(),
            parent: None,
        }],
        teams: vec![Team {
            id: "blue".into(),
            name: String::new(),
            parent: None,
        }],
        users: vec![
            user("adm", Some("P1"), &["administrator"]),
            user("ann", Some("P1"), &["tech"]),
            user("bob", Some("P2"), &["tech"]),
            user("cid", None, &["tech"]),
            user("dan", Some("tab"), &["tech"]),
        ],
    }
}

/// The definition `xml` with these people extensions on its activities (which become manual:
/// only manual and semiAutomatic activities go to people), written as an operator submits it
/// (`write_definition`): the book reads them from the document.
fn with_people(xml: &str, people: &[(u64, mobiwf_xml_schema::People)]) -> String {
    let mut def = mobiwf_xml_schema::load_definition(xml.as_bytes())
        .expect("definition")
        .value;
    for (id, p) in people {
        let a = def.activities.iter_mut().find(|a| a.id == ActivityId(*id));
        let a = a.expect("activity");
        a.kind = mobiwf_xml_schema::ActivityKind::Manual;
        a.people = p.clone();
    }
    let written = mobiwf_xml_schema::write_definition(&def);
    let read = mobiwf_xml_schema::load_definition(written.as_bytes());
    assert_eq!(read.expect("written definition loads").value, def);
    written
}

/// The people extension naming a role.
fn role(name: &str) -> mobiwf_xml_schema::People {
    mobiwf_xml_schema::People {
        role: Some(name.into()),
        ..mobiwf_xml_schema::People::default()
    }
}

/// Submits `xml` with a responsible user.
fn submit_for(b: &mut Book, xml: &str, responsible: &str) -> Result<Applied, BookError> {
    b.apply(
        T0,
        Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: Some(responsible.into()),
            inputs: Default::default(),
            starter: crate::Starter::Anyone,
        },
    )
}

/// The notices among the messages: (to, kind, activity, text).
fn notices(applied: &Applied) -> Vec<(String, String, Option<u64>, String)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Notice(Tell { notice }) => {
                Some((to, notice.kind, notice.activity.map(|a| a.0), notice.text))
            }
            _ => None,
        })
        .collect()
}
