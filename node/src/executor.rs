//! Runs automatic activities' commands so that each runs at most once, even across crashes.
//!
//! Each execution has a directory `DATA/runs/<instance>-<partition>-<activity>/` (with
//! `.<try>` appended for the second try on, `<retries>`, counted over an activity's reruns;
//! `.compensation` for its compensation, backward recovery; `.application` for the application
//! a user of this device selected a semi-automatic item for, on the device). The command
//! runs under a small `sh` wrapper, in its own process group (so it outlives a killed node),
//! which first *claims* the directory with an atomic `mkdir claim`; a second wrapper started for
//! the same activity (after a restart) finds the claim and exits without running anything. The
//! wrapper writes the command's exit status to `exit` (tmp + rename) when it ends (or
//! `killed`, running nothing, when a kill came before it started: see [`kill`]). A restarted
//! node therefore finds one of: no claim (never ran: run it), a claim and an `exit` (ran: use
//! the status), or a claim and a live wrapper (still running: watch it). A claim whose wrapper
//! is gone without an `exit` means the command was interrupted: the activity fails with that
//! reason rather than run twice. The claim records the wrapper's pid *and its start time*
//! (`/proc/<pid>/stat`, field 22): a pid recycled by another process since (after a reboot, or
//! on a busy machine) has another start time and is not taken for the wrapper, so neither is
//! it watched forever nor killed.
//!
//! The command finds the instance data it reads in `MOBIWF_DATA_DIR` (`<run dir>/data`, filled
//! once before the first wrapper starts) and leaves there what it writes (`run_data`).
//!
//! A command of an activity of a task class runs under its grant's lease (`crate::lease`): its
//! wrapper is given a watchdog period and runs nothing (`exit` says `lost`) when the time in
//! `<run dir>/lease` has passed; else a watchdog beside the command looks at that time every
//! period and, once it passed, leaves the mark `lost` and kills the wrapper's whole process
//! group (the command, the wrapper, itself), so the command stops even when its node is dead.
//! A wrapper gone without an `exit` but with that mark ended by its lease: "synchronization
//! lost" ([`Ended::lost`]). Any other command gets no period, hence no watchdog.

use mobiwf_engine::{Finish, RunKey};
use mobiwf_proto::{ActivityId, DataValue, Datum, InstanceId, PartitionId};
use mobiwf_xml_schema::DataKind;

use crate::command_policy::CommandPolicy;
use crate::files::Files;
use crate::lease::{Leases, watchdog_period};
use crate::run_data;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::process::Command;

/// How often an execution left by an earlier run of the node is checked on.
pub const ORPHAN_POLL: Duration = Duration::from_millis(100);

const WRAPPER: &str = r#"d="$1"
mkdir "$d/claim" 2>/dev/null || exit 0
t=$(s=$(cat /proc/$$/stat 2>/dev/null) && s=${s##*) } && set -- $s && echo "${20}")
echo "$$ $t" > "$d/claim/pid.tmp" && mv "$d/claim/pid.tmp" "$d/claim/pid"
fresh() { l=$(cat "$d/lease" 2>/dev/null); [ "$(date +%s%3N)" -le "${l:-0}" ] 2>/dev/null; }
if [ -e "$d/kill" ]; then
  s=killed
elif [ -n "$3" ] && ! fresh; then
  s=lost
else
  if [ -n "$3" ]; then
    (while sleep "$3"; do fresh || { : > "$d/lost"; kill -KILL 0; }; done) &
    w=$!
  fi
  sh -c "$2" >>"$d/output" 2>&1 </dev/null
  s=$?
  if [ -n "$3" ]; then kill "$w" 2>/dev/null; fi
fi
echo $s > "$d/exit.tmp" && mv "$d/exit.tmp" "$d/exit"
"#;

/// What the wrapper writes to `exit` when it found the kill mark and ran nothing.
const KILLED_BEFORE_START: &str = "killed";

/// What the wrapper of a held command writes to `exit` when its lease had run out before
/// the command started (it ran nothing).
const LEASE_OUT_BEFORE_START: &str = "lost";

/// The mark a held command's watchdog leaves before it kills the command's process group
/// (the wrapper with it: no `exit` is written).
const LOST_MARK: &str = "lost";

/// What one execution asks for.
#[derive(Debug, Clone)]
pub struct Execution {
    /// The instance.
    pub instance: InstanceId,
    /// The partition.
    pub partition: PartitionId,
    /// The activity.
    pub activity: ActivityId,
    /// Which try (0 the first).
    pub attempt: u32,
    /// The command line, run with `sh -c`.
    pub command: String,
    /// The node's name, given to the command as `MOBIWF_PARTNER`.
    pub partner: String,
    /// The instance data it reads (files in `MOBIWF_DATA_DIR`).
    pub reads: Vec<Datum>,
    /// The names it may write, read back from `MOBIWF_DATA_DIR` when it succeeds.
    pub writes: Vec<(String, DataKind)>,
    /// What it runs: a try of the activity's command, its compensation, or its work item's
    /// application.
    pub run: RunKind,
    /// For an activity of a task class: the lease of its grant, under which it runs (the
    /// wrapper's watchdog kills it once its lease file's time passed: `crate::lease`).
    pub held: Option<Hold>,
}

/// The lease a held command runs under, and the node's lease files it is kept up with.
#[derive(Debug, Clone)]
pub struct Hold {
    /// The grant's lease, in ms.
    pub lease_ms: u64,
    /// When the request the grant answers was asked (ms since the epoch; 0: not known): the
    /// lease counts from there at the latest.
    pub asked_ms: u64,
    /// The node's leases.
    pub leases: Leases,
}

impl Hold {
    /// The command in `dir` runs under this lease from now on (`Leases::hold`).
    fn keep(&self, dir: &Path) -> Result<(), String> {
        let now = mobiwf_runtime::process::now_ms();
        self.leases.hold(dir, self.lease_ms, self.asked_ms, now)
    }
}

/// What an execution runs, each in a run directory of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunKind {
    /// A try of an automatic activity's command.
    Try,
    /// The activity's compensation (`MOBIWF_COMPENSATION=1`).
    Compensation,
    /// The application of a semi-automatic work item, on the device of the user who selected
    /// it (`MOBIWF_USER` names them).
    Application {
        /// Who selected it.
        user: mobiwf_proto::UserId,
    },
}

impl RunKind {
    /// Whether it is the activity's compensation.
    pub fn is_compensation(&self) -> bool {
        *self == RunKind::Compensation
    }
}

impl Execution {
    /// The first try of `activity` of the run `key` on the node `partner`, with nothing to run
    /// yet: what each kind of execution (a try, a compensation, a kill) fills in.
    pub fn of(key: RunKey, activity: ActivityId, partner: String) -> Execution {
        Execution {
            instance: key.instance,
            partition: key.partition,
            activity,
            attempt: 0,
            command: String::new(),
            partner,
            reads: Vec::new(),
            writes: Vec::new(),
            held: None,
            run: RunKind::Try,
        }
    }
}

/// How an execution ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// A success on exit status 0, with the completion flag it wrote to `$MOBIWF_FLAG_FILE`
    /// (trimmed) when it wrote one (the engine checks its spelling); else a failure and why.
    pub finish: Finish,
    /// The instance data it wrote, when it succeeded (files already in the file store).
    pub written: Vec<(String, DataValue)>,
    /// True when a held command's lease ran out (it was killed, or never started): its
    /// activity fails for good, "synchronization lost".
    pub lost: bool,
}

/// The largest flag file read, in bytes: a flag is at most `MAX_FLAG_CHARS` characters; a
/// bigger file is refused (its activity fails), never cut short.
const MAX_FLAG_FILE_BYTES: u64 = 1024;

/// The directory of one execution.
pub fn run_dir(data_dir: &Path, e: &Execution) -> PathBuf {
    let name = format!("{}-{}-{}", e.instance, e.partition, e.activity);
    let name = match (&e.run, e.attempt) {
        (RunKind::Compensation, _) => format!("{name}.compensation"),
        (RunKind::Application { .. }, _) => format!("{name}.application"),
        (RunKind::Try, 0) => name,
        (RunKind::Try, n) => format!("{name}.{n}"),
    };
    data_dir.join("runs").join(name)
}

/// Kills the command of an execution (its wrapper's whole process group) with SIGKILL: it ran
/// longer than its `timeOut`, was withdrawn, or its instance was cancelled. A command whose
/// wrapper has not recorded its pid yet (or not even started) never runs: the kill leaves a
/// mark, `kill`, that the wrapper looks for after recording its pid. Mark first, then read the
/// pid; pid first, then look for the mark: one of the two sees the other.
pub fn kill(data_dir: &Path, e: &Execution) -> Result<(), String> {
    let dir = run_dir(data_dir, e);
    if dir.join("exit").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("kill"), ""))
        .map_err(|err| format!("cannot mark {} killed: {err}", dir.display()))?;
    let Ok(text) = std::fs::read_to_string(dir.join("claim").join("pid")) else {
        // No pid recorded: the wrapper will find the mark.
        return Ok(());
    };
    let Some(wrapper) = Wrapper::parse(&text) else {
        return Err(format!(
            "the process recorded in {} is unreadable: {text:?}",
            dir.display()
        ));
    };
    if !wrapper.alive() {
        // Gone (or its pid now another process's): nothing of ours left to kill.
        return Ok(());
    }
    let pid = wrapper.pid;
    // The wrapper leads its own process group (process_group(0)): kill the group.
    let status = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status()
        .map_err(|e| format!("cannot run kill: {e}"))?;
    if status.success() || dir.join("exit").exists() {
        Ok(())
    } else {
        Err(format!("kill of process group {pid} failed: {status}"))
    }
}

/// Runs `e` (or finds out how its earlier run ended) and returns how it ended. A command
/// `commands` refuses never starts (it fails with the reason); one that was started before a
/// restart is followed to its end whatever the policy is now.
pub async fn execute(data_dir: &Path, e: &Execution, commands: &CommandPolicy) -> Ended {
    let dir = run_dir(data_dir, e);
    let files = Files::new(data_dir);
    if let Some(ended) = read_exit(&dir, e, &files).await {
        return ended;
    }
    if dir.join("claim").exists() {
        // Left by an earlier run of the node: a held one's lease is kept up again.
        if let Some(hold) = &e.held
            && let Err(why) = hold.keep(&dir)
        {
            tracing::warn!(instance = %e.instance, activity = %e.activity, "{why}");
        }
        let ended = watch(&dir, e, &files).await;
        release(&dir, e);
        return ended;
    }
    if let Err(why) = commands.permits(&e.command) {
        tracing::warn!(instance = %e.instance, activity = %e.activity, "{why}");
        return failed(why);
    }
    if let Err(err) = std::fs::create_dir_all(&dir) {
        return failed(format!("cannot create {}: {err}", dir.display()));
    }
    if !e.reads.is_empty() || !e.writes.is_empty() {
        // Copying files is disk work: off the async workers.
        let (data, files, reads) = (dir.join("data"), files.clone(), e.reads.clone());
        let prepared =
            tokio::task::spawn_blocking(move || run_data::prepare(&data, &files, &reads))
                .await
                .unwrap_or_else(|e| Err(format!("filling the data directory stopped: {e}")));
        if let Err(err) = prepared {
            return failed(err);
        }
    }
    // A held command starts only with its lease file written (its watchdog's first look).
    let period = match &e.held {
        Some(hold) => match hold.keep(&dir) {
            Ok(()) => watchdog_period(hold.lease_ms),
            Err(why) => return failed(why),
        },
        None => String::new(),
    };
    let ended = run_wrapper(&dir, e, &period, &files).await;
    release(&dir, e);
    ended.unwrap_or_else(failed)
}

/// The held command's lease file is no longer kept up once it ended.
fn release(dir: &Path, e: &Execution) {
    if let Some(hold) = &e.held {
        hold.leases.release(dir);
    }
}

/// Starts the wrapper (with the watchdog's `period` for a held command, empty for any other)
/// and follows the command to its end.
async fn run_wrapper(
    dir: &Path,
    e: &Execution,
    period: &str,
    files: &Files,
) -> Result<Ended, String> {
    let mut command = Command::new("sh");
    if let RunKind::Application { user } = &e.run {
        command.env("MOBIWF_USER", user.as_str());
    }
    let spawned = command
        .arg("-c")
        .arg(WRAPPER)
        .arg("mobiwf-wrapper")
        .arg(dir)
        .arg(&e.command)
        .arg(period)
        .env("MOBIWF_INSTANCE", e.instance.to_string())
        .env("MOBIWF_ACTIVITY", e.activity.to_string())
        .env("MOBIWF_PARTITION", e.partition.to_string())
        .env("MOBIWF_TRY", (e.attempt + 1).to_string())
        .env("MOBIWF_PARTNER", &e.partner)
        .env("MOBIWF_FLAG_FILE", dir.join("flag"))
        .env("MOBIWF_DATA_DIR", dir.join("data"))
        .env(
            "MOBIWF_COMPENSATION",
            if e.run.is_compensation() { "1" } else { "0" },
        )
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(false)
        .spawn();
    match spawned {
        Ok(mut child) => {
            if let Err(err) = child.wait().await {
                tracing::warn!("waiting for the command of activity {}: {err}", e.activity);
            }
        }
        Err(err) => return Err(format!("cannot start sh: {err}")),
    }
    // Our wrapper ended: either it ran the command (exit is there) or it found the claim of a
    // wrapper started before a restart, which may still be running.
    Ok(watch(dir, e, files).await)
}

async fn watch(dir: &Path, e: &Execution, files: &Files) -> Ended {
    loop {
        if let Some(ended) = read_exit(dir, e, files).await {
            return ended;
        }
        match std::fs::read_to_string(dir.join("claim").join("pid")) {
            Ok(text) => {
                let alive = Wrapper::parse(&text).is_some_and(|w| w.alive());
                if !alive {
                    return read_exit(dir, e, files).await.unwrap_or_else(|| {
                        if dir.join(LOST_MARK).exists() {
                            return lost();
                        }
                        failed(
                            "interrupted: the command's process ended without recording an exit \
                             status (killed with its node?); not run again"
                                .to_owned(),
                        )
                    });
                }
            }
            Err(_) if !dir.join("claim").exists() => {
                return failed("the command's wrapper ended without claiming the run".to_owned());
            }
            // Claimed, pid not written yet.
            Err(_) => {}
        }
        tokio::time::sleep(ORPHAN_POLL).await;
    }
}

async fn read_exit(dir: &Path, e: &Execution, files: &Files) -> Option<Ended> {
    let text = std::fs::read_to_string(dir.join("exit")).ok()?;
    let code = text.trim();
    if code == KILLED_BEFORE_START {
        return Some(failed("killed before its command started".to_owned()));
    }
    if code == LEASE_OUT_BEFORE_START {
        return Some(lost());
    }
    Some(if code == "0" {
        let written = if e.writes.is_empty() {
            Ok(Vec::new())
        } else {
            // Hashing and keeping files is disk work: off the async workers.
            let (data, files) = (dir.join("data"), files.clone());
            let (reads, writes) = (e.reads.clone(), e.writes.clone());
            tokio::task::spawn_blocking(move || run_data::collect(&data, &files, &reads, &writes))
                .await
                .unwrap_or_else(|e| Err(format!("reading what the command wrote stopped: {e}")))
        };
        match (read_flag(dir), written) {
            (Ok(flag), Ok(written)) => Ended {
                finish: Finish::Succeeded { detail: None, flag },
                written,
                lost: false,
            },
            (Err(why), _) | (_, Err(why)) => failed(why),
        }
    } else {
        failed(format!("command exited with status {code}"))
    })
}

/// The completion flag a command wrote to its flag file, if it wrote one.
fn read_flag(dir: &Path) -> Result<Option<String>, String> {
    let path = dir.join("flag");
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    if meta.len() > MAX_FLAG_FILE_BYTES {
        return Err(format!(
            "its flag file {} holds {} bytes, over the limit of {MAX_FLAG_FILE_BYTES} \
             (MAX_FLAG_FILE_BYTES): write one completion flag, e.g. approved",
            path.display(),
            meta.len()
        ));
    }
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read its flag file {}: {e}", path.display()))?;
    let flag = text.trim();
    Ok((!flag.is_empty()).then(|| flag.to_owned()))
}

/// The wrapper process a claim records (`claim/pid`: `<pid> <start time>`; the start time is
/// missing where `/proc` is not, and in claims written before it was recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wrapper {
    /// Its process id.
    pub pid: u32,
    /// Its start time in clock ticks since boot (`/proc/<pid>/stat`, field 22).
    pub started: Option<u64>,
}

impl Wrapper {
    /// Reads a claim's `pid` file; `None` when it holds no pid.
    pub fn parse(text: &str) -> Option<Wrapper> {
        let mut words = text.split_whitespace();
        let pid = words.next()?.parse().ok()?;
        let started = words.next().and_then(|w| w.parse().ok());
        Some(Wrapper { pid, started })
    }

    /// True while this very process runs: its pid is alive and, when its start time is
    /// recorded, the process under that pid started then (a recycled pid is another process).
    pub fn alive(&self) -> bool {
        match (self.started, start_time(self.pid)) {
            (_, None) => Path::new("/proc").join(self.pid.to_string()).exists(),
            (Some(recorded), Some(now)) => recorded == now,
            (None, Some(_)) => true,
        }
    }
}

/// A process's start time in clock ticks since boot (`/proc/<pid>/stat`, field 22), `None`
/// when it is gone or `/proc` cannot tell.
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 2 (the command name, in parentheses) may hold spaces: count after its end.
    let after = stat.get(stat.rfind(')')? + 1..)?;
    after.split_whitespace().nth(19)?.parse().ok()
}

fn failed(detail: String) -> Ended {
    Ended {
        finish: Finish::Failed {
            detail: Some(detail),
        },
        written: Vec::new(),
        lost: false,
    }
}

/// A held command's lease ran out: it was killed (or never started).
fn lost() -> Ended {
    Ended {
        finish: Finish::Failed {
            detail: Some(format!(
                "{}: its lease ran out without word from the controller; its command was \
                 killed",
                mobiwf_engine::SYNC_LOST
            )),
        },
        written: Vec::new(),
        lost: true,
    }
}
