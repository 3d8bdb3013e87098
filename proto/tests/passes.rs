//! A loop's passes on the wire: messages and records from before loops (without `pass`) are
//! about the first pass, and the first pass is still written without it; a later pass is
//! written and read back; a new pass travels as `new_pass`; a request for a task class names
//! its pass as every other word about an activity does.

#![allow(clippy::unwrap_used, missing_docs)]

use mobiwf_proto::{ActivityId, InstanceId, Message, NewPass, Notify, Outcome, Pass};

const OLD_NOTIFY: &str = r#"{"kind":"notify","instance":7,"activity":3,"outcome":"succeeded"}"#;
const OLD_REPORT: &str = r#"{"kind":"report","instance":7,"partition":2,"record":{"activity":5,"state":"failed","started_ms":null,"finished_ms":null,"detail":"exit 2","emergency":false,"retried":0}}"#;
const OLD_CHANGE: &str = r#"{"kind":"state_changed","instance":7,"activity":3,"entered":4}"#;

#[test]
fn words_from_before_loops_are_about_the_first_pass_and_keep_their_bytes() {
    let Message::Notify(n) = serde_json::from_str(OLD_NOTIFY).unwrap() else {
        panic!("a notification")
    };
    assert_eq!(n.pass, Pass::FIRST);
    assert_eq!(
        serde_json::to_string(&Message::Notify(n)).unwrap(),
        OLD_NOTIFY
    );
    let Message::Report(r) = serde_json::from_str(OLD_REPORT).unwrap() else {
        panic!("a report")
    };
    assert_eq!(r.record.pass, Pass::FIRST);
    assert_eq!(
        serde_json::to_string(&Message::Report(r)).unwrap(),
        OLD_REPORT
    );
    let Message::StateChanged(c) = serde_json::from_str(OLD_CHANGE).unwrap() else {
        panic!("a state change")
    };
    assert_eq!(c.pass, Pass::FIRST);
}

#[test]
fn a_later_pass_is_written_and_read_back() {
    let mut n = Notify::new(InstanceId(7), ActivityId(3), Outcome::Succeeded);
    n.pass = Pass(3);
    let text = serde_json::to_string(&Message::Notify(n.clone())).unwrap();
    assert_eq!(
        text,
        r#"{"kind":"notify","instance":7,"activity":3,"outcome":"succeeded","pass":3}"#
    );
    assert_eq!(
        serde_json::from_str::<Message>(&text).unwrap(),
        Message::Notify(n)
    );
    let np = Message::NewPass(NewPass {
        instance: InstanceId(7),
        by: ActivityId(4),
        pass: Pass(2),
        activities: vec![ActivityId(2), ActivityId(4)],
        data: Vec::new(),
        files: Vec::new(),
        holder: None,
    });
    let text = serde_json::to_string(&np).unwrap();
    assert_eq!(
        text,
        r#"{"kind":"new_pass","instance":7,"by":4,"pass":2,"activities":[2,4]}"#
    );
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), np);
}

#[test]
fn a_pass_shows_after_its_activity_from_the_second_on() {
    assert_eq!(Pass::FIRST.of(ActivityId(3)), "3");
    assert_eq!(Pass(2).of(ActivityId(3)), "3#2");
    assert_eq!(Pass(u32::MAX).next(), Pass(u32::MAX));
}

#[test]
fn a_request_for_a_class_names_its_pass_from_the_second_on() {
    let old = r#"{"kind":"begin_sync","ticket":{"instance":7,"partition":1,"activity":2,"round":1},"class":"press"}"#;
    let Message::BeginSync(mut begin) = serde_json::from_str(old).unwrap() else {
        panic!("a request")
    };
    assert_eq!(begin.pass, Pass::FIRST);
    assert_eq!(
        serde_json::to_string(&Message::BeginSync(begin.clone())).unwrap(),
        old
    );
    begin.pass = Pass(2);
    let later = Message::BeginSync(begin);
    let text = serde_json::to_string(&later).unwrap();
    assert_eq!(
        text,
        r#"{"kind":"begin_sync","ticket":{"instance":7,"partition":1,"activity":2,"round":1},"class":"press","pass":2}"#
    );
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), later);
}
