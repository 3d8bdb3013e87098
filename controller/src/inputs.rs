//! The inputs an operator gives when an instance starts, as the API and the command line take
//! them: `data.NAME=VALUE` query parameters beside the document (so a client that gives none
//! sends what it always sent), and a JSON object of name → value (`--data-file`). Each name
//! once; what the values must be is the book's check, against the definition
//! (`mobiwf_book::StartWith`).

use mobiwf_book::{abbreviate, capped};
use mobiwf_proto::GivenInputs;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The query parameters that give inputs: `data.reading=42`.
pub const QUERY_PREFIX: &str = "data.";

/// The longest request target (path and query) the API's HTTP server takes; it answers 414
/// past it (hyper's limit). The inputs travel in it, so together they are short: long text
/// belongs in a `<file>` an activity writes.
pub const MAX_REQUEST_TARGET_BYTES: usize = 65_534;

/// Why a request whose target (path and query) is `len` bytes is not sent, if it is not.
pub fn target_problem(len: usize) -> Option<String> {
    (len > MAX_REQUEST_TARGET_BYTES).then(|| {
        format!(
            "the inputs are too long to send: the request would be {len} bytes long, over the \
             {MAX_REQUEST_TARGET_BYTES} the API takes (MAX_REQUEST_TARGET_BYTES); long text \
             belongs in a <file> an activity writes"
        )
    })
}

/// The inputs among a request's query parameters (those named `data.NAME`, in their order);
/// the others are left to the route. Refused when a name is given twice.
pub fn from_query(pairs: &[(String, String)]) -> Result<GivenInputs, String> {
    let mut given = GivenInputs::new();
    for (key, value) in pairs {
        if let Some(name) = key.strip_prefix(QUERY_PREFIX) {
            given.give(name, value.clone())?;
        }
    }
    Ok(given)
}

/// The query parameters that give `given`: one `data.NAME=VALUE` each.
pub fn to_query(given: &GivenInputs) -> Vec<(String, String)> {
    given
        .iter()
        .map(|(name, text)| (format!("{QUERY_PREFIX}{name}"), text.to_owned()))
        .collect()
}

/// A JSON object of name → value as written: its members in their order, each value's JSON
/// text untouched, so a number keeps its exact spelling (no round trip through a binary
/// float: `12345678901234567890123` stays that). A name given twice is refused while it is
/// read, naming it: JSON objects may repeat names, and keeping one silently would lose the
/// other.
#[derive(Debug, Default)]
pub struct JsonObject(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for JsonObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = JsonObject;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of name → value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonObject, A::Error> {
                let mut members: Vec<(String, Box<RawValue>)> = Vec::new();
                // A set beside the list: a body of many names is checked in linear time.
                let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
                while let Some(name) = map.next_key::<String>()? {
                    if !seen.insert(name.clone()) {
                        return Err(serde::de::Error::custom(format!(
                            "`{}` is given twice",
                            abbreviate(&name)
                        )));
                    }
                    let value = map.next_value()?;
                    members.push((name, value));
                }
                Ok(JsonObject(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Adds to `given` the inputs of `json`, a JSON object of name → value read from `source`
/// (for the words): a string is taken as it is, a number as its JSON text exactly as written
/// (`42`, `3.50`, `1e3`); anything else is refused, and so is a name given twice or given
/// already.
pub fn add_json(given: &mut GivenInputs, json: &str, source: &str) -> Result<(), String> {
    let example =
        "expected an object of name → value, e.g. {\"reading\": 42, \"note\": \"north gate\"}";
    let value: Box<RawValue> =
        serde_json::from_str(json).map_err(|e| format!("{source} is not JSON: {e}; {example}"))?;
    if !value.get().starts_with('{') {
        return Err(format!(
            "{source} holds JSON {}, not an object of name → value, e.g. {{\"reading\": 42}}",
            kind(&value)
        ));
    }
    let object: JsonObject = serde_json::from_str(value.get())
        .map_err(|e| format!("{source} is not an object of name → value: {e}; {example}"))?;
    add_object(given, object, source)
}

/// Adds to `given` the inputs of a JSON object of name → value from `source` (for the words),
/// as [`add_json`] takes them: the `data` of a start by name, and a `--data-file`'s content.
pub fn add_object(given: &mut GivenInputs, object: JsonObject, source: &str) -> Result<(), String> {
    let mut problems = Vec::new();
    for (name, value) in object.0 {
        let raw = value.get();
        let text = match raw.as_bytes().first() {
            Some(b'"') => match serde_json::from_str::<String>(raw) {
                Ok(text) => text,
                Err(e) => {
                    problems.push(format!("`{}` in {source}: {e}", abbreviate(&name)));
                    continue;
                }
            },
            Some(b'-' | b'0'..=b'9') => raw.to_owned(),
            _ => {
                problems.push(format!(
                    "`{}` in {source} is {}: give a string or a number",
                    abbreviate(&name),
                    kind(&value)
                ));
                continue;
            }
        };
        if let Err(problem) = given.give(name, text) {
            problems.push(problem);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(capped(problems).join("\n"))
    }
}

/// How the words name a JSON value's kind (told by its first character: the text is JSON).
fn kind(value: &RawValue) -> &'static str {
    match value.get().as_bytes().first() {
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'"') => "a string",
        Some(b'[') => "an array",
        Some(b'{') => "an object",
        _ => "a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_query_gives_the_data_parameters_once_each_and_back() {
        let q = pairs(&[
            ("source", "wf.xml"),
            ("data.reading", "42"),
            ("data.note", "north gate"),
        ]);
        let given = from_query(&q).unwrap();
        assert_eq!(given.get("reading"), Some("42"));
        assert_eq!(given.get("note"), Some("north gate"));
        assert_eq!(given.get("source"), None);
        let back = to_query(&given);
        assert_eq!(from_query(&back).unwrap(), given);
        let twice = from_query(&pairs(&[("data.x", "1"), ("data.x", "2")])).unwrap_err();
        assert!(twice.contains("`x` is given twice"), "{twice}");
        assert!(from_query(&pairs(&[("source", "a")])).unwrap().is_empty());
    }

    #[test]
    fn a_target_past_the_servers_limit_is_not_sent() {
        assert_eq!(target_problem(MAX_REQUEST_TARGET_BYTES), None);
        let words = target_problem(MAX_REQUEST_TARGET_BYTES + 1).unwrap();
        assert!(words.contains("MAX_REQUEST_TARGET_BYTES"), "{words}");
    }

    #[test]
    fn a_json_file_gives_strings_and_numbers() {
        let mut given = GivenInputs::new();
        add_json(
            &mut given,
            r#"{"reading": 42, "level": -3.5, "big": 1e3, "note": "north gate", "code": "1e3"}"#,
            "in.json",
        )
        .unwrap();
        assert_eq!(given.get("reading"), Some("42"));
        assert_eq!(given.get("level"), Some("-3.5"));
        // A number as its JSON text, exactly as written.
        assert_eq!(given.get("big"), Some("1e3"));
        assert_eq!(given.get("note"), Some("north gate"));
        assert_eq!(given.get("code"), Some("1e3"));
        // Given again, on the command line or in the file: refused.
        let again = add_json(&mut given, r#"{"reading": 1}"#, "in.json").unwrap_err();
        assert!(again.contains("given twice"), "{again}");
    }

    #[test]
    fn a_json_number_keeps_its_exact_text_and_a_name_given_twice_is_refused() {
        let mut given = GivenInputs::new();
        let json = r#"{"account": 12345678901234567890123, "rate": 0.10000000000000000000001,
            "tiny": -1.5E-400, "escaped": "a\"b\u00e9"}"#;
        add_json(&mut given, json, "in.json").unwrap();
        assert_eq!(given.get("account"), Some("12345678901234567890123"));
        assert_eq!(given.get("rate"), Some("0.10000000000000000000001"));
        assert_eq!(given.get("tiny"), Some("-1.5E-400"));
        assert_eq!(given.get("escaped"), Some("a\"b\u{e9}"));
        let mut given = GivenInputs::new();
        let twice = add_json(&mut given, r#"{"a": 1, "a": 2}"#, "in.json").unwrap_err();
        assert!(twice.contains("`a` is given twice"), "{twice}");
        assert!(given.is_empty(), "nothing kept");
        // Inside a start's body too.
        let body = serde_json::from_str::<JsonObject>(r#"{"x": "1", "y": 2, "x": 3}"#);
        let words = body.unwrap_err().to_string();
        assert!(words.contains("`x` is given twice"), "{words}");
    }

    #[test]
    fn a_json_file_that_is_not_an_object_of_strings_and_numbers_is_refused_with_each_problem() {
        let mut given = GivenInputs::new();
        let words =
            add_json(&mut given, r#"{"a": true, "b": null, "c": [1]}"#, "in.json").unwrap_err();
        for says in [
            "`a` in in.json is a boolean",
            "`b` in in.json is null",
            "`c` in in.json is an array",
        ] {
            assert!(words.contains(says), "{says} in {words}");
        }
        let words = add_json(&mut given, "[1]", "in.json").unwrap_err();
        assert!(words.contains("not an object"), "{words}");
        let words = add_json(&mut given, "{", "in.json").unwrap_err();
        assert!(words.contains("in.json is not JSON"), "{words}");
    }
}
