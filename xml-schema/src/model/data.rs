//! Instance data (*WorkToDo: um sistema de gerenciamento de workflows para ambientes de comunicação
//! sem fio*, §3.1.5): the named values and files a workflow declares once (`<data>`), which its
//! activities read and write (`<reads>`, `<writes>`). Every instance has its own; values travel
//! from the partner that wrote them to the partners whose activities read them, with the
//! notifications (`<carries>` on adjacents says which).

/// What a declared name holds (as the wire names it: `string`, `number`, `file`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum DataKind {
    /// `<value type="string">`: text.
    String,
    /// `<value type="number">`: a decimal number (`42`, `-3.5`, `1e3`), kept as written.
    Number,
    /// `<file>`: a file's content (bytes), e.g. a photo or a report.
    File,
}

impl DataKind {
    /// The `type` attribute of a `<value>`; `None` for files (a `<file>` element).
    pub fn type_name(self) -> Option<&'static str> {
        match self {
            DataKind::String => Some("string"),
            DataKind::Number => Some("number"),
            DataKind::File => None,
        }
    }

    /// The kind a `<value type>` names (`string`, `number`, any case).
    pub fn of_type_name(name: &str) -> Option<DataKind> {
        if name.eq_ignore_ascii_case("string") {
            Some(DataKind::String)
        } else if name.eq_ignore_ascii_case("number") {
            Some(DataKind::Number)
        } else {
            None
        }
    }

    /// How people and messages name the kind: `string`, `number` or `file`.
    pub fn as_str(self) -> &'static str {
        self.type_name().unwrap_or("file")
    }
}

/// One declared name: `<value name="reading" type="number"/>` or `<file name="photo"/>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DataItem {
    /// `@name`: how activities, commands (a file of that name in `MOBIWF_DATA_DIR`) and people
    /// (`complete --set name=value`) refer to it.
    pub name: String,
    /// What it holds.
    pub kind: DataKind,
    /// Extensions `input` and `default` of a `<value>`: whether an operator gives it when
    /// starting an instance; default not (activities write it).
    pub input: Input,
}

/// Whether a declared value is an input of the instance, given when it starts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Input {
    /// Not an input: activities write it (no attribute).
    #[default]
    No,
    /// An input every start must give (`input="true"`).
    Required,
    /// An input a start may give; this value when it does not (`default="..."`, which must
    /// fit the value's type).
    Default(String),
}

impl Input {
    /// True for an input, given at start or defaulted.
    pub fn is_input(&self) -> bool {
        !matches!(self, Input::No)
    }
}

/// The instance data an activity uses: extensions `<reads>` and `<writes>`, each a list of
/// declared names separated by spaces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DataAccess {
    /// `<reads>`: the names the activity reads (its command finds each as a file in
    /// `MOBIWF_DATA_DIR`), in document order.
    pub reads: Vec<String>,
    /// `<writes>`: the names the activity writes (its command leaves each as a file in
    /// `MOBIWF_DATA_DIR`; a person sets them with `complete --set`/`--file`), in document order.
    pub writes: Vec<String>,
}

impl DataAccess {
    /// True when the activity neither reads nor writes instance data.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }
}

/// Why `text` cannot be a number value (`None` when it can): a decimal number as Rust's `f64`
/// reads it, finite, without surrounding spaces (`42`, `-3.5`, `1e3`).
pub fn number_problem(text: &str) -> Option<String> {
    let finite = text.parse::<f64>().is_ok_and(f64::is_finite);
    let plain = !text.is_empty() && text.trim() == text;
    let spelled = !text.contains(['i', 'I', 'n', 'N']);
    if finite && plain && spelled {
        None
    } else {
        Some(format!(
            "`{text}` is not a number: write a decimal number such as 42, -3.5 or 1e3"
        ))
    }
}

/// Why `name` cannot name instance data (`None` when it can): 1 to
/// [`crate::limits::MAX_DATA_NAME_CHARS`] characters, a letter or `_` first, then letters,
/// digits, `_`, `-` or `.`, so that it is also a safe file name in `MOBIWF_DATA_DIR`.
pub fn data_name_problem(name: &str) -> Option<String> {
    let max = crate::limits::MAX_DATA_NAME_CHARS;
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if name.chars().count() > max {
        Some(format!(
            "the data name `{name}` is longer than {max} characters (MAX_DATA_NAME_CHARS)"
        ))
    } else if first_ok && rest_ok {
        None
    } else {
        Some(format!(
            "`{name}` is not a data name: begin with a letter or `_`, then use letters, \
             digits, `_`, `-` or `.` (it is also a file name)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_plain_finite_decimals() {
        for ok in ["42", "-3.5", "1e3", "0", "+7", ".5"] {
            assert_eq!(number_problem(ok), None, "{ok}");
        }
        for bad in [
            "", " 42", "42 ", "abc", "inf", "NaN", "1e999", "0x10", "4,2",
        ] {
            assert!(number_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn names_are_safe_file_names() {
        for ok in ["reading", "photo_2", "_x", "a.b-c"] {
            assert_eq!(data_name_problem(ok), None, "{ok}");
        }
        for bad in ["", "2x", "a/b", "..", ".x", "a b", "é", &"x".repeat(65)] {
            assert!(data_name_problem(bad).is_some(), "{bad}");
        }
    }
}
