//! Fuzz target for the MobiWfMS XML languages.
//!
//! For any input bytes:
//! - `check` (kind detection, parsing, validation) and rendering its diagnostics never panic;
//! - a workflow definition that loads is written, re-loaded, and must equal the first load
//!   (writer/reader round trip); its derived partitions must load as partition documents;
//! - the same round trip holds for a partition document, and for an organisation document.
//!
//! Run with `scripts/fuzz [SECONDS]` from the repository root, or
//! `cargo +nightly fuzz run parse` from `xml-schema/`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mobiwf_xml_schema::{
    DeriveOptions, check, derive_partitions, load_definition, load_organisation, load_partition,
    write_definition, write_organisation, write_partition,
};

fuzz_target!(|data: &[u8]| {
    // Never panics, whatever the input; rendering works for an empty list too.
    let diagnostics = check(data);
    let _ = diagnostics.is_empty();
    let _ = diagnostics.render("fuzz.xml");

    if let Ok(loaded) = load_definition(data) {
        let written = write_definition(&loaded.value);
        match load_definition(written.as_bytes()) {
            Ok(again) => assert_eq!(
                loaded.value, again.value,
                "definition round trip changed the value; written text:\n{written}"
            ),
            Err(d) => panic!(
                "written definition does not load again:\n{}\nwritten text:\n{written}",
                d.render("written.xml")
            ),
        }
        for derived in derive_partitions(&loaded.value, &DeriveOptions::default()) {
            // A valid definition's derived partitions are valid partition documents.
            let text = write_partition(&derived.document);
            if let Err(d) = load_partition(text.as_bytes()) {
                panic!("derived partition does not load:\n{}\n{text}", d.render("derived.xml"));
            }
        }
    }

    if let Ok(loaded) = load_partition(data) {
        let written = write_partition(&loaded.value);
        match load_partition(written.as_bytes()) {
            Ok(again) => assert_eq!(
                loaded.value, again.value,
                "partition round trip changed the value; written text:\n{written}"
            ),
            Err(d) => panic!(
                "written partition does not load again:\n{}\nwritten text:\n{written}",
                d.render("written.xml")
            ),
        }
    }

    match load_organisation(data) {
        Ok(loaded) => {
            let written = write_organisation(&loaded.value);
            match load_organisation(written.as_bytes()) {
                Ok(again) => assert_eq!(
                    loaded.value, again.value,
                    "organisation round trip changed the value; written text:\n{written}"
                ),
                Err(d) => panic!(
                    "written organisation does not load again:\n{}\nwritten text:\n{written}",
                    d.render("written.xml")
                ),
            }
        }
        Err(d) => {
            let _ = d.render("fuzz.xml");
        }
    }
});
