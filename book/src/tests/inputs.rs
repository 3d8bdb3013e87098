//! An instance's inputs: checked at its start (a refusal records nothing), kept with the
//! instance (and in its stored form), and sent to each partition only as far as its activities
//! read them, a contingency activity's partition too.

use super::*;
use mobiwf_proto::{DataValue, GivenInputs, InstanceInputs};

/// `chain(9)` (1 on P1 → 2 on P2, contingency activity 9 for 1) where 1 reads `reading`, 2
/// reads nothing, and 9 reads `reading` and `note`; `reading` is a required input, `note` one
/// with a default.
fn reading_chain() -> String {
    let mut xml = chain(9);
    for (id, reads) in [(1, "reading"), (9, "reading note")] {
        let at = xml
            .find(&format!("<activity id=\"{id}\">"))
            .expect("activity");
        let end = at + xml[at..].find("</preconditions>").expect("preconditions");
        xml.insert_str(
            end + "</preconditions>".len(),
            &format!("<reads>{reads}</reads>"),
        );
    }
    xml.replace(
        "</partners></workflow>",
        "</partners><data><value name=\"reading\" type=\"number\" input=\"true\"/>\
         <value name=\"note\" type=\"string\" default=\"none\"/></data></workflow>",
    )
}

fn submit_with(b: &mut Book, xml: &str, given: &[(&str, &str)]) -> Result<Applied, BookError> {
    let mut inputs = GivenInputs::new();
    for (name, text) in given {
        inputs.give(*name, *text).expect("given once");
    }
    b.apply(
        T0,
        Input::Submit {
            definition: xml.as_bytes().to_vec(),
            source: "wf.xml".to_owned(),
            responsible: None,
            inputs,
            starter: crate::Starter::Anyone,
        },
    )
}

/// The inputs each deployment carries: (to, partition, inputs).
fn deployed_inputs(applied: &Applied) -> Vec<(String, u64, InstanceInputs)> {
    sent(applied)
        .into_iter()
        .filter_map(|(to, m)| match m {
            Message::Deploy(mobiwf_proto::Deploy {
                partition, inputs, ..
            }) => Some((to, partition.0, inputs)),
            _ => None,
        })
        .collect()
}

fn number(n: &str) -> DataValue {
    DataValue::Number(n.into())
}

scenarios! {
    fn inputs_that_do_not_fit_are_refused_and_record_nothing() {
        let mut b = three_nodes();
        for given in [&[("reading", "abc")][..], &[], &[("reading", "1"), ("colour", "red")]] {
            let refused = submit_with(&mut b, &reading_chain(), given).expect_err("refused");
            assert!(matches!(refused, BookError::Inputs(_)), "{refused:?}");
            assert!(refused.to_string().contains("reading (number, required)"), "{refused}");
            assert!(b.instance(InstanceId(1)).is_none());
        }
        let applied = submit_with(&mut b, &reading_chain(), &[("reading", "5")]).expect("taken");
        assert_eq!(applied.instance, Some(InstanceId(1)), "the refusals took no id");
    }

    fn each_partition_gets_the_inputs_its_activities_read_and_the_instance_keeps_them_all() {
        let mut b = three_nodes();
        let applied = submit_with(&mut b, &reading_chain(), &[("reading", "5")]).expect("taken");
        let reading: InstanceInputs = [("reading".to_owned(), number("5"))].into_iter().collect();
        assert_eq!(
            deployed_inputs(&applied),
            [
                ("peerA".to_owned(), 1, reading.clone()),
                ("peerB".to_owned(), 2, InstanceInputs::new()),
            ]
        );
        let inst = b.instance(InstanceId(1)).expect("instance");
        let all: InstanceInputs = [
            ("note".to_owned(), DataValue::String("none".into())),
            ("reading".to_owned(), number("5")),
        ]
        .into_iter()
        .collect();
        assert_eq!(inst.inputs, all, "the default filled in");
        // Another instance, its own value.
        let applied = submit_with(&mut b, &reading_chain(), &[("reading", "7")]).expect("taken");
        assert_eq!(deployed_inputs(&applied)[0].2.get("reading"), Some(&number("7")));
        assert_eq!(b.instance(InstanceId(1)).expect("instance").inputs, all);
    }

    fn a_contingency_activitys_partition_gets_the_inputs_it_reads() {
        let mut b = three_nodes();
        submit_with(&mut b, &reading_chain(), &[("reading", "5"), ("note", "gate")]).expect("taken");
        let applied = suspect(&mut b, T0 + 1000, "peerA");
        let all: InstanceInputs = [
            ("note".to_owned(), DataValue::String("gate".into())),
            ("reading".to_owned(), number("5")),
        ]
        .into_iter()
        .collect();
        assert_eq!(deployed_inputs(&applied), [("peerC".to_owned(), 3, all)]);
    }

    fn the_examples_inputs_go_to_the_partners_that_read_them() {
        let example = include_str!("../../../examples/data/meter-input.xml");
        let mut b = book_with(&[node("peerA", "P1", &[1, 2, 3]), node("peerB", "P2", &[1, 3])]);
        let applied = submit_with(&mut b, example, &[("reading", "142")]).expect("taken");
        let of = |pairs: &[(&str, DataValue)]| -> InstanceInputs {
            pairs.iter().map(|(n, v)| ((*n).to_owned(), v.clone())).collect()
        };
        assert_eq!(
            deployed_inputs(&applied),
            [
                ("peerA".to_owned(), 1, of(&[("limit", number("100")), ("reading", number("142"))])),
                (
                    "peerB".to_owned(),
                    2,
                    of(&[("note", DataValue::String("none".into())), ("reading", number("142"))])
                ),
            ]
        );
    }

    fn inputs_are_stored_with_the_instance_and_read_back() {
        let mut b = three_nodes();
        submit_with(&mut b, &reading_chain(), &[("reading", "5")]).expect("taken");
        let inst = b.instance(InstanceId(1)).expect("instance").clone();
        let json = serde_json::to_string(&inst).expect("json");
        assert!(
            json.ends_with(r#","inputs":{"note":{"string":"none"},"reading":{"number":"5"}}}"#),
            "{json}"
        );
        let back: Instance = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, inst);
        // A workflow without inputs stores none: its instances are written as before.
        submit(&mut b, &chain(-1)).expect("submit");
        let json = serde_json::to_string(b.instance(InstanceId(2)).expect("instance")).expect("json");
        assert!(!json.contains("inputs"), "{json}");
    }
}

#[test]
fn a_start_with_many_undeclared_names_is_refused_with_a_capped_list_of_short_names() {
    let mut b = three_nodes();
    let names: Vec<String> = (0..crate::MAX_INPUT_PROBLEMS + 10)
        .map(|i| format!("{i:03}{}", "x".repeat(100)))
        .collect();
    let given: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "1")).collect();
    let refused = submit_with(&mut b, &reading_chain(), &given).unwrap_err();
    let BookError::Inputs(words) = &refused else {
        panic!("{refused}");
    };
    let lines: Vec<&str> = words.lines().collect();
    let undeclared = lines
        .iter()
        .filter(|l| l.contains("is not declared"))
        .count();
    assert_eq!(undeclared, crate::MAX_INPUT_PROBLEMS, "{words}");
    assert!(
        words.contains("and 11 more problems, not shown") && words.contains("MAX_INPUT_PROBLEMS"),
        "{words}"
    );
    assert!(!words.contains(&names[0]), "names are cut: {words}");
    assert!(
        words.contains(&format!("`{}...`", &names[0][..40])),
        "{words}"
    );
}
