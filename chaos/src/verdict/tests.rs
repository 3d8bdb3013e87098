use super::*;

fn mark(instance: u64, activity: u64, attempt: u32) -> Mark {
    Mark {
        instance,
        activity,
        attempt,
    }
}

/// An instance of `workflow` in `state`, every activity `activity_state`.
fn seen(id: u64, workflow: Workflow, state: &str, activity_state: &str) -> Seen {
    Seen {
        id,
        workflow: Some(workflow),
        state: state.to_owned(),
        activities: workflow
            .tries()
            .keys()
            .map(|a| {
                let retried =
                    u32::from(workflow == Workflow::Chain && *a == RETRIED && id % 2 == 1);
                let shown = ActivitySeen {
                    state: activity_state.to_owned(),
                    retried,
                    given_up: false,
                };
                (*a, shown)
            })
            .collect(),
    }
}

/// One mark per activity, and the designed failing first try of an odd chain.
fn clean_marks(id: u64, workflow: Workflow) -> Vec<Mark> {
    let mut marks: Vec<Mark> = workflow
        .tries()
        .iter()
        .filter(|(_, tries)| **tries > 0)
        .map(|(a, _)| mark(id, *a, 1))
        .collect();
    if workflow == Workflow::Chain && id % 2 == 1 {
        marks.push(mark(id, RETRIED, 2));
    }
    marks
}

fn shown(state: &str) -> ActivitySeen {
    ActivitySeen {
        state: state.to_owned(),
        retried: 0,
        given_up: false,
    }
}

/// An activity in `state` in a partition the controller gave up.
fn given_up(state: &str) -> ActivitySeen {
    ActivitySeen {
        given_up: true,
        ..shown(state)
    }
}

/// The verdict with no completions and no bad lines.
fn judge_of(ids: &[u64], seen: &[Seen], marks: &[Mark]) -> Verdict {
    judge(&Evidence {
        submitted: ids,
        completed: &[],
        seen,
        marks,
        bad_lines: &[],
    })
}

fn clean_run() -> (Vec<u64>, Vec<Seen>, Vec<Mark>) {
    let ids = vec![1, 2, 3, 4, 5];
    let workflows = [
        Workflow::Paper,
        Workflow::Chain,
        Workflow::Chain,
        Workflow::Paper,
        Workflow::People,
    ];
    let seen = ids
        .iter()
        .zip(workflows)
        .map(|(id, w)| seen(*id, w, "succeeded", "succeeded"))
        .collect();
    let marks = ids
        .iter()
        .zip(workflows)
        .flat_map(|(id, w)| clean_marks(*id, w))
        .collect();
    (ids, seen, marks)
}

#[test]
fn marks_are_read_and_other_lines_kept_apart() {
    let (marks, bad) = parse_marks("1 16 1\n  2 3 2 \nnonsense\n1 2\n1 2 x\n");
    assert_eq!(marks, vec![mark(1, 16, 1), mark(2, 3, 2)]);
    assert_eq!(bad, vec!["nonsense", "1 2", "1 2 x"]);
}

#[test]
fn a_clean_run_has_no_violation() {
    let (ids, seen, marks) = clean_run();
    let v = judge_of(&ids, &seen, &marks);
    assert_eq!(v.violations, Vec::<String>::new());
    assert_eq!(v.effects_checked, 5 + 6 + 6 + 5 + 5);
    assert_eq!(v.marks, marks.len());
    assert_eq!(v.by_state.get("succeeded"), Some(&5));
    assert_eq!(v.by_workflow.get("chain"), Some(&2));
}

/// The violations `change` makes of a clean run: one of them must mention `says`.
fn violation_of(change: impl FnOnce(&mut Vec<u64>, &mut Vec<Seen>, &mut Vec<Mark>), says: &str) {
    let (mut ids, mut seen, mut marks) = clean_run();
    change(&mut ids, &mut seen, &mut marks);
    let v = judge_of(&ids, &seen, &marks);
    assert!(
        v.violations.iter().any(|line| line.contains(says)),
        "no violation says {says:?}: {:?}",
        v.violations
    );
}

#[test]
fn a_try_run_twice_is_a_violation() {
    violation_of(|_, _, m| m.push(mark(1, 18, 1)), "try 1 ran 2 times");
}

#[test]
fn a_second_try_not_by_design_is_a_violation() {
    violation_of(|_, _, m| m.push(mark(4, 19, 2)), "beyond its 1");
    violation_of(|_, _, m| m.push(mark(2, RETRIED, 2)), "first try succeeds");
    violation_of(|_, _, m| m.push(mark(3, RETRIED, 4)), "without try 3");
}

#[test]
fn the_designed_retry_must_have_happened_before_a_success() {
    violation_of(
        |_, s, m| {
            m.retain(|x| !(x.instance == 3 && x.attempt == 2));
            s[2].activities.insert(RETRIED, shown("succeeded"));
        },
        "succeeded on the try that fails by design",
    );
}

#[test]
fn a_success_on_a_try_that_left_no_mark_is_a_violation() {
    violation_of(
        |_, s, _| {
            let retried = ActivitySeen {
                retried: 1,
                ..shown("succeeded")
            };
            s[0].activities.insert(16, retried);
        },
        "succeeded on try 2",
    );
}

#[test]
fn a_lost_instance_or_effect_is_a_violation() {
    violation_of(|ids, _, _| ids.push(9), "does not know it");
    violation_of(
        |_, _, m| m.retain(|x| (x.instance, x.activity) != (1, 20)),
        "succeeded without its command's effect",
    );
    violation_of(|_, _, m| m.push(mark(9, 16, 1)), "knows nothing of");
    violation_of(|_, _, m| m.push(mark(1, 1, 1)), "knows nothing of");
    violation_of(
        |_, s, _| {
            s[0].activities.remove(&17);
        },
        "missing from the controller's status",
    );
}

#[test]
fn an_instance_not_final_or_of_another_workflow_is_a_violation() {
    violation_of(|_, s, _| s[1].state = "running".into(), "still running");
    violation_of(|_, s, _| s[1].workflow = None, "never submits");
}

#[test]
fn an_effect_the_controller_shows_as_never_run_is_a_violation() {
    violation_of(
        |_, s, _| {
            s[0].state = "failed".into();
            s[0].activities.insert(18, shown("cancelled"));
        },
        "shows it cancelled, its partition not given up",
    );
    violation_of(
        |_, s, _| {
            s[0].state = "failed".into();
            s[0].activities.insert(18, shown("failed"));
        },
        "shows it failed, its partition not given up",
    );
}

#[test]
fn an_effect_in_a_partition_given_up_is_counted_apart() {
    let (ids, mut seen, marks) = clean_run();
    seen[0].state = "failed".into();
    seen[0].activities.insert(16, given_up("failed"));
    seen[0].activities.insert(17, given_up("cancelled"));
    let v = judge_of(&ids, &seen, &marks);
    assert_eq!(v.violations, Vec::<String>::new());
    assert_eq!(v.ran_given_up, 2);
    assert_eq!(v.by_state.get("failed"), Some(&1));
}

#[test]
fn an_activity_never_run_leaves_no_mark_and_breaks_nothing() {
    let (ids, mut seen, mut marks) = clean_run();
    seen[0].state = "failed".into();
    seen[0].activities.insert(16, shown("failed"));
    for a in 17..=20 {
        seen[0].activities.insert(a, shown("cancelled"));
    }
    marks.retain(|m| m.instance != 1);
    let v = judge_of(&ids, &seen, &marks);
    assert_eq!(v.violations, Vec::<String>::new());
}

#[test]
fn bad_lines_are_violations() {
    let (ids, seen, marks) = clean_run();
    let v = judge(&Evidence {
        submitted: &ids,
        completed: &[],
        seen: &seen,
        marks: &marks,
        bad_lines: &["junk".to_owned()],
    });
    assert_eq!(v.violations.len(), 1);
}

#[test]
fn a_persons_activity_leaves_no_mark() {
    violation_of(
        |_, _, m| m.push(mark(5, MANUAL, 1)),
        "no command, yet left a mark",
    );
}

#[test]
fn an_acknowledged_completion_is_not_lost_unless_the_instance_failed() {
    let (ids, mut seen, marks) = clean_run();
    let evidence = |seen: &[Seen]| {
        judge(&Evidence {
            submitted: &ids,
            completed: &[5],
            seen,
            marks: &marks,
            bad_lines: &[],
        })
    };
    let v = evidence(&seen);
    assert_eq!((v.violations.len(), v.completions_checked), (0, 1));
    seen[4].activities.insert(MANUAL, shown("cancelled"));
    seen[4].state = "running".into();
    let v = evidence(&seen);
    assert!(
        v.violations
            .iter()
            .any(|l| l.contains("acknowledged its completion")),
        "{:?}",
        v.violations
    );
    seen[4].state = "failed".into();
    assert_eq!(evidence(&seen).violations, Vec::<String>::new());
}
