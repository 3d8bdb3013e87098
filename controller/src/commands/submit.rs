//! `submit FILE [--responsible USER] [--data NAME=VALUE ...] [--data-file F]`: start an instance
//! of a workflow on the running controller, with its inputs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mobiwf_controller::inputs;
use mobiwf_proto::GivenInputs;

use super::api_client::{ApiArgs, json, refused_exit};

/// The inputs of the instance started, as the command line gives them: what a workflow
/// declares with `input="true"` (or a `default`) on a `<value>`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InputArgs {
    /// An input of the instance (repeatable): `--data reading=42 --data note="north gate"`.
    #[arg(long = "data", value_name = "NAME=VALUE", value_parser = name_value)]
    pub data: Vec<(String, String)>,
    /// A JSON object of inputs, name → value (a string, or a number: `{"reading": 42}`); a
    /// name also given with --data is refused.
    #[arg(long, value_name = "FILE")]
    pub data_file: Option<PathBuf>,
}

impl InputArgs {
    /// The inputs given, each name once; `Err` says what is wrong with them (the file's
    /// content, a name given twice), `Err` of the outer result that the file cannot be read.
    pub fn given(&self) -> anyhow::Result<Result<GivenInputs, String>> {
        let mut given = GivenInputs::new();
        for (name, value) in &self.data {
            if let Err(twice) = given.give(name, value) {
                return Ok(Err(twice));
            }
        }
        if let Some(file) = &self.data_file {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            if let Err(problem) = inputs::add_json(&mut given, &text, &file.display().to_string()) {
                return Ok(Err(problem));
            }
        }
        Ok(Ok(given))
    }
}

/// `NAME=VALUE`, split at the first `=`.
fn name_value(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, value)) => Ok((name.to_owned(), value.to_owned())),
        None => Err(format!("`{arg}` is not NAME=VALUE, e.g. --data reading=42")),
    }
}

/// Prints the new instance id (exit 0), or why it was refused (exit 1; `EXIT_TRY_AGAIN`, 75,
/// when the controller shed it: too many instances under way, submit it again later).
pub async fn run(
    api: &ApiArgs,
    file: &Path,
    responsible: Option<&str>,
    inputs: &InputArgs,
) -> anyhow::Result<ExitCode> {
    let bytes = super::read(file)?;
    let given = match inputs.given()? {
        Ok(given) => given,
        Err(problem) => return Ok(not_started(&problem)),
    };
    let request = api
        .client()?
        .post(api.url("/instances"))
        .query(&[("source", file.display().to_string())])
        .query(&[("responsible", responsible)])
        .query(&inputs::to_query(&given))
        .header("content-type", "application/xml")
        .body(bytes);
    let built = request.try_clone().and_then(|r| r.build().ok());
    let target = built.map_or(0, |r| {
        r.url().path().len() + r.url().query().map_or(0, |q| q.len() + 1)
    });
    if let Some(problem) = inputs::target_problem(target) {
        return Ok(not_started(&problem));
    }
    match json(request, api).await? {
        Ok(body) => {
            println!("{}", body["instance"]);
            Ok(ExitCode::SUCCESS)
        }
        Err((status, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: the workflow was not started");
            Ok(refused_exit(status))
        }
    }
}

/// Says why the workflow was not started: exit 1.
fn not_started(why: &str) -> ExitCode {
    eprintln!("{}", why.trim_end());
    eprintln!("mobiwf-controller: the workflow was not started");
    ExitCode::from(1)
}
