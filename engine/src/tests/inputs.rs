//! The inputs of an instance a deployment carries: kept as the instance's data, written before
//! any activity, so a command that reads one finds it; a write of the name, by an activity here
//! or a partner, supersedes it for what comes after, whichever arrives first; inputs that do
//! not fit the document are refused with nothing changed; they are stored with what the node
//! knows of the instance.

use super::*;
use mobiwf_proto::{DataValue, Datum, InstanceInputs, Writer};

const DECLS: &str = r#"<data><value name="reading" type="number" input="true"/><value name="note" type="string" default="none"/></data>"#;

/// 1 (command, reads reading and note, writes reading) → 2 (command, reads reading).
fn rewriter(instance: u64) -> String {
    format!(
        r#"<workflow id="{instance}"><activities>
        <activity id="1"><nameActivity>A</nameActivity><command>check</command>
          <reads>reading note</reads><writes>reading</writes>
          <adjacents><adjacent id="2"><ip>local</ip></adjacent></adjacents></activity>
        <activity id="2"><nameActivity>B</nameActivity><command>use</command>
          <reads>reading</reads>
          <preconditions><precondition id="1"><local>1</local></precondition></preconditions>
        </activity></activities>{DECLS}</workflow>"#
    )
}

/// 3 reads reading, after remote activity 1.
fn remote_reader(instance: u64) -> String {
    format!(
        r#"<workflow id="{instance}"><activities>
        <activity id="3"><nameActivity>C</nameActivity><command>use</command>
          <reads>reading</reads>
          <preconditions><precondition id="1"><local>0</local></precondition></preconditions>
        </activity></activities>{DECLS}</workflow>"#
    )
}

fn inputs(values: &[(&str, DataValue)]) -> InstanceInputs {
    values
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.clone()))
        .collect()
}

fn number(n: &str) -> DataValue {
    DataValue::Number(n.into())
}

fn deploy_with(
    e: &mut Engine,
    (instance, partition): (u64, u64),
    document: String,
    inputs: InstanceInputs,
) -> Result<Vec<Effect>, Refusal> {
    e.apply(
        1000,
        Input::Deploy(mobiwf_proto::Deploy {
            instance: InstanceId(instance),
            partition: PartitionId(partition),
            document,
            responsible: None,
            hour_ms: None,
            runs_on: Vec::new(),
            inputs,
        }),
    )
}

/// What the command of `activity` reads, from the effects that start it.
fn reads_of(effects: &[Effect], activity: u64) -> Vec<Datum> {
    effects
        .iter()
        .find_map(|f| match f {
            Effect::Execute {
                activity: a, reads, ..
            } if a.0 == activity => Some(reads.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("activity {activity} did not start: {effects:?}"))
}

fn input(name: &str, value: DataValue) -> Datum {
    Datum {
        name: name.into(),
        value,
        by: Writer::Input,
        at_us: 0,
        pass: Default::default(),
    }
}

fn notified_reading(e: &mut Engine, now_ms: u64, instance: u64, value: &str) -> Vec<Effect> {
    let mut notify =
        mobiwf_proto::Notify::new(InstanceId(instance), ActivityId(1), Outcome::Succeeded);
    notify.data = vec![Datum {
        name: "reading".into(),
        value: number(value),
        by: Writer::Activity(ActivityId(1)),
        at_us: 10,
        pass: Default::default(),
    }];
    let input = Input::Notified(crate::Notified {
        from: None,
        notify,
        missing: Vec::new(),
    });
    at(e, now_ms, input)
}

scenarios! {
    fn a_command_finds_the_inputs_it_reads_and_a_later_write_supersedes_them() {
        let mut e = Engine::new();
        let given = inputs(&[("reading", number("5")), ("note", DataValue::String("none".into()))]);
        let fx = deploy_with(&mut e, (1, 1), rewriter(1), given).expect("deployed");
        assert_eq!(
            reads_of(&fx, 1),
            [input("reading", number("5")), input("note", DataValue::String("none".into()))],
            "given before any activity ran, in the order of its <reads>"
        );
        // A rewrites reading: B, after it, reads A's value.
        let fx = at(
            &mut e,
            2000,
            Input::Finished(crate::Ended {
                written: vec![("reading".to_owned(), number("6"))],
                instance: InstanceId(1),
                activity: ActivityId(1),
                finish: crate::Finish::Succeeded { detail: None, flag: None },
                by: Finisher::Command,
                attempt: 0,
            }),
        );
        let read = reads_of(&fx, 2);
        assert_eq!(read.len(), 1);
        assert_eq!((read[0].value.clone(), read[0].by), (number("6"), Writer::Activity(ActivityId(1))));
        // Each instance its own.
        let fx = deploy_with(&mut e, (2, 1), rewriter(2), inputs(&[("reading", number("9"))])).expect("deployed");
        assert_eq!(reads_of(&fx, 1), [input("reading", number("9"))]);
        assert_eq!(e.data(InstanceId(1)).len(), 2, "reading written by A, note given");
    }

    fn a_partners_write_supersedes_an_input_whichever_comes_first() {
        // The input first, then the partner's write: the write wins, and the reader reads it.
        let mut e = Engine::new();
        deploy_with(&mut e, (1, 2), remote_reader(1), inputs(&[("reading", number("5"))])).expect("deployed");
        assert_eq!(e.data(InstanceId(1)), [input("reading", number("5"))]);
        let fx = notified_reading(&mut e, 2000, 1, "6");
        assert_eq!(reads_of(&fx, 3)[0].value, number("6"));
        // The write first (another partition of the instance is here already), then a
        // deployment with the input: the write stays.
        let mut e = Engine::new();
        deploy_with(&mut e, (1, 2), remote_reader(1), InstanceInputs::new()).expect("deployed");
        notified_reading(&mut e, 2000, 1, "6");
        let other = remote_reader(1).replace(r#"activity id="3""#, r#"activity id="4""#);
        deploy_with(&mut e, (1, 3), other, inputs(&[("reading", number("5"))])).expect("deployed");
        let data = e.data(InstanceId(1));
        assert_eq!(data.len(), 1);
        assert_eq!((data[0].value.clone(), data[0].by), (number("6"), Writer::Activity(ActivityId(1))));
    }

    fn inputs_that_do_not_fit_the_document_are_refused_and_change_nothing() {
        for (given, says) in [
            (inputs(&[("reading", number("abc"))]), "is not a number"),
            (inputs(&[("reading", DataValue::String("5".into()))]), "is a number, not a string"),
            (inputs(&[("colour", DataValue::String("red".into()))]), "not declared"),
        ] {
            let mut e = Engine::new();
            let refusal = deploy_with(&mut e, (1, 1), rewriter(1), given).expect_err("refused");
            assert!(matches!(refusal, Refusal::BadInputs { .. }), "{refusal:?}");
            assert!(refusal.to_string().contains(says), "{refusal}");
            assert!(e.runs().next().is_none() && e.data(InstanceId(1)).is_empty());
        }
    }

    fn inputs_are_stored_with_what_the_node_knows_of_the_instance() {
        let mut e = Engine::new();
        deploy_with(&mut e, (1, 2), remote_reader(1), inputs(&[("reading", number("5"))])).expect("deployed");
        let changes = e.take_changes().expect("encoded");
        let stored = changes.known.iter().find(|k| k.instance == InstanceId(1)).expect("known stored");
        let json = String::from_utf8(stored.state.clone()).expect("utf-8");
        assert!(json.contains(r#""by":"input""#), "{json}");
        let known: crate::Known = serde_json::from_slice(&stored.state).expect("reads back");
        let restored = Engine::restore(e.runs().cloned().collect(), vec![(InstanceId(1), known)]);
        assert_eq!(restored.data(InstanceId(1)), [input("reading", number("5"))]);
    }
}
