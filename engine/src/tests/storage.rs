//! Scenarios of what is stored: microsecond records, documents written once.

use super::*;

scenarios! {
fn records_keep_start_and_end_to_the_microsecond() {
    let mut e = Engine::new();
    let document = doc(
        1,
        &[
            A {
                id: 1,
                pre: &[(9, false)],
                adj: &[(2, "/remote/b")],
                ..A::default()
            },
            A {
                id: 3,
                command: Some("true"),
                ..A::default()
            },
        ],
    );
    e.apply_us(
        1_000_123,
        Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(1), partition: PartitionId(1), document, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
    )
    .expect("deploy");
    // Activity 3 starts at deployment and waits for its command.
    let three = e
        .record(InstanceId(1), ActivityId(3))
        .expect("record")
        .clone();
    assert_eq!(
        (three.started_ms, three.started_us, three.finished_us),
        (Some(1000), Some(1_000_123), None)
    );
    // Activity 1 (no command) starts and finishes when its precondition's word comes.
    e.apply_us(
        2_345_678,
        Input::Notified(crate::Notified { from: None, notify: mobiwf_proto::Notify { pass: Default::default(), rerun: 0, instance: InstanceId(1), activity: ActivityId(9), outcome: Outcome::Succeeded, entered: mobiwf_proto::StateSet::EMPTY, flag: None, routed: None, data: Vec::new(), files: Vec::new(), holder: None }, missing: Vec::new() }),
    )
    .expect("notified");
    let one = e
        .record(InstanceId(1), ActivityId(1))
        .expect("record")
        .clone();
    assert_eq!(
        (one.started_us, one.finished_us, one.finished_ms),
        (Some(2_345_678), Some(2_345_678), Some(2345))
    );
    // An input applied to the millisecond records whole milliseconds.
    let rec = |e: &Engine| {
        e.record(InstanceId(1), ActivityId(3))
            .expect("record")
            .clone()
    };
    e.apply(
        5000,
        Input::Finished(crate::Ended { written: Vec::new(), instance: InstanceId(1), activity: ActivityId(3), finish: crate::Finish::Succeeded { detail: None, flag: None }, by: Finisher::Command, attempt: 0 }),
    )
    .expect("finished");
    assert_eq!(rec(&e).finished_us, Some(5_000_000));
}

fn a_runs_document_is_handed_over_once_and_its_later_changes_come_without_it() {
    let mut e = Engine::new();
    deploy(&mut e, 18, 1, PARTITION_1);
    let first = e.take_changes().expect("changes");
    assert_eq!(first.runs.len(), 1);
    let document = first.runs[0]
        .document
        .clone()
        .expect("a new run's document");
    assert_eq!(document, PARTITION_1);
    assert!(
        !String::from_utf8_lossy(&first.runs[0].state).contains("<workflow"),
        "the state is stored without the document"
    );

    notified(&mut e, 18, 19, Outcome::Succeeded);
    let later = e.take_changes().expect("changes");
    assert_eq!(later.runs.len(), 1);
    assert_eq!(later.runs[0].document, None);
    let err = Run::from_stored(&later.runs[0].state, None).expect_err("no document");
    assert!(err.contains("document is missing"), "{err}");
    let run = Run::from_stored(&later.runs[0].state, Some(document)).expect("restored");
    assert_eq!(
        run.records(),
        e.runs().next().expect("the run").records(),
        "the restored run is the run"
    );

    // Its text has left memory: the same document deployed again is still known for the
    // same (taken, nothing written), and another one is still a conflict.
    assert!(deploy(&mut e, 18, 1, PARTITION_1).is_empty());
    assert!(e.take_changes().expect("changes").runs.is_empty());
    let other = PARTITION_1.replace("<nameActivity>A1</nameActivity>", "<nameActivity>B1</nameActivity>");
    assert_ne!(other, PARTITION_1, "the fixture names A1");
    let refused = e.apply(
        1000,
        Input::Deploy(mobiwf_proto::Deploy { instance: InstanceId(18), partition: PartitionId(1), document: other, responsible: None, hour_ms: None, runs_on: Vec::new(), inputs: Default::default() }),
    );
    assert!(matches!(refused, Err(Refusal::Conflict { .. })), "{refused:?}");
}

fn a_run_stored_by_the_previous_version_reads_and_writes_back_the_same_bytes() {
    // What the engine before the lifecycle wrote for a command waiting for its second try
    // (retry_at apart from the records) and a final activity, byte for byte.
    let old = concat!(
        r#"{"key":{"instance":61,"partition":1},"deployed_ms":1000,"activities":{"#,
        r#""1":{"activity":1,"state":"running","started_ms":1000,"finished_ms":null,"#,
        r#""started_us":1000000,"detail":"try 1 of 3 failed: exit status 1","emergency":false,"retried":1},"#,
        r#""2":{"activity":2,"state":"cancelled","started_ms":null,"finished_ms":2000,"#,
        r#""finished_us":2000000,"detail":"precondition 9 failed or was cancelled","emergency":false,"retried":0}},"#,
        r#""reported":false,"retry_at":{"1":8000},"overdue":[[2,9]]}"#
    );
    let d = doc(
        61,
        &[
            A {
                id: 1,
                command: Some("false"),
                retries: Some((2, 5)),
                ..A::default()
            },
            A {
                id: 2,
                pre: &[(9, false)],
                pre_time_out: &[(9, 1)],
                ..A::default()
            },
        ],
    );
    let run = Run::from_stored(old.as_bytes(), Some(d)).expect("an old run reads");
    assert_eq!(
        run.life(ActivityId(1)),
        Some(&Life::RetryWait {
            attempt: 1,
            at_ms: 8000
        })
    );
    assert_eq!(
        serde_json::to_string(&run).expect("json"),
        old,
        "written back as it was"
    );
    let e = Engine::restore(vec![run], Vec::new());
    assert_eq!(e.next_deadline(), Some(8000));
}
}
