//! Unit tests of instance data in derived documents, apart from the other derivation tests so
//! that each file stays short: what adjacents carry (across partitions only, what is needed
//! after and available before, in declaration order), the declarations each document gets,
//! [`carried_names`], a long chain in linear time (counted in steps), cycles, and contingency documents.

use super::*;
use crate::model::{DataAccess, DataItem, DataKind, Input};

fn item(name: &str, kind: DataKind) -> DataItem {
    DataItem {
        name: name.to_owned(),
        kind,
        input: Input::No,
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

/// Activity `id` after `preconditions`, reading `reads` and writing `writes`.
fn user(id: u64, preconditions: &[u64], reads: &[&str], writes: &[&str]) -> Activity {
    let mut a = activity(id, preconditions, None);
    a.data = DataAccess {
        reads: names(reads),
        writes: names(writes),
    };
    a
}

/// [`definition`] with `reading` (number), `note` (string) and `photo` (file) declared.
fn with_data(activities: Vec<Activity>, first: &[u64]) -> WorkflowDefinition {
    let mut def = definition(activities, first);
    def.data = vec![
        item("reading", DataKind::Number),
        item("note", DataKind::String),
        item("photo", DataKind::File),
    ];
    def
}

fn carries(def: &WorkflowDefinition, from: u64, to: u64) -> Vec<String> {
    derived(def, from)
        .adjacents
        .into_iter()
        .find(|adj| adj.id == ActivityId(to))
        .expect("adjacent")
        .carries
}

fn document_of(def: &WorkflowDefinition, partition: u64) -> PartitionDocument {
    derive_partitions(def, &DeriveOptions::default())
        .into_iter()
        .find(|p| p.partition == PartitionId(partition))
        .expect("partition")
        .document
}

#[test]
fn what_a_later_activity_reads_travels_along_every_edge_between_partitions() {
    // 1 (partition 1) -> 2 (partition 2) -> 3 (partition 1): only 3 reads what 1 writes.
    let def = with_data(
        vec![
            user(1, &[], &[], &["photo"]),
            user(2, &[1], &[], &[]),
            user(3, &[2], &["photo"], &[]),
        ],
        &[1, 3],
    );
    assert_eq!(carries(&def, 1, 2), names(&["photo"]));
    assert_eq!(carries(&def, 2, 3), names(&["photo"]));
    assert_eq!(
        carried_names(&def, ActivityId(1), ActivityId(2)),
        names(&["photo"])
    );
    assert_eq!(
        carried_names(&def, ActivityId(2), ActivityId(3)),
        names(&["photo"])
    );
    let photo = vec![item("photo", DataKind::File)];
    assert_eq!(document_of(&def, 1).data, photo, "1 writes it, 3 reads it");
    assert_eq!(document_of(&def, 2).data, photo, "2's adjacent carries it");
    assert_eq!(derived(&def, 3).data.reads, names(&["photo"]));
}

#[test]
fn an_edge_inside_a_partition_carries_nothing() {
    let def = with_data(
        vec![user(1, &[], &[], &["note"]), user(2, &[1], &["note"], &[])],
        &[1, 2],
    );
    assert!(carries(&def, 1, 2).is_empty());
    assert_eq!(
        carried_names(&def, ActivityId(1), ActivityId(2)),
        names(&["note"]),
        "the flow itself knows no partitions"
    );
    assert_eq!(
        document_of(&def, 1).data,
        vec![item("note", DataKind::String)]
    );
    assert!(document_of(&def, 2).data.is_empty());
}

#[test]
fn a_name_nobody_later_reads_is_not_carried() {
    let def = with_data(
        vec![
            user(1, &[], &[], &["note", "reading"]),
            user(2, &[1], &["reading"], &[]),
            user(3, &[], &["note"], &[]),
        ],
        &[1],
    );
    assert_eq!(
        carries(&def, 1, 2),
        names(&["reading"]),
        "3 does not come after 1"
    );
    assert_eq!(
        document_of(&def, 2).data,
        vec![
            item("reading", DataKind::Number),
            item("note", DataKind::String)
        ],
        "declared in definition order"
    );
}

#[test]
fn carried_names_come_in_declaration_order_and_follow_rules() {
    let mut reader = user(2, &[], &["photo", "reading"], &[]);
    reader.depends = Some(term(1, Succeeded));
    let def = with_data(
        vec![user(1, &[], &[], &["photo", "note", "reading"]), reader],
        &[1],
    );
    assert_eq!(carries(&def, 1, 2), names(&["reading", "photo"]));
    assert!(carried_names(&def, ActivityId(1), ActivityId(9)).is_empty());
}

#[test]
fn documents_without_data_stay_without_data() {
    let def = definition(vec![activity(1, &[], None), activity(2, &[1], None)], &[1]);
    for part in derive_partitions(&def, &DeriveOptions::default()) {
        assert!(part.document.data.is_empty());
        assert!(part.document.activities.iter().all(|a| a.data.is_empty()));
        assert!(
            part.document
                .activities
                .iter()
                .flat_map(|a| &a.adjacents)
                .all(|adj| adj.carries.is_empty())
        );
    }
}

/// A chain of `n` activities, each after the one before, the odd ones in the first partition
/// and the even ones in the second; the first writes what the last reads.
fn long_chain(n: u64) -> WorkflowDefinition {
    let mut activities: Vec<Activity> = (1..=n).map(|i| user(i, &[], &[], &[])).collect();
    for (k, a) in activities.iter_mut().enumerate().skip(1) {
        a.preconditions = vec![ActivityId(k as u64)];
    }
    activities[0].data.writes = names(&["reading"]);
    activities[(n - 1) as usize].data.reads = names(&["reading"]);
    let odd: Vec<u64> = (1..=n).filter(|i| i % 2 == 1).collect();
    with_data(activities, &odd)
}

#[test]
fn a_long_chain_is_derived_in_linear_time() {
    // Steps, not seconds: twice the chain is about twice the steps, whatever the machine.
    let steps = |n: u64| {
        let def = long_chain(n);
        let (parts, steps) =
            crate::work::steps_of(|| derive_partitions(&def, &DeriveOptions::default()));
        let adjacents: Vec<&Adjacent> = parts
            .iter()
            .flat_map(|p| &p.document.activities)
            .flat_map(|a| &a.adjacents)
            .collect();
        assert_eq!(adjacents.len() as u64, n - 1);
        assert!(
            adjacents
                .iter()
                .all(|adj| adj.carries == names(&["reading"]))
        );
        steps
    };
    let n = 10_000;
    crate::work::assert_linear("deriving a chain", n as usize, || steps(n), || steps(2 * n));
}

#[test]
fn a_cycle_is_derived_without_looping() {
    let def = with_data(
        vec![
            user(1, &[2], &["note"], &["note"]),
            user(2, &[1], &["note"], &[]),
        ],
        &[1],
    );
    let parts = derive_partitions(&def, &DeriveOptions::default());
    assert_eq!(parts.len(), 2);
}

/// 1 writes `reading` and comes before 2, which writes `photo` and fails; 5 stands in for 2;
/// 3, after 2, reads `reading`, `photo` and `note`.
fn stand_in_workflow(stand_in_writes: &[&str]) -> WorkflowDefinition {
    let mut failing = user(2, &[1], &[], &["photo"]);
    failing.contingency = Contingency::Run(ActivityId(5));
    let mut def = with_data(
        vec![
            user(1, &[], &[], &["reading"]),
            failing,
            user(3, &[2], &["reading", "photo", "note"], &[]),
            user(5, &[], &[], stand_in_writes),
        ],
        &[1, 2],
    );
    def.partitions[1]
        .activities
        .retain(|id| *id != ActivityId(5));
    def
}

fn stand_in_document(def: &WorkflowDefinition) -> PartitionDocument {
    let successor = adjacent(3, 2, &[]);
    derive_contingency(
        def,
        ActivityId(5),
        &[ActivityId(1)],
        vec![successor],
        &DeriveOptions::default(),
    )
    .expect("activity 5 is in the definition")
}

#[test]
fn a_stand_in_carries_what_it_writes_and_what_was_written_before_the_failed_activity() {
    let def = stand_in_workflow(&["photo"]);
    let doc = stand_in_document(&def);
    let [x] = doc.activities.as_slice() else {
        panic!("one activity")
    };
    assert_eq!(x.adjacents[0].carries, names(&["reading", "photo"]));
    assert_eq!(
        doc.data,
        vec![
            item("reading", DataKind::Number),
            item("photo", DataKind::File)
        ]
    );
}

#[test]
fn a_stand_in_does_not_carry_what_only_the_failed_activity_wrote() {
    let def = stand_in_workflow(&[]);
    let doc = stand_in_document(&def);
    assert_eq!(doc.activities[0].adjacents[0].carries, names(&["reading"]));
    assert_eq!(doc.data, vec![item("reading", DataKind::Number)]);
}

#[test]
fn a_stand_in_for_a_stand_in_takes_the_place_of_the_first_failed_activity() {
    let mut def = stand_in_workflow(&[]);
    def.activities[3].contingency = Contingency::Run(ActivityId(6));
    def.activities.push(user(6, &[], &[], &["photo"]));
    let doc = derive_contingency(
        &def,
        ActivityId(6),
        &[],
        vec![adjacent(3, 2, &[])],
        &DeriveOptions::default(),
    )
    .expect("activity 6");
    assert_eq!(
        doc.activities[0].adjacents[0].carries,
        names(&["reading", "photo"])
    );
}
