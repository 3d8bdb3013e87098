//! `validate FILE...`: every problem of every document (workflow definition, partition
//! document or organisation document, detected), in compiler style.

use std::path::PathBuf;
use std::process::ExitCode;

use mobiwf_xml_schema::{DocumentKind, check, detect_kind};

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
        let diagnostics = check(&bytes);
        if diagnostics.is_empty() {
            let kind = match detect_kind(&bytes) {
                Ok(DocumentKind::Partition) => "partition document",
                Ok(DocumentKind::Organisation) => "organisation document",
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
