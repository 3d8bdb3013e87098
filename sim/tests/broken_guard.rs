//! Breaking a guard on purpose is caught: with the apply-once guard of the shells' delivery
//! decisions broken (a message recorded as applied is applied again: `mobiwf_delivery`'s
//! `broken-dedup` switch), a small campaign reports a violation within a few seeds, and the
//! seed that caught it passes with the guard whole. (Its own test binary: the switch is the
//! whole process's.)

/// How many seeds the campaign may take to catch it.
const WITHIN: u64 = 200;

#[test]
fn a_duplicate_let_through_is_caught_within_a_small_campaign() {
    mobiwf_delivery::seen::broken::let_duplicates_through(true);
    let caught = (0..WITHIN).find_map(|seed| {
        let outcome = mobiwf_sim::run(seed, false);
        (!outcome.passed()).then_some((seed, outcome.violations))
    });
    mobiwf_delivery::seen::broken::let_duplicates_through(false);
    let Some((seed, violations)) = caught else {
        panic!("a broken apply-once guard went unnoticed for {WITHIN} seeds");
    };
    eprintln!("seed {seed} caught the broken guard: {violations:?}");
    let whole = mobiwf_sim::run(seed, false);
    assert!(
        whole.passed(),
        "seed {seed} fails with the guard whole too: {:?}",
        whole.violations
    );
}
