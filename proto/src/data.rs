//! Instance data on the wire: the values and file references an activity wrote, as they travel with
//! notifications from the partner that has them to the partners whose activities read them, and the
//! limits on them. File contents travel inline (base64) when small, else are fetched from the
//! partner that holds them (`Message::Fetch`), in chunks.

use serde::{Deserialize, Serialize};

use crate::ActivityId;

/// The longest string or number value, in bytes. A value is a reading or a remark; a report is
/// a file.
pub const MAX_VALUE_BYTES: usize = 64 * 1024;

/// The most bytes of string and number values one instance holds, all names together: a
/// notification carries at most all of them, so with the inline files it stays under
/// `MAX_MESSAGE_BYTES` (12 MiB) even when every character needs escaping in JSON.
pub const MAX_INSTANCE_VALUE_BYTES: usize = 1 << 20;

/// The largest file a workflow's data may hold, in bytes.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Files up to this size travel inside the notification that carries their reference; larger
/// ones are fetched from the partner that holds them.
pub const MAX_INLINE_FILE_BYTES: u64 = 256 * 1024;

/// The most file bytes one notification carries inline: past it, files travel by reference
/// (so that a message stays far below `MAX_MESSAGE_BYTES`).
pub const MAX_INLINE_TOTAL_BYTES: u64 = 3 << 20;

/// The bytes one fetch of a file's content answers with (the last chunk may be shorter).
pub const FETCH_CHUNK_BYTES: u64 = 1 << 20;

/// A file's content, named by its SHA-256 (lower-case hex) and size: the same content is kept
/// once per node, whatever instance or activity wrote it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FileRef {
    /// SHA-256 of the content, 64 lower-case hex digits.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

impl FileRef {
    /// Why this cannot name a file's content (`None` when it can): a hash that is not 64
    /// lower-case hex digits (it is also a file name in the node's store), or a size over
    /// [`MAX_FILE_BYTES`].
    pub fn problem(&self) -> Option<String> {
        let hex = self.sha256.len() == 64
            && self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            Some(format!(
                "`{}` is not a SHA-256 (64 lower-case hex digits)",
                self.sha256
            ))
        } else if self.size > MAX_FILE_BYTES {
            Some(format!(
                "a file of {} bytes is over the limit of {MAX_FILE_BYTES} (MAX_FILE_BYTES)",
                self.size
            ))
        } else {
            None
        }
    }
}

/// What a data name holds in one instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataValue {
    /// A `<value type="string">`.
    String(String),
    /// A `<value type="number">`, as written (`42`, `-3.5`).
    Number(String),
    /// A `<file>`: its content's reference.
    File(FileRef),
}

impl DataValue {
    /// How tables show it: its kind (`string`, `number`, `file`) and its text (a file's size
    /// and hash).
    pub fn shown(&self) -> (&'static str, String) {
        match self {
            DataValue::String(t) => ("string", t.clone()),
            DataValue::Number(t) => ("number", t.clone()),
            DataValue::File(f) => ("file", format!("{} bytes, sha256 {}", f.size, f.sha256)),
        }
    }

    /// Why the value cannot travel (`None` when it can): a string or number over
    /// [`MAX_VALUE_BYTES`], or a bad file reference.
    pub fn problem(&self) -> Option<String> {
        match self {
            DataValue::String(text) | DataValue::Number(text) if text.len() > MAX_VALUE_BYTES => {
                Some(format!(
                    "a value of {} bytes is over the limit of {MAX_VALUE_BYTES} \
                     (MAX_VALUE_BYTES): put long text in a <file>",
                    text.len()
                ))
            }
            DataValue::File(file) => file.problem(),
            _ => None,
        }
    }
}

/// One name's value in an instance, with the write it comes from: of two writes of a name,
/// the later (`at_us`, then the larger activity id) wins, wherever they meet; every write wins
/// over an input of the instance.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Datum {
    /// The declared name.
    pub name: String,
    /// What it holds.
    pub value: DataValue,
    /// Who gave it its value: the activity that wrote it, or the start of the instance.
    pub by: Writer,
    /// When that activity finished, in microseconds since the Unix epoch (its node's clock);
    /// 0 for an input.
    pub at_us: u64,
    /// The writer's pass (a loop's body runs its activities again, each pass a new serial
    /// number); left out of messages and records for the first, as before loops.
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
}

impl Datum {
    /// True when this write wins over `other` (a write of the same name): the later by its
    /// writer's clock (one order for every node, so all agree whatever order writes arrive
    /// in; a pass does not enter it, since a pass of one loop says nothing of another's or of
    /// a write after the loop).
    pub fn supersedes(&self, other: &Datum) -> bool {
        // An input was given before any activity ran: every write supersedes it, whatever
        // the writer's clock says.
        let key = |d: &Datum| (d.by != Writer::Input, d.at_us, d.by);
        key(self) > key(other)
    }

    /// Who wrote it, in words: `input`, `activity 3`, `activity 3#2` (its second pass).
    pub fn writer(&self) -> String {
        match self.by {
            Writer::Input => "input".to_owned(),
            Writer::Activity(id) => format!("activity {}", self.pass.of(id)),
        }
    }
}

/// Who gave a name its value in an instance. Its JSON is the activity's id (`3`), as it always
/// was, or the word `"input"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "WriterRepr", into = "WriterRepr")]
pub enum Writer {
    /// An input of the instance: given when it started (or its default).
    Input,
    /// The activity that wrote it.
    Activity(ActivityId),
}

impl std::fmt::Display for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Writer::Input => f.write_str("input"),
            Writer::Activity(id) => write!(f, "activity {id}"),
        }
    }
}

/// A [`Writer`] as stored and sent: a bare activity id, or the word `input`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WriterRepr {
    Activity(ActivityId),
    Word(WriterWord),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WriterWord {
    Input,
}

impl From<WriterRepr> for Writer {
    fn from(r: WriterRepr) -> Writer {
        match r {
            WriterRepr::Activity(id) => Writer::Activity(id),
            WriterRepr::Word(WriterWord::Input) => Writer::Input,
        }
    }
}

impl From<Writer> for WriterRepr {
    fn from(w: Writer) -> WriterRepr {
        match w {
            Writer::Input => WriterRepr::Word(WriterWord::Input),
            Writer::Activity(id) => WriterRepr::Activity(id),
        }
    }
}

/// The instance data a person's completion of a work item writes, as it travels from their
/// device to the item's host: the values by name, the contents of the small files inline, and
/// where the others are fetched from (the device).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    /// The values and file references, by name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub values: std::collections::BTreeMap<String, DataValue>,
    /// The contents of the small files among them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileBody>,
    /// Where the files not carried inline are fetched from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder: Option<crate::Location>,
}

impl Written {
    /// True when it writes nothing.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A file's content carried inline in a notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileBody {
    /// SHA-256 of the content (the receiver checks it).
    pub sha256: String,
    /// The content, base64 (standard alphabet, padded).
    pub base64: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definition_s_defaults_are_bounded_as_an_instance_s_values() {
        use mobiwf_xml_schema::limits::{MAX_DEFAULT_BYTES, MAX_DEFAULTS_BYTES};
        assert_eq!(MAX_DEFAULT_BYTES, MAX_VALUE_BYTES);
        assert_eq!(MAX_DEFAULTS_BYTES, MAX_INSTANCE_VALUE_BYTES);
    }

    #[test]
    fn the_later_write_wins_and_the_larger_id_breaks_a_tie() {
        let d = |by, at_us| Datum {
            name: "x".into(),
            value: DataValue::Number("1".into()),
            by: Writer::Activity(ActivityId(by)),
            at_us,
            pass: Default::default(),
        };
        assert!(d(1, 10).supersedes(&d(2, 9)));
        assert!(d(2, 10).supersedes(&d(1, 10)));
        assert!(!d(1, 10).supersedes(&d(1, 10)));
    }

    #[test]
    fn a_writer_is_an_activity_id_as_it_was_or_the_word_input() {
        let written = serde_json::to_string(&Writer::Activity(ActivityId(3))).unwrap();
        assert_eq!(written, "3");
        let input = serde_json::to_string(&Writer::Input).unwrap();
        assert_eq!(input, "\"input\"");
        let back: Writer = serde_json::from_str("3").unwrap();
        assert_eq!(back, Writer::Activity(ActivityId(3)));
        let back: Writer = serde_json::from_str("\"input\"").unwrap();
        assert_eq!(back, Writer::Input);
        assert!(serde_json::from_str::<Writer>("\"output\"").is_err());
        assert_eq!(Writer::Input.to_string(), "input");
        assert_eq!(Writer::Activity(ActivityId(3)).to_string(), "activity 3");
    }

    #[test]
    fn every_write_supersedes_an_input_whatever_its_time() {
        let at = |by, at_us| Datum {
            name: "x".into(),
            value: DataValue::Number("1".into()),
            by,
            at_us,
            pass: Default::default(),
        };
        let input = at(Writer::Input, 50);
        let early = at(Writer::Activity(ActivityId(1)), 0);
        assert!(early.supersedes(&input));
        assert!(!input.supersedes(&early));
    }

    #[test]
    fn refs_and_values_over_their_limits_say_so() {
        let ok = FileRef {
            sha256: "a".repeat(64),
            size: 3,
        };
        assert_eq!(ok.problem(), None);
        let upper = FileRef {
            sha256: "A".repeat(64),
            ..ok.clone()
        };
        assert!(upper.problem().is_some());
        let big = FileRef {
            size: MAX_FILE_BYTES + 1,
            ..ok
        };
        assert!(big.problem().unwrap_or_default().contains("MAX_FILE_BYTES"));
        let long = DataValue::String("x".repeat(MAX_VALUE_BYTES + 1));
        assert!(
            long.problem()
                .unwrap_or_default()
                .contains("MAX_VALUE_BYTES")
        );
    }
}
