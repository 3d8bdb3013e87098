//! `mobiwf-node`: a partner node's command line: the daemon (`run`), the worklist of manual
//! work (`worklist`, `complete`) and the explanation of partition documents (`inspect`).

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::api_client::ApiArgs;

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
    /// Run the node: join the mesh, register with the controller, run partitions.
    Run(commands::run::RunArgs),
    /// List the manual work waiting on a running node.
    Worklist {
        #[command(flatten)]
        api: ApiArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Finish a manual activity on a running node.
    Complete {
        /// The instance id.
        instance: u64,
        /// The activity id.
        activity: u64,
        /// The work could not be done: the activity fails (its contingency applies).
        #[arg(long)]
        failed: bool,
        /// Why, or what was done.
        #[arg(long)]
        detail: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
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
    let cli = Cli::parse();
    if let Command::Inspect { file } = &cli.command {
        return commands::inspect::run(file);
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mobiwf-node: error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Run(args) => commands::run::run(args).await,
            Command::Worklist { api, json } => commands::worklist::run(&api, json).await,
            Command::Complete {
                instance,
                activity,
                failed,
                detail,
                api,
            } => commands::complete::run(&api, instance, activity, failed, detail).await,
            Command::Inspect { .. } => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mobiwf-node: error: {e:#}");
            ExitCode::from(1)
        }
    }
}
