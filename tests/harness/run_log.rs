//! The shared log test commands append to (`$MOBIWF_INSTANCE what` per line), so that what ran,
//! how often and in which order is read back, not assumed; and the pid a gated command
//! records, so that a test proves it was killed instead of inferring it from a line missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::wait_for;

/// A command that appends `$MOBIWF_INSTANCE <what>` to `log`.
pub fn log_line(log: &Path, what: &str) -> String {
    format!("echo \"$MOBIWF_INSTANCE {what}\" >> '{}'", log.display())
}

/// How many 50 ms ticks a gated command waits for its gate at most: none outlives a failed
/// test by more than a minute.
pub const GATE_LIMIT_TICKS: u32 = 1200;

/// A command that records its pid (read with [`gated_pid`]), logs `<what> start`, waits for
/// the file `gate` to exist (at most [`GATE_LIMIT_TICKS`]), and logs `<what>`.
pub fn gated(log: &Path, what: &str, gate: &Path) -> String {
    format!(
        "{}; {}; i=0; while [ ! -f '{}' ] && [ $i -lt {GATE_LIMIT_TICKS} ]; \
         do sleep 0.05; i=$((i+1)); done; {}",
        record_pid(log, what),
        log_line(log, &format!("{what} start")),
        gate.display(),
        log_line(log, what)
    )
}

/// A command line that writes the shell's pid where [`gated_pid`] reads it (tmp + rename:
/// never read half written).
fn record_pid(log: &Path, what: &str) -> String {
    let file = format!("'{}'.\"$MOBIWF_INSTANCE\"-{what}.pid", log.display());
    format!("echo $$ > {file}.tmp && mv {file}.tmp {file}")
}

/// Where the gated command `what` of `instance` records its pid (beside `log`).
fn pid_file(log: &Path, instance: u64, what: &str) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(format!(".{instance}-{what}.pid"));
    PathBuf::from(name)
}

/// The pid of the gated command `what` of `instance`, once it recorded it.
pub fn gated_pid(log: &Path, instance: u64, what: &str) -> Option<u32> {
    std::fs::read_to_string(pid_file(log, instance, what))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// True while process `pid` runs and is still the shell running `command` (a zombie has
/// ended; a pid reused by another process is not it).
pub fn running(pid: u32, command: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: the state follows the last `)`.
    let live = stat
        .rsplit_once(')')
        .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']));
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    live && String::from_utf8_lossy(&cmdline).contains(command)
}

/// Waits until the gated command `what` of `instance` has started (recorded its pid) and no
/// longer runs; panics after `timeout`. `gate` tells its process from another one that got its
/// pid since.
pub fn wait_gated_killed(log: &Path, instance: u64, what: &str, gate: &Path, timeout: Duration) {
    let gate = gate.display().to_string();
    wait_for(
        format!("the command of {what} in instance {instance} to start and be killed"),
        timeout,
        || gated_pid(log, instance, what).filter(|pid| !running(*pid, &gate)),
    );
}

/// The lines of `log` for `instance`, in order, without the instance.
pub fn ran(log: &Path, instance: u64) -> Vec<String> {
    let prefix = format!("{instance} ");
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix).map(str::to_owned))
        .collect()
}

/// How often each (instance, activity) line of `log` appears (commands that append
/// `$MOBIWF_INSTANCE $MOBIWF_ACTIVITY`); a line of another shape fails the test.
pub fn activity_lines(log: &Path) -> BTreeMap<(u64, u64), usize> {
    let mut seen = BTreeMap::new();
    for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
        let mut words = line.split_whitespace();
        let (Some(i), Some(a), None) = (words.next(), words.next(), words.next()) else {
            panic!("unexpected line {line:?} in {}", log.display());
        };
        *seen
            .entry((i.parse().unwrap(), a.parse().unwrap()))
            .or_insert(0) += 1;
    }
    seen
}
