//! Small process-level helpers the controller and node daemons share: the wall clock, files
//! they publish in their data directory, waiting for a stop signal, and how a command's error
//! is printed.

use std::path::Path;

use anyhow::Context;

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Microseconds since the Unix epoch (0 if the clock is before it).
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The UTC time of day of `ms` since the epoch, `HH:MM:SS.mmm` (what the command lines print
/// next to times).
pub fn time_of_day_utc(ms: u64) -> String {
    let day = ms % 86_400_000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        day / 3_600_000,
        day / 60_000 % 60,
        day / 1000 % 60,
        day % 1000
    )
}

/// Writes `text` to `path` via a temporary file and a rename, so readers never see half.
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Returns on Ctrl-C or SIGTERM.
pub async fn wait_for_stop() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    Ok(())
}

/// Prints a command's error on stderr, `PROGRAM: error: ...` with its causes, and, when asked
/// with `RUST_LIB_BACKTRACE=1`, where it arose: the frames name files and lines when the
/// binary's debug information can be found (built in, or the `.debug` file `scripts/install`
/// puts next to an installed binary). `RUST_BACKTRACE=1` alone, which asks for panics'
/// backtraces, does not print one for every error a command meets.
pub fn print_error(program: &str, error: &anyhow::Error) {
    eprintln!("{program}: error: {error:#}");
    let asked = std::env::var_os("RUST_LIB_BACKTRACE").is_some_and(|v| v != "0");
    let backtrace = error.backtrace();
    if asked && backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        eprintln!("where it arose:\n{backtrace}");
    }
}
