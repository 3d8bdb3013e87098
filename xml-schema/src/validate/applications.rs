//! Checks the applications extension: a definition's applications have distinct ids, and an
//! activity names an application only when it is semi-automatic (a person starts it from the
//! worklist, then the application does the work) and the definition defines it.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::model::{ActivityId, ActivityKind, WorkflowDefinition};
use crate::source_map::{Node, SourceMap};

/// Every problem of the definition's applications and of its activities' `<application>`.
pub(super) fn check_applications(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    map: &SourceMap,
) {
    let mut first = HashMap::new();
    for (k, application) in def.applications.iter().enumerate() {
        let pos = map.pos(Node::Application(k));
        if let Some(at) = first.insert(application.id.as_str(), pos) {
            // Keep the first as the one the activities name.
            first.insert(application.id.as_str(), at);
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "duplicate application id {}: it is already defined at {at}; give each \
                     application its own id",
                    application.id
                ),
            ));
        }
    }
    for (i, a) in def.activities.iter().enumerate() {
        let Some(name) = &a.application else {
            continue;
        };
        let pos = map.pos_or(Node::ActivityField(i, "application"), Node::Activity(i));
        if let Some(problem) = kind_problem(a.id, a.kind) {
            diags.push(Diagnostic::new(pos, problem));
        }
        if !first.contains_key(name.as_str()) {
            let known: Vec<&str> = def.applications.iter().map(|x| x.id.as_str()).collect();
            let hint = match crate::read::suggest(name.as_str(), &known) {
                Some(s) => format!("did you mean {s}? "),
                None if known.is_empty() => "the definition has no <applications>; ".to_owned(),
                None => format!("its applications are {}; ", super::list(&known)),
            };
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "activity {} names application {name}, which is not an application of \
                     this workflow; {hint}define it in <applications> (<application \
                     id=\"{name}\"><command>...</command></application>) or fix the name",
                    a.id
                ),
            ));
        }
    }
}

/// What is wrong with an application on activity `id` of `kind`, if anything: only a
/// semi-automatic activity starts one.
pub(super) fn kind_problem(id: ActivityId, kind: ActivityKind) -> Option<String> {
    (kind != ActivityKind::SemiAutomatic).then(|| {
        let why = match kind {
            ActivityKind::Manual => "a person does manual work themselves",
            ActivityKind::Dummy => "a dummy activity passes at once and runs nothing",
            _ => "an automatic activity runs its <command> on its partner",
        };
        format!(
            "activity {id} has an <application> but is {}: {why}; only a semiAutomatic activity \
             starts an application on the device of the user who selects it; make it \
             <kind>semiAutomatic</kind>, or remove <application>",
            kind.as_str()
        )
    })
}
