//! Unit tests of reading and writing PDL: the paper's example, names and ids, and problems.

use super::*;

const PAPER: &str = include_str!("../../../examples/paper/workflow.pdl");
const PAPER_XML: &str = include_str!("../../../examples/paper/workflow.xml");

#[test]
fn scratch() {
    let pdl = load(PAPER.as_bytes()).map_err(|d| d.render("paper.pdl")).unwrap();
    let xml = crate::load_definition(PAPER_XML.as_bytes()).unwrap();
    assert_eq!(pdl.value, xml.value);
    let written = write_pdl(&xml.value);
    println!("{written}");
    let back = load(written.as_bytes()).map_err(|d| d.render("w.pdl")).unwrap();
    assert_eq!(back.value, xml.value);
}
