//! Work items stored by earlier versions load and are written back byte for byte: the
//! examples in `stored_items.jsonl` were written by the engine before a copy's state became
//! one typed value (one per shape the scenario tests stored: offered, orphaned, held, held by
//! delegation, done, closed with and without a holder, method `all`, unassigned, taken off,
//! with a deadline), and two built with every field set (a completion's detail, flag and
//! written data; a deadline handed over). One exception: a failed completion's flag, which a
//! device could send and older versions kept, is dropped (a failure has no flag).

use crate::StoredItem;

const STORED: &str = include_str!("stored_items.jsonl");

#[test]
fn stored_items_load_and_are_written_back_identically() {
    let lines: Vec<&str> = STORED.lines().filter(|l| !l.is_empty()).collect();
    assert!(lines.len() >= 30, "the examples are missing");
    for line in lines {
        let item = StoredItem::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{e}: {line}"));
        let again = serde_json::to_string(&item).expect("encode");
        assert_eq!(again, line);
    }
}

#[test]
fn a_failed_completions_flag_is_dropped_and_the_rest_kept() {
    let failed = r#""status":{"status":"done","by":"bob","succeeded":false},"offered_ms":1000,"ended_ms":14079,"detail":"words""#;
    let line = STORED
        .lines()
        .find(|l| l.contains(failed))
        .expect("a failed copy among the examples");
    let with_flag = line.replace(failed, &format!(r#"{failed},"flag":"urgent""#));
    let item = StoredItem::decode(with_flag.as_bytes()).expect("a failed copy with a flag loads");
    let again = serde_json::to_string(&item).expect("encode");
    assert_eq!(again, line, "written back as without the flag");
}
