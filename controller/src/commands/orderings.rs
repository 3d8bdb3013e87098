//! `orderings apply FILE` and `orderings show [--json]`: the ordering requirements between
//! definitions the controller keeps (which tasks of two deployed definitions' instances run in
//! the order the instances first asked to run one).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;

use super::api_client::{ApiArgs, apply_document, cell, show_document};

/// `mobiwf-controller orderings ...`.
#[derive(Subcommand)]
pub enum OrderingsCommand {
    /// Apply an ordering document (XML `<orderings>` or PDL `WORKFLOW_DEFINITIONS ...
    /// RELATIVE_ORDER { ... }`), its task names resolved against the deployed definitions; it
    /// applies to instances started from now on. Exit 1 with every problem (`file:line:col`).
    Apply {
        /// The ordering document (`.xml` or `.pdl`; else told by its content).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Show the orderings in force: each pair of definitions with its pairs of tasks.
    Show {
        /// Print JSON (with the document as applied).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Runs an `orderings` command.
pub async fn run(command: OrderingsCommand) -> anyhow::Result<ExitCode> {
    match command {
        OrderingsCommand::Apply { file, api } => apply(&api, &file).await,
        OrderingsCommand::Show { json, api } => show(&api, json).await,
    }
}

/// Sends the ordering document; prints how many orderings it holds (exit 0) or every problem
/// (exit 1).
async fn apply(api: &ApiArgs, file: &Path) -> anyhow::Result<ExitCode> {
    let target = ("/orderings", "text/plain");
    apply_document(api, file, target, "ordering document", |body| {
        format!(
            "ordering document applied: {} orderings; instances started from now on follow it",
            body["orderings"]
        )
    })
    .await
}

/// Prints one line per pair of tasks (JSON with `--json`).
async fn show(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    show_document(api, "/orderings", as_json, |body| {
        let orderings = body["orderings"].as_array().cloned().unwrap_or_default();
        if orderings.is_empty() {
            println!(
                "no orderings (apply an ordering document: mobiwf-controller orderings apply FILE)"
            );
            return;
        }
        println!(
            "{:<20} {:<20} {:<20} SECOND TASK",
            "FIRST", "SECOND", "FIRST TASK"
        );
        for o in orderings {
            for p in o["pairs"].as_array().cloned().unwrap_or_default() {
                println!(
                    "{:<20} {:<20} {:<20} {}",
                    cell(&o["first"]),
                    cell(&o["second"]),
                    cell(&p["first"]),
                    cell(&p["second"]),
                );
            }
        }
    })
    .await
}
