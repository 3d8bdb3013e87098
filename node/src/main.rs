//! `mobiwf-node`: a partner node's command line: the daemon (`run`), the worklist of manual
//! work (`worklist`, `complete`), the explanation of partition documents (`inspect`), the
//! API's tokens (`api-tokens`) and a user's sign-in link to their worklist in the browser
//! (`login-link`). Commands given `--data-dir` show the node administrator's
//! token (`DIR/api.token`); `--token-file` (or `MOBIWF_NODE_TOKEN_FILE`, `MOBIWF_NODE_TOKEN`)
//! shows another; exit 6 when the API refuses it.

mod commands;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use commands::api_client::ApiArgs;
use mobiwf_node::api::Completion;

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
    /// Print this node's peer id (its identity is made in DIR if it has none yet): what an
    /// operator gives `mobiwf-controller nodes allow` to let it join without a token.
    PeerId {
        /// The node's data directory.
        #[arg(long, value_name = "DIR")]
        data_dir: std::path::PathBuf,
    },
    /// The instance data this node knows (what its activities read and wrote); `--save DIR`
    /// writes each value and file to DIR/<name>.
    Data {
        /// The instance id.
        instance: u64,
        #[command(flatten)]
        api: ApiArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Write each value's text and each file's content to DIR/<name>.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
    },
    /// List a user's worklist on their device (`--user`), or without `--user` the manual work
    /// of activities that name no role, waiting on this node.
    Worklist {
        #[command(flatten)]
        api: ApiArgs,
        /// The user whose worklist to show (their device is this node).
        #[arg(long)]
        user: Option<String>,
        /// The view: arrival, priority, deadline or size.
        #[arg(long, default_value = "arrival", requires = "user")]
        order: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Take an offered item: it leaves the other users' worklists (exit 4: no longer available).
    Select(ItemArgs),
    /// Give a selected item back: it is offered again.
    Release(ItemArgs),
    /// Take an offered item for work without the network (activities with `<disconnected>`).
    Lock(ItemArgs),
    /// Give a locked item back: it is offered again.
    Unlock(ItemArgs),
    /// Suspend work on an item you selected or locked: it stays yours, its activity is
    /// paused (its deadline stops when the activity says `<pauseStopsDeadline>`).
    Pause(ItemArgs),
    /// Go on with an item you paused.
    Resume(ItemArgs),
    /// Hand an item you hold (or, as an administrator, any held item) to another user.
    Delegate {
        #[command(flatten)]
        item: ItemArgs,
        /// The user who gets it.
        #[arg(long)]
        to: String,
    },
    /// Finish a manual activity: with `--user`, an item the user holds (selected or locked);
    /// without, an activity that names no role.
    Complete {
        /// The instance id.
        instance: u64,
        /// The activity id.
        activity: u64,
        /// The user who holds the item.
        #[arg(long)]
        user: Option<String>,
        /// The work could not be done: the activity fails (its contingency applies).
        #[arg(long)]
        failed: bool,
        /// Why, or what was done.
        #[arg(long)]
        detail: Option<String>,
        /// The completion flag (a decision such as `approved`): the activity's `<routes>`
        /// and its successors' `<merge flag>` read it.
        #[arg(long)]
        flag: Option<String>,
        /// Set an instance data value the activity writes: `--set reading=42` (repeatable).
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// Give an instance data file the activity writes: `--file photo=./photo.jpg`
        /// (repeatable; at most MAX_FILE_BYTES, 64 MiB).
        #[arg(long, value_name = "NAME=PATH")]
        file: Vec<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// What a user was told: offers, revocations, the instances they are responsible for.
    Notices {
        #[command(flatten)]
        api: ApiArgs,
        /// The user.
        #[arg(long)]
        user: String,
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Take a user's locked items offline: copies what they read (refused with exit 3 when it
    /// would take longer than --max-wait, exit 4 without the disk space, exit 5 while the
    /// user holds a selected item), then the user is away: only locked items can be worked
    /// on, and what the user does is sent when they reconnect.
    Disconnect {
        #[command(flatten)]
        api: ApiArgs,
        /// The user (their device is this node).
        #[arg(long)]
        user: String,
        /// The longest the user will wait for the copy, in seconds.
        #[arg(long, value_name = "SECS")]
        max_wait: u64,
        /// Copy whatever it takes, however long.
        #[arg(long)]
        accept: bool,
    },
    /// Bring a disconnected user back: every item can be worked on again, and what they did
    /// offline goes to the hosts.
    Reconnect {
        #[command(flatten)]
        api: ApiArgs,
        /// The user.
        #[arg(long)]
        user: String,
    },
    /// Print a sign-in link for a user's worklist in the browser: this node's address,
    /// `/login?code=...`. The code works once, within 5 minutes; the session it opens lasts 12
    /// hours and may do what the user's own token may (their worklist on this node, their
    /// device). The node's administrators only.
    LoginLink {
        #[command(flatten)]
        api: ApiArgs,
        /// The user (their device is this node).
        #[arg(long)]
        user: String,
        /// The page to go to once signed in (a path of this node, e.g. `/items/7/2`).
        #[arg(long, default_value = "/")]
        path: String,
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
    /// API tokens of this node: roles (viewer, operator, administrator) or a user's own
    /// (`--user U`: only their worklist). The node's administrators only.
    #[command(subcommand)]
    ApiTokens(commands::api_tokens::ApiTokensCommand),
}

/// One work item of one user's worklist.
#[derive(clap::Args)]
struct ItemArgs {
    /// The instance id.
    instance: u64,
    /// The activity id.
    activity: u64,
    /// The user (their device is this node).
    #[arg(long)]
    user: String,
    #[command(flatten)]
    api: ApiArgs,
}

impl ItemArgs {
    async fn act(&self, action: &str, body: serde_json::Value) -> anyhow::Result<()> {
        let item = (self.instance, self.activity);
        commands::people::act(&self.api, &self.user, item, action, body).await
    }
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
    let result = runtime.block_on(dispatch(cli.command));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            mobiwf_runtime::process::print_error("mobiwf-node", &e);
            let code = e
                .downcast_ref::<commands::api_client::Exit>()
                .map_or(1, |exit| exit.code);
            ExitCode::from(code)
        }
    }
}

/// Carries out one command (but `inspect`, which needs no runtime).
async fn dispatch(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Run(args) => commands::run::run(args).await,
        Command::PeerId { data_dir } => {
            let key = mobiwf_runtime::identity::load_or_create(&data_dir)?;
            println!("{}", key.public().to_peer_id());
            Ok(())
        }
        Command::Worklist {
            api,
            user: Some(user),
            order,
            json,
        } => commands::people::worklist(&api, &user, &order, json).await,
        Command::Worklist { api, json, .. } => commands::worklist::run(&api, json).await,
        Command::Data {
            instance,
            api,
            json,
            save,
        } => commands::data::run(&api, instance, json, save.as_deref()).await,
        Command::Select(item) => item.act("select", serde_json::json!({})).await,
        Command::Release(item) => item.act("release", serde_json::json!({})).await,
        Command::Lock(item) => item.act("lock", serde_json::json!({})).await,
        Command::Unlock(item) => item.act("unlock", serde_json::json!({})).await,
        Command::Pause(item) => item.act("pause", serde_json::json!({})).await,
        Command::Resume(item) => item.act("resume", serde_json::json!({})).await,
        Command::Delegate { item, to } => {
            item.act("delegate", serde_json::json!({ "to": to })).await
        }
        Command::Complete {
            instance,
            activity,
            user,
            failed,
            detail,
            flag,
            set,
            file,
            api,
        } => {
            let (set, files) = commands::complete::data_args(&set, &file)?;
            let body = Completion {
                failed,
                detail,
                flag,
                set,
                files,
            };
            match user {
                // The same body, to the user's worklist (an item they hold).
                Some(user) => {
                    let body = serde_json::to_value(&body)?;
                    let item = (instance, activity);
                    commands::people::act(&api, &user, item, "complete", body).await
                }
                None => commands::complete::run(&api, instance, activity, body).await,
            }
        }
        Command::Notices { api, user, json } => commands::people::notices(&api, &user, json).await,
        Command::Disconnect {
            api,
            user,
            max_wait,
            accept,
        } => commands::offline::disconnect(&api, &user, max_wait, accept).await,
        Command::Reconnect { api, user } => commands::offline::reconnect(&api, &user).await,
        Command::ApiTokens(command) => mobiwf_runtime::api_auth::api_tokens(command).await,
        Command::LoginLink { api, user, path } => {
            commands::login_link::run(&api, &user, &path).await
        }
        Command::Inspect { .. } => Ok(()),
    }
}
