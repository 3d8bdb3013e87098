//! The partition documents' `ordered` extension (the controller marks the tasks an ordering
//! between definitions names): read, refused when it is not a flag, written back only when
//! set, never read in a definition, and never set by derivation (the controller sets it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{definition_errors, partition, partition_errors};
use mobiwf_xml_schema::{DeriveOptions, derive_partitions, load_definition, write_partition};

#[test]
fn ordered_is_read_and_defaults_to_not_ordered() {
    assert!(!partition("").unwrap().activities[0].ordered);
    assert!(!partition("<ordered>0</ordered>").unwrap().activities[0].ordered);
    assert!(partition("<ordered>1</ordered>").unwrap().activities[0].ordered);
}

#[test]
fn ordered_that_is_no_flag_is_refused_where_it_is() {
    let errors = partition_errors("<ordered>2</ordered>");
    assert!(errors.starts_with("p.xml:4:"), "{errors}");
    assert!(
        errors.contains("<ordered> of activity 2 is 2; expected 0 or 1"),
        "{errors}"
    );
}

#[test]
fn ordered_round_trips_and_is_written_only_when_set() {
    let mut doc = partition("<class>press</class>").unwrap();
    let plain = write_partition(&doc);
    assert!(!plain.contains("ordered"), "{plain}");
    doc.activities[0].ordered = true;
    let written = write_partition(&doc);
    assert!(written.contains("<ordered>1</ordered>"), "{written}");
    let back = mobiwf_xml_schema::load_partition(written.as_bytes())
        .unwrap()
        .value;
    assert_eq!(back, doc);
}

#[test]
fn a_definition_has_no_ordered_and_derivation_leaves_it_to_the_controller() {
    let errors = definition_errors("<ordered>1</ordered>");
    assert!(
        errors.contains("<ordered> is not an element of"),
        "{errors}"
    );
    let def = load_definition(common::extension::definition_xml("").as_bytes())
        .unwrap()
        .value;
    for part in derive_partitions(&def, &DeriveOptions::default()) {
        assert!(part.document.activities.iter().all(|a| !a.ordered));
    }
}
