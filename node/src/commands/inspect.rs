//! `mobiwf-node inspect FILE`: explain what a node would do with a partition document.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_xml_schema::{PartitionDocument, load_partition};

/// Checks `file` and prints its explanation (exit 0), its problems (exit 1), or why it cannot
/// be read (exit 2).
pub fn run(file: &Path) -> ExitCode {
    let bytes = match std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))
    {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("mobiwf-node: error: {e:#}");
            return ExitCode::from(2);
        }
    };
    match load_partition(&bytes) {
        Ok(loaded) => {
            print!("{}", describe(&loaded.value));
            ExitCode::SUCCESS
        }
        Err(diagnostics) => {
            print!("{}", diagnostics.render(&file.display().to_string()));
            ExitCode::from(1)
        }
    }
}

fn describe(doc: &PartitionDocument) -> String {
    let mut out = format!(
        "instance {}: {} activit{}\n",
        doc.workflow_id,
        doc.activities.len(),
        if doc.activities.len() == 1 {
            "y"
        } else {
            "ies"
        }
    );
    for a in &doc.activities {
        out.push_str(&format!(
            "activity {} {:?} ({})\n",
            a.id,
            a.name,
            a.kind.as_str()
        ));
        if a.preconditions.is_empty() {
            out.push_str("  starts at once\n");
        }
        for p in &a.preconditions {
            let source = if p.local {
                "this node"
            } else {
                "a notification from its partner"
            };
            out.push_str(&format!("  waits for activity {} ({source})\n", p.id));
        }
        for adj in &a.adjacents {
            out.push_str(&format!(
                "  then notifies activity {} at {}\n",
                adj.id, adj.location
            ));
        }
        if a.response_immediate {
            out.push_str("  tells the controller as soon as it finishes\n");
        }
        if a.time_to_wait_secs > 0 {
            out.push_str(&format!(
                "  emergency start {} s after the partition starts, if still waiting\n",
                a.time_to_wait_secs
            ));
        }
    }
    out
}
