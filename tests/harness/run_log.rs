//! The shared log test commands append to (`$MOBIWF_INSTANCE what` per line), so that what ran,
//! how often and in which order is read back, not assumed.

use std::collections::BTreeMap;
use std::path::Path;

/// A command that appends `$MOBIWF_INSTANCE <what>` to `log`.
pub fn log_line(log: &Path, what: &str) -> String {
    format!("echo \"$MOBIWF_INSTANCE {what}\" >> '{}'", log.display())
}

/// A command that logs `<what> start`, waits for the file `gate` to exist, and logs `<what>`.
pub fn gated(log: &Path, what: &str, gate: &Path) -> String {
    format!(
        "{}; while [ ! -f '{}' ]; do sleep 0.05; done; {}",
        log_line(log, &format!("{what} start")),
        gate.display(),
        log_line(log, what)
    )
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
