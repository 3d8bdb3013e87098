//! An instance's inputs at its start: what an operator gave ([`StartWith`]), checked against the
//! values the definition declares as inputs (`input="true"`, `default="..."`), every problem at
//! once, with the defaults filled in ([`CheckedStart`]); and, for each partition deployed
//! (a contingency activity's too), the inputs its activities read. Apart from `submit` because
//! a definition deployed before and started by name is checked the same way.

use mobiwf_proto::data::MAX_INSTANCE_VALUE_BYTES;
use mobiwf_proto::{DataValue, GivenInputs, InstanceInputs};
use mobiwf_xml_schema::{
    DataItem, DataKind, Input, PartitionDocument, UserId, WorkflowDefinition, number_problem,
};

use crate::BookError;

/// The most problems a start's inputs are refused with, one a line: past it the rest are
/// counted, not shown (a start may give thousands of names).
pub const MAX_INPUT_PROBLEMS: usize = 50;

/// The longest an input's name is echoed in a problem, in characters: a longer one is cut.
const MAX_ECHOED_NAME_CHARS: usize = 40;

/// `problems`, at most [`MAX_INPUT_PROBLEMS`] of them, then how many more were not shown.
pub fn capped(mut problems: Vec<String>) -> Vec<String> {
    let more = problems.len().saturating_sub(MAX_INPUT_PROBLEMS);
    if more > 0 {
        problems.truncate(MAX_INPUT_PROBLEMS);
        problems.push(format!(
            "and {more} more problems, not shown: at most {MAX_INPUT_PROBLEMS} are \
             (MAX_INPUT_PROBLEMS)"
        ));
    }
    problems
}

/// An input's name as a problem echoes it: cut to a length that fits in a line.
pub fn abbreviate(name: &str) -> String {
    if name.chars().count() <= MAX_ECHOED_NAME_CHARS {
        name.to_owned()
    } else {
        let cut: String = name.chars().take(MAX_ECHOED_NAME_CHARS).collect();
        format!("{cut}...")
    }
}

/// What an operator gives when an instance starts, besides its definition.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartWith {
    /// The user told when it starts, when an activity of it fails or is cancelled, and when
    /// it ends (`--responsible`); must be in the organisation directory.
    pub responsible: Option<UserId>,
    /// The inputs given (`--data name=value`), not checked yet.
    pub inputs: GivenInputs,
}

/// A [`StartWith`] the book took: its inputs checked against the definition, the defaults of
/// those not given filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckedStart {
    pub(crate) responsible: Option<UserId>,
    pub(crate) inputs: InstanceInputs,
}

impl StartWith {
    /// This start for an instance of `def`: each input given must be a value `def` declares
    /// as an input, of its type; every required one must be given. Refused with every
    /// problem, one a line, and what `def` expects.
    pub(crate) fn checked(self, def: &WorkflowDefinition) -> Result<CheckedStart, BookError> {
        let mut problems = Vec::new();
        let mut inputs = InstanceInputs::new();
        for (name, text) in self.inputs.iter() {
            match given(declared(def, name), name, text) {
                Ok(value) => inputs.insert(name, value),
                Err(problem) => problems.push(problem),
            }
        }
        for item in def.data.iter().filter(|d| d.input.is_input()) {
            if self.inputs.get(&item.name).is_some() {
                continue;
            }
            match &item.input {
                Input::Default(text) => inputs.insert(&*item.name, typed(item.kind, text)),
                Input::Required => problems.push(format!(
                    "`{}` is a required input ({}): give it when starting the instance \
                     (`--data {}=VALUE`)",
                    item.name,
                    item.kind.as_str(),
                    item.name
                )),
                Input::No => {}
            }
        }
        let total: usize = inputs.iter().map(|(_, v)| size(v)).sum();
        if total > MAX_INSTANCE_VALUE_BYTES {
            problems.push(format!(
                "the inputs hold {total} bytes, over the limit of {MAX_INSTANCE_VALUE_BYTES} \
                 (MAX_INSTANCE_VALUE_BYTES): long text belongs in a <file> an activity writes"
            ));
        }
        if !problems.is_empty() {
            let mut problems = capped(problems);
            problems.push(expected(def));
            return Err(BookError::Inputs(problems.join("\n")));
        }
        Ok(CheckedStart {
            responsible: self.responsible,
            inputs,
        })
    }
}

/// The first declaration of `name` in `def`.
fn declared<'a>(def: &'a WorkflowDefinition, name: &str) -> Option<&'a DataItem> {
    def.data.iter().find(|d| d.name == name)
}

/// The value `text` given for `name`, declared as `item`, or why it cannot be given.
fn given(item: Option<&DataItem>, name: &str, text: &str) -> Result<DataValue, String> {
    let name = abbreviate(name);
    let Some(item) = item else {
        return Err(format!("`{name}` is not declared in the workflow's <data>"));
    };
    match (&item.input, item.kind) {
        (_, DataKind::File) => Err(format!(
            "`{name}` is a file: a file cannot be given when an instance starts (an activity \
             writes it)"
        )),
        (Input::No, _) => Err(format!(
            "`{name}` is not an input: activities write it (an input has input=\"true\" or a \
             default on its <value>)"
        )),
        (_, kind) => {
            if kind == DataKind::Number
                && let Some(problem) = number_problem(text)
            {
                return Err(format!("`{name}` is a number: {problem}"));
            }
            let value = typed(kind, text);
            match value.problem() {
                Some(problem) => Err(format!("`{name}`: {problem}")),
                None => Ok(value),
            }
        }
    }
}

/// `text` as a value of `kind` (a number or a string) holds it.
fn typed(kind: DataKind, text: &str) -> DataValue {
    match kind {
        DataKind::Number => DataValue::Number(text.to_owned()),
        DataKind::String | DataKind::File => DataValue::String(text.to_owned()),
    }
}

/// The bytes of a value's text.
fn size(value: &DataValue) -> usize {
    match value {
        DataValue::String(t) | DataValue::Number(t) => t.len(),
        DataValue::File(_) => 0,
    }
}

/// What `def` expects at its start: each input, its type, and required or its default.
fn expected(def: &WorkflowDefinition) -> String {
    let each: Vec<String> = def
        .data
        .iter()
        .filter_map(|d| match &d.input {
            Input::No => None,
            Input::Required => Some(format!("{} ({}, required)", d.name, d.kind.as_str())),
            Input::Default(v) => Some(format!("{} ({}, default `{v}`)", d.name, d.kind.as_str())),
        })
        .collect();
    if each.is_empty() {
        format!("workflow {} has no inputs", def.id)
    } else {
        format!("the inputs of workflow {}: {}", def.id, each.join(", "))
    }
}

/// The inputs the activities of partition document `doc` read: what its deployment carries.
pub(crate) fn read_by(inputs: &InstanceInputs, doc: &PartitionDocument) -> InstanceInputs {
    inputs.only(|name| {
        doc.activities
            .iter()
            .any(|a| a.data.reads.iter().any(|r| r == name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKFLOW: &str = r#"<workflow id="80"><activities>
        <activity id="1"><activityTypeId>1</activityTypeId><reads>reading note</reads></activity>
        <activity id="2"><activityTypeId>1</activityTypeId><writes>tag photo</writes></activity>
        </activities><activityTypes><activityType id="1"/></activityTypes>
        <data><value name="reading" type="number" input="true"/>
        <value name="note" type="string" default="none"/>
        <value name="tag" type="string"/><file name="photo"/></data></workflow>"#;

    fn def() -> WorkflowDefinition {
        mobiwf_xml_schema::load_definition(WORKFLOW.as_bytes())
            .expect("valid")
            .value
    }

    fn start(given: &[(&str, &str)]) -> StartWith {
        let mut inputs = GivenInputs::new();
        for (n, t) in given {
            inputs.give(*n, *t).expect("once");
        }
        StartWith {
            responsible: None,
            inputs,
        }
    }

    #[test]
    fn a_default_is_filled_in_and_what_is_given_is_typed() {
        let checked = start(&[("reading", "5")]).checked(&def()).expect("taken");
        assert_eq!(
            checked.inputs.get("reading"),
            Some(&DataValue::Number("5".into()))
        );
        assert_eq!(
            checked.inputs.get("note"),
            Some(&DataValue::String("none".into()))
        );
        let checked = start(&[("reading", "-3.5"), ("note", "42")])
            .checked(&def())
            .expect("taken");
        assert_eq!(
            checked.inputs.get("note"),
            Some(&DataValue::String("42".into()))
        );
        assert_eq!(checked.inputs.len(), 2);
    }

    #[test]
    fn every_problem_is_refused_at_once_with_what_is_expected() {
        let given = [
            ("reading", "abc"),
            ("tag", "x"),
            ("photo", "p"),
            ("colour", "red"),
        ];
        let Err(BookError::Inputs(words)) = start(&given).checked(&def()) else {
            panic!("refused");
        };
        for says in [
            "`reading` is a number: `abc` is not a number",
            "`tag` is not an input: activities write it",
            "`photo` is a file: a file cannot be given",
            "`colour` is not declared",
            "the inputs of workflow 80: reading (number, required), note (string, default `none`)",
        ] {
            assert!(words.contains(says), "{says} in {words}");
        }
        assert_eq!(words.lines().count(), 5, "{words}");
        let Err(BookError::Inputs(words)) = start(&[]).checked(&def()) else {
            panic!("refused");
        };
        assert!(
            words.starts_with("`reading` is a required input (number)"),
            "{words}"
        );
    }

    #[test]
    fn values_over_their_limits_are_refused() {
        use mobiwf_proto::data::MAX_VALUE_BYTES;
        let long = "x".repeat(MAX_VALUE_BYTES + 1);
        let Err(BookError::Inputs(words)) =
            start(&[("reading", "1"), ("note", &long)]).checked(&def())
        else {
            panic!("refused");
        };
        assert!(words.contains("MAX_VALUE_BYTES"), "{words}");
    }

    #[test]
    fn a_workflow_without_inputs_takes_none_and_says_so() {
        let plain = WORKFLOW
            .replace(r#" input="true""#, "")
            .replace(r#" default="none""#, "")
            .replace("<reads>reading note</reads>", "");
        let def = mobiwf_xml_schema::load_definition(plain.as_bytes())
            .expect("valid")
            .value;
        assert!(start(&[]).checked(&def).expect("taken").inputs.is_empty());
        let Err(BookError::Inputs(words)) = start(&[("reading", "1")]).checked(&def) else {
            panic!("refused");
        };
        assert!(words.ends_with("workflow 80 has no inputs"), "{words}");
    }
}
