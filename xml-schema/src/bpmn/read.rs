//! Reads a BPMN document's one process into a [`Process`]: the root and its declarations, the
//! collaboration around the process, the process's lanes, flow nodes and sequence flows.
//! Elements outside the subset are refused (`refused`); tasks and events are read by their
//! own modules.

use super::graph::{FlowNode, Kind, Lane, Process};
use super::refused::refusal;
use super::values::condition_flag;
use super::xml::{El, Ns, normalise};
use super::{events, tasks};
use crate::diagnostic::Diagnostic;
use crate::read::Ctx;

/// Root-level BPMN declarations that mean something only to the elements that use them
/// (which the import refuses when they appear), so they are passed over.
const DECLARATIONS: &[&str] = &[
    "itemDefinition",
    "message",
    "signal",
    "error",
    "escalation",
    "resource",
    "interface",
    "category",
    "import",
    "extension",
    "dataStore",
    "correlationProperty",
    "documentation",
    "extensionElements",
    "relationship",
];

/// What the import passes over inside a process: notes and groupings of the drawing.
const NOTES: &[&str] = &[
    "textAnnotation",
    "association",
    "group",
    "extensionElements",
    "auditing",
    "monitoring",
];

/// The tasks the import reads.
pub(crate) const TASKS: &[&str] = &[
    "task",
    "serviceTask",
    "scriptTask",
    "userTask",
    "manualTask",
];

/// Reads the process of `root`; `None` when there is none to read (the problem is in `ctx`).
pub(crate) fn read_root(ctx: &mut Ctx, root: &El<'_>) -> Option<Process> {
    if !root.is("definitions") {
        ctx.error(
            root.pos(),
            format!(
                "the root element <{}> is not BPMN's <definitions>: a BPMN file's root is \
                 <definitions> in the namespace {} (any prefix, or none with \
                 xmlns=\"{}\")",
                root.raw.name,
                super::xml::BPMN_MODEL,
                super::xml::BPMN_MODEL
            ),
        );
        return None;
    }
    let mut processes = Vec::new();
    for child in &root.children {
        match &child.ns {
            Ns::Bpmn if child.local == "process" && has_flow(child) => processes.push(child),
            Ns::Bpmn if child.local == "process" => {}
            Ns::Bpmn if child.local == "collaboration" => collaboration(ctx, child),
            Ns::Bpmn if DECLARATIONS.contains(&child.local) => {}
            Ns::Bpmn => ctx.diags.push(refusal(child)),
            _ => {}
        }
    }
    let Some(first) = processes.first() else {
        ctx.error(
            root.pos(),
            "the file has no <process> with tasks or events: draw the process whose tasks \
             mobiwf is to run",
        );
        return None;
    };
    for extra in &processes[1..] {
        ctx.error(
            extra.pos(),
            format!(
                "{} is a second process with tasks or events (the first is {} at {}): a \
                 definition is one process; keep one per file (a partner of the workflow is \
                 a lane of that process)",
                extra.label(),
                first.label(),
                first.pos()
            ),
        );
    }
    let mut p = process(ctx, first);
    p.file_name = root.attr("name").map(normalise).unwrap_or_default();
    Some(p)
}

/// Whether a process holds anything to run (a pool drawn as a black box holds nothing).
fn has_flow(process: &El<'_>) -> bool {
    process.children.iter().any(|c| {
        c.ns == Ns::Bpmn && !matches!(c.local, "laneSet" | "documentation" | "extensionElements")
    })
}

/// A collaboration around the process: its participants are passed over, anything that
/// passes messages between them is refused.
fn collaboration(ctx: &mut Ctx, el: &El<'_>) {
    for child in &el.children {
        if child.ns == Ns::Bpmn
            && !matches!(
                child.local,
                "participant"
                    | "documentation"
                    | "extensionElements"
                    | "textAnnotation"
                    | "association"
                    | "group"
            )
        {
            ctx.diags.push(refusal(child));
        }
    }
}

/// Reads the process `el`.
fn process(ctx: &mut Ctx, el: &El<'_>) -> Process {
    let mut p = Process {
        pos: el.pos(),
        id: el.id().to_owned(),
        name: el.attr("name").map(normalise).unwrap_or_default(),
        ..Process::default()
    };
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        match child.local {
            "laneSet" => lanes(ctx, child, &mut p.lanes),
            "documentation" => p.description = normalise(&child.raw.text),
            "sequenceFlow" => {
                if let Some(flow) = flow(ctx, child) {
                    p.flows.push(flow);
                }
            }
            "ioSpecification" => tasks::empty_io(ctx, child),
            local if NOTES.contains(&local) => {}
            _ => {
                if let Some(kind) = flow_node(ctx, child) {
                    p.nodes.push(FlowNode {
                        id: child.id().to_owned(),
                        name: child.attr("name").map(normalise).unwrap_or_default(),
                        label: child.label(),
                        pos: child.pos(),
                        kind,
                    });
                }
            }
        }
    }
    p
}

/// The kind of the flow node `el`, or its refusal.
fn flow_node(ctx: &mut Ctx, el: &El<'_>) -> Option<Kind> {
    if el.attr("id").is_none_or(str::is_empty) {
        ctx.error(
            el.pos(),
            format!(
                "{} has no id: sequence flows and lanes name flow nodes by id; give it one",
                el.label()
            ),
        );
        return None;
    }
    match el.local {
        "startEvent" => events::start(ctx, el).then_some(Kind::Start),
        "endEvent" => events::end(ctx, el).then_some(Kind::End),
        "boundaryEvent" => events::boundary(ctx, el),
        "parallelGateway" | "exclusiveGateway" => Some(gateway(ctx, el)),
        local if TASKS.contains(&local) => tasks::read(ctx, el).map(|t| Kind::Task(Box::new(t))),
        _ => {
            ctx.diags.push(refusal(el));
            None
        }
    }
}

/// A parallel or exclusive gateway.
fn gateway(ctx: &mut Ctx, el: &El<'_>) -> Kind {
    let parallel = el.local == "parallelGateway";
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        if !matches!(
            child.local,
            "incoming" | "outgoing" | "documentation" | "extensionElements"
        ) {
            ctx.diags.push(refusal(child));
        }
    }
    let default = el
        .attr("default")
        .map(|d| (d.to_owned(), el.attr_pos("default")));
    Kind::Gateway { parallel, default }
}

/// The lanes of a `laneSet`.
fn lanes(ctx: &mut Ctx, el: &El<'_>, out: &mut Vec<Lane>) {
    for lane in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        if !lane.is("lane") {
            ctx.diags.push(refusal(lane));
            continue;
        }
        let name = lane
            .attr("name")
            .map(normalise)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| lane.id().to_owned());
        let mut nodes = Vec::new();
        for child in lane.children.iter().filter(|c| c.ns == Ns::Bpmn) {
            match child.local {
                "flowNodeRef" => {
                    nodes.push((child.raw.text.trim().to_owned(), child.raw.value_pos()))
                }
                "documentation" | "extensionElements" | "partitionElement" => {}
                _ => ctx.diags.push(refusal(child)),
            }
        }
        out.push(Lane {
            name,
            pos: lane.pos(),
            nodes,
        });
    }
}

/// A sequence flow, with the flag its condition tests.
fn flow(ctx: &mut Ctx, el: &El<'_>) -> Option<super::graph::Flow> {
    let refs = ["id", "sourceRef", "targetRef"].map(|a| el.attr(a).filter(|v| !v.is_empty()));
    let [Some(id), Some(source), Some(target)] = refs else {
        ctx.error(
            el.pos(),
            format!(
                "{} needs an id, a sourceRef and a targetRef: a flow says which flow node \
                 follows which",
                el.label()
            ),
        );
        return None;
    };
    let mut condition = None;
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        match child.local {
            "conditionExpression" => {
                let pos = child.raw.value_pos();
                match condition_flag(&child.raw.text) {
                    Ok(flag) => condition = flag.map(|f| (f, pos)),
                    Err(problem) => ctx.diags.push(Diagnostic::new(pos, problem)),
                }
            }
            "documentation" | "extensionElements" => {}
            _ => ctx.diags.push(refusal(child)),
        }
    }
    Some(super::graph::Flow {
        id: id.to_owned(),
        name: el.attr("name").map(normalise).unwrap_or_default(),
        label: el.label(),
        pos: el.pos(),
        source: (source.to_owned(), el.attr_pos("sourceRef")),
        target: (target.to_owned(), el.attr_pos("targetRef")),
        condition,
    })
}
