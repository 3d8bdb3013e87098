//! The CI-sized campaign: a thousand seeds of the simulator, each a mesh with its workload
//! and faults drawn from the seed, every invariant checked after every step and everything
//! settled once the faults stop. A failing seed is named with what broke and the end of its
//! trace; `cargo run -p mobiwf-sim -- --seed S` shows its whole trace. (Split in parts so that
//! the test threads share them.)

/// Seeds per part, and parts.
const PER_PART: u64 = 200;
const PARTS: u64 = 5;

/// Seeds left out because they find a bug known and not fixed yet (`regressions.rs` keeps
/// each bug's seed as an ignored test): put back once it is fixed.
const KNOWN_OPEN: &[(u64, &str)] = &[];

fn part(n: u64) {
    assert!(n < PARTS);
    for seed in n * PER_PART..(n + 1) * PER_PART {
        if KNOWN_OPEN.iter().any(|(s, _)| *s == seed) {
            continue;
        }
        let outcome = mobiwf_sim::run(seed, false);
        assert!(
            outcome.passed(),
            "seed {seed}: {}\n(replay: cargo run -p mobiwf-sim -- --seed {seed})\n{}",
            outcome.violations.join("; "),
            outcome.trace.join("\n")
        );
    }
}

#[test]
fn campaign_part_0() {
    part(0);
}

#[test]
fn campaign_part_1() {
    part(1);
}

#[test]
fn campaign_part_2() {
    part(2);
}

#[test]
fn campaign_part_3() {
    part(3);
}

#[test]
fn campaign_part_4() {
    part(4);
}
