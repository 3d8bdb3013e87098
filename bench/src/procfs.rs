//! What Linux says about a process: CPU time consumed and resident memory (`/proc`).

/// Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on Linux
/// everywhere that matters, and the value the kernel's ABI fixes for x86-64 and arm64).
const CLK_TCK: f64 = 100.0;

/// User + system CPU seconds the process has consumed so far.
pub fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    cpu_seconds_in(&stat).ok_or_else(|| anyhow::anyhow!("unexpected /proc/{pid}/stat: {stat:?}"))
}

/// The user + system CPU seconds a `/proc/<pid>/stat` line tells.
fn cpu_seconds_in(stat: &str) -> Option<f64> {
    // The command name (field 2) is in parentheses and may hold spaces and parentheses: count
    // from after the last `)`.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    let field = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
    Some((field(14)? + field(15)?) / CLK_TCK)
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
    fn the_cpu_time_is_utime_plus_stime_after_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 9 0 \
                    1000 300000 700 18446744073709551615";
        assert_eq!(cpu_seconds_in(stat), Some(3.25));
        assert_eq!(cpu_seconds_in("4242 (sh) S 1 2"), None);
        assert_eq!(cpu_seconds_in("no name here"), None);
    }

    #[test]
    fn this_process_has_consumed_cpu_and_holds_memory() {
        let me = std::process::id();
        let before = cpu_seconds(me).unwrap();
        // Spin until the kernel's tick count moves (a tick is 10 ms); a reading that never
        // grows fails after far more work than a tick takes.
        let mut spin = 0u64;
        let mut rounds = 0;
        while cpu_seconds(me).unwrap() <= before {
            rounds += 1;
            assert!(
                rounds < 2_000,
                "{rounds} rounds of work and no CPU time counted"
            );
            spin = (0..1_000_000u64).fold(spin, |a, b| a ^ b.wrapping_mul(31));
            std::hint::black_box(spin);
        }
        let (rss, peak) = (rss_mib(me).unwrap(), peak_rss_mib(me).unwrap());
        assert!(rss > 0.0 && peak >= rss, "rss {rss} peak {peak}");
    }
}
