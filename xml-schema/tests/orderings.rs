//! The ordering document: XML and PDL read into one model, with positions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use mobiwf_xml_schema::*;

fn example(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/orderings")
        .join(name);
    std::fs::read(&path).unwrap()
}

#[test]
fn the_seed_example_reads_the_same_in_both_languages() {
    let xml = load_orderings_named("seed.xml", &example("seed.xml"))
        .unwrap_or_else(|d| panic!("{}", d.render("seed.xml")));
    let pdl = load_orderings_named("seed.pdl", &example("seed.pdl"))
        .unwrap_or_else(|d| panic!("{}", d.render("seed.pdl")));
    assert_eq!(xml.value, pdl.value);
    println!("{}", write_orderings(&xml.value));
    println!("{}", write_orderings_pdl(&xml.value));
}
