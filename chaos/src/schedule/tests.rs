use super::*;

fn shape(run_ms: u64, namespaced: Option<usize>) -> Shape {
    Shape {
        nodes: 3,
        namespaced,
        run_ms,
        suspect_after_ms: 3_000,
        request_timeout_ms: 10_000,
    }
}

#[test]
fn a_seed_gives_the_same_plan_and_another_seed_another() {
    let s = shape(600_000, Some(1));
    assert_eq!(plan(42, &s), plan(42, &s));
    assert_ne!(plan(42, &s), plan(43, &s));
}

#[test]
fn faults_come_one_after_another_and_end_within_the_run() {
    for seed in 0..200 {
        let s = shape(60_000, Some(1));
        let faults = plan(seed, &s);
        assert!(!faults.is_empty(), "seed {seed}: no fault");
        for pair in faults.windows(2) {
            assert!(
                pair[0].end_ms() < pair[1].at_ms,
                "seed {seed}: {pair:?} overlap"
            );
        }
        assert!(faults.iter().all(|f| f.end_ms() <= s.run_ms), "seed {seed}");
        assert!(faults.iter().all(|f| f.at_ms >= 1_000), "seed {seed}");
    }
}

#[test]
fn a_minute_injects_every_kind_the_mesh_allows() {
    for seed in 0..200 {
        let faults = plan(seed, &shape(60_000, Some(2)));
        for kind in FaultKind::ALL {
            assert!(
                faults.iter().any(|f| f.kind == kind),
                "seed {seed}: no {kind} in {faults:?}"
            );
        }
    }
}

#[test]
fn each_kind_strikes_whom_it_may_for_as_long_as_it_must() {
    let s = shape(3_600_000, Some(2));
    for seed in 0..20 {
        for f in plan(seed, &s) {
            match f.kind {
                FaultKind::KillController | FaultKind::StopController => {
                    assert_eq!(f.target, Target::Controller);
                }
                FaultKind::CutLink => assert_eq!(f.target, Target::Node(2)),
                FaultKind::KillNode | FaultKind::StopNode | FaultKind::MoveNode => {
                    assert!(matches!(f.target, Target::Node(n) if n < 3), "{f:?}");
                }
                FaultKind::FloodPort | FaultKind::SlowPeers | FaultKind::SlowLoris => {
                    // The namespaced node (2) is out of the flooder's reach.
                    assert!(
                        matches!(f.target, Target::Controller | Target::Node(0 | 1)),
                        "{f:?}"
                    );
                }
            }
            match f.kind {
                FaultKind::StopNode => assert!(f.hold_ms > s.suspect_after_ms, "{f:?}"),
                FaultKind::StopController => {
                    assert!(f.hold_ms > s.request_timeout_ms, "{f:?}");
                }
                kind if kind.is_hostile() => assert!(f.hold_ms > 2_000, "{f:?}"),
                _ => assert!(f.hold_ms >= 200, "{f:?}"),
            }
        }
    }
}

#[test]
fn without_a_namespace_no_link_is_cut() {
    for seed in 0..50 {
        let faults = plan(seed, &shape(600_000, None));
        assert!(faults.iter().all(|f| f.kind != FaultKind::CutLink));
        assert!(faults.iter().any(|f| f.kind == FaultKind::MoveNode));
    }
}

#[test]
fn a_run_too_short_for_any_fault_has_none() {
    assert!(plan(1, &shape(500, Some(0))).is_empty());
}

#[test]
fn a_minute_of_the_run_s_own_shape_injects_every_kind() {
    // As `mobiwf-chaos` draws it: a 5 s suspect-after makes the node's stall the longest.
    let s = Shape {
        suspect_after_ms: 5_000,
        ..shape(60_000, Some(1))
    };
    for seed in 0..500 {
        let faults = plan(seed, &s);
        for kind in FaultKind::ALL {
            assert!(
                faults.iter().any(|f| f.kind == kind),
                "seed {seed}: no {kind} in {faults:?}"
            );
        }
    }
}

#[test]
fn hostile_faults_strike_the_controller_and_every_node_on_the_host() {
    let s = shape(3_600_000, Some(1));
    let struck: std::collections::BTreeSet<(FaultKind, Target)> = plan(5, &s)
        .iter()
        .filter(|f| f.kind.is_hostile())
        .map(|f| (f.kind, f.target))
        .collect();
    for kind in [
        FaultKind::FloodPort,
        FaultKind::SlowPeers,
        FaultKind::SlowLoris,
    ] {
        for target in [Target::Controller, Target::Node(0), Target::Node(2)] {
            assert!(struck.contains(&(kind, target)), "no {kind} on {target:?}");
        }
        assert!(
            !struck.contains(&(kind, Target::Node(1))),
            "{kind} on the namespace"
        );
    }
}

#[test]
fn a_mesh_of_no_node_is_still_flooded_at_the_controller() {
    let s = Shape {
        nodes: 0,
        ..shape(600_000, None)
    };
    let faults = plan(3, &s);
    assert!(faults.iter().all(|f| f.target == Target::Controller));
    assert!(faults.iter().any(|f| f.kind == FaultKind::FloodPort));
}

#[test]
fn after_the_opening_round_the_plan_leaves_quiet_stretches() {
    let s = shape(600_000, Some(1));
    for seed in 0..50 {
        let faults = plan(seed, &s);
        let quiet = faults
            .windows(2)
            .filter(|p| p[1].at_ms - p[0].end_ms() >= QUIET_MS.0)
            .count();
        assert!(quiet >= 3, "seed {seed}: {quiet} quiet stretches");
    }
}
