//! The BPMN import on files others drew: the BPMN Model Interchange Working Group's reference
//! files (`tests/bpmn/`, see its README for where they come from), and the examples this
//! project draws (`examples/bpmn/`). A file inside the subset loads, and the MobiWfMS XML it
//! reads as is pinned as an insta snapshot; a file outside it is refused, every problem with
//! the element, its position and what to do, pinned likewise.
//!
//! To accept new or changed snapshots: `INSTA_UPDATE=always cargo test -p mobiwf-xml-schema
//! --test bpmn`, then review the `.snap` files with `git diff`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use mobiwf_xml_schema::{Language, load_definition, load_definition_in, write_definition};

fn read(path: &str) -> (String, Vec<u8>) {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    let name = full.file_name().unwrap().to_str().unwrap().to_owned();
    (name, std::fs::read(&full).unwrap())
}

/// Loads `path` (a BPMN file), checks that the MobiWfMS XML it reads as loads back to the same
/// definition, and gives that XML.
fn imported(path: &str) -> String {
    let (name, bytes) = read(path);
    assert_eq!(Language::of(&name, &bytes), Language::Bpmn, "{name}");
    assert_eq!(
        Language::sniff(&bytes),
        Language::Bpmn,
        "{name} by its content"
    );
    let loaded = load_definition_in(Language::Bpmn, &bytes)
        .unwrap_or_else(|d| panic!("{name} is refused:\n{}", d.render(&name)));
    let xml = write_definition(&loaded.value);
    let again = load_definition(xml.as_bytes())
        .unwrap_or_else(|d| panic!("{name} as MobiWfMS XML is refused:\n{}", d.render(&name)));
    assert_eq!(
        again.value, loaded.value,
        "{name} round-trips through MobiWfMS XML"
    );
    xml
}

/// The diagnostics that refuse `path`, rendered.
fn refused(path: &str) -> String {
    let (name, bytes) = read(path);
    match load_definition_in(Language::Bpmn, &bytes) {
        Ok(_) => panic!("{name} loads, but is outside the subset"),
        Err(diags) => diags.render(&name),
    }
}

#[test]
fn miwg_a_1_0_a_sequence_of_three_tasks() {
    insta::assert_snapshot!(imported("tests/bpmn/A.1.0.bpmn"));
}

#[test]
fn miwg_a_2_0_an_exclusive_split_and_join() {
    insta::assert_snapshot!(imported("tests/bpmn/A.2.0.bpmn"));
}

#[test]
fn miwg_a_3_0_a_sub_process_with_boundary_events_is_refused() {
    insta::assert_snapshot!(refused("tests/bpmn/A.3.0-process.bpmn"));
}

#[test]
fn miwg_b_2_0_triggers_loops_and_a_terminate_end_are_refused() {
    insta::assert_snapshot!(refused("tests/bpmn/B.2.0-first-process.bpmn"));
}

#[test]
fn the_paper_s_example_in_bpmn_has_its_published_partitions() {
    let xml = imported("../examples/bpmn/paper.bpmn");
    insta::assert_snapshot!(xml);
}

#[test]
fn the_purchase_example_maps_people_routes_and_a_timer() {
    insta::assert_snapshot!(imported("../examples/bpmn/purchase.bpmn"));
}

#[test]
fn a_control_character_in_a_name_is_refused_where_it_is_written() {
    insta::assert_snapshot!(refused("tests/bpmn/control-character.bpmn"));
}
