//! Fuzz target for WorkToDo's process definition language (PDL).
//!
//! For any input bytes:
//! - reading and loading a PDL text, and rendering its diagnostics, never panic;
//! - a text that reads (without validation) is written as PDL and read again to the same
//!   model (writer/reader round trip, whatever the model holds);
//! - a text that loads converts both ways: its XML loads to the same model, and so does the
//!   PDL written from that; its derived partitions load as partition documents.
//!
//! Run with `scripts/fuzz [SECONDS] pdl` from the repository root, or
//! `cargo +nightly fuzz run pdl` from `xml-schema/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mobiwf_xml_schema::{
    DeriveOptions, Language, derive_partitions, load_definition, load_definition_in,
    load_partition, read_pdl, write_definition, write_partition, write_pdl,
};

fuzz_target!(|data: &[u8]| {
    if let Ok(read) = read_pdl(data) {
        let written = write_pdl(&read.value);
        match read_pdl(written.as_bytes()) {
            Ok(again) => assert_eq!(
                read.value, again.value,
                "PDL round trip changed the value; written text:\n{written}"
            ),
            Err(d) => panic!(
                "written PDL does not read again:\n{}\nwritten text:\n{written}",
                d.render("written.pdl")
            ),
        }
    }

    let loaded = match load_definition_in(Language::Pdl, data) {
        Ok(loaded) => loaded,
        Err(diagnostics) => {
            let _ = diagnostics.render("fuzz.pdl");
            return;
        }
    };
    let xml = write_definition(&loaded.value);
    match load_definition(xml.as_bytes()) {
        Ok(again) => assert_eq!(loaded.value, again.value, "PDL → XML changed it:\n{xml}"),
        Err(d) => panic!("its XML does not load:\n{}\n{xml}", d.render("converted.xml")),
    }
    let pdl = write_pdl(&loaded.value);
    match load_definition_in(Language::Pdl, pdl.as_bytes()) {
        Ok(again) => assert_eq!(loaded.value, again.value, "PDL → PDL changed it:\n{pdl}"),
        Err(d) => panic!("its PDL does not load:\n{}\n{pdl}", d.render("written.pdl")),
    }
    for derived in derive_partitions(&loaded.value, &DeriveOptions::default()) {
        let text = write_partition(&derived.document);
        if let Err(d) = load_partition(text.as_bytes()) {
            panic!("derived partition does not load:\n{}\n{text}", d.render("derived.xml"));
        }
    }
});
