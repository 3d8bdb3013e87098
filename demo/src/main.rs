//! `mobiwf-demo`: a controller and the partner nodes a workflow needs, in one process, on
//! loopback, with temporary data directories; runs the workflow once and shows its progress
//! and the final table (`run`). Without a file, the paper's example, then people at work on a
//! manual activity (`people`). With `--stay`, the daemons then stay up for a browser
//! (`stay`). A crate of its own because it is the one program that links
//! both daemons: the controller and the node know each other only through the mesh.

mod people;
mod run;
mod stay;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Run a controller and the nodes a workflow needs in this process, and run it once.
///
/// Temporary data directories, loopback only, no configuration. Without FILE, the paper's
/// example workflow. Exit 0 when the instance succeeded, 1 when it failed, 2 when it did
/// not finish in time.
#[derive(Parser)]
#[command(name = "mobiwf-demo", version, about, long_about)]
struct Cli {
    /// A workflow definition (default: the paper's example).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Give up after this many seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    timeout: u64,
    /// The length of an hour for work items' <deadline>s, in ms.
    #[arg(long, value_name = "MS", default_value_t = mobiwf_proto::DEFAULT_HOUR_MS,
          value_parser = clap::value_parser!(u64).range(1..))]
    hour_ms: u64,
    /// Once the workflow ran, keep the controller and the nodes up until Ctrl-C or SIGTERM,
    /// and print the sign-in links of the operator's console and of alice's worklist.
    #[arg(long)]
    stay: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let outcome = tokio::runtime::Runtime::new()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| {
            runtime.block_on(run::run(
                cli.file.as_deref(),
                cli.timeout,
                cli.hour_ms,
                cli.stay,
            ))
        });
    match outcome {
        Ok(code) => code,
        Err(e) => {
            mobiwf_runtime::process::print_error("mobiwf-demo", &e);
            ExitCode::from(2)
        }
    }
}
