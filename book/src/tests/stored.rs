//! Stored bytes stay readable: instances as the book wrote them (captured from the scenario
//! tests: every kind of activity and partition state they reach, with their instances), and
//! activities as the node's words and earlier versions left them, load and are written again
//! byte for byte.

use super::*;

/// One instance a line, as the store holds it.
const INSTANCES: &str = include_str!("stored/instances.jsonl");

/// One activity a line: a synchronizing one, and a ready one overdue (an earlier version's
/// record: the grace was set without touching the state).
const ACTIVITIES: &str = include_str!("stored/activities.jsonl");

#[test]
fn stored_instances_load_and_are_written_again_byte_for_byte() {
    for (n, line) in INSTANCES.lines().enumerate() {
        let inst: Instance = serde_json::from_str(line).unwrap_or_else(|e| panic!("{n}: {e}"));
        let again = serde_json::to_string(&inst).expect("json");
        assert_eq!(again, line, "instance line {}", n + 1);
    }
}

#[test]
fn stored_activities_load_and_are_written_again_byte_for_byte() {
    for (n, line) in ACTIVITIES.lines().enumerate() {
        let a: ActivityView = serde_json::from_str(line).unwrap_or_else(|e| panic!("{n}: {e}"));
        let again = serde_json::to_string(&a).expect("json");
        assert_eq!(again, line, "activity line {}", n + 1);
    }
}
