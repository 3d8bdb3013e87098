//! `deploy FILE [--name N]`, `definitions [show NAME [--version V] | remove NAME]` and `start
//! NAME [--version V] [--responsible U]`: workflow definitions deployed once on the running
//! controller, versioned, and instances started from them by name.

use std::path::PathBuf;
use std::process::ExitCode;

use mobiwf_book::DefinitionSummary;
use mobiwf_controller::daemon::ShownDefinition;
use mobiwf_controller::table;

use super::api_client::{ApiArgs, json};
use super::submit::InputArgs;

/// `deploy`: what to deploy, under which name.
#[derive(Debug, clap::Args)]
pub struct DeployArgs {
    /// The workflow definition, in MobiWfMS XML, PDL or BPMN.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The name to deploy it under (default: the definition's own <name>).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    #[command(flatten)]
    api: ApiArgs,
}

/// `start`: which definition, which version, who is responsible.
#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The deployed definition's name.
    name: String,
    /// The version to start (default: the latest).
    #[arg(long, value_name = "V")]
    version: Option<u64>,
    /// The user responsible for the instance (default: the user the token speaks for, when
    /// the organisation directory has them).
    #[arg(long, value_name = "USER")]
    responsible: Option<String>,
    #[command(flatten)]
    inputs: InputArgs,
    #[command(flatten)]
    api: ApiArgs,
}

/// `definitions`: list them, or show or remove one.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DefinitionsArgs {
    #[command(subcommand)]
    action: Option<DefinitionsCommand>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    api: ApiArgs,
}

#[derive(Debug, clap::Subcommand)]
enum DefinitionsCommand {
    /// Print a version's document (MobiWfMS XML) on standard output, what it is on standard
    /// error. Exit 1 when there is no such definition or version.
    Show {
        /// The definition's name.
        name: String,
        /// The version (default: the latest).
        #[arg(long, value_name = "V")]
        version: Option<u64>,
        /// Print JSON (the document with what it is).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Remove a definition, every version of it: refused (exit 1) while instances of it run.
    Remove {
        /// The definition's name.
        name: String,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// Deploys a definition: says the version its name starts now, new or unchanged (exit 0), or
/// why it was refused (exit 1).
pub async fn deploy(args: &DeployArgs) -> anyhow::Result<ExitCode> {
    let bytes = super::read(&args.file)?;
    let api = &args.api;
    let request = api
        .client()?
        .post(api.url("/definitions"))
        .query(&[("source", args.file.display().to_string())])
        .query(&[("name", args.name.as_deref())])
        .body(bytes);
    match json(request, api).await? {
        Ok(body) => {
            let (name, version) = (body["name"].as_str().unwrap_or_default(), &body["version"]);
            if body["new_version"].as_bool() == Some(true) {
                println!("{name} version {version} deployed");
            } else {
                println!(
                    "{name} version {version} unchanged: the document reads as the version \
                     deployed, nothing deployed"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: the definition was not deployed");
            Ok(ExitCode::from(1))
        }
    }
}

/// Starts an instance of a deployed definition: prints its id (exit 0), or why not (exit 1;
/// 75, `EXIT_TRY_AGAIN`, when the controller shed it: too many instances under way).
pub async fn start(args: &StartArgs) -> anyhow::Result<ExitCode> {
    let api = &args.api;
    let mut body = serde_json::Map::new();
    if let Some(v) = args.version {
        body.insert("version".to_owned(), v.into());
    }
    if let Some(user) = &args.responsible {
        body.insert("responsible".to_owned(), user.clone().into());
    }
    let given = match args.inputs.given()? {
        Ok(given) => given,
        Err(problem) => {
            eprintln!("{problem}");
            eprintln!("mobiwf-controller: no instance was started");
            return Ok(ExitCode::from(1));
        }
    };
    if !given.is_empty() {
        let data: serde_json::Map<String, serde_json::Value> = given
            .iter()
            .map(|(name, text)| (name.to_owned(), text.to_owned().into()))
            .collect();
        body.insert("data".to_owned(), data.into());
    }
    let url = definition_url(api, &args.name, &["instances"])?;
    let request = api.client()?.post(url).json(&body);
    match json(request, api).await? {
        Ok(body) => {
            println!("{}", body["instance"]);
            eprintln!(
                "started {} version {}",
                body["name"].as_str().unwrap_or_default(),
                body["version"]
            );
            Ok(ExitCode::SUCCESS)
        }
        Err((status, message)) => {
            eprintln!("{}", message.trim_end());
            eprintln!("mobiwf-controller: no instance was started");
            Ok(super::api_client::refused_exit(status))
        }
    }
}

/// The URL of `/definitions/NAME/REST...` on the API: the name is one path segment however it
/// is spelt (`a/b`, `x?y` are encoded, not taken for another route or a query).
fn definition_url(api: &ApiArgs, name: &str, rest: &[&str]) -> anyhow::Result<reqwest::Url> {
    let mut url = reqwest::Url::parse(&api.url("/definitions"))?;
    url.path_segments_mut()
        .map_err(|()| anyhow::anyhow!("the API address {} takes no path", api.api))?
        .push(name)
        .extend(rest);
    Ok(url)
}

/// `definitions ...`: the list (exit 0), one shown, or one removed (exit 1 refused).
pub async fn run(args: DefinitionsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        None => list(&args.api, args.json).await,
        Some(DefinitionsCommand::Show {
            name,
            version,
            json,
            api,
        }) => show(&api, &name, version, json).await,
        Some(DefinitionsCommand::Remove { name, api }) => remove(&api, &name).await,
    }
}

async fn list(api: &ApiArgs, as_json: bool) -> anyhow::Result<ExitCode> {
    let body = json(api.client()?.get(api.url("/definitions")), api)
        .await?
        .map_err(|(_, m)| anyhow::anyhow!(m))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        let all: Vec<DefinitionSummary> = serde_json::from_value(body)?;
        print!("{}", table::definitions(&all));
    }
    Ok(ExitCode::SUCCESS)
}

async fn show(
    api: &ApiArgs,
    name: &str,
    version: Option<u64>,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let request = api
        .client()?
        .get(definition_url(api, name, &[])?)
        .query(&[("version", version)]);
    let body = match json(request, api).await? {
        Ok(body) => body,
        Err((_, message)) => {
            eprintln!("mobiwf-controller: {message}");
            return Ok(ExitCode::from(1));
        }
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&body)?);
        return Ok(ExitCode::SUCCESS);
    }
    let shown: ShownDefinition = serde_json::from_value(body)?;
    eprintln!(
        "{} version {} (latest {}), deployed {} UTC; creator role {}; {} instance(s) running",
        shown.name,
        shown.version,
        shown.latest,
        mobiwf_book::format_time(shown.deployed_ms),
        shown.creator_role.as_ref().map_or("none", |r| r.as_str()),
        shown.running
    );
    print!("{}", shown.document);
    if !shown.document.ends_with('\n') {
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

async fn remove(api: &ApiArgs, name: &str) -> anyhow::Result<ExitCode> {
    let request = api.client()?.delete(definition_url(api, name, &[])?);
    match json(request, api).await? {
        Ok(body) => {
            let kept = body["kept"].as_array().map_or(0, Vec::len);
            if kept == 0 {
                println!("definition {name} removed");
            } else {
                println!(
                    "definition {name} removed ({kept} version(s) kept, not startable, for the \
                     finished instances in the store that name them)"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err((_, message)) => {
            eprintln!("mobiwf-controller: {message}");
            Ok(ExitCode::from(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_definitions_name_is_one_path_segment_however_it_is_spelt() {
        let api = ApiArgs {
            api: "127.0.0.1:7000".to_owned(),
            token_file: None,
            ca: Default::default(),
        };
        let url = |name, rest: &[&str]| definition_url(&api, name, rest).unwrap().to_string();
        assert_eq!(
            url("maintenance", &["instances"]),
            "http://127.0.0.1:7000/definitions/maintenance/instances"
        );
        assert_eq!(url("a/b", &[]), "http://127.0.0.1:7000/definitions/a%2Fb");
        assert_eq!(
            url("x?y#z", &["instances"]),
            "http://127.0.0.1:7000/definitions/x%3Fy%23z/instances"
        );
    }
}
