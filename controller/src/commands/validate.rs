//! `validate FILE...`: every problem of every document (workflow definition, partition
//! document, organisation, class or ordering document, detected; a definition in any of the
//! three languages; an ordering document in XML), in compiler style, a new definition held to
//! the rules stored copies are not (`validate_new_definition`).

use std::path::PathBuf;
use std::process::ExitCode;

use mobiwf_xml_schema::{DocumentKind, Language, check, detect_kind, load_new_definition_in};

pub fn run(files: &[PathBuf]) -> anyhow::Result<ExitCode> {
    let mut unreadable = false;
    let mut invalid = false;
    for path in files {
        let name = path.display().to_string();
        let bytes = match super::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("{name}: error: {e:#}");
                unreadable = true;
                continue;
            }
        };
        let language = Language::of(&name, &bytes);
        let diagnostics = match language {
            Language::MobiWfMs => check(&bytes),
            Language::Pdl | Language::Bpmn => load_new_definition_in(language, &bytes)
                .err()
                .unwrap_or_default(),
        };
        if diagnostics.is_empty() {
            let kind = match detect_kind(&bytes) {
                _ if language != Language::MobiWfMs => "workflow definition",
                Ok(DocumentKind::Partition) => "partition document",
                Ok(DocumentKind::Organisation) => "organisation document",
                Ok(DocumentKind::Classes) => "class document",
                Ok(DocumentKind::Orderings) => "ordering document",
                _ => "workflow definition",
            };
            println!("{name}: ok ({kind})");
        } else {
            print!("{}", diagnostics.render(&name));
            invalid = true;
        }
    }
    Ok(if unreadable {
        ExitCode::from(2)
    } else if invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
