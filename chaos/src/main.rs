//! `mobiwf-chaos`: runs a controller and three nodes of the real binaries (one node in a
//! network namespace when the machine allows), submits the paper's workflow (with a person's
//! A2 half of the time, completed through P1's API) and a chain without pause, and lets a
//! nemesis drawn from `--seed` kill, stall, cut off and move them and set hostile peers at their
//! doors for `--minutes`; then the faults stop, the mesh settles, and the checker holds every command's
//! marks against what the controller shows. Prints a table; exits 1 on any violation, 2 when
//! the run itself could not be made (3 when a namespace was required and could not be set up).

mod collect;
mod hostile;
mod load;
mod mesh;
mod nemesis;
mod setup;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// A chaos run of the real mobiwf binaries.
#[derive(Parser, Debug)]
#[command(name = "mobiwf-chaos", version, about, long_about = None)]
pub struct Args {
    /// How long the faults go on, in minutes (fractions allowed).
    #[arg(long, default_value_t = 5.0)]
    pub minutes: f64,
    /// The seed of the fault plan (default: drawn from the clock, and printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Whether one node runs in a network namespace (its link cut and restored): `auto` when
    /// the machine allows it, `require` fails without it (as `MOBIWF_REQUIRE_NETNS=1` does).
    #[arg(long, value_enum, default_value_t = NetnsMode::Auto)]
    pub netns: NetnsMode,
    /// How long the mesh may take to settle after the faults, in seconds.
    #[arg(long, default_value_t = 180)]
    pub settle_seconds: u64,
    /// The controller's `--suspect-after`, in seconds (a stalled node outlasts it).
    #[arg(long, default_value_t = 5.0)]
    pub suspect_after: f64,
    /// The pause between two submissions, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub submit_every_ms: u64,
    /// Where the data directories, logs and marks go (default: a new directory under the
    /// system's temporary directory, removed after a run without violations).
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Where `mobiwf-controller` and `mobiwf-node` are (default: beside this program).
    #[arg(long)]
    pub bin_dir: Option<std::path::PathBuf>,
}

/// Whether the run has a namespaced node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NetnsMode {
    /// When the machine allows it.
    Auto,
    /// Always: fail without it.
    Require,
    /// Never.
    Off,
}

/// The exit status of a run that broke a rule.
const VIOLATIONS: u8 = 1;
/// The exit status of a run that could not be made.
const BROKEN: u8 = 2;

fn main() -> ExitCode {
    let mut args = Args::parse();
    if std::env::var_os("MOBIWF_REQUIRE_NETNS").is_some_and(|v| v == "1")
        && args.netns == NetnsMode::Auto
    {
        args.netns = NetnsMode::Require;
    }
    if !(args.minutes > 0.0 && args.suspect_after >= 0.1) {
        eprintln!("mobiwf-chaos: --minutes must be above 0 and --suspect-after at least 0.1");
        return ExitCode::from(BROKEN);
    }
    match setup::run(&args) {
        Ok(clean) if clean => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(VIOLATIONS),
        Err(e) => {
            eprintln!("mobiwf-chaos: {e:#}");
            ExitCode::from(e.downcast_ref::<setup::NoNetns>().map_or(BROKEN, |_| 3))
        }
    }
}

/// `secs` as a duration (negative or not a number: zero).
fn seconds(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or_default()
}
