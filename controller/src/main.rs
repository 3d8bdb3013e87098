//! `mobiwf-controller`: the operator's command line for the central controller: the daemon
//! (`serve`), instance commands (`submit`, `status`, `wait`, `history`, `graph`, `list`,
//! `nodes`), the console's sign-in (`login-link`),
//! deployed definitions (`deploy`, `definitions`, `start`), the operator's controls
//! (`interrupt`, `resume`, `cancel`),
//! who may join and who may use the API (`tokens`, `api-tokens`), and document tools
//! (`validate`, `partition`, `convert`). Commands that talk to the API show a token
//! (`--token-file`, `MOBIWF_TOKEN_FILE` or `MOBIWF_TOKEN`); exit 6 when it is refused.

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mobiwf_proto::Control;

use commands::api_client::ApiArgs;

/// The central controller of a mobiwf mesh: it places MobiWfMS workflows on partner nodes,
/// sends them their partitions over libp2p and follows the instances.
#[derive(Parser)]
#[command(name = "mobiwf-controller", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The demo is its own program, `mobiwf-demo` (`scripts/demo`): it runs a controller and
    /// nodes in one process, and the controller does not link the node. Says so.
    #[command(hide = true)]
    Demo {
        /// Whatever was given: the demo's own options.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        _args: Vec<String>,
    },
    /// Run the controller daemon.
    Serve(commands::serve::ServeArgs),
    /// The members of a cluster of controllers (`serve --etcd`), each shard's owner and
    /// epoch, as its etcd holds them.
    Cluster(commands::cluster::ClusterArgs),
    /// Start an instance of a workflow, with its inputs (`--data`, `--data-file`); prints its
    /// id.
    Submit {
        /// The workflow definition.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The user responsible for the instance: told on their device's notices when it
        /// starts, when an activity fails and when it ends.
        #[arg(long, value_name = "USER")]
        responsible: Option<String>,
        #[command(flatten)]
        inputs: commands::submit::InputArgs,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Deploy a workflow definition under its name (a changed document is the next version;
    /// the same definition again changes nothing): instances are then started by name.
    Deploy(commands::definitions::DeployArgs),
    /// Start an instance of a deployed definition (its latest version unless told); prints
    /// its id.
    Start(commands::definitions::StartArgs),
    /// List the deployed definitions; `definitions show NAME` prints one's document,
    /// `definitions remove NAME` removes one.
    Definitions(commands::definitions::DefinitionsArgs),
    /// Show an instance: its state and, per activity, state, partner, start and end, and why
    /// (failure reason, contingency activity, retries, emergency start); given-up partitions.
    Status {
        /// The instance id.
        instance: u64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Show the instance data (each name's latest value), as its nodes know it.
        #[arg(long)]
        data: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Wait for an instance to finish: exit 0 succeeded, 1 failed, 2 timeout, 3 cannot ask.
    Wait {
        /// The instance id.
        instance: u64,
        /// Give up after this many seconds (default: wait as long as it takes).
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Interrupt an instance: nothing new starts until it is resumed (running work finishes).
    ///
    /// Exit 0 done, 1 refused (the instance is not deploying or running) or unknown, 3 the
    /// controller cannot be asked.
    Interrupt {
        /// The instance id.
        instance: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Resume an interrupted instance, or, with ACTIVITY, a paused activity of it.
    ///
    /// Exit 0 done (for an activity: asked of its node, which tells the controller; the
    /// history shows it), 1 refused (the instance is not interrupted, the activity is not
    /// paused) or unknown, 3 the controller cannot be asked.
    Resume {
        /// The instance id.
        instance: u64,
        /// The id of a paused activity to resume (the instance stays as it is).
        activity: Option<u64>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Pause an activity where it is (its holder keeps its work item; nothing starts, ends or
    /// times out meanwhile) until `resume INSTANCE ACTIVITY`.
    ///
    /// Exit 0 asked of its node (it tells the controller: `status` shows it paused, the
    /// history who and when, or why its node refused), 1 refused (the instance is over, the
    /// activity ended or is paused already) or unknown, 3 the controller cannot be asked.
    Pause {
        /// The instance id.
        instance: u64,
        /// The activity id.
        activity: u64,
        /// Kill its running command: it runs again, as a new try, when resumed (without, it
        /// runs on and its end is held until then).
        #[arg(long)]
        kill: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Cancel an instance: every activity not finished is cancelled (running commands are
    /// killed) and the instance ends cancelled.
    ///
    /// Exit 0 done, 1 refused (the instance is already over) or unknown, 3 the controller
    /// cannot be asked.
    Cancel {
        /// The instance id.
        instance: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Rerun a failed activity of a failed instance (forward recovery): it and the activities
    /// cancelled because of it wait again, and the instance carries on from where it stopped.
    ///
    /// Exit 0 done, 1 refused (the instance is not failed, its compensations started, the
    /// activity did not fail with contingency -1) or unknown, 3 the controller cannot be asked.
    Rerun {
        /// The instance id.
        instance: u64,
        /// The id of the activity that failed.
        activity: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Show what happened to an instance: one line per event, with its time and partner.
    ///
    /// Exit 1 when there is no such instance, 3 when the controller cannot be asked.
    History {
        /// The instance id.
        instance: u64,
        /// Print JSON (the events in the order the controller learnt them).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Draw an instance's graph: a lane per partner, its activities in columns by their
    /// preconditions, coloured by state, on standard output as SVG (default) or DOT.
    ///
    /// Exit 1 when there is no such instance, 3 when the controller cannot be asked.
    Graph(commands::graph::GraphArgs),
    /// Print a sign-in link for the console in the browser: the controller's address,
    /// `/login?code=...`. The code works once, within 5 minutes; the session it opens lasts 12
    /// hours and may do what a token of the role may (a viewer reads, an operator also
    /// interrupts, resumes and cancels). The controller's administrators only.
    LoginLink(commands::login_link::LoginLinkArgs),
    /// List the instances, a page at a time (by id; filters: --state, --workflow,
    /// --definition, --since).
    #[command(visible_alias = "instances")]
    List {
        /// Print JSON (`{instances, next}`).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        list: commands::status::ListArgs,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// The organisation directory: users, roles, departments, teams and their devices.
    #[command(subcommand)]
    Org(OrgCommand),
    /// The task classes: which activities may not run at once, and how long one may wait.
    #[command(subcommand)]
    Classes(commands::classes::ClassesCommand),
    /// The ordering requirements between definitions: which tasks of two deployed
    /// definitions' instances run in the order the instances first asked to run one.
    #[command(subcommand)]
    Orderings(commands::orderings::OrderingsCommand),
    /// The synchronization manager: who holds a task class now, who waits for one.
    #[command(subcommand)]
    Sync(commands::classes::SyncCommand),
    /// Administer a work item: the controller carries the change to the node hosting it.
    #[command(subcommand)]
    Worklist(WorklistCommand),
    /// List the registered nodes; `nodes allow PEER` lets a node join without a token,
    /// `nodes remove NAME` removes one (its name is free for another key).
    #[command(args_conflicts_with_subcommands = true)]
    Nodes {
        #[command(subcommand)]
        action: Option<commands::enrol::NodesCommand>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Join tokens: what a node presents (--join-token-file) to join the mesh the first time.
    #[command(subcommand)]
    Tokens(commands::enrol::TokensCommand),
    /// API tokens: what operators' tools show the HTTP API (--token-file), each with a role
    /// (viewer, operator, administrator). Administrators only.
    #[command(subcommand)]
    ApiTokens(commands::api_tokens::ApiTokensCommand),
    /// Check workflow definitions, partition documents, organisation documents and class
    /// documents (the kind is detected).
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
    /// Write a workflow definition in another language: MobiWfMS XML or PDL.
    ///
    /// Reads FILE in any language (by its extension, else its content) and writes it to
    /// standard output or --out. An invalid definition is refused with the same diagnostics as
    /// `validate`, on standard error (exit 1); an unreadable file or unwritable output exits 2.
    Convert(commands::convert::ConvertArgs),
}

#[derive(Subcommand)]
enum OrgCommand {
    /// Apply an organisation document (XML): it replaces the directory, whose new version
    /// every node receives. Exit 1 with every problem (`file:line:col`) when it is invalid.
    Apply {
        /// The organisation document.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Show the directory: version, users with their department, teams, device and roles.
    Show {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        api: ApiArgs,
    },
}

/// One work item and the user an administrator's action is about.
#[derive(clap::Args)]
struct ItemUser {
    /// The instance id.
    instance: u64,
    /// The activity id.
    activity: u64,
    /// The user.
    #[arg(long)]
    user: String,
    #[command(flatten)]
    api: ApiArgs,
}

#[derive(Subcommand)]
enum WorklistCommand {
    /// Put the item on a user's worklist (offered to them too).
    Insert(ItemUser),
    /// Take the item off a user's worklist (a hold of theirs ends; it is offered again).
    Remove(ItemUser),
    /// Hand the item held by `--user` to another user (`--to`).
    Delegate {
        #[command(flatten)]
        item: ItemUser,
        /// The user who gets it.
        #[arg(long)]
        to: String,
    },
    /// Move the item's <deadline> later (`--user`: who decides, e.g. the responsible user);
    /// the notices ahead again come again.
    Extend {
        #[command(flatten)]
        item: ItemUser,
        /// How many hours later.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        hours: u32,
    },
}

impl ItemUser {
    /// Sends the administrator's action on the item, with the delegate or the hours it
    /// takes.
    async fn send(
        &self,
        action: &str,
        to: Option<&str>,
        hours: Option<u32>,
    ) -> anyhow::Result<ExitCode> {
        let item = (self.instance, self.activity);
        let action = commands::worklist::Action {
            action,
            user: &self.user,
            to,
            hours,
        };
        commands::worklist::run(&self.api, item, action).await
    }
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
        Command::Convert(args) => commands::convert::run(&args),
        Command::Demo { .. } => {
            eprintln!(
                "mobiwf-controller: the demo is its own program now: run `mobiwf-demo` \
                 (built with the workspace, `cargo run -p mobiwf-demo`) or `scripts/demo`"
            );
            Ok(ExitCode::from(2))
        }
        other => run_async(other),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => match e.downcast_ref::<commands::api_client::Said>() {
            Some(said) => ExitCode::from(said.0),
            None => {
                mobiwf_runtime::process::print_error("mobiwf-controller", &e);
                ExitCode::from(commands::api_client::exit_code_of(&e, 2))
            }
        },
    }
}

fn run_async(command: Command) -> anyhow::Result<ExitCode> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(dispatch(command))
}

impl WorklistCommand {
    /// An administrator's word on a work item, carried to its host.
    async fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            WorklistCommand::Insert(item) => item.send("insert", None, None).await,
            WorklistCommand::Remove(item) => item.send("remove", None, None).await,
            WorklistCommand::Delegate { item, to } => item.send("delegate", Some(&to), None).await,
            WorklistCommand::Extend { item, hours } => item.send("extend", None, Some(hours)).await,
        }
    }
}

/// Carries out one command that needs the runtime.
async fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve(args) => commands::serve::run(args).await,
        Command::Cluster(args) => commands::cluster::run(args).await,
        Command::Submit {
            file,
            responsible,
            inputs,
            api,
        } => commands::submit::run(&api, &file, responsible.as_deref(), &inputs).await,
        Command::Deploy(args) => commands::definitions::deploy(&args).await,
        Command::Start(args) => commands::definitions::start(&args).await,
        Command::Definitions(args) => commands::definitions::run(args).await,
        Command::Org(OrgCommand::Apply { file, api }) => commands::org::apply(&api, &file).await,
        Command::Org(OrgCommand::Show { json, api }) => commands::org::show(&api, json).await,
        Command::Classes(command) => commands::classes::classes(command).await,
        Command::Sync(command) => commands::classes::sync(command).await,
        Command::Orderings(command) => commands::orderings::run(command).await,
        Command::Worklist(command) => command.run().await,
        Command::Status {
            instance,
            json,
            data: true,
            api,
        } => commands::status::data(&api, instance, json).await,
        Command::Status {
            instance,
            json,
            api,
            ..
        } => commands::status::instance(&api, instance, json).await,
        Command::Wait {
            instance,
            timeout,
            api,
        } => commands::wait::run(&api, instance, timeout).await,
        Command::Interrupt { instance, api } => {
            commands::control::run(&api, instance, Control::Interrupt).await
        }
        Command::Resume {
            instance,
            activity,
            api,
        } => commands::control::resume(&api, instance, activity).await,
        Command::Pause {
            instance,
            activity,
            kill,
            api,
        } => commands::control::pause(&api, instance, activity, Some(kill)).await,
        Command::Cancel { instance, api } => {
            commands::control::run(&api, instance, Control::Cancel).await
        }
        Command::Rerun {
            instance,
            activity,
            api,
        } => commands::control::rerun(&api, instance, activity).await,
        Command::History {
            instance,
            json,
            api,
        } => commands::history::run(&api, instance, json).await,
        Command::Graph(args) => commands::graph::run(&args).await,
        Command::LoginLink(args) => commands::login_link::run(&args).await,
        Command::List { json, list, api } => commands::status::list(&api, &list, json).await,
        Command::Nodes {
            action: Some(action),
            ..
        } => commands::enrol::nodes(action).await,
        Command::Nodes { json, api, .. } => commands::status::nodes(&api, json).await,
        Command::Tokens(command) => commands::enrol::tokens(command).await,
        Command::ApiTokens(command) => commands::api_tokens::run(command).await,
        Command::Validate { .. }
        | Command::Partition { .. }
        | Command::Convert(_)
        | Command::Demo { .. } => Ok(ExitCode::SUCCESS),
    }
}
