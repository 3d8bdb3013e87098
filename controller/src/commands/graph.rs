//! `graph INSTANCE [--svg | --dot]`: an instance's graph (a lane per partner, its activities
//! coloured by state), as the controller's API draws it, on standard output.

use std::process::ExitCode;

use mobiwf_graph::Format;

use super::api_client::{ApiArgs, failure, text};

/// What `graph` is given.
#[derive(clap::Args)]
pub struct GraphArgs {
    /// The instance id.
    instance: u64,
    /// Write SVG (the default).
    #[arg(long, conflicts_with = "dot")]
    svg: bool,
    /// Write Graphviz DOT.
    #[arg(long)]
    dot: bool,
    #[command(flatten)]
    api: ApiArgs,
}

impl GraphArgs {
    /// The format asked for: DOT with `--dot`, else SVG.
    fn format(&self) -> Format {
        if self.dot { Format::Dot } else { Format::Svg }
    }
}

/// Prints the graph (exit 0); exit 1 when there is no such instance, 3 when the controller
/// cannot be asked.
pub async fn run(args: &GraphArgs) -> anyhow::Result<ExitCode> {
    let api = &args.api;
    let request = api
        .client()?
        .get(api.url(&format!("/instances/{}/graph", args.instance)))
        .query(&[("format", args.format().word())]);
    match text(request, api).await {
        Ok(Ok(drawn)) => {
            print!("{drawn}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Err(refused)) => Ok(failure(Ok(refused), &[404])),
        Err(e) => Ok(failure(Err(e), &[])),
    }
}
