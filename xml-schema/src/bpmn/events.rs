//! The events the import reads: none start and end events, and interrupting boundary timer
//! events with a duration (a task's time limit, whose outgoing flow leads to its contingency
//! task).

use super::graph::Kind;
use super::refused::{refusal, refusal_in};
use super::values::duration_secs;
use super::xml::{El, Ns};
use crate::diagnostic::Diagnostic;
use crate::read::Ctx;

/// Children every event may have without changing what it does.
const PLAIN: &[&str] = &["incoming", "outgoing", "documentation", "extensionElements"];

/// A start event: true when it is a none start event (no trigger).
pub(crate) fn start(ctx: &mut Ctx, el: &El<'_>) -> bool {
    plain(ctx, el)
}

/// An end event: true when it is a none end event (no result).
pub(crate) fn end(ctx: &mut Ctx, el: &El<'_>) -> bool {
    plain(ctx, el)
}

/// Refuses every child of `el` that is not [`PLAIN`] (a trigger or a result); true when
/// there is none.
fn plain(ctx: &mut Ctx, el: &El<'_>) -> bool {
    let before = ctx.diags.len();
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        if !PLAIN.contains(&child.local) {
            ctx.diags.push(refusal_in(el, child));
        }
    }
    ctx.diags.len() == before
}

/// A boundary event: an interrupting timer with a `timeDuration` becomes its task's time
/// limit; any other is refused.
pub(crate) fn boundary(ctx: &mut Ctx, el: &El<'_>) -> Option<Kind> {
    let label = el.label();
    let Some(attached) = el.attr("attachedToRef").filter(|a| !a.is_empty()) else {
        ctx.error(
            el.pos(),
            format!("{label} has no attachedToRef: say which task it is attached to"),
        );
        return None;
    };
    if el.attr("cancelActivity") == Some("false") {
        ctx.error(
            el.attr_pos("cancelActivity"),
            format!(
                "{label} does not interrupt its task (cancelActivity=\"false\"): only \
                 interrupting boundary timers are imported, as the task's time limit; remove \
                 cancelActivity=\"false\""
            ),
        );
        return None;
    }
    let before = ctx.diags.len();
    let mut secs = None;
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        match child.local {
            "timerEventDefinition" if secs.is_none() => secs = timer(ctx, child),
            local if PLAIN.contains(&local) => {}
            _ => {
                ctx.diags.push(refusal_in(el, child));
                return None;
            }
        }
    }
    let Some(secs) = secs else {
        if ctx.diags.len() == before {
            ctx.error(
                el.pos(),
                format!(
                    "{label} has no timer: only boundary timer events are imported; give it a \
                     <timerEventDefinition> with a <timeDuration>, or remove it"
                ),
            );
        }
        return None;
    };
    Some(Kind::Timer {
        attached: (attached.to_owned(), el.attr_pos("attachedToRef")),
        secs,
    })
}

/// The seconds of a `timerEventDefinition`'s `timeDuration`.
fn timer(ctx: &mut Ctx, el: &El<'_>) -> Option<u32> {
    let mut secs = None;
    for child in el.children.iter().filter(|c| c.ns == Ns::Bpmn) {
        match child.local {
            "timeDuration" => match duration_secs(&child.raw.text) {
                Ok(s) => secs = Some(s),
                Err(problem) => ctx
                    .diags
                    .push(Diagnostic::new(child.raw.value_pos(), problem)),
            },
            "timeDate" | "timeCycle" => ctx.error(
                child.pos(),
                format!(
                    "{}: only a duration is imported, as the task's time limit (a date or a \
                     cycle is not); write <timeDuration>PT5M</timeDuration>",
                    child.label()
                ),
            ),
            "documentation" | "extensionElements" => {}
            _ => ctx.diags.push(refusal(child)),
        }
    }
    if secs.is_none() && !el.children.iter().any(|c| c.ns == Ns::Bpmn) {
        ctx.error(
            el.pos(),
            format!(
                "{} says no time: give it a <timeDuration>, e.g. PT5M",
                el.label()
            ),
        );
    }
    secs
}
