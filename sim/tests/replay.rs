//! A seed replays exactly: two runs of one seed give the same trace, byte for byte (every
//! choice of a run comes from the seed; nothing reads a clock, a random source or the order
//! of a hash map).

#[test]
fn two_runs_of_a_seed_give_the_same_trace_byte_for_byte() {
    for seed in [1, 4, 47, 130] {
        let first = mobiwf_sim::run(seed, true);
        let second = mobiwf_sim::run(seed, true);
        assert!(
            first.lines > 20,
            "seed {seed} did something: {} lines",
            first.lines
        );
        assert_eq!(first.trace.len() as u64, first.lines, "every line kept");
        assert_eq!(first.trace, second.trace, "seed {seed}");
        assert_eq!(first.digest, second.digest);
        assert_eq!(first.steps, second.steps);
    }
}

#[test]
fn a_campaign_keeps_the_same_digest_as_a_replay() {
    // A campaign keeps only the last lines and a digest of all; the digest is the replay's.
    let kept = mobiwf_sim::run(7, true);
    let tail = mobiwf_sim::run(7, false);
    assert_eq!(kept.digest, tail.digest);
    assert!(tail.trace.len() <= mobiwf_sim::trace::TAIL_LINES);
    assert_eq!(kept.trace.last(), tail.trace.last());
}

#[test]
fn different_seeds_run_different_worlds() {
    let a = mobiwf_sim::run(2, false);
    let b = mobiwf_sim::run(3, false);
    assert_ne!(a.digest, b.digest);
}
