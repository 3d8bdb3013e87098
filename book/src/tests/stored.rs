//! Stored bytes stay readable: instances as the book wrote them (captured from the scenario
//! tests: every kind of activity and partition state they reach, with their instances), and
//! activities as the node's words and earlier versions left them, load and are written again
//! byte for byte.

use std::collections::BTreeSet;

use super::*;
use crate::{ActivityKind, PartitionKind};

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

#[test]
fn an_instance_keeps_its_state_as_the_bare_word_it_always_was() {
    let mut states = BTreeSet::new();
    for line in INSTANCES.lines() {
        let inst: Instance = serde_json::from_str(line).expect("an instance");
        let word = format!("\"state\":\"{}\"", inst.state().as_str());
        assert!(line.contains(&word), "{word} in {line}");
        states.insert(inst.state().as_str());
    }
    let every: BTreeSet<&str> = InstanceState::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(states, every, "the examples hold every instance state");
}

#[test]
fn the_stored_examples_hold_every_kind_of_state_and_load_in_it() {
    let mut activities = BTreeSet::new();
    let mut partitions = BTreeSet::new();
    for line in INSTANCES.lines() {
        let inst: Instance = serde_json::from_str(line).expect("an instance");
        activities.extend(inst.activities.iter().map(|a| a.lifecycle().kind()));
        partitions.extend(inst.partitions.iter().map(|p| p.lifecycle().kind()));
    }
    let every_activity_kind: BTreeSet<ActivityKind> = crate::lifecycle::tables::ACTIVITY
        .iter()
        .flat_map(|t| [t.from, t.to])
        .collect();
    let every_partition_kind: BTreeSet<PartitionKind> = crate::lifecycle::tables::PARTITION
        .iter()
        .flat_map(|t| [t.from, t.to])
        .collect();
    assert_eq!(activities, every_activity_kind);
    assert_eq!(partitions, every_partition_kind);

    // What its node said before the start is kept under the lifecycle's `waiting`, overdue
    // or not.
    let mut lines = ACTIVITIES
        .lines()
        .map(|line| serde_json::from_str::<ActivityView>(line).expect("an activity"));
    let synchronizing = lines.next().expect("a synchronizing activity");
    assert_eq!(synchronizing.lifecycle(), ActivityLifecycle::Waiting);
    assert_eq!(synchronizing.state(), ActivityState::Synchronizing);
    let ready_overdue = lines.next().expect("a ready activity, overdue");
    assert!(matches!(
        ready_overdue.lifecycle(),
        ActivityLifecycle::Overdue {
            under: Undecided::Waiting,
            ..
        }
    ));
    assert_eq!(ready_overdue.state(), ActivityState::Ready);
    assert_eq!(
        ready_overdue.overdue().map(|g| g.at_ms),
        Some(1_173_543_587_000)
    );
}
