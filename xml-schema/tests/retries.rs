//! The `retries` extension in both languages: reading it, its errors, writing it back, and its copy
//! into derived partitions. The broken-document corpus pins the full wording of its errors; these
//! tests pin the behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{definition, definition_errors, partition, partition_errors};
use mobiwf_xml_schema::{
    ActivityId, ActivityKind, DeriveOptions, Retries, SourceMap, derive_partitions,
    limits::MAX_RETRIES, load_definition, load_partition, validate_definition, validate_partition,
    write_definition, write_partition,
};

fn retries(count: u32, wait_secs: u32) -> Retries {
    Retries { count, wait_secs }
}

#[test]
fn absent_retries_mean_none_in_both_languages() {
    let def = definition("").unwrap();
    assert_eq!(def.activities[1].retries, Retries::default());
    assert!(def.activities[1].retries.is_default());
    assert_eq!(
        partition("").unwrap().activities[0].retries,
        Retries::default()
    );
}

#[test]
fn retries_are_read_in_both_languages() {
    let full = "<retries><count>2</count><wait>1</wait></retries>";
    assert_eq!(
        definition(full).unwrap().activities[1].retries,
        retries(2, 1)
    );
    assert_eq!(
        partition(full).unwrap().activities[0].retries,
        retries(2, 1)
    );

    let padded = "<retries>\n  <wait> 30 </wait>\n  <count> 100 </count>\n</retries>";
    assert_eq!(
        definition(padded).unwrap().activities[1].retries,
        retries(MAX_RETRIES, 30)
    );
    assert_eq!(
        partition(padded).unwrap().activities[0].retries,
        retries(MAX_RETRIES, 30)
    );
}

#[test]
fn children_of_retries_default_to_zero() {
    let count_only = "<retries><count>3</count></retries>";
    assert_eq!(
        definition(count_only).unwrap().activities[1].retries,
        retries(3, 0)
    );
    let wait_only = "<retries><wait>4</wait></retries>";
    assert_eq!(
        partition(wait_only).unwrap().activities[0].retries,
        retries(0, 4)
    );
    assert_eq!(
        definition("<retries/>").unwrap().activities[1].retries,
        Retries::default()
    );
}

#[test]
fn bad_values_are_reported_where_they_are() {
    assert_eq!(
        definition_errors("<retries><count>two</count></retries>"),
        "d.xml:5:17: error: <count> of <retries> of activity 2 is \"two\", not a whole number; \
         expected how many more tries after a failed one, a whole number from 0 to 100 (the \
         limit MAX_RETRIES)\n"
    );
    assert_eq!(
        partition_errors("<retries><count>101</count></retries>"),
        "p.xml:4:17: error: <count> of <retries> of activity 2 is 101; expected how many more \
         tries after a failed one, a whole number from 0 to 100 (the limit MAX_RETRIES)\n"
    );
    assert_eq!(
        partition_errors("<retries><wait>-1</wait></retries>"),
        "p.xml:4:16: error: <wait> of <retries> of activity 2 is -1; expected a whole number of \
         seconds, 0 or more (0 means none)\n"
    );
    assert!(definition_errors("<retries><count></count></retries>").contains("is empty"));
}

#[test]
fn unknown_children_attributes_and_repeats_are_reported() {
    assert_eq!(
        definition_errors("<retries><count>1</count><waits>2</waits></retries>"),
        "d.xml:5:26: error: <waits> is not an element of <retries> of activity 2; did you mean \
         <wait>?\n"
    );
    assert!(
        partition_errors("<retries><count>1</count><count>2</count></retries>")
            .contains("p.xml:4:26: error: <retries> of activity 2 has a second <count>")
    );
    assert!(
        definition_errors("<retries max=\"3\"/>")
            .contains("<retries> of activity 2 has an unknown attribute max")
    );
    assert!(
        partition_errors("<retries/><retries/>")
            .contains("<activity> (activity 2) has a second <retries>")
    );
}

#[test]
fn a_count_written_as_text_gets_one_clear_error() {
    assert_eq!(
        partition_errors("<retries>2</retries>"),
        "p.xml:4:10: error: <retries> of activity 2 holds the text \"2\"; put the number of \
         retries in <count> and the seconds between tries in <wait>, e.g. \
         <retries><count>2</count><wait>1</wait></retries>\n"
    );
}

#[test]
fn only_automatic_activities_may_have_retries() {
    let manual = "<kind>manual</kind>\n<retries><count>2</count></retries>";
    assert_eq!(
        definition_errors(manual),
        "d.xml:6:1: error: activity 2 has <retries> but is manual: only automatic activities \
         are retried, because a person does manual work and decides whether to try again; \
         remove <retries>, or make the activity <kind>automatic</kind>\n"
    );
    let semi = "<kind>semiAutomatic</kind><retries><wait>5</wait></retries>";
    assert!(partition_errors(semi).starts_with(
        "p.xml:4:27: error: activity 2 has <retries> but is semiAutomatic: only automatic"
    ));
    // Retries that say "none" do no harm, whatever the kind.
    assert!(definition("<kind>manual</kind><retries/>").is_ok());
    // The default kind is automatic.
    assert!(partition("<kind>automatic</kind><retries><count>1</count></retries>").is_ok());
}

#[test]
fn models_built_in_code_are_checked_too() {
    let mut def = definition("").unwrap();
    def.activities[1].kind = ActivityKind::Manual;
    def.activities[1].retries = retries(1, 0);
    let problems = validate_definition(&def, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("is manual"));

    let mut doc = partition("").unwrap();
    doc.activities[0].retries = retries(MAX_RETRIES + 1, 0);
    let problems = validate_partition(&doc, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        problems[0].message,
        "activity 2 asks for 101 retries; at most 100 are allowed (the limit MAX_RETRIES); \
         lower <count>"
    );
}

#[test]
fn retries_are_written_only_when_there_are_some() {
    let plain = definition("").unwrap();
    assert!(!write_definition(&plain).contains("retries"));
    let doc = partition("").unwrap();
    assert!(!write_partition(&doc).contains("retries"));

    let def = definition("<retries><count>2</count><wait>1</wait></retries>").unwrap();
    let written = write_definition(&def);
    assert!(
        written
            .contains("\n      <retries><count>2</count><wait>1</wait></retries>\n    </activity>"),
        "{written}"
    );
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);

    let doc = partition("<kind>automatic</kind><retries><count>1</count><wait>9</wait></retries>")
        .unwrap();
    let written = write_partition(&doc);
    assert!(
        written.contains("<retries><count>1</count><wait>9</wait></retries>"),
        "{written}"
    );
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, doc);

    // A wait without retries is kept too, so that reading what was written gives it back.
    let wait_only = partition("<retries><wait>7</wait></retries>").unwrap();
    let written = write_partition(&wait_only);
    assert!(written.contains("<retries><count>0</count><wait>7</wait></retries>"));
    assert_eq!(load_partition(written.as_bytes()).unwrap().value, wait_only);
}

#[test]
fn derivation_copies_retries_into_the_partition() {
    let def = definition("<retries><count>2</count><wait>1</wait></retries>").unwrap();
    let derived = derive_partitions(&def, &DeriveOptions::default());
    assert_eq!(derived.len(), 1);
    let activities = &derived[0].document.activities;
    let by_id = |id| activities.iter().find(|a| a.id == ActivityId(id)).unwrap();
    assert_eq!(by_id(1).retries, Retries::default());
    assert_eq!(by_id(2).retries, retries(2, 1));
    // And the partner reads them back from the document it receives.
    let text = write_partition(&derived[0].document);
    let received = load_partition(text.as_bytes()).unwrap().value;
    assert_eq!(received, derived[0].document);
}

#[test]
fn retry_waits_must_leave_time_within_the_time_out_of_a_new_definition() {
    let fits = "<timeOut>7</timeOut><retries><count>3</count><wait>2</wait></retries>";
    let new = |extra: &str| {
        mobiwf_xml_schema::load_new_definition_in(
            mobiwf_xml_schema::Language::MobiWfMs,
            common::extension::definition_xml(extra).as_bytes(),
        )
    };
    assert_eq!(
        new(fits).unwrap().value.activities[1].retries,
        retries(3, 2)
    );
    let whole = "<timeOut>6</timeOut><retries><count>3</count><wait>2</wait></retries>";
    let errors = new(whole).unwrap_err().render("d.xml");
    assert!(
        errors
            .contains("waits 3 × 2 s = 6 s between its retries, not less than its timeOut of 6 s"),
        "{errors}"
    );
    assert!(errors.starts_with("d.xml:5:"), "at its <retries>: {errors}");
    // A stored copy read back (a deployed version, an instance's document, a node's
    // partition) is not held to it: an upgrade never makes it unreadable.
    assert!(definition(whole).is_ok());
    assert!(partition(whole).is_ok());
    // No timeOut (0) bounds nothing; retries without waits fit any timeOut.
    assert!(new("<timeOut>0</timeOut><retries><count>3</count><wait>9</wait></retries>").is_ok());
    assert!(new("<timeOut>1</timeOut><retries><count>3</count><wait>0</wait></retries>").is_ok());
}
