//! Instance data in both languages: `<data>` declarations, an activity's `<reads>` and
//! `<writes>`, a partition adjacent's `<carries>`: reading them, where their parts are, the
//! refusals with their rendered `file:line:col` diagnostics, writing them back (canonical, only
//! when there are some, in the order of the XSDs), and the example with data and its derived
//! partitions. The broken-document corpus pins the wording of whole documents; derivation is
//! unit-tested in `src/derive/tests/data.rs`, the cost of hostile sizes in
//! `src/validate/tests.rs` (counted in steps, which only the crate's own tests see).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::extension::{def_errors, load_def, partition, partition_errors, partition_xml};
use mobiwf_xml_schema::{
    ActivityId, DataAccess, DataItem, DataKind, DeriveOptions, Input, Node, SourceMap,
    derive_partitions, limits::MAX_DATA_ITEMS, load_definition, load_partition, read_definition,
    read_partition, validate_definition, validate_partition, write_definition, write_partition,
};

/// Three activities, 2 after 1: 1 and 2 in partition 1, 3 in partition 2. `one`, `two` and
/// `three` go into activities 1, 2 and 3 (lines 3, 4 and 5, after `<activityTypeId>`), `data`
/// after the partners (line 10).
fn definition_xml(one: &str, two: &str, three: &str, data: &str) -> String {
    format!(
        r#"<workflow id="1">
<activities>
<activity id="1"><activityTypeId>1</activityTypeId>{one}</activity>
<activity id="2"><activityTypeId>1</activityTypeId>{two}<preconditions><preconditionId>1</preconditionId></preconditions></activity>
<activity id="3"><activityTypeId>1</activityTypeId>{three}</activity>
</activities>
<activityTypes><activityType id="1"/></activityTypes>
<partitions><partition id="1"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId></partition><partition id="2"><partnerId>2</partnerId><activityId>3</activityId></partition></partitions>
<partners><partner id="1"><ip>10.0.0.1</ip><skills><activityTypeId>1</activityTypeId></skills></partner><partner id="2"><ip>10.0.0.2</ip><skills><activityTypeId>1</activityTypeId></skills></partner></partners>
{data}
</workflow>"#
    )
}

/// The declarations most tests use: `reading` (number), `note` (string), `photo` (file).
const DATA: &str = r#"<data><value name="reading" type="number"/><value name="note" type="string"/><file name="photo"/></data>"#;

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

fn data_example() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/xsd/valid/data.workflow.xml"
    ))
    .unwrap()
}

#[test]
fn no_data_means_none_in_both_languages() {
    let def = load_def(&definition_xml("", "", "", "")).unwrap();
    assert!(def.data.is_empty());
    assert!(def.activities.iter().all(|a| a.data.is_empty()));
    let doc = partition("").unwrap();
    assert!(doc.data.is_empty() && doc.activities[0].data.is_empty());
    for written in [write_definition(&def), write_partition(&doc)] {
        for element in ["<data", "<reads", "<writes", "<carries"] {
            assert!(!written.contains(element), "{written}");
        }
    }
}

#[test]
fn data_is_read_in_both_languages() {
    let data = "<data>\n<file name=\"photo\"/>\n<value name=\" reading \" type=\"NUMBER\"/>\
                <value type=\"String\" name=\"note\"/></data>";
    let def = load_def(&definition_xml(
        "<writes>reading\n  photo</writes>",
        "<reads> reading </reads><writes>note</writes>",
        "",
        data,
    ))
    .unwrap();
    assert_eq!(
        def.data,
        vec![
            item("photo", DataKind::File),
            item("reading", DataKind::Number),
            item("note", DataKind::String),
        ]
    );
    assert_eq!(def.activities[0].data.writes, names(&["reading", "photo"]));
    assert_eq!(
        def.activities[1].data,
        DataAccess {
            reads: names(&["reading"]),
            writes: names(&["note"]),
        }
    );

    let doc = load_partition(
        partition_xml(
            "<writes>note</writes><adjacents><adjacent id=\"3\"><carries>note</carries>\
             <ip>10.0.0.2</ip></adjacent></adjacents>",
        )
        .replace(
            "</activities>",
            "</activities><data><value name=\"note\" type=\"string\"/></data>",
        )
        .as_bytes(),
    )
    .unwrap()
    .value;
    assert_eq!(doc.data, vec![item("note", DataKind::String)]);
    assert_eq!(doc.activities[0].data.writes, names(&["note"]));
    assert_eq!(doc.activities[0].adjacents[0].carries, names(&["note"]));
}

#[test]
fn the_source_map_points_at_declarations_lists_and_names() {
    let xml = definition_xml(
        "<writes>reading photo</writes>",
        "<reads>reading</reads>",
        "<reads>\n  photo   note</reads>",
        DATA,
    );
    let map = read_definition(xml.as_bytes()).unwrap().source_map;
    let at = |node| map.pos(node).to_string();
    // The line break in activity 3's <reads> puts <data> on line 11.
    assert_eq!(at(Node::Data), "11:1");
    assert_eq!(at(Node::DataItem(0)), "11:7");
    assert_eq!(at(Node::DataItemAttr(0, "name")), "11:14");
    assert_eq!(at(Node::DataItemAttr(0, "type")), "11:29");
    assert_eq!(at(Node::DataItem(2)), "11:78");
    assert_eq!(at(Node::Writes(0)), "3:60");
    assert_eq!(at(Node::WriteName(0, 1)), "3:68");
    assert_eq!(at(Node::Reads(1)), "4:59");
    assert_eq!(at(Node::Reads(2)), "6:3");
    assert_eq!(at(Node::ReadName(2, 1)), "6:11");

    let doc = partition_xml(
        "<adjacents><adjacent id=\"3\"><ip>x</ip><carries>a b</carries></adjacent></adjacents>",
    );
    let map = read_partition(doc.as_bytes()).unwrap().source_map;
    assert_eq!(map.pos(Node::Carries(0, 0)).to_string(), "4:48");
    assert_eq!(map.pos(Node::CarriedName(0, 0, 1)).to_string(), "4:50");
}

#[test]
fn bad_declarations_are_reported_where_they_are() {
    let errors = def_errors(&definition_xml(
        "",
        "",
        "",
        "<data><value name=\"n\" type=\"nummber\"/><file/><value name=\"s\"/></data>",
    ));
    assert_eq!(
        errors,
        "d.xml:10:23: error: <value name=\"n\"> of <data> has type=\"nummber\", which is not a type \
         of value (did you mean number?); expected string or number (in any case), or declare a \
         file with <file name=\"n\"/>\n\
         d.xml:10:39: error: <file> of <data> has no name attribute; add the name activities \
         read and write it by, e.g. <file name=\"photo\"/>\n\
         d.xml:10:46: error: <value name=\"s\"> of <data> has no type attribute; add \
         type=\"string\" (text) or type=\"number\" (a decimal number), e.g. <value \
         name=\"reading\" type=\"number\"/>; a file is declared <file name=\"photo\"/>\n"
    );
    let errors = def_errors(&definition_xml(
        "",
        "",
        "",
        "<data><file name=\"x\"/><value name=\"x\" type=\"string\"/><file name=\"1x\"/></data>",
    ));
    assert_eq!(
        errors,
        "d.xml:10:30: error: `x` is declared twice in <data> (first at 10:13); declare each \
         name once, as a <value> or a <file>\n\
         d.xml:10:60: error: `1x` is not a data name: begin with a letter or `_`, then use \
         letters, digits, `_`, `-` or `.` (it is also a file name); rename this declaration in \
         <data>, and the activities that use it\n"
    );
}

#[test]
fn names_are_declared_and_listed_once() {
    let errors = def_errors(&definition_xml(
        "<writes>reading phot reading</writes>",
        "",
        "",
        DATA,
    ));
    assert_eq!(
        errors,
        "d.xml:3:68: error: activity 1 writes `phot`, which <data> does not declare (did you \
         mean `photo`?); declare it there, e.g. <value name=\"phot\" type=\"string\"/> or <file \
         name=\"phot\"/>, or fix the name\n\
         d.xml:3:73: error: activity 1 writes `reading` twice; list each name once in <writes>\n"
    );
    // A partition document declares what it uses in its own <data>.
    assert_eq!(
        partition_errors("<reads>note</reads>"),
        "p.xml:4:8: error: activity 2 reads `note`, which this document's <data> does not \
         declare; declare it there, e.g. <value name=\"note\" type=\"string\"/> or <file \
         name=\"note\"/>, or fix the name\n"
    );
}

#[test]
fn a_read_needs_a_write_before_it() {
    // 2 comes after 1, which writes `reading`; 3 comes after nothing.
    let valid = definition_xml(
        "<writes>reading</writes>",
        "<reads>reading</reads>",
        "",
        DATA,
    );
    assert!(load_def(&valid).is_ok());
    let errors = def_errors(&definition_xml(
        "<writes>reading</writes>",
        "<reads>note reading</reads>",
        "<reads>reading</reads>",
        DATA,
    ));
    assert_eq!(
        errors,
        "d.xml:4:59: error: activity 2 reads `note`, but no activity before it writes it \
         (through preconditions and <depends> rules): add `note` to the <writes> of one of \
         them, or make it an input given at start (input=\"true\" on its <value>)\n\
         d.xml:5:59: error: activity 3 reads `reading`, but no activity comes before it (it has \
         no preconditions and no <depends> rule), so nothing can have written it: make it wait \
         for an activity that writes `reading`, make it an input given at start \
         (input=\"true\" on its <value>), or remove `reading` from its <reads>\n"
    );
    // An input is given when the instance starts: read before any write, required or
    // defaulted.
    let inputs = DATA
        .replace(r#"type="number"/>"#, r#"type="number" input="true"/>"#)
        .replace(r#"type="string"/>"#, r#"type="string" default="none"/>"#);
    let read_inputs = definition_xml(
        "<writes>reading</writes>",
        "<reads>note reading</reads>",
        "<reads>reading</reads>",
        &inputs,
    );
    let loaded = load_def(&read_inputs).expect("inputs are read before any write");
    assert_eq!(loaded.data[0].input, Input::Required);
    assert_eq!(loaded.data[1].input, Input::Default("none".into()));
    // A <depends> rule puts its terms' activities before it, and before is transitive.
    let by_rule = definition_xml(
        "<writes>reading</writes>",
        "<writes>note</writes>",
        "<depends><term activity=\"2\" state=\"SUCCEEDED\"/></depends><reads>note reading</reads>",
        DATA,
    );
    assert!(load_def(&by_rule).is_ok(), "{}", def_errors(&by_rule));
}

#[test]
fn a_cycle_is_reported_without_reads_echoing_it() {
    let errors = def_errors(&definition_xml(
        "<reads>note</reads><preconditions><preconditionId>2</preconditionId></preconditions>",
        "<writes>note</writes>",
        "",
        DATA,
    ));
    assert_eq!(errors.lines().count(), 1, "{errors}");
    assert!(errors.contains("precondition cycle"), "{errors}");
}

#[test]
fn a_dummy_uses_no_data() {
    let errors = def_errors(&definition_xml(
        "<writes>note</writes>",
        "<kind>dummy</kind><reads>note</reads>",
        "",
        DATA,
    ));
    assert_eq!(
        errors,
        "d.xml:4:77: error: activity 2 is a dummy and has <reads>: a dummy activity passes at \
         once and uses no data; remove <reads>, or make the activity <kind>automatic</kind>\n"
    );
}

#[test]
fn models_built_in_code_are_checked_too() {
    let mut def = load_def(&definition_xml("<writes>note</writes>", "", "", DATA)).unwrap();
    def.activities[1].data.reads = names(&["note", "nothing"]);
    def.activities[2].data.reads = names(&["note"]);
    fn messages(def: &mobiwf_xml_schema::WorkflowDefinition) -> Vec<String> {
        validate_definition(def, &SourceMap::default())
            .into_iter()
            .map(|d| d.message)
            .collect()
    }
    let problems = messages(&def);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("activity 2 reads `nothing`, which <data> does not declare"));
    assert!(problems[1].starts_with("activity 3 reads `note`, but no activity comes before it"));
    // Over the limit, reads are not followed through the workflow.
    def.data
        .extend((0..MAX_DATA_ITEMS).map(|k| item(&format!("v{k}"), DataKind::Number)));
    let problems = messages(&def);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems[0].starts_with("<data> declares 259 names, over the limit of 256"));
    assert!(problems[1].starts_with("activity 2 reads `nothing`"));

    let mut doc = partition("").unwrap();
    doc.data = vec![item("a b", DataKind::String)];
    let problems = validate_partition(&doc, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.starts_with("`a b` is not a data name"));
}

#[test]
fn data_is_written_canonically_in_the_order_of_the_schemas() {
    let def = load_def(&definition_xml(
        "<kind>manual</kind><role>tech</role><writes>note reading</writes>",
        "<writes>photo</writes><command>true</command><reads> reading\nnote </reads>\
         <retries><count>1</count></retries>",
        "",
        "<data><value name=\"reading\" type=\"NUMBER\"/><file name=\"photo\"/>\
         <value name=\"note\" type=\"String\"/></data>",
    ))
    .unwrap();
    let written = write_definition(&def);
    assert!(
        written.contains(
            "      <kind>manual</kind>\n      <writes>note reading</writes>\n      \
             <role>tech</role>\n"
        ),
        "{written}"
    );
    assert!(
        written.contains(
            "      <command>true</command>\n      <retries><count>1</count><wait>0</wait>\
             </retries>\n      <reads>reading note</reads>\n      <writes>photo</writes>\n    \
             </activity>"
        ),
        "{written}"
    );
    assert!(
        written.ends_with(
            "  </partners>\n  <data>\n    <value name=\"reading\" type=\"number\"/>\n    <file \
             name=\"photo\"/>\n    <value name=\"note\" type=\"string\"/>\n  </data>\n\
             </workflow>\n"
        ),
        "{written}"
    );
    assert_eq!(load_definition(written.as_bytes()).unwrap().value, def);
}

#[test]
fn the_example_with_data_is_valid_and_derives_what_travels() {
    let def = load_definition(&data_example()).unwrap().value;
    assert_eq!(def.data.len(), 3);
    let parts = derive_partitions(&def, &DeriveOptions::default());
    let [field, office] = parts.as_slice() else {
        panic!("two partitions")
    };
    // 1 -> 2 stays on the field tablet; 2 -> 3 goes to the office with what 3 reads.
    let check = &field.document.activities[1];
    assert_eq!(check.id, ActivityId(2));
    assert!(field.document.activities[0].adjacents[0].carries.is_empty());
    assert_eq!(check.adjacents[0].carries, names(&["photo", "note"]));
    assert_eq!(field.document.data, def.data, "the field uses all three");
    assert_eq!(
        office.document.data,
        vec![
            item("photo", DataKind::File),
            item("note", DataKind::String)
        ]
    );
    let field_xml = write_partition(&field.document);
    assert!(
        field_xml.contains(
            "<adjacent id=\"3\"><ip>10.0.0.2</ip><carries>photo note</carries></adjacent>"
        ),
        "{field_xml}"
    );
    let office_xml = write_partition(&office.document);
    assert!(
        office_xml.ends_with(
            "  </activities>\n  <data>\n    <file name=\"photo\"/>\n    <value name=\"note\" \
             type=\"string\"/>\n  </data>\n</workflow>\n"
        ),
        "{office_xml}"
    );
    for xml in [field_xml, office_xml] {
        load_partition(xml.as_bytes()).unwrap();
    }
    let hand_written = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/xsd/valid/data.partition.xml"
    ))
    .unwrap();
    load_partition(&hand_written).unwrap();
}

#[test]
fn defaults_longer_than_an_instance_may_hold_are_refused() {
    use mobiwf_xml_schema::limits::{MAX_DEFAULT_BYTES, MAX_DEFAULTS_BYTES};
    // In the XML the attribute is refused where it is written.
    let long = "x".repeat(MAX_DEFAULT_BYTES + 1);
    let data = format!(r#"<data><value name="note" type="string" default="{long}"/></data>"#);
    let errors = def_errors(&definition_xml("", "", "", &data));
    assert_eq!(errors.lines().count(), 1, "{errors}");
    assert!(errors.starts_with("d.xml:10:40: "), "{errors}");
    // A model built in code, or read from PDL, is checked the same.
    let mut def = load_def(&definition_xml("", "", "", DATA)).unwrap();
    def.data[1].input = Input::Default("y".repeat(MAX_DEFAULT_BYTES + 1));
    let problems = validate_definition(&def, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].message.starts_with(&format!(
            "the default of `note` is {} bytes, over the limit of {MAX_DEFAULT_BYTES} bytes",
            MAX_DEFAULT_BYTES + 1
        )),
        "{}",
        problems[0].message
    );
    def.data[1].input = Input::Default("y".repeat(MAX_DEFAULT_BYTES));
    assert!(validate_definition(&def, &SourceMap::default()).is_empty());
    def.data.extend(
        (0..MAX_DEFAULTS_BYTES / MAX_DEFAULT_BYTES).map(|k| DataItem {
            input: Input::Default("z".repeat(MAX_DEFAULT_BYTES)),
            ..item(&format!("v{k}"), DataKind::String)
        }),
    );
    let problems = validate_definition(&def, &SourceMap::default());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].message.contains("(MAX_DEFAULTS_BYTES)"),
        "{}",
        problems[0].message
    );
}

#[test]
fn a_pdl_default_over_the_limit_is_refused() {
    let long = "x".repeat(mobiwf_xml_schema::limits::MAX_DEFAULT_BYTES + 1);
    let text = format!("TASK S {{ }} WORKFLOW w {{ STRING note \"{long}\"; TASK t : S {{ }} }}");
    let err =
        mobiwf_xml_schema::load_definition_in(mobiwf_xml_schema::Language::Pdl, text.as_bytes())
            .unwrap_err()
            .render("w.pdl");
    assert!(err.contains("MAX_"), "{err}");
}
