//! Work items stored by earlier versions load and are written back byte for byte: the
//! examples in `stored_items.jsonl` were written by the engine before a copy's state became
//! one typed value (one per shape the scenario tests stored: offered, orphaned, held, held by
//! delegation, done, closed with and without a holder, method `all`, unassigned, taken off,
//! with a deadline), and two built with every field set (a completion's detail, flag and
//! written data; a deadline handed over).

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
