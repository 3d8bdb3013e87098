//! What Linux says about a process: CPU time consumed and resident memory (`/proc`).

/// Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on Linux
/// everywhere that matters, and the value the kernel's ABI fixes for x86-64 and arm64).
const CLK_TCK: f64 = 100.0;

/// User + system CPU seconds the process has consumed so far.
pub fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| anyhow::anyhow!("unexpected /proc/{pid}/stat"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let field = |n: usize| -> anyhow::Result<f64> {
        Ok(fields
            .get(n - 3)
            .ok_or_else(|| anyhow::anyhow!("short /proc/{pid}/stat"))?
            .parse::<f64>()?)
    };
    Ok((field(14)? + field(15)?) / CLK_TCK)
}

/// A `kB` line of `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in MiB.
fn status_mib(pid: u32, key: &str) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|l| l.starts_with(key))
        .ok_or_else(|| anyhow::anyhow!("no {key} in /proc/{pid}/status"))?;
    let kb: f64 = line
        .trim_start_matches(key)
        .trim_start_matches(':')
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?;
    Ok(kb / 1024.0)
}

/// The process's peak resident set size so far, in MiB.
pub fn peak_rss_mib(pid: u32) -> anyhow::Result<f64> {
    status_mib(pid, "VmHWM")
}

/// The process's resident set size now, in MiB.
pub fn rss_mib(pid: u32) -> anyhow::Result<f64> {
    status_mib(pid, "VmRSS")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn this_process_has_consumed_cpu_and_holds_memory() {
        let me = std::process::id();
        let spin: u64 = (0..20_000_000u64).fold(0, |a, b| a ^ b.wrapping_mul(31));
        assert!(spin != 1);
        assert!(cpu_seconds(me).unwrap() >= 0.0);
        let (rss, peak) = (rss_mib(me).unwrap(), peak_rss_mib(me).unwrap());
        assert!(rss > 0.0 && peak >= rss, "rss {rss} peak {peak}");
    }
}
