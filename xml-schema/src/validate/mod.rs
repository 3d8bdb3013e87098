//! Cross-reference checks on a read model: ids, cycles, placement, skills, and the
//! combinations of extensions (retries, people, dummy kind) an activity may have, dependency
//! rules, merges and routes, and the instance data declared, read, written and carried.
//!
//! Each check reports at the place in the document a person would edit, and says how to fix
//! it. All checks run, so one pass shows every problem.

mod applications;
mod cycles;
mod data;
mod definition;
mod loops;
mod partition;
mod people;
mod routing;
mod rules;
#[cfg(test)]
mod tests;

pub use definition::validate_definition;
pub use partition::validate_partition;
pub(crate) use rules::too_many_terms;

use std::collections::HashMap;
use std::hash::Hash;

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::MAX_RETRIES;
use crate::model::{ActivityId, ActivityKind, Retries, WorkflowDefinition};
use crate::source_map::{Node, SourceMap};

/// Reports every repeated id among `items` (at the repetition, naming the first).
fn duplicates<K: Copy + Eq + Hash + std::fmt::Display>(
    diags: &mut Vec<Diagnostic>,
    what: &str,
    items: impl Iterator<Item = (K, Pos)>,
) {
    let mut first: HashMap<K, Pos> = HashMap::new();
    for (id, pos) in items {
        if let Some(at) = first.get(&id) {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "duplicate {what} id {id}: {what} {id} is already defined at {at}; give each {what} its own id"
                ),
            ));
        } else {
            first.insert(id, pos);
        }
    }
}

/// `a, b and c`.
fn list<T: std::fmt::Display>(items: &[T]) -> String {
    let words: Vec<String> = items.iter().map(ToString::to_string).collect();
    match words.as_slice() {
        [] => "none".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What is wrong with the `retries` of activity `id` of `kind`, if anything: only automatic
/// activities are retried, and at most [`MAX_RETRIES`] times (the reader enforces the limit;
/// this catches models built in code).
fn retries_problem(id: ActivityId, kind: ActivityKind, retries: Retries) -> Option<String> {
    if retries.is_default() {
        None
    } else if kind == ActivityKind::Dummy {
        Some(format!(
            "activity {id} is a dummy and has <retries>: a dummy activity passes at once and \
             never fails; remove <retries>, or make the activity <kind>automatic</kind>"
        ))
    } else if kind != ActivityKind::Automatic {
        let who = match kind {
            ActivityKind::SemiAutomatic => "a person starts semiAutomatic work from the worklist",
            _ => "a person does manual work",
        };
        Some(format!(
            "activity {id} has <retries> but is {}: only automatic activities are retried, \
             because {who} and decides whether to try again; remove <retries>, or make the \
             activity <kind>automatic</kind>",
            kind.as_str()
        ))
    } else if retries.count > MAX_RETRIES {
        Some(format!(
            "activity {id} asks for {} retries; at most {MAX_RETRIES} are allowed (the limit \
             MAX_RETRIES); lower <count>",
            retries.count
        ))
    } else {
        None
    }
}

/// What an activity runs, in either language: the fields [`check_command_and_retries`]
/// checks together, because what each may be depends on the activity's kind.
#[derive(Clone, Copy)]
struct Runs<'a> {
    /// The shell command that does the work.
    command: Option<&'a str>,
    /// The shell command that undoes it.
    compensation: Option<&'a str>,
    /// How often a failed run is tried again.
    retries: Retries,
}

/// Reports the problems of what activity `id` of `kind` (the `i`th of its document) runs, in
/// either language: a dummy runs nothing and has nothing to undo, a compensation says what to
/// run, only automatic activities are retried.
fn check_command_and_retries(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    i: usize,
    id: ActivityId,
    kind: ActivityKind,
    runs: Runs<'_>,
) {
    let Runs {
        command,
        compensation,
        retries,
    } = runs;
    if let Some(problem) = command_problem(id, kind, command) {
        diags.push(Diagnostic::new(
            map.pos_or(Node::ActivityField(i, "command"), Node::Activity(i)),
            problem,
        ));
    }
    if let Some(problem) = compensation_problem(id, kind, compensation) {
        diags.push(Diagnostic::new(
            map.pos_or(Node::ActivityField(i, "compensation"), Node::Activity(i)),
            problem,
        ));
    }
    if let Some(problem) = retries_problem(id, kind, retries) {
        diags.push(Diagnostic::new(
            map.pos_or(Node::ActivityField(i, "retries"), Node::Activity(i)),
            problem,
        ));
    }
}

/// Every problem of `def` as a new definition (submitted, deployed, validated): those of
/// [`validate_definition`], and the rules added since definitions were first stored (retries
/// whose waits fill the `timeOut`, a task class on an activity that runs an application). A stored copy read back (a deployed version, a running
/// instance's document, a node's partition) is held to [`validate_definition`] alone, so that
/// no upgrade makes a stored definition unreadable.
pub fn validate_new_definition(def: &WorkflowDefinition, map: &SourceMap) -> Vec<Diagnostic> {
    let mut diags = validate_definition(def, map);
    for (i, a) in def.activities.iter().enumerate() {
        if let Some(problem) = retry_waits_problem(a.id, a.retries, a.time_out_secs) {
            diags.push(Diagnostic::new(
                map.pos_or(Node::ActivityField(i, "retries"), Node::Activity(i)),
                problem,
            ));
        }
        if let (Some(class), Some(application)) = (&a.class, &a.application) {
            // A class keeps work apart only where a lease can stop it; nothing stops an
            // application on a user's device that cannot reach its host.
            diags.push(Diagnostic::new(
                map.pos_or(Node::ActivityField(i, "class"), Node::Activity(i)),
                format!(
                    "activity {} has class {class} and application {application}: an \
                     application runs on the device of the user who selects the item, where no \
                     lease stops it when its host loses the controller, so a class cannot keep \
                     it apart from conflicting work; remove <class>, or make the activity manual \
                     without <application>",
                    a.id
                ),
            ));
        }
    }
    diags
}

/// What is wrong with waits of `retries` against a `timeOut` of `time_out_secs`, if anything:
/// a retry waits "a predetermined time, not exceeding the activity's execution time" (*Algoritmo
/// para Recuperação de Falhas em Sistemas de Gerenciamento de Workflow* (Farias, Almeida, Silva),
/// §5), so waits that add up to the whole `timeOut` or more leave no time for the tries they wait
/// for.
fn retry_waits_problem(id: ActivityId, retries: Retries, time_out_secs: u32) -> Option<String> {
    let waits = u64::from(retries.count) * u64::from(retries.wait_secs);
    (time_out_secs > 0 && retries.count > 0 && waits >= u64::from(time_out_secs)).then(|| {
        format!(
            "activity {id} waits {} × {} s = {waits} s between its retries, not less than its \
             timeOut of {time_out_secs} s, so the tries could not run within it; lower \
             <wait> or <count> in <retries>, or raise <timeOut> above {waits}",
            retries.count, retries.wait_secs
        )
    })
}

/// What is wrong with the `compensation` of activity `id` of `kind`, if anything: it must say
/// what to run, and a dummy, which does nothing, has nothing to undo.
fn compensation_problem(
    id: ActivityId,
    kind: ActivityKind,
    compensation: Option<&str>,
) -> Option<String> {
    let compensation = compensation?;
    if kind == ActivityKind::Dummy {
        Some(format!(
            "activity {id} is a dummy and has a <compensation>: a dummy activity does nothing, \
             so there is nothing to undo; remove <compensation>, or make the activity \
             <kind>automatic</kind>"
        ))
    } else if compensation.trim().is_empty() {
        Some(format!(
            "activity {id} has an empty <compensation>: write the shell command that undoes its \
             work (run with sh -c on its partner when the instance is cancelled or fails after \
             it succeeded), or remove <compensation>"
        ))
    } else {
        None
    }
}

/// What is wrong with the `command` of activity `id` of `kind`, if anything: a dummy runs
/// nothing, and a person does manual work themselves (the command would never run).
fn command_problem(id: ActivityId, kind: ActivityKind, command: Option<&str>) -> Option<String> {
    command?;
    match kind {
        ActivityKind::Dummy => Some(format!(
            "activity {id} is a dummy and has a <command>: a dummy activity passes at once and \
             runs nothing; remove <command>, or make the activity <kind>automatic</kind>"
        )),
        ActivityKind::Manual => Some(format!(
            "activity {id} is manual and has a <command>, which would never run: a person does \
             manual work and completes it; remove <command>, make the activity \
             <kind>automatic</kind>, or make it <kind>semiAutomatic</kind> with an \
             <application> its user's device starts"
        )),
        ActivityKind::Automatic | ActivityKind::SemiAutomatic => None,
    }
}
