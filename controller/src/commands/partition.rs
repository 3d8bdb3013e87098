//! `partition FILE --out DIR`: derive and write one partition document per partition, from a
//! definition in any of the three languages.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_xml_schema::{
    DeriveOptions, derive_partitions, load_new_definition_named, write_partition,
};

pub fn run(file: &Path, out: &Path, start_time: Option<String>) -> anyhow::Result<ExitCode> {
    let bytes = super::read(file)?;
    let name = file.display().to_string();
    let definition = match load_new_definition_named(&name, &bytes) {
        Ok(loaded) => loaded.value,
        Err(diagnostics) => {
            eprint!("{}", diagnostics.render(&name));
            eprintln!("mobiwf-controller: no partition written: fix the problems above first");
            return Ok(ExitCode::from(1));
        }
    };
    if definition.partitions.is_empty() {
        eprintln!(
            "{}: error: the workflow has no <partitions>; add partitions to write their \
             documents (the controller daemon partitions such workflows itself at run time)",
            file.display()
        );
        return Ok(ExitCode::from(1));
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let options = DeriveOptions {
        start_time,
        ..DeriveOptions::default()
    };
    for derived in derive_partitions(&definition, &options) {
        let path = out.join(format!("partition-{}.xml", derived.partition));
        let tmp = path.with_extension("xml.tmp");
        std::fs::write(&tmp, write_partition(&derived.document))
            .and_then(|()| std::fs::rename(&tmp, &path))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
