//! `convert FILE --to xml|pdl [--out F]`: a workflow definition written in another language.
//! FILE may be in any of the three (MobiWfMS XML, PDL or BPMN, told by its extension or else
//! its content); an invalid one is refused with every problem, as `validate` shows them, and
//! nothing is written.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_xml_schema::{load_new_definition_named, write_definition, write_pdl};

/// What `convert` is given.
#[derive(clap::Args)]
pub struct ConvertArgs {
    /// The workflow definition: MobiWfMS XML (.xml), PDL (.pdl) or BPMN (.bpmn).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The language to write.
    #[arg(long, value_enum)]
    to: Written,
    /// Write the definition to this file (replaced whole) instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// The languages a definition can be written in.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Written {
    /// MobiWfMS XML, as the controller keeps definitions.
    Xml,
    /// WorkToDo's process definition language.
    Pdl,
}

pub fn run(args: &ConvertArgs) -> anyhow::Result<ExitCode> {
    let bytes = super::read(&args.file)?;
    let name = args.file.display().to_string();
    let definition = match load_new_definition_named(&name, &bytes) {
        Ok(loaded) => loaded.value,
        Err(diagnostics) => {
            eprint!("{}", diagnostics.render(&name));
            eprintln!("mobiwf-controller: nothing converted: fix the problems above first");
            return Ok(ExitCode::from(1));
        }
    };
    let text = match args.to {
        Written::Xml => write_definition(&definition),
        Written::Pdl => write_pdl(&definition),
    };
    match &args.out {
        None => print!("{text}"),
        Some(path) => write_whole(path, &text)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path` through a file beside it, so that `path` is never half written.
fn write_whole(path: &Path, text: &str) -> anyhow::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("cannot write {}", path.display()))
}
