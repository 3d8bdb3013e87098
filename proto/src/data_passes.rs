//! An instance's data across a loop's passes (the SERIAL_NO of *A lightweight workflow engine
//! based on a relational structure* (He, Li, Jiao, Liu), §3.2.3): each pass of a loop's body
//! writes its values again, and what an earlier pass wrote stays readable beside the latest.
//! What is kept of a name: its latest write (what activities read and notifications carry) and,
//! for every earlier pass, the last write of that pass. A write of the same pass as the one it
//! supersedes replaces it, as before loops. The controller merges what nodes answer by the same
//! rule, so every node and `status --data` agree whatever order the writes arrive in.

use std::collections::BTreeMap;

use crate::{DataValue, Datum, Writer};

/// The most bytes an instance keeps of its earlier passes' writes, all names together, each
/// write counted as it travels (its JSON: name, value escaped, writer, time, pass): past it the
/// oldest passes' writes are forgotten first. With the latest values (at most
/// `MAX_INSTANCE_VALUE_BYTES` of text, six times that escaped) an answer carrying both stays
/// far below `MAX_MESSAGE_BYTES`. A write counts at least `WRITE_OVERHEAD_BYTES`, so at most
/// 4096 are kept: a long loop keeps its latest passes apart.
pub const MAX_EARLIER_VALUE_BYTES: usize = 1 << 20;

/// What [`keep`] changed: the latest value of the name, what earlier passes keep (either must
/// be stored again).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    /// The name's latest value changed.
    pub latest: bool,
    /// What earlier passes keep changed.
    pub earlier: bool,
}

/// Keeps `datum` among an instance's values: `latest` by name, `earlier` the last write of each
/// (name, pass) older than the latest's pass, within `MAX_EARLIER_VALUE_BYTES`.
pub fn keep(latest: &mut BTreeMap<String, Datum>, earlier: &mut Vec<Datum>, datum: Datum) -> Kept {
    let kept = keep_unbounded(latest, earlier, datum);
    if kept.earlier {
        trim(earlier);
    }
    kept
}

/// [`keep`] without the limits.
fn keep_unbounded(
    latest: &mut BTreeMap<String, Datum>,
    earlier: &mut Vec<Datum>,
    datum: Datum,
) -> Kept {
    let Some(old) = latest.get(&datum.name) else {
        latest.insert(datum.name.clone(), datum);
        return Kept {
            latest: true,
            earlier: false,
        };
    };
    if !datum.supersedes(old) {
        let earlier = datum.pass != old.pass && keep_earlier(earlier, datum);
        return Kept {
            latest: false,
            earlier,
        };
    }
    let (name, pass) = (datum.name.clone(), datum.pass);
    let mut changed = false;
    if let Some(old) = latest.insert(name.clone(), datum)
        && old.pass != pass
    {
        changed = keep_earlier(earlier, old);
    }
    // The latest write stands for its own pass.
    let before = earlier.len();
    earlier.retain(|d| !(d.name == name && d.pass == pass));
    Kept {
        latest: true,
        earlier: changed || earlier.len() != before,
    }
}

/// Keeps `datum` as the last write of its pass, unless a later one of that pass is kept. True
/// when what is kept changed.
fn keep_earlier(earlier: &mut Vec<Datum>, datum: Datum) -> bool {
    if datum.by == Writer::Input {
        // An input was given before every pass; the latest write of its name replaced it.
        return false;
    }
    match earlier
        .iter_mut()
        .find(|d| d.name == datum.name && d.pass == datum.pass)
    {
        Some(kept) if datum.supersedes(kept) => *kept = datum,
        Some(_) => return false,
        None => earlier.push(datum),
    }
    earlier.sort_by(|a, b| (&a.name, a.pass).cmp(&(&b.name, b.pass)));
    true
}

/// Forgets the oldest passes' writes (the oldest pass first, then the earliest written) until
/// what is kept is within `MAX_EARLIER_VALUE_BYTES`. The result depends only on what is
/// kept now (a node keeping writes one by one may have forgotten one that a later write,
/// shrinking the total, would have left room for: only which earlier values are shown
/// differs).
fn trim(earlier: &mut Vec<Datum>) {
    let mut total: usize = earlier.iter().map(travel_bytes).sum();
    if total <= MAX_EARLIER_VALUE_BYTES {
        return;
    }
    let mut by_age: Vec<usize> = (0..earlier.len()).collect();
    by_age.sort_by(|&i, &j| {
        let (a, b) = (&earlier[i], &earlier[j]);
        (a.pass, a.at_us, &a.name).cmp(&(b.pass, b.at_us, &b.name))
    });
    let mut forgotten = vec![false; earlier.len()];
    for i in by_age {
        if total <= MAX_EARLIER_VALUE_BYTES {
            break;
        }
        forgotten[i] = true;
        total = total.saturating_sub(travel_bytes(&earlier[i]));
    }
    let mut i = 0;
    earlier.retain(|_| {
        let keep = !forgotten[i];
        i += 1;
        keep
    });
}

/// At least the bytes of a write's JSON other than its name's and its text value's: the field
/// names and punctuation, the writer, the time, the pass, a file's reference.
const WRITE_OVERHEAD_BYTES: usize = 256;

/// At least the bytes `datum` takes in a message (JSON): its name and text value as escaped,
/// plus [`WRITE_OVERHEAD_BYTES`] (a file is its reference: its content travels apart).
fn travel_bytes(datum: &Datum) -> usize {
    let text = match &datum.value {
        DataValue::String(t) | DataValue::Number(t) => escaped_len(t),
        DataValue::File(_) => 0,
    };
    WRITE_OVERHEAD_BYTES + escaped_len(&datum.name) + text
}

/// The length of `text` as a JSON string's content: a quote, a backslash or a common control
/// character takes two bytes, any other control character six.
fn escaped_len(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if u32::from(c) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum()
}

/// Merges writes from several holders (each node's latest and earlier values) by the rule of
/// [`keep`]: the latest of each name, then the last write of each earlier pass, oldest first;
/// the limits apply once all are in, so the result does not depend on the order they came in.
pub fn merge(writes: impl IntoIterator<Item = Datum>) -> (Vec<Datum>, Vec<Datum>) {
    let (mut latest, mut earlier) = (BTreeMap::new(), Vec::new());
    for d in writes {
        keep_unbounded(&mut latest, &mut earlier, d);
    }
    trim(&mut earlier);
    (latest.into_values().collect(), earlier)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{ActivityId, Pass};

    fn w(name: &str, value: &str, by: u64, pass: u32, at_us: u64) -> Datum {
        Datum {
            name: name.into(),
            value: DataValue::Number(value.into()),
            by: Writer::Activity(ActivityId(by)),
            at_us,
            pass: Pass(pass),
        }
    }

    fn shown(data: &[Datum]) -> Vec<(String, String, u32)> {
        data.iter()
            .map(|d| (d.name.clone(), d.value.shown().1, d.pass.0))
            .collect()
    }

    #[test]
    fn each_pass_keeps_its_last_write_beside_the_latest() {
        let (latest, earlier) = merge([
            w("round", "1", 3, 1, 10),
            w("round", "2", 3, 2, 20),
            w("round", "3", 3, 3, 30),
        ]);
        assert_eq!(shown(&latest), [("round".into(), "3".into(), 3)]);
        assert_eq!(
            shown(&earlier),
            [
                ("round".into(), "1".into(), 1),
                ("round".into(), "2".into(), 2)
            ]
        );
    }

    #[test]
    fn the_order_writes_arrive_in_changes_nothing() {
        let writes = [
            w("round", "1", 3, 1, 10),
            w("round", "1b", 2, 1, 11),
            w("round", "2", 3, 2, 20),
            w("round", "3", 3, 3, 30),
            w("other", "x", 1, 1, 5),
        ];
        let mut orders = vec![writes.to_vec()];
        let mut reversed = writes.to_vec();
        reversed.reverse();
        orders.push(reversed);
        orders.push(vec![
            writes[3].clone(),
            writes[0].clone(),
            writes[4].clone(),
            writes[2].clone(),
            writes[1].clone(),
        ]);
        let results: Vec<_> = orders.into_iter().map(merge).collect();
        assert!(results.windows(2).all(|r| r[0] == r[1]));
        let (latest, earlier) = &results[0];
        assert_eq!(latest.len(), 2);
        // Two writes of pass 1: the later of them is pass 1's.
        assert_eq!(
            shown(earlier),
            [
                ("round".into(), "1b".into(), 1),
                ("round".into(), "2".into(), 2)
            ]
        );
    }

    #[test]
    fn a_write_of_the_same_pass_replaces_and_an_input_is_not_a_pass() {
        let input = Datum {
            by: Writer::Input,
            at_us: 0,
            ..w("round", "0", 0, 1, 0)
        };
        let (latest, earlier) =
            merge([input, w("round", "1", 1, 1, 10), w("round", "2", 5, 1, 20)]);
        assert_eq!(shown(&latest), [("round".into(), "2".into(), 1)]);
        assert!(earlier.is_empty());
    }

    #[test]
    fn a_change_to_an_earlier_pass_alone_is_told() {
        let (mut latest, mut earlier) = (BTreeMap::new(), Vec::new());
        keep(&mut latest, &mut earlier, w("round", "1", 3, 1, 10));
        keep(&mut latest, &mut earlier, w("round", "2", 3, 2, 20));
        // A later write of pass 1 arrives late: the latest stays, pass 1's entry is replaced
        // in place (the list's length does not change), and that must be stored.
        let kept = keep(&mut latest, &mut earlier, w("round", "1b", 4, 1, 15));
        assert_eq!(
            kept,
            Kept {
                latest: false,
                earlier: true
            }
        );
        let again = keep(&mut latest, &mut earlier, w("round", "1a", 4, 1, 12));
        assert_eq!(again, Kept::default());
    }

    fn passes(data: &[Datum]) -> Vec<u32> {
        data.iter().map(|d| d.pass.0).collect()
    }

    fn travelling(data: &[Datum]) -> usize {
        serde_json::to_vec(data).unwrap().len()
    }

    #[test]
    fn a_write_is_counted_at_least_as_it_travels() {
        let file = Datum {
            value: DataValue::File(crate::FileRef {
                sha256: "f".repeat(64),
                size: u64::MAX,
            }),
            by: Writer::Activity(ActivityId(u64::MAX)),
            at_us: u64::MAX,
            pass: Pass(u32::MAX),
            name: "n\"\u{1}é".into(),
        };
        let texts = [
            "",
            "plain",
            "q\"b\\n\n\t\u{8}\u{c}\r\u{1}\u{1f}é€😀",
            "\u{7f}",
        ];
        let mut writes = vec![file];
        for t in texts {
            let d = Datum {
                value: DataValue::String(t.into()),
                ..w("naïve \"name\"", "", u64::MAX, u32::MAX, u64::MAX)
            };
            writes.push(Datum {
                value: DataValue::Number(t.into()),
                ..d.clone()
            });
            writes.push(d);
        }
        writes.push(Datum {
            by: Writer::Input,
            ..w("x", "1", 0, 1, 0)
        });
        for d in writes {
            let json = serde_json::to_vec(&d).unwrap().len();
            assert!(
                travel_bytes(&d) >= json,
                "{d:?}: {} < {json}",
                travel_bytes(&d)
            );
        }
    }

    #[test]
    fn past_the_limit_the_oldest_passes_go_first() {
        let big = "9".repeat(MAX_EARLIER_VALUE_BYTES / 3);
        let (_, earlier) = merge((1..=5).map(|p| w("round", &big, 3, p, u64::from(p))));
        // Passes 1 to 4 are earlier; three of them, with their names and writers, are over.
        assert_eq!(passes(&earlier), [3, 4]);
        assert!(travelling(&earlier) <= MAX_EARLIER_VALUE_BYTES);
    }

    #[test]
    fn escapes_names_and_files_count_as_they_travel() {
        // A control character travels as six bytes: a sixth of the limit in such characters
        // is a whole limit's worth: three writes of a third are over.
        let escaped = "\u{1}".repeat(MAX_EARLIER_VALUE_BYTES / 6 / 3);
        let (_, earlier) = merge((1..=4).map(|p| w("note", &escaped, 3, p, u64::from(p))));
        assert_eq!(passes(&earlier), [2, 3], "three escaped thirds are over");
        assert!(travelling(&earlier) <= MAX_EARLIER_VALUE_BYTES);
        // Files have no value bytes, yet their references and names take room.
        let file = |p: u32| Datum {
            value: DataValue::File(crate::FileRef {
                sha256: "a".repeat(64),
                size: 1,
            }),
            ..w(&"n".repeat(200), "", 3, p, u64::from(p))
        };
        let (_, earlier) = merge((1..=4000).map(file));
        assert!(travelling(&earlier) <= MAX_EARLIER_VALUE_BYTES);
        assert!(earlier.len() < 3000, "{}", earlier.len());
    }

    #[test]
    fn a_long_loop_keeps_its_latest_passes_whatever_the_order() {
        let most = MAX_EARLIER_VALUE_BYTES / WRITE_OVERHEAD_BYTES;
        let last = u32::try_from(most).unwrap() + 10;
        let writes: Vec<Datum> = (1..=last)
            .map(|p| w("round", "1", 3, p, u64::from(p)))
            .collect();
        let (latest, earlier) = merge(writes.clone());
        assert_eq!(passes(&latest), [last]);
        let first = earlier[0].pass.0;
        assert!(first > 10, "{first}");
        assert_eq!(passes(&earlier), (first..last).collect::<Vec<_>>());
        assert!(earlier.len() <= most);
        let mut reversed = writes.clone();
        reversed.reverse();
        assert_eq!(merge(reversed), (latest.clone(), earlier.clone()));
        // Kept one by one in pass order (as a loop's node does), the same.
        let (mut l, mut e) = (BTreeMap::new(), Vec::new());
        for d in writes {
            keep(&mut l, &mut e, d);
        }
        assert_eq!((l.into_values().collect::<Vec<_>>(), e), (latest, earlier));
    }

    #[test]
    fn the_first_pass_is_left_out_of_the_bytes() {
        let json = serde_json::to_string(&w("x", "1", 3, 1, 7)).unwrap();
        assert!(!json.contains("pass"), "{json}");
        let json = serde_json::to_string(&w("x", "1", 3, 2, 7)).unwrap();
        assert!(json.contains("\"pass\":2"), "{json}");
        let old: Datum =
            serde_json::from_str(r#"{"name":"x","value":{"number":"1"},"by":3,"at_us":7}"#)
                .unwrap();
        assert_eq!(old.pass, Pass::FIRST);
        assert_eq!(w("x", "1", 3, 2, 7).writer(), "activity 3#2");
    }
}
