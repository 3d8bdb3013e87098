//! `validate FILE...`: every problem of every document (workflow definition, partition
//! document, organisation, class or ordering document, detected; a definition in any of the
//! three languages; an ordering document in XML or as a PDL ordering text), in compiler style,
//! a new definition held to the rules stored copies are not (`validate_new_definition`). A
//! document is checked on its own (`check_named`): what only the controller can check when it
//! is applied is said in a note.

use std::path::PathBuf;
use std::process::ExitCode;

use mobiwf_xml_schema::{DocumentKind, check_named};

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
        let checked = check_named(&name, &bytes);
        if checked.problems.is_empty() {
            println!("{name}: ok ({})", checked.kind.name());
            if let Some(note) = left_to_the_controller(checked.kind) {
                println!("{name}: note: {note}");
            }
        } else {
            print!("{}", checked.problems.render(&name));
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

/// What a document of `kind` is checked against only when the controller applies it.
fn left_to_the_controller(kind: DocumentKind) -> Option<&'static str> {
    match kind {
        DocumentKind::Orderings => Some(
            "its definition and task names are not resolved here: only the controller knows \
             the deployed definitions, and checks them when it is applied \
             (mobiwf-controller orderings apply FILE)",
        ),
        DocumentKind::Classes => Some(
            "whether it keeps every class a running instance names is checked only when it is \
             applied (mobiwf-controller classes apply FILE)",
        ),
        DocumentKind::Definition | DocumentKind::Partition | DocumentKind::Organisation => None,
    }
}
