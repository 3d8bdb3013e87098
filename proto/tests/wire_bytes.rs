//! The bytes of every kind of message, as they were on the wire and in the outbox before the
//! messages became newtype variants over named structs: a peer of the earlier code and an
//! outbox it wrote must still be understood, and what is sent now must be what they read.
//!
//! `fixtures/messages.jsonl` holds one message a line, as the earlier code encoded the values
//! `samples()` builds. Each line must be what encoding the sample gives now, and must decode to
//! the sample.

#![allow(clippy::unwrap_used, clippy::too_many_lines, missing_docs)]

use mobiwf_proto::{
    ActivityId, ActivityRecord, ActivityState, ActivityTypeId, Answer, Claim, Compensate,
    Compensated, Completed, Control, ControlInstance, DataValue, Datum, Deploy, DeviceEntry,
    DirectoryVersion, Fetch, FileBody, FileRef, Hold, Holder, InstanceId, InstanceInputs,
    ItemAction, ItemAnswer, ItemData, ItemDeadline, ItemEvent, ItemEvents, ItemInfo, ItemSnapshot,
    ItemStatus, Locate, Message, NodeId, NodeName, Notice, Notify, Outcome, Overdue, PartitionId,
    PartitionResult, Presence, ReadData, Register, Report, Rerun, StateChanged, StateSet,
    Substitute, Tell, UserId, Verdict, Withdraw, Writer, Written,
};

const FIXTURE: &str = include_str!("fixtures/messages.jsonl");

fn sha() -> String {
    "ab".repeat(32)
}

fn addr() -> String {
    "/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWPeer".to_owned()
}

/// The address as the messages carry it: read once, with its peer id.
fn at() -> mobiwf_proto::Location {
    mobiwf_proto::Location::parse(addr()).unwrap()
}

fn info() -> ItemInfo {
    ItemInfo {
        pass: Default::default(),
        instance: InstanceId(7),
        partition: PartitionId(2),
        activity: ActivityId(3),
        name: "Approve".into(),
        description: "approve the \"order\"".into(),
        kind: "manual".into(),
        priority: -2,
        disconnected: true,
        ready_ms: 1_000,
        deadline_ms: Some(9_000),
        host: at(),
        due: Some(Box::new(ItemDeadline {
            hours: 48,
            at_ms: 50_000,
            hour_ms: 1_000,
            sent_ms: 2_000,
            passed: vec![24, 12],
        })),
        application: None,
        paused_ms: None,
    }
}

fn record() -> ActivityRecord {
    ActivityRecord {
        pass: Default::default(),
        activity: ActivityId(3),
        state: ActivityState::Succeeded,
        synchronized_ms: Some(1),
        ready_ms: Some(2),
        started_ms: Some(3),
        finished_ms: Some(4),
        started_us: Some(3_000),
        finished_us: Some(4_000),
        detail: None,
        emergency: true,
        retried: 2,
        flag: Some("ok".into()),
    }
}

fn complete(succeeded: bool) -> ItemAction {
    ItemAction::Complete {
        succeeded,
        detail: Some("done".into()),
        flag: Some("yes".into()),
        data: Written {
            values: [("n".to_owned(), DataValue::Number("4".into()))]
                .into_iter()
                .collect(),
            files: vec![FileBody {
                sha256: sha(),
                base64: "aGk=".into(),
            }],
            holder: Some(at()),
        },
    }
}

/// One message of every kind, with every optional field set, then the same kinds with the
/// optional fields left out (their bytes leave them out).
fn samples() -> Vec<Message> {
    let user = UserId::new("ana");
    let mut out = vec![
        Message::Register(Register {
            name: NodeName::new("P1"),
            skills: vec![ActivityTypeId(1), ActivityTypeId(4)],
            addrs: vec![addr()],
            join_token: Some("t0k".into()),
        }),
        Message::Deploy(Deploy {
            instance: InstanceId(7),
            partition: PartitionId(2),
            document: "<workflow/>".into(),
            responsible: Some(user.clone()),
            hour_ms: Some(1_000),
            inputs: Default::default(),
            runs_on: vec![(ActivityId(3), NodeId::new("12D3KooWPeer"))],
        }),
        Message::Notify(Notify {
            pass: Default::default(),
            rerun: 0,
            instance: InstanceId(7),
            activity: ActivityId(3),
            outcome: Outcome::Released,
            entered: StateSet::default()
                .with(ActivityState::Running)
                .with(ActivityState::Failed),
            flag: Some("f".into()),
            routed: Some(vec![ActivityId(4)]),
            data: vec![Datum {
                name: "doc".into(),
                value: DataValue::File(FileRef {
                    sha256: sha(),
                    size: 2,
                }),
                by: Writer::Activity(ActivityId(3)),
                at_us: 77,
                pass: Default::default(),
            }],
            files: vec![FileBody {
                sha256: sha(),
                base64: "aGk=".into(),
            }],
            holder: Some(at()),
        }),
        Message::StateChanged(StateChanged {
            pass: Default::default(),
            instance: InstanceId(7),
            activity: ActivityId(3),
            entered: StateSet::default().with(ActivityState::Ready),
        }),
        Message::Completed(Completed {
            instance: InstanceId(7),
            by: ActivityId(9),
        }),
        Message::Report(Report {
            instance: InstanceId(7),
            partition: PartitionId(2),
            record: record(),
        }),
        Message::PartitionResult(PartitionResult {
            instance: InstanceId(7),
            partition: PartitionId(2),
            activities: vec![record()],
        }),
        Message::Overdue(Overdue {
            instance: InstanceId(7),
            waiting: ActivityId(4),
            precondition: ActivityId(3),
            time_out_secs: 30,
        }),
        Message::Withdraw(Withdraw {
            instance: InstanceId(7),
            partition: PartitionId(2),
            activities: vec![ActivityId(3)],
            reason: "too slow".into(),
            passes: std::collections::BTreeMap::new(),
        }),
        Message::Substitute(Substitute {
            instance: InstanceId(7),
            replaced: ActivityId(3),
            by: ActivityId(8),
            location: at(),
        }),
        Message::Control(ControlInstance {
            instance: InstanceId(7),
            action: Control::Interrupt,
            order: 0,
        }),
        Message::Probe(Default::default()),
        Message::Directory(DirectoryVersion {
            version: 3,
            document: "<organisation/>".into(),
            devices: vec![DeviceEntry {
                name: NodeName::new("ana@phone"),
                node: NodeId::new("12D3KooWPeer"),
                location: at(),
                connections: 2,
                last_connected_ms: 5,
                away: vec![user.clone()],
                presence_seq: 4,
            }],
        }),
        Message::Claim(Claim {
            instance: InstanceId(7),
            activity: ActivityId(3),
            user: user.clone(),
            action: complete(true),
            request: 12,
            offline_ms: Some(40),
            offered_ms: Some(1_000),
        }),
        Message::Claim(Claim {
            instance: InstanceId(7),
            activity: ActivityId(3),
            user: user.clone(),
            action: complete(false),
            request: 13,
            offline_ms: None,
            offered_ms: None,
        }),
        Message::Item(ItemSnapshot {
            info: info(),
            version: 5,
            offered: vec![user.clone()],
            holders: vec![Holder {
                user: user.clone(),
                hold: Hold::Locked,
                since_ms: 3,
                grantor: Some(UserId::new("bob")),
            }],
            status: ItemStatus::Done {
                by: user.clone(),
                succeeded: true,
            },
            answer: Some(Answer {
                user: user.clone(),
                request: 12,
                verdict: Verdict::Unavailable {
                    reason: "gone".into(),
                },
            }),
        }),
        Message::Item(ItemSnapshot {
            info: ItemInfo {
                due: None,
                paused_ms: None,
                deadline_ms: None,
                ..info()
            },
            version: 6,
            offered: Vec::new(),
            holders: Vec::new(),
            status: ItemStatus::Closed {
                why: "cancelled".into(),
            },
            answer: None,
        }),
        Message::Answer(ItemAnswer {
            instance: InstanceId(7),
            activity: ActivityId(3),
            answer: Answer {
                user: user.clone(),
                request: 1,
                verdict: Verdict::Done,
            },
        }),
        Message::ItemEvents(ItemEvents {
            pass: None,
            instance: InstanceId(7),
            activity: ActivityId(3),
            at_ms: 8,
            events: vec![
                ItemEvent::Offered {
                    users: vec![user.clone()],
                },
                ItemEvent::Acted {
                    user: user.clone(),
                    action: complete(true).without_data(),
                    offline_ms: Some(2),
                },
            ],
        }),
        Message::Fetch(Fetch {
            file: FileRef {
                sha256: sha(),
                size: 9,
            },
            offset: 4,
        }),
        Message::ReadData(ReadData {
            instance: InstanceId(7),
        }),
        Message::ItemData(ItemData {
            instance: InstanceId(7),
            activity: ActivityId(3),
        }),
        Message::Presence(Presence {
            away: vec![user.clone()],
            seq: 2,
        }),
        Message::Notice(Tell {
            notice: Notice {
                user: user.clone(),
                instance: InstanceId(7),
                activity: Some(ActivityId(3)),
                kind: "offered".into(),
                text: "hello".into(),
                at_ms: 6,
            },
        }),
        Message::Compensate(Compensate {
            instance: InstanceId(7),
            partition: PartitionId(2),
            activity: ActivityId(3),
        }),
        Message::Compensated(Compensated {
            instance: InstanceId(7),
            partition: PartitionId(2),
            activity: ActivityId(3),
            succeeded: false,
            detail: Some("exit 1".into()),
        }),
        Message::Rerun(Rerun {
            instance: InstanceId(7),
            partition: PartitionId(2),
            activities: vec![ActivityId(3)],
            controls: 0,
            rerun: 0,
        }),
        Message::Locate(Locate {
            peer: NodeId::new("12D3KooWPeer"),
        }),
    ];
    // The optional fields left out.
    out.push(Message::Register(Register {
        name: NodeName::new("P1"),
        skills: Vec::new(),
        addrs: Vec::new(),
        join_token: None,
    }));
    out.push(Message::Deploy(Deploy {
        instance: InstanceId(7),
        partition: PartitionId(2),
        document: "<workflow/>".into(),
        responsible: None,
        hour_ms: None,
        inputs: Default::default(),
        runs_on: Vec::new(),
    }));
    out.push(Message::Notify(Notify::new(
        InstanceId(7),
        ActivityId(3),
        Outcome::Succeeded,
    )));
    out.push(Message::Report(Report {
        instance: InstanceId(7),
        partition: PartitionId(2),
        record: ActivityRecord {
            pass: Default::default(),
            activity: ActivityId(5),
            state: ActivityState::Failed,
            synchronized_ms: None,
            ready_ms: None,
            started_ms: None,
            finished_ms: None,
            started_us: None,
            finished_us: None,
            detail: Some("exit 2".into()),
            emergency: false,
            retried: 0,
            flag: None,
        },
    }));
    out.push(Message::PartitionResult(PartitionResult {
        instance: InstanceId(7),
        partition: PartitionId(2),
        activities: Vec::new(),
    }));
    out.push(Message::Directory(DirectoryVersion {
        version: 1,
        document: String::new(),
        devices: vec![DeviceEntry {
            name: NodeName::new("P1"),
            node: NodeId::new("12D3KooWPeer"),
            location: at(),
            connections: 1,
            last_connected_ms: 5,
            away: Vec::new(),
            presence_seq: 0,
        }],
    }));
    out.push(Message::Presence(Presence {
        away: Vec::new(),
        seq: 1,
    }));
    out.push(Message::Notice(Tell {
        notice: Notice {
            user,
            instance: InstanceId(7),
            activity: None,
            kind: "ended".into(),
            text: "done".into(),
            at_ms: 6,
        },
    }));
    out
}

#[test]
fn every_message_encodes_to_the_bytes_it_had_and_decodes_from_them() {
    let lines: Vec<&str> = FIXTURE.lines().collect();
    let samples = samples();
    assert_eq!(lines.len(), samples.len(), "one fixture line per sample");
    for (line, sample) in lines.iter().zip(&samples) {
        let now = serde_json::to_string(sample).unwrap();
        assert_eq!(&now, line, "the bytes of a {} changed", sample.kind());
        let back: Message = serde_json::from_str(line).unwrap();
        assert_eq!(&back, sample, "a {} reads back otherwise", sample.kind());
    }
}

#[test]
fn every_kind_of_message_is_in_the_fixture() {
    let kinds: std::collections::BTreeSet<&str> = samples().iter().map(Message::kind).collect();
    assert_eq!(
        kinds.len(),
        26,
        "a kind of message without bytes in the fixture"
    );
}

/// A deployment with the instance's inputs, and a notification carrying one of them, as they
/// are sent since inputs came: the lines above are theirs without inputs, unchanged.
#[test]
fn inputs_travel_as_an_object_by_name_and_a_datum_given_at_start_says_input() {
    let inputs: InstanceInputs = [
        ("note".to_owned(), DataValue::String("north gate".into())),
        ("reading".to_owned(), DataValue::Number("5".into())),
    ]
    .into_iter()
    .collect();
    let deploy = Message::Deploy(Deploy {
        instance: InstanceId(7),
        partition: PartitionId(2),
        document: "<workflow/>".into(),
        responsible: None,
        hour_ms: None,
        runs_on: Vec::new(),
        inputs: inputs.clone(),
    });
    let line = r#"{"kind":"deploy","instance":7,"partition":2,"document":"<workflow/>","inputs":{"note":{"string":"north gate"},"reading":{"number":"5"}}}"#;
    assert_eq!(serde_json::to_string(&deploy).unwrap(), line);
    assert_eq!(serde_json::from_str::<Message>(line).unwrap(), deploy);
    let mut notify = Notify::new(InstanceId(7), ActivityId(3), Outcome::Succeeded);
    notify.data = inputs.data();
    let notify = Message::Notify(notify);
    let line = r#"{"kind":"notify","instance":7,"activity":3,"outcome":"succeeded","data":[{"name":"note","value":{"string":"north gate"},"by":"input","at_us":0},{"name":"reading","value":{"number":"5"},"by":"input","at_us":0}]}"#;
    assert_eq!(serde_json::to_string(&notify).unwrap(), line);
    assert_eq!(serde_json::from_str::<Message>(line).unwrap(), notify);
}

/// Prints the fixture's lines (run with `--ignored --nocapture` to write them anew: only
/// when the bytes are meant to change, with a new `PROTOCOL`).
#[test]
#[ignore = "writes the fixture; not a check"]
fn print_fixture() {
    for sample in samples() {
        println!("{}", serde_json::to_string(&sample).unwrap());
    }
}
