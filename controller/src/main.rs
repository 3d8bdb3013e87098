//! `mobiwf-controller`: the operator's command line for the central controller.
//!
//! Today it validates workflow documents and cuts definitions into partition documents; the
//! daemon that sends partitions to partners over libp2p comes with the execution work.

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The central controller of a mobiwf mesh: it checks MobiWfMS workflows and cuts them into
/// the partitions that partner nodes run.
#[derive(Parser)]
#[command(name = "mobiwf-controller", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check workflow definitions and partition documents (the kind is detected).
    ///
    /// Prints `file:line:col: error: message` for every problem found, or `file: ok` for a
    /// valid document. Exit status: 0 when every document is valid, 1 when any has a
    /// problem, 2 when a file cannot be read.
    Validate {
        /// MobiWfMS XML documents (UTF-8, or any encoding their XML declaration names).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Write the partition document of each partition of a workflow definition.
    ///
    /// Writes `DIR/partition-<id>.xml` (UTF-8) for every partition and prints their paths.
    /// An invalid definition is refused with the same diagnostics as `validate` (exit 1);
    /// an unreadable file or unwritable directory exits 2.
    Partition {
        /// The workflow definition.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Directory to write the partition documents into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Text for the documents' `<startTime>` (omitted when not given).
        #[arg(long, value_name = "TEXT")]
        start_time: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Validate { files } => commands::validate::run(&files),
        Command::Partition {
            file,
            out,
            start_time,
        } => commands::partition::run(&file, &out, start_time),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mobiwf-controller: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
