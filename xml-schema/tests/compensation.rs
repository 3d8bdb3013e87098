//! The `compensation` extension (backward recovery) in both languages: reading it, its errors,
//! writing it back, and its copy into derived partitions and into a stand-in's document (which
//! carries the stand-in's own compensation, not the failed activity's). The broken-document corpus
//! pins the full wording of its errors; these tests pin the behaviour.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{def_errors, load_def, partition, partition_errors};
use mobiwf_xml_schema::{
    ActivityId, Contingency, DeriveOptions, WorkflowDefinition, derive_contingency,
    derive_partitions, limits::MAX_TEXT_BYTES, write_definition, write_partition,
};

/// A two-activity definition, both in one partition; `extra` goes into activity 2 (line 5),
/// whose contingency is activity 3 (in no partition), with `stand_in` inside.
fn definition_xml(extra: &str, stand_in: &str) -> String {
    format!(
        r#"<workflow id="1">
<activities>
<activity id="1"><activityTypeId>1</activityTypeId><command>reserve</command></activity>
<activity id="2"><activityTypeId>1</activityTypeId><contingencyActivityId>3</contingencyActivityId>
{extra}
<preconditions><preconditionId>1</preconditionId></preconditions></activity>
<activity id="3"><activityTypeId>1</activityTypeId>{stand_in}</activity>
</activities>
<activityTypes><activityType id="1"/></activityTypes>
<partitions><partition id="1"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId></partition></partitions>
<partners><partner id="1"><ip>10.0.0.1</ip><skills><activityTypeId>1</activityTypeId></skills></partner><partner id="2"><ip>10.0.0.2</ip><skills><activityTypeId>1</activityTypeId></skills></partner></partners>
</workflow>"#
    )
}

fn definition(extra: &str) -> WorkflowDefinition {
    load_def(&definition_xml(extra, "")).unwrap()
}

#[test]
fn absent_compensation_means_none_in_both_languages() {
    assert_eq!(definition("").activities[1].compensation, None);
    assert_eq!(partition("").unwrap().activities[0].compensation, None);
}

#[test]
fn compensation_is_read_as_written_in_both_languages() {
    let undo = "<compensation>echo \"undo $MOBIWF_ACTIVITY\" &gt;&gt; log</compensation>";
    let expected = Some("echo \"undo $MOBIWF_ACTIVITY\" >> log".to_owned());
    assert_eq!(definition(undo).activities[1].compensation, expected);
    assert_eq!(
        partition(undo).unwrap().activities[0].compensation,
        expected
    );
    // Any kind but dummy may say how to undo its work: a person's too.
    let manual = "<kind>manual</kind><compensation>echo reopen</compensation>";
    assert!(partition(manual).is_ok());
}

#[test]
fn an_empty_compensation_is_reported_where_it_is() {
    assert_eq!(
        def_errors(&definition_xml("<compensation></compensation>", "")),
        "d.xml:5:1: error: activity 2 has an empty <compensation>: write the shell command \
         that undoes its work (run with sh -c on its partner when the instance is cancelled or \
         fails after it succeeded), or remove <compensation>\n"
    );
    assert!(
        partition_errors("<compensation>  \n </compensation>")
            .starts_with("p.xml:4:1: error: activity 2 has an empty <compensation>")
    );
    assert!(
        partition_errors("<kind>dummy</kind><compensation>x</compensation>")
            .contains("activity 2 is a dummy and has a <compensation>")
    );
}

#[test]
fn a_compensation_has_the_limits_of_any_text() {
    let long = format!(
        "<compensation>{}</compensation>",
        "x".repeat(MAX_TEXT_BYTES + 1)
    );
    assert!(partition_errors(&long).contains("MAX_TEXT_BYTES"));
    assert!(
        partition_errors("<compensation><command>x</command></compensation>")
            .contains("<compensation> must contain only text, not <command>")
    );
    assert!(
        partition_errors("<compensation>a</compensation><compensation>b</compensation>")
            .contains("has a second <compensation>")
    );
}

#[test]
fn compensation_is_written_only_when_there_is_one() {
    assert!(!write_definition(&definition("")).contains("compensation"));
    let def =
        definition("<command>reserve</command><compensation>release &amp; log</compensation>");
    let written = write_definition(&def);
    assert!(
        written.contains(
            "<command>reserve</command>\n      <compensation>release &amp; log</compensation>\n"
        ),
        "{written}"
    );
    assert_eq!(load_def(&written).unwrap(), def);
}

#[test]
fn derivation_copies_it_and_a_stand_in_keeps_its_own() {
    let xml = definition_xml(
        "<compensation>undo 2</compensation>",
        "<compensation>undo 3</compensation>",
    );
    let def = load_def(&xml).unwrap();
    let derived = derive_partitions(&def, &DeriveOptions::default());
    let doc = &derived[0].document;
    assert_eq!(doc.activities[0].compensation, None);
    assert_eq!(doc.activities[1].compensation.as_deref(), Some("undo 2"));
    assert!(write_partition(doc).contains("<compensation>undo 2</compensation>"));

    assert_eq!(
        def.activities[1].contingency,
        Contingency::Run(ActivityId(3))
    );
    let stand_in = derive_contingency(
        &def,
        ActivityId(3),
        &[ActivityId(1)],
        Vec::new(),
        &DeriveOptions::default(),
    )
    .unwrap();
    assert_eq!(
        stand_in.activities[0].compensation.as_deref(),
        Some("undo 3")
    );

    // A stand-in without a compensation has none: the failed activity's is not carried.
    let def = load_def(&definition_xml("<compensation>undo 2</compensation>", "")).unwrap();
    let stand_in = derive_contingency(
        &def,
        ActivityId(3),
        &[ActivityId(1)],
        Vec::new(),
        &DeriveOptions::default(),
    )
    .unwrap();
    assert_eq!(stand_in.activities[0].compensation, None);
}
