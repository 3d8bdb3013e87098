//! The inputs of an instance: the declared values (`<value ... input="true"/>` or `default=`)
//! an operator gives when the instance starts. As given ([`GivenInputs`]: text by name, before
//! anything checked it), and as the controller's book kept them after checking them against
//! the definition, with the defaults filled in ([`InstanceInputs`]: typed values by name),
//! which is what the instance stores and what each partition's deployment carries of them.
//! Apart from `data` because they come from an operator, not from an activity.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::data::{DataValue, Datum, Writer};

/// The inputs an operator gives when starting an instance, by name, as text (`submit --data
/// reading=42`, or the API's `data.reading=42`): nothing checked yet but that each name is
/// given once. The controller's book checks them against the definition's declarations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GivenInputs(BTreeMap<String, String>);

impl GivenInputs {
    /// Nothing given.
    pub fn new() -> GivenInputs {
        GivenInputs::default()
    }

    /// Gives `name` the value `text`; refused, with the words, when `name` was given
    /// already (which of two values is meant cannot be guessed).
    pub fn give(&mut self, name: impl Into<String>, text: impl Into<String>) -> Result<(), String> {
        let name = name.into();
        if self.0.contains_key(&name) {
            return Err(format!(
                "the input `{name}` is given twice: give each input once"
            ));
        }
        self.0.insert(name, text.into());
        Ok(())
    }

    /// The text given for `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Each name with its text, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, t)| (n.as_str(), t.as_str()))
    }

    /// True when nothing is given.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The inputs of one instance as the controller checked them (a number is a number) and
/// filled in (a default where none was given): typed values by name. Stored with the
/// instance, and each partition's deployment carries those its activities read. Its JSON is
/// an object of name → value (`{"reading": {"number": "42"}}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct InstanceInputs(BTreeMap<String, DataValue>);

impl InstanceInputs {
    /// No inputs.
    pub fn new() -> InstanceInputs {
        InstanceInputs::default()
    }

    /// Sets `name` to `value`.
    pub fn insert(&mut self, name: impl Into<String>, value: DataValue) {
        self.0.insert(name.into(), value);
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&DataValue> {
        self.0.get(name)
    }

    /// Each name with its value, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &DataValue)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// True when there is none (a workflow without inputs).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Those whose name `keep` holds for (e.g. the names a partition's activities read).
    pub fn only(&self, keep: impl Fn(&str) -> bool) -> InstanceInputs {
        InstanceInputs(
            self.0
                .iter()
                .filter(|(name, _)| keep(name))
                .map(|(n, v)| (n.clone(), v.clone()))
                .collect(),
        )
    }

    /// Each as instance data: given before any activity ran, so every write of its name
    /// supersedes it ([`Writer::Input`], time 0).
    pub fn data(&self) -> Vec<Datum> {
        self.0
            .iter()
            .map(|(name, value)| Datum {
                name: name.clone(),
                value: value.clone(),
                by: Writer::Input,
                at_us: 0,
                pass: Default::default(),
            })
            .collect()
    }
}

impl FromIterator<(String, DataValue)> for InstanceInputs {
    fn from_iter<I: IntoIterator<Item = (String, DataValue)>>(iter: I) -> Self {
        InstanceInputs(iter.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ActivityId;

    #[test]
    fn a_name_is_given_once() {
        let mut given = GivenInputs::new();
        assert_eq!(given.give("reading", "5"), Ok(()));
        let twice = given.give("reading", "6").unwrap_err();
        assert!(twice.contains("`reading` is given twice"), "{twice}");
        assert_eq!(given.get("reading"), Some("5"));
    }

    #[test]
    fn inputs_are_an_object_by_name_and_every_write_supersedes_them() {
        let inputs: InstanceInputs = [
            ("reading".to_owned(), DataValue::Number("5".into())),
            ("note".to_owned(), DataValue::String("north gate".into())),
        ]
        .into_iter()
        .collect();
        let json = serde_json::to_string(&inputs).unwrap();
        assert_eq!(
            json,
            r#"{"note":{"string":"north gate"},"reading":{"number":"5"}}"#
        );
        assert_eq!(
            serde_json::from_str::<InstanceInputs>(&json).unwrap(),
            inputs
        );
        let read = inputs.only(|n| n == "reading");
        assert_eq!(read.len(), 1);
        let seeded = read.data();
        let written = Datum {
            name: "reading".into(),
            value: DataValue::Number("6".into()),
            by: Writer::Activity(ActivityId(0)),
            at_us: 0,
            pass: Default::default(),
        };
        assert!(written.supersedes(&seeded[0]));
        assert!(!seeded[0].supersedes(&written));
        assert!(!seeded[0].supersedes(&seeded[0]));
    }
}
