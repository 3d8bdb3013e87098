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

/// A command that logs `<what> start`, records its pid (read with [`gated_pid`]), waits for
/// the file `gate` to exist, and logs `<what>`.
pub fn gated(log: &Path, what: &str, gate: &Path) -> String {
    format!(
        "{}; echo $$ > \"{}\"; while [ ! -f '{}' ]; do sleep 0.05; done; {}",
        log_line(log, &format!("{what} start")),
        pid_file(log, "$MOBIWF_INSTANCE", what).display(),
        gate.display(),
        log_line(log, what)
    )
}

/// Where the gated command `what` of `instance` records its pid (beside `log`).
fn pid_file(log: &Path, instance: &str, what: &str) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(format!(".{instance}-{what}.pid"));
    PathBuf::from(name)
}

/// The pid of the gated command `what` of `instance`, once it recorded it.
pub fn gated_pid(log: &Path, instance: u64, what: &str) -> Option<u32> {
    std::fs::read_to_string(pid_file(log, &instance.to_string(), what))
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

/// Waits until the gated command `what` of `instance` (which recorded its pid: it started)
/// no longer runs; panics after `timeout`. `gate` tells its process from another one that
/// got its pid since.
pub fn wait_gated_killed(log: &Path, instance: u64, what: &str, gate: &Path, timeout: Duration) {
    let pid = gated_pid(log, instance, what)
        .unwrap_or_else(|| panic!("the command of {what} in instance {instance} never started"));
    let gate = gate.display().to_string();
    wait_for(
        format!("the command of {what} in instance {instance} (pid {pid}) to be killed"),
        timeout,
        || (!running(pid, &gate)).then_some(()),
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
