//! The tasks the import reads: `task`, `serviceTask` and `scriptTask` become automatic
//! activities, `userTask` and `manualTask` manual ones. What BPMN cannot say comes from our
//! extension elements (`<mobiwf:command>` and the others in `EXTENSIONS`, namespace
//! `urn:mobiwf`, inside `extensionElements`), read as the MobiWfMS activity extensions of the
//! same names; who does a task also from `potentialOwner`/`humanPerformer` and
//! `candidateGroups`.

use super::graph::Task;
use super::people::read_groups;
use super::refused::{refusal, refusal_in};
use super::xml::{El, Ns};
use crate::model::ActivityKind;
use crate::read::{Child, Ctx, one};
use crate::tree::Element;

/// Our extension elements a task may hold, read as the MobiWfMS activity elements.
const EXTENSIONS: &[Child] = &[
    one(&["command"]),
    one(&["compensation"]),
    one(&["retries"]),
    one(&["role"]),
    one(&["department"]),
    one(&["team"]),
    one(&["assignment"]),
    one(&["policy"]),
    one(&["priority"]),
    one(&["disconnected"]),
    one(&["deadline"]),
    one(&["pauseStopsDeadline"]),
];

/// The workflow engines' attributes that say how a service task is carried out: mobiwf
/// cannot do what they say, so they are refused rather than run as a no-op.
const ENGINE_IMPLEMENTATIONS: &[&str] =
    &["class", "delegateExpression", "expression", "type", "topic"];

/// Script formats that are shell commands.
const SHELLS: &[&str] = &["sh", "bash", "shell", "text/x-sh", "application/x-sh"];

/// Reads the task `el`; `None` when a part of it was refused.
pub(crate) fn read(ctx: &mut Ctx, el: &El<'_>) -> Option<Task> {
    let before = ctx.diags.len();
    let manual = matches!(el.local, "userTask" | "manualTask");
    let mut task = Task {
        kind: if manual {
            ActivityKind::Manual
        } else {
            ActivityKind::Automatic
        },
        ..Task::default()
    };
    attributes(ctx, el, &mut task);
    for child in &el.children {
        match (&child.ns, child.local) {
            (Ns::Bpmn, "incoming" | "outgoing") => {}
            (Ns::Bpmn, "documentation") => {
                task.description = super::xml::normalise(&child.raw.text)
            }
            (Ns::Bpmn, "extensionElements") => extensions(ctx, el, child, &mut task),
            (Ns::Bpmn, "ioSpecification") => empty_io(ctx, child),
            (Ns::Bpmn, "potentialOwner" | "humanPerformer") if manual => {
                owner(ctx, child, &mut task)
            }
            (Ns::Bpmn, "script") if el.local == "scriptTask" => script(ctx, el, child, &mut task),
            (Ns::Bpmn, _) => ctx.diags.push(refusal_in(el, child)),
            _ => {}
        }
    }
    (ctx.diags.len() == before).then_some(task)
}

/// The task's attributes: BPMN's that would change what it does are refused unless at their
/// defaults; the engines' `candidateGroups` says who does it, their ways of naming a person
/// or an implementation are refused.
fn attributes(ctx: &mut Ctx, el: &El<'_>, task: &mut Task) {
    let label = el.label();
    for attr in &el.attrs {
        let value = attr.raw.value.trim();
        let pos = attr.raw.pos;
        let problem = match (&attr.ns, attr.local) {
            (Ns::None, "startQuantity" | "completionQuantity") if value != "1" => Some(format!(
                "{label} has {}=\"{value}\": a task runs once per instance; remove it",
                attr.local
            )),
            (Ns::None, "isForCompensation") if value != "false" => Some(format!(
                "{label} is a compensation task: compensation is imported as the \
                 <mobiwf:compensation> command of the task it undoes; move it there"
            )),
            (Ns::None, "default") => Some(format!(
                "{label} has a default flow: conditions on flows out of a task are not \
                 imported; put an exclusive gateway after the task and its conditions on the \
                 gateway's flows"
            )),
            (Ns::Engine, "candidateGroups") if task.kind == ActivityKind::Manual => {
                read_groups(value, &mut task.people)
                    .err()
                    .map(|p| format!("{label}: {p}"))
            }
            (Ns::Engine, "candidateGroups" | "candidateUsers" | "assignee") => Some(format!(
                "{label}: {} is not imported: mobiwf offers a user or manual task to the \
                 members of a group; name it with candidateGroups on a user task",
                attr.raw.name
            )),
            (Ns::Engine, local) if ENGINE_IMPLEMENTATIONS.contains(&local) => Some(format!(
                "{label}: {} names how another engine carries the task out, which mobiwf \
                 cannot do; give it <mobiwf:command> with the shell command to run instead",
                attr.raw.name
            )),
            _ => None,
        };
        if let Some(problem) = problem {
            ctx.error(pos, problem);
        } else if attr.ns == Ns::Engine && attr.local == "candidateGroups" {
            task.people_pos.get_or_insert(pos);
        }
    }
}

/// `potentialOwner`/`humanPerformer`: the groups its `resourceAssignmentExpression`'s
/// expression names.
fn owner(ctx: &mut Ctx, el: &El<'_>, task: &mut Task) {
    let expression = el.bpmn_child("resourceAssignmentExpression").and_then(|r| {
        r.bpmn_child("formalExpression")
            .or_else(|| r.bpmn_child("expression"))
    });
    let Some(expression) = expression else {
        ctx.error(
            el.pos(),
            format!(
                "{} names no group: write <resourceAssignmentExpression><formalExpression>tech\
                 </formalExpression></resourceAssignmentExpression> (a role, \
                 department:NAME or team:NAME)",
                el.label()
            ),
        );
        return;
    };
    let pos = expression.raw.value_pos();
    match read_groups(&expression.raw.text, &mut task.people) {
        Ok(()) => {
            task.people_pos.get_or_insert(pos);
        }
        Err(problem) => ctx.error(pos, format!("{}: {problem}", el.label())),
    }
}

/// A script task's `script`: its command when it is a shell script.
fn script(ctx: &mut Ctx, task_el: &El<'_>, el: &El<'_>, task: &mut Task) {
    let format = task_el.attr("scriptFormat").unwrap_or("sh").trim();
    if !SHELLS.contains(&format.to_ascii_lowercase().as_str()) {
        ctx.error(
            task_el.attr_pos("scriptFormat"),
            format!(
                "{}: scriptFormat {format:?} is not a shell: mobiwf runs a script task's script \
                 with sh -c; write it as a shell script (scriptFormat=\"sh\")",
                task_el.label()
            ),
        );
        return;
    }
    task.command = Some((el.raw.text.trim().to_owned(), el.raw.value_pos()));
}

/// Refuses an `ioSpecification` that declares data: an empty one (as some modelers write on
/// every task) says nothing.
pub(crate) fn empty_io(ctx: &mut Ctx, el: &El<'_>) {
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        let empty = matches!(child.local, "inputSet" | "outputSet")
            && child.children.iter().all(|c| c.ns != Ns::Bpmn);
        if !empty {
            ctx.diags.push(refusal(child));
        }
    }
}

/// Our extension elements inside the task's `extensionElements` (other namespaces are other
/// tools' and are passed over), read as the MobiWfMS activity extensions.
fn extensions(ctx: &mut Ctx, task_el: &El<'_>, el: &El<'_>, task: &mut Task) {
    let ours: Vec<&El<'_>> = el.children.iter().filter(|c| c.ns == Ns::Mobiwf).collect();
    if ours.is_empty() {
        return;
    }
    // The MobiWfMS readers read elements by their local names.
    let mut bare = Element {
        name: "extensionElements".to_owned(),
        pos: el.pos(),
        attrs: Vec::new(),
        children: ours.iter().map(|c| renamed(c.raw, c.local)).collect(),
        text: String::new(),
        text_pos: None,
    };
    bare.children.sort_by_key(|c| c.pos);
    let label = task_el.label();
    let what = format!("<extensionElements> of {label}");
    ctx.check_content(&bare, &what, EXTENSIONS);
    let from_people = |e: &Element| matches!(e.name.as_str(), "role" | "department" | "team");
    if let Some(first) = bare.children.iter().find(|e| from_people(e)) {
        if task.people.assigned() {
            ctx.error(
                first.pos,
                format!(
                    "{label} names its group twice (candidateGroups or potentialOwner, and \
                     <mobiwf:{}>); keep one",
                    first.name
                ),
            );
        }
        task.people_pos.get_or_insert(first.pos);
    }
    // The groups named by the attribute or potentialOwner stay, with their basis unless
    // <mobiwf:assignment> says another.
    let named = std::mem::take(&mut task.people);
    let mut people = ctx.people(&bare, &label);
    if !people.assigned() {
        people.role = named.role;
        people.department = named.department;
        people.team = named.team;
        if bare.child(&["assignment"]).is_none() {
            people.basis = named.basis;
        }
    }
    task.people = people;
    if let Some(c) = bare.child(&["command"]) {
        if task.kind == ActivityKind::Manual {
            ctx.error(
                c.pos,
                format!(
                    "{label}: a person does a user or manual task, so it runs no command; put \
                     the command on a service task, or remove it"
                ),
            );
        }
        if task.command.is_some() {
            ctx.error(
                c.pos,
                format!("{label} has a script and a <mobiwf:command>; keep one"),
            );
        }
        task.command = Some((ctx.leaf(c).to_owned(), c.value_pos()));
    }
    if let Some(c) = bare.child(&["compensation"]) {
        task.compensation = Some((ctx.leaf(c).to_owned(), c.value_pos()));
    }
    if let Some(r) = bare.child(&["retries"]) {
        task.retries = ctx.retries(r, &label);
    }
}

/// `el` and everything under it with the element renamed `local` (its children keep their
/// local names too, as our extensions' children are in no namespace or in ours).
fn renamed(el: &Element, local: &str) -> Element {
    let mut copy = el.clone();
    copy.name = local.to_owned();
    for child in &mut copy.children {
        if let Some((_, local)) = child.name.split_once(':') {
            child.name = local.to_owned();
        }
    }
    copy
}
