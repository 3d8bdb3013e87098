//! The checker's verdict, pure: from the marks the commands left and what the controller
//! shows of every instance once the run settled, what went wrong.
//!
//! The rules, as the crash tests state them for one crash: an activity's command runs once per
//! try (the node claims a try's run directory before it starts it: a mark seen twice for the
//! same instance, activity and try is a command run twice); a second try happens only by
//! design (the chain's retried activity, after a first try of an odd instance that fails on
//! purpose, within its retries; tries in order); nothing is lost (every instance the submitter
//! was given an id for is known to the controller, every instance is final, every activity the
//! controller shows succeeded left its mark, and no mark belongs to an instance or activity
//! the controller does not know). A person's activity has no command and leaves no mark; a
//! completion the node acknowledged is not lost (the activity succeeded, unless the instance
//! failed: its partner given up, the person's word came too late).

use std::collections::BTreeMap;

use crate::workflows::{MANUAL, RETRIED, Workflow};

/// One line of the marks file: a command's effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mark {
    /// `MOBIWF_INSTANCE`.
    pub instance: u64,
    /// `MOBIWF_ACTIVITY`.
    pub activity: u64,
    /// `MOBIWF_TRY` (1 the first).
    pub attempt: u32,
}

/// The marks of a marks file, and the lines that are not marks.
pub fn parse_marks(text: &str) -> (Vec<Mark>, Vec<String>) {
    let mut marks = Vec::new();
    let mut bad = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let parsed = match words.as_slice() {
            [i, a, t] => match (i.parse(), a.parse(), t.parse()) {
                (Ok(instance), Ok(activity), Ok(attempt)) => Some(Mark {
                    instance,
                    activity,
                    attempt,
                }),
                _ => None,
            },
            _ => None,
        };
        match parsed {
            Some(mark) => marks.push(mark),
            None => bad.push(line.to_owned()),
        }
    }
    (marks, bad)
}

/// What the controller shows of one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its id.
    pub id: u64,
    /// Its workflow, from its description (`None`: not one the run submits).
    pub workflow: Option<Workflow>,
    /// Its state (`status`'s `state`).
    pub state: String,
    /// Each activity's state, and how many times it was tried again (`retried`).
    pub activities: BTreeMap<u64, ActivitySeen>,
}

/// What the controller shows of one activity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivitySeen {
    /// Its state (`succeeded`, `failed`, `cancelled`, ...).
    pub state: String,
    /// How many times it was tried again after a failed try.
    pub retried: u32,
    /// The controller gave up its partition (its partner stopped answering).
    pub given_up: bool,
}

/// The states an instance ends in.
pub const FINAL: [&str; 5] = [
    "succeeded",
    "failed",
    "cancelled",
    "compensated",
    "compensation_failed",
];

/// What the checker found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Instances the controller knows, by state.
    pub by_state: BTreeMap<String, usize>,
    /// Instances the controller knows, by workflow.
    pub by_workflow: BTreeMap<&'static str, usize>,
    /// Marks read.
    pub marks: usize,
    /// (instance, activity) pairs whose effects were checked against the controller's view.
    pub effects_checked: usize,
    /// Activities that left their mark in a partition the controller gave up (shown failed,
    /// or cancelled after a predecessor there): its partner's later word changes nothing, by
    /// design.
    pub ran_given_up: usize,
    /// Completions of a person's activity acknowledged by its node, checked.
    pub completions_checked: usize,
    /// Times the controller gave up a node's partitions (each node and time once), every one
    /// of which a fault of that node must explain (`crate::suspicion`).
    pub suspicions: usize,
    /// What broke a rule, one line each.
    pub violations: Vec<String>,
}

/// What the checker holds against each other.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The ids the submitter was given.
    pub submitted: &'a [u64],
    /// The instances whose person's activity a node acknowledged completed.
    pub completed: &'a [u64],
    /// What the controller shows of every instance it knows.
    pub seen: &'a [Seen],
    /// The marks file's marks.
    pub marks: &'a [Mark],
    /// Its lines that are no marks.
    pub bad_lines: &'a [String],
}

/// The verdict over the evidence.
pub fn judge(e: &Evidence<'_>) -> Verdict {
    let (submitted, seen, marks, bad_lines) = (e.submitted, e.seen, e.marks, e.bad_lines);
    let mut v = Verdict {
        marks: marks.len(),
        ..Verdict::default()
    };
    for line in bad_lines {
        v.violations
            .push(format!("a line of the marks file is no mark: {line:?}"));
    }
    let mut counts: BTreeMap<(u64, u64), BTreeMap<u32, usize>> = BTreeMap::new();
    for m in marks {
        *counts
            .entry((m.instance, m.activity))
            .or_default()
            .entry(m.attempt)
            .or_insert(0) += 1;
    }
    let by_id: BTreeMap<u64, &Seen> = seen.iter().map(|s| (s.id, s)).collect();
    for id in submitted {
        if !by_id.contains_key(id) {
            v.violations.push(format!(
                "instance {id} was submitted and the controller does not know it"
            ));
        }
    }
    for &(instance, activity) in counts.keys() {
        let known = by_id
            .get(&instance)
            .and_then(|s| s.workflow)
            .is_some_and(|w| w.tries().contains_key(&activity));
        if !known {
            v.violations.push(format!(
                "instance {instance} activity {activity} left a mark the controller knows nothing of"
            ));
        }
    }
    for s in seen {
        judge_instance(s, &counts, &mut v);
        if e.completed.contains(&s.id) {
            judge_completion(s, &mut v);
        }
    }
    v
}

/// A completion a node acknowledged: the activity succeeded, unless the instance failed.
fn judge_completion(s: &Seen, v: &mut Verdict) {
    v.completions_checked += 1;
    let state = s
        .activities
        .get(&MANUAL)
        .map_or("missing", |a| a.state.as_str());
    if state != "succeeded" && s.state != "failed" {
        v.violations.push(format!(
            "instance {} activity {MANUAL}: a node acknowledged its completion, and the \
             controller shows it {state} in an instance {}",
            s.id, s.state
        ));
    }
}

/// The rules for one instance the controller shows.
fn judge_instance(s: &Seen, counts: &BTreeMap<(u64, u64), BTreeMap<u32, usize>>, v: &mut Verdict) {
    *v.by_state.entry(s.state.clone()).or_insert(0) += 1;
    let id = s.id;
    let Some(workflow) = s.workflow else {
        v.violations.push(format!(
            "instance {id} is of a workflow the run never submits"
        ));
        return;
    };
    *v.by_workflow.entry(workflow.name()).or_insert(0) += 1;
    if !FINAL.contains(&s.state.as_str()) {
        v.violations.push(format!(
            "instance {id} ({}) is still {} after the settle period",
            workflow.name(),
            s.state
        ));
    }
    let none = BTreeMap::new();
    for (activity, max_tries) in workflow.tries() {
        v.effects_checked += 1;
        let tries = counts.get(&(id, activity)).unwrap_or(&none);
        let at = format!("instance {id} ({}) activity {activity}", workflow.name());
        if max_tries == 0 {
            if !tries.is_empty() {
                v.violations.push(format!(
                    "{at} is a person's work with no command, yet left a mark"
                ));
            }
            continue;
        }
        for (attempt, n) in tries {
            if *n > 1 {
                v.violations
                    .push(format!("{at} try {attempt} ran {n} times"));
            }
            if *attempt > max_tries {
                v.violations.push(format!(
                    "{at} ran a try {attempt} beyond its {max_tries} by design"
                ));
            }
            if *attempt > 1 && !tries.contains_key(&(attempt - 1)) {
                v.violations.push(format!(
                    "{at} ran try {attempt} without try {}",
                    attempt - 1
                ));
            }
        }
        let retried = tries.keys().any(|t| *t > 1);
        let fails_first = workflow == Workflow::Chain && activity == RETRIED && id % 2 == 1;
        if retried && !fails_first {
            v.violations.push(format!(
                "{at} was tried again though its first try succeeds"
            ));
        }
        let Some(shown) = s.activities.get(&activity) else {
            v.violations
                .push(format!("{at} is missing from the controller's status"));
            continue;
        };
        let state = &shown.state;
        let last = shown.retried + 1;
        match state.as_str() {
            "succeeded" if tries.is_empty() => v
                .violations
                .push(format!("{at} succeeded without its command's effect")),
            "succeeded" if !tries.contains_key(&last) => v.violations.push(format!(
                "{at} succeeded on try {last} (the controller says) without that try's effect"
            )),
            "succeeded" if fails_first && !retried => v
                .violations
                .push(format!("{at} succeeded on the try that fails by design")),
            "succeeded" => {}
            "failed" | "cancelled" if !tries.is_empty() && shown.given_up => v.ran_given_up += 1,
            _ if !tries.is_empty() => v.violations.push(format!(
                "{at} left its mark though the controller shows it {state}, its partition not \
                 given up"
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
