//! An instance's data across a loop's passes (the SERIAL_NO of *A lightweight workflow engine
//! based on a relational structure* (He, Li, Jiao, Liu), §3.2.3): each pass of a loop's body
//! writes its values again, and what an earlier pass wrote stays readable beside the latest.
//! What is kept of a name: its latest write (what activities read and notifications carry) and,
//! for every earlier pass, the last write of that pass. A write of the same pass as the one it
//! supersedes replaces it, as before loops. The controller merges what nodes answer by the same
//! rule, so every node and `status --data` agree whatever order the writes arrive in.

use std::collections::BTreeMap;

use crate::{DataValue, Datum, Writer};

/// The most bytes of string and number values an instance keeps of its earlier passes, all
/// names together: past it the oldest passes' writes are forgotten first. With the latest values
/// (`MAX_INSTANCE_VALUE_BYTES`) an answer with both stays far below `MAX_MESSAGE_BYTES`.
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
/// (name, pass) older than the latest's pass.
pub fn keep(latest: &mut BTreeMap<String, Datum>, earlier: &mut Vec<Datum>, datum: Datum) -> Kept {
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
    while bytes(earlier) > MAX_EARLIER_VALUE_BYTES {
        let oldest = earlier
            .iter()
            .enumerate()
            .min_by_key(|(_, d)| (d.pass, d.at_us))
            .map(|(i, _)| i);
        match oldest {
            Some(i) => {
                earlier.remove(i);
            }
            None => break,
        }
    }
    true
}

/// The string and number bytes of `data` (a file is a reference: its content is elsewhere).
fn bytes(data: &[Datum]) -> usize {
    data.iter()
        .map(|d| match &d.value {
            DataValue::String(t) | DataValue::Number(t) => t.len(),
            DataValue::File(_) => 0,
        })
        .sum()
}

/// Merges writes from several holders (each node's latest and earlier values) by the rule of
/// [`keep`]: the latest of each name, then the last write of each earlier pass, oldest first.
pub fn merge(writes: impl IntoIterator<Item = Datum>) -> (Vec<Datum>, Vec<Datum>) {
    let (mut latest, mut earlier) = (BTreeMap::new(), Vec::new());
    for d in writes {
        keep(&mut latest, &mut earlier, d);
    }
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

    #[test]
    fn past_the_limit_the_oldest_passes_go_first() {
        let big = "9".repeat(MAX_EARLIER_VALUE_BYTES / 3 + 1);
        let (_, earlier) = merge((1..=5).map(|p| w("round", &big, 3, p, u64::from(p))));
        // Passes 1 to 4 are earlier; three of them would be over the limit.
        assert_eq!(earlier.iter().map(|d| d.pass.0).collect::<Vec<_>>(), [3, 4]);
        assert!(bytes(&earlier) <= MAX_EARLIER_VALUE_BYTES);
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
