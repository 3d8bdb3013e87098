//! `mobiwf-node`: a partner node's command line.
//!
//! Today it reads the partition documents a node receives and explains them; joining the
//! mesh and running partitions comes with the execution work.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use mobiwf_xml_schema::{PartitionDocument, load_partition};

/// A partner node of a mobiwf mesh: it runs the partition of a workflow it is given and
/// notifies the partners of the next activities directly.
#[derive(Parser)]
#[command(name = "mobiwf-node", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a partition document and show what this node would do with it.
    ///
    /// For each activity: its kind, what it waits for (local activities, or notifications
    /// from other partners), whom it notifies when it finishes, and whether the controller
    /// hears of it at once. Problems print as `file:line:col: error: message` (exit 1); an
    /// unreadable file exits 2.
    Inspect {
        /// A partition document (MobiWfMS XML, Figure 10).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Inspect { file },
    } = Cli::parse();
    let bytes =
        match std::fs::read(&file).with_context(|| format!("cannot read {}", file.display())) {
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

/// A plain-text account of a partition: one block per activity.
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
