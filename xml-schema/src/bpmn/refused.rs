//! The BPMN elements the import refuses, each with why and what to do instead: an element
//! outside the subset is never dropped silently, since a process that runs without it would
//! not be the process that was drawn.

use super::xml::El;
use crate::diagnostic::Diagnostic;

/// Elements outside the subset, by BPMN local name: what they are, and what to do.
const REFUSED: &[(&[&str], &str, &str)] = &[
    (
        &["subProcess", "adHocSubProcess", "transaction"],
        "sub-processes are not imported",
        "draw their tasks in the process itself",
    ),
    (
        &["callActivity"],
        "call activities are not imported",
        "draw the called process's tasks here, or run it from a service task's mobiwf:command",
    ),
    (
        &["sendTask", "receiveTask"],
        "messages are not imported",
        "use a service task whose mobiwf:command sends the message or waits for it",
    ),
    (
        &["businessRuleTask"],
        "business rule tasks are not imported",
        "use a service task whose mobiwf:command applies the rule and writes the completion \
         flag that an exclusive gateway after it tests",
    ),
    (
        &["inclusiveGateway"],
        "inclusive gateways are not imported",
        "use a parallel gateway (every branch) or an exclusive gateway (one branch, by the \
         completion flag of the task before it)",
    ),
    (
        &["eventBasedGateway"],
        "event-based gateways are not imported",
        "decide with an exclusive gateway on the completion flag of the task before it",
    ),
    (
        &["complexGateway"],
        "complex gateways are not imported",
        "use a parallel or an exclusive gateway",
    ),
    (
        &["intermediateCatchEvent", "intermediateThrowEvent"],
        "intermediate events are not imported",
        "a wait is a task whose mobiwf:command waits; a time limit on a task is a boundary \
         timer event on it",
    ),
    (
        &[
            "dataObject",
            "dataObjectReference",
            "dataStore",
            "dataStoreReference",
            "dataInput",
            "dataOutput",
            "dataInputAssociation",
            "dataOutputAssociation",
            "property",
        ],
        "data objects are not imported",
        "declare the instance data in MobiWfMS XML (<data>, <reads>, <writes>)",
    ),
    (
        &[
            "multiInstanceLoopCharacteristics",
            "standardLoopCharacteristics",
        ],
        "loops and multi-instance activities are not imported",
        "mobiwf runs each activity of an instance once: draw the activities one after the other",
    ),
    (
        &[
            "messageFlow",
            "conversation",
            "subConversation",
            "callConversation",
            "conversationLink",
            "choreography",
            "choreographyTask",
            "subChoreography",
            "callChoreography",
        ],
        "messages between participants are not imported",
        "keep one process; a partner of the workflow is a lane",
    ),
    (
        &[
            "globalTask",
            "globalUserTask",
            "globalManualTask",
            "globalScriptTask",
            "globalBusinessRuleTask",
        ],
        "global tasks (which call activities call) are not imported",
        "draw the task in the process itself",
    ),
    (
        &["childLaneSet"],
        "lanes inside lanes are not imported",
        "draw each partner as a lane of its own at the top level",
    ),
    (
        &["performer", "resourceRole"],
        "this way of naming who does a task is not imported",
        "name a group with potentialOwner, candidateGroups or <mobiwf:role>",
    ),
    (
        &["rendering"],
        "renderings are not imported",
        "a manual task is shown on its users' worklists by its name",
    ),
];

/// The refusal of `el`, a BPMN element the import does not support where it stands: from the
/// table when it is there, else a general one.
pub(crate) fn refusal(el: &El<'_>) -> Diagnostic {
    refusal_as(el, el.label())
}

/// The refusal of `el`, a part of `parent` (an event's trigger), named as a part of it.
pub(crate) fn refusal_in(parent: &El<'_>, el: &El<'_>) -> Diagnostic {
    refusal_as(el, format!("{}: its <{}>", parent.label(), el.raw.name))
}

fn refusal_as(el: &El<'_>, label: String) -> Diagnostic {
    let message = match REFUSED.iter().find(|(names, ..)| names.contains(&el.local)) {
        Some((_, what, advice)) => format!("{label}: {what}; {advice}"),
        None if el.local.ends_with("EventDefinition") || el.local == "eventDefinitionRef" => {
            format!(
                "{label}: only none start and end events and boundary timer events are \
                 imported; remove the event's trigger, or model the wait as a task"
            )
        }
        None => format!(
            "{label} is not imported here: the BPMN subset mobiwf reads (docs/languages.md) \
             has no such element in this place; remove it or draw the process with the \
             elements listed there"
        ),
    };
    Diagnostic::new(el.pos(), message)
}
