//! The part of an `activity` that workflow definitions and partition documents share: its
//! id, shape, field positions and the fields of [`CommonActivity`]. Apart from the reading
//! context because it is a part of a document, read by both languages' readers.

use super::{Child, Ctx, one, owner};
use crate::model::{ActivityId, ActivityKind, Contingency, Merge, Retries, Route, Status};
use crate::source_map::Node;
use crate::tree::Element;

/// The children that say how an activity is done, last in an activity of either language and
/// the same in both: its kind and commands, its retries, the data it reads and writes, and who
/// does it.
pub(crate) const HOW_DONE: &[Child] = &[
    one(&["kind"]),
    one(&["command"]),
    one(&["compensation"]),
    one(&["retries"]),
    one(&["class"]),
    one(&["application"]),
    one(&["reads"]),
    one(&["writes"]),
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

/// The fields an `activity` has in both languages.
pub(crate) struct CommonActivity {
    pub id: ActivityId,
    /// How messages name the activity (`activity 17`).
    pub owner: String,
    pub name: String,
    pub description: String,
    pub status: Status,
    pub time_to_wait_secs: u32,
    pub contingency: Contingency,
    pub time_out_secs: u32,
    pub kind: ActivityKind,
    pub command: Option<String>,
    pub compensation: Option<String>,
    pub retries: Retries,
    pub class: Option<crate::model::ClassName>,
    pub data: crate::model::DataAccess,
    pub depends: Option<crate::model::Rule>,
    pub merge: Merge,
    pub routes: Vec<Route>,
    pub completion: bool,
    pub loop_back: Option<crate::model::Loop>,
    pub people: crate::model::People,
}

/// Reads the shared part of `activity[index]`: its id, shape (`spec` lists the children this
/// language allows), field positions, and the fields of [`CommonActivity`].
pub(crate) fn read_common_activity(
    ctx: &mut Ctx,
    el: &Element,
    index: usize,
    spec: &[Child],
) -> CommonActivity {
    ctx.map.set(Node::Activity(index), el.pos);
    let id = ctx.id_attr(el, "activity");
    let owner = owner("activity", id);
    ctx.check_shape(el, &format!("<activity> ({owner})"), spec, true);
    map_fields(ctx, el, index, spec);
    CommonActivity {
        id: ActivityId(id.unwrap_or(0)),
        name: ctx.text_of(el, "nameActivity"),
        description: ctx.text_of(el, "descriptionActivity"),
        status: el
            .child(&["status"])
            .and_then(|e| ctx.status(e, &owner))
            .unwrap_or_default(),
        time_to_wait_secs: el
            .child(&["timeToWait"])
            .and_then(|e| ctx.secs(e, &owner))
            .unwrap_or(0),
        contingency: el
            .child(&["contingencyActivityId"])
            .and_then(|e| ctx.contingency(e, &owner))
            .unwrap_or_default(),
        time_out_secs: el
            .child(&["timeOut"])
            .and_then(|e| ctx.secs(e, &owner))
            .unwrap_or(0),
        kind: el
            .child(&["kind"])
            .and_then(|e| ctx.kind(e, &owner))
            .unwrap_or_default(),
        command: el.child(&["command"]).map(|e| ctx.leaf(e).to_string()),
        compensation: el.child(&["compensation"]).map(|e| ctx.leaf(e).to_string()),
        retries: el
            .child(&["retries"])
            .map(|e| ctx.retries(e, &owner))
            .unwrap_or_default(),
        class: el.child(&["class"]).and_then(|e| class(ctx, e, &owner)),
        data: ctx.data_access(el, index, &owner),
        depends: el
            .child(&["depends"])
            .and_then(|e| ctx.depends(e, index, &owner)),
        merge: el
            .child(&["merge"])
            .and_then(|e| ctx.merge(e, index, &owner))
            .unwrap_or_default(),
        routes: el
            .child(&["routes"])
            .map(|e| ctx.routes(e, index, &owner))
            .unwrap_or_default(),
        completion: el
            .child(&["completion"])
            .and_then(|e| ctx.completion(e, &owner))
            .unwrap_or(false),
        loop_back: el
            .child(&["loop"])
            .and_then(|e| ctx.loop_back(e, index, &owner)),
        people: ctx.people(el, &owner),
        owner,
    }
}

/// The activity's `<class>`: a class name, or an error where it is not one.
fn class(ctx: &mut Ctx, e: &Element, owner: &str) -> Option<crate::model::ClassName> {
    let text = ctx.leaf(e).trim().to_owned();
    match crate::model::class_name_problem(&text) {
        None => Some(crate::model::ClassName::new(text)),
        Some(problem) => {
            ctx.error(e.value_pos(), format!("<class> of {owner}: {problem}"));
            None
        }
    }
}

/// Records where each field of `activity[index]` that `spec` knows is, for the diagnostics of
/// `validate` (which sees the model, not the tree).
fn map_fields(ctx: &mut Ctx, el: &Element, index: usize, spec: &[Child]) {
    for child in &el.children {
        if let Some(name) = spec
            .iter()
            .flat_map(|c| c.names)
            .find(|n| **n == child.name)
        {
            let pos = child.value_pos();
            ctx.map.set(Node::ActivityField(index, name), pos);
        }
    }
}
