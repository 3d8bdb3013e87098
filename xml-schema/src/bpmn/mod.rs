//! BPMN 2.0 import: the subset of process elements that maps onto the definition model
//! (docs/languages.md has the table). A BPMN file is read in steps, each reporting every
//! problem it finds before the next runs: the element tree (`tree`, with BPMN's limits) with
//! its namespaces resolved (`xml`); the one process, its flow nodes, flows and lanes, refusing
//! what is outside the subset (`read`, `tasks`, `events`, `refused`); the shape of its flow
//! graph, what each gateway becomes and each boundary timer (`shape`, `timers`); the
//! activities with their preconditions, merges and routes (`map`), their partners (`lanes`);
//! then the definition (`build`), validated as a MobiWfMS definition is.

mod build;
mod events;
mod graph;
mod lanes;
mod map;
mod people;
mod read;
mod refused;
mod shape;
mod tasks;
#[cfg(test)]
mod tests;
mod timers;
mod values;
mod xml;

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::read::Ctx;
use crate::{Loaded, WorkflowDefinition, validate_definition};

/// Reads and validates a BPMN 2.0 process as a definition.
pub(crate) fn load(src: &[u8]) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    let root = crate::parse_as(src, crate::tree::BPMN)?;
    let root = xml::El::resolve(&root);
    let mut ctx = Ctx::default();
    let process = read::read_root(&mut ctx, &root);
    let process = match process {
        Some(p) if ctx.diags.is_empty() => p,
        _ => return Err(Diagnostics(ctx.diags)),
    };
    if !process
        .nodes
        .iter()
        .any(|n| matches!(n.kind, graph::Kind::Task(_)))
    {
        return Err(Diagnostics(vec![Diagnostic::new(
            process.pos,
            "the process has no task: mobiwf runs tasks (task, serviceTask, scriptTask, \
             userTask, manualTask); draw at least one",
        )]));
    }
    let shape = shape::shape(&process).map_err(Diagnostics)?;
    let members = map::members(&process, &shape).map_err(Diagnostics)?;
    let placement = lanes::place(&process, &shape, &members).map_err(Diagnostics)?;
    let (value, source_map) = build::definition(&process, &shape, &members, placement);
    let problems = validate_definition(&value, &source_map);
    if problems.is_empty() {
        Ok(Loaded { value, source_map })
    } else {
        Err(Diagnostics(problems))
    }
}
