//! Reads a partition document (Figure 10) from its element tree.
//!
//! Accepts the published variants: activities directly under `workflow` (Quadro 2 has no
//! `activities` wrapper), `connectDelay` for a precondition's `timeOut`, and `Id` for `id`.

use super::activity::HOW_DONE;
use super::{Ctx, check_root, many, one, read_common_activity};
use crate::model::{
    ActivityId, Adjacent, PartitionActivity, PartitionDocument, Precondition, WorkflowId,
};
use crate::source_map::Node;
use crate::tree::Element;

const ROOT: &[super::Child] = &[
    one(&["startTime"]),
    one(&["activities"]),
    many(&["activity"]),
    one(&["data"]),
];
const ACTIVITY: &[super::Child] = &super::joined::<32>(
    &[
        one(&["nameActivity"]),
        one(&["descriptionActivity"]),
        one(&["status"]),
        one(&["responseImmediate"]),
        one(&["timeToWait"]),
        one(&["contingencyActivityId"]),
        one(&["preconditions"]),
        one(&["depends"]),
        one(&["merge"]),
        one(&["routes"]),
        one(&["completion"]),
        one(&["loop"]),
        one(&["adjacents"]),
        one(&["timeOut"]),
        one(&["ordered"]),
    ],
    HOW_DONE,
);
const TIME_OUT: &[&str] = &["timeOut", "connectDelay"];
const PRECONDITION: &[super::Child] = &[one(&["status"]), one(&["local"]), one(TIME_OUT)];
const ADJACENT: &[super::Child] = &[one(&["ip"]), one(&["states"]), one(&["carries"])];

/// Reads a partition document; `None` only when the root is not `workflow`.
pub(crate) fn read_partition(ctx: &mut Ctx, root: &Element) -> Option<PartitionDocument> {
    if !check_root(ctx, root) {
        return None;
    }
    ctx.check_shape(root, "<workflow>", ROOT, true);
    let id = ctx.id_attr(root, "workflow").unwrap_or(0);
    let start_time = root.child(&["startTime"]).map(|e| ctx.leaf(e).to_string());
    let wrapped = root.child(&["activities"]);
    if let (Some(list), Some(direct)) = (wrapped, root.child(&["activity"])) {
        ctx.error(
            direct.pos,
            format!(
                "<activity> stands directly under <workflow> although <activities> (at {}) \
                 holds the others; put every <activity> inside <activities>",
                list.pos
            ),
        );
    }
    let list = wrapped.unwrap_or(root);
    if let Some(list) = wrapped {
        ctx.check_shape(list, "<activities>", &[many(&["activity"])], false);
    }
    let mut activities = Vec::new();
    for el in list.children_named(&["activity"]) {
        let index = activities.len();
        activities.push(read_activity(ctx, el, index));
    }
    // A node holds the documents of its idle runs for as long as they wait: no spare room.
    activities.shrink_to_fit();
    let data = root
        .child(&["data"])
        .map(|e| ctx.data(e))
        .unwrap_or_default();
    Some(PartitionDocument {
        workflow_id: WorkflowId(id),
        start_time,
        activities,
        data,
    })
}

/// Reads activity `el`, the `index`th of the document.
fn read_activity(ctx: &mut Ctx, el: &Element, index: usize) -> PartitionActivity {
    let common = read_common_activity(ctx, el, index, ACTIVITY);
    let owner = &common.owner;
    let preconditions = read_preconditions(ctx, el, index, owner);
    let adjacents = read_adjacents(ctx, el, index, owner);
    PartitionActivity {
        id: common.id,
        name: common.name,
        description: common.description,
        status: common.status,
        response_immediate: el
            .child(&["responseImmediate"])
            .and_then(|e| ctx.flag(e, owner, "tell the controller at once"))
            .unwrap_or(false),
        time_to_wait_secs: common.time_to_wait_secs,
        contingency: common.contingency,
        preconditions,
        adjacents,
        depends: common.depends,
        merge: common.merge,
        routes: common.routes,
        completion: common.completion,
        loop_back: common.loop_back,
        time_out_secs: common.time_out_secs,
        kind: common.kind,
        command: common.command,
        compensation: common.compensation,
        retries: common.retries,
        class: common.class,
        application: el
            .child(&["application"])
            .and_then(|e| ctx.application(e, &common.owner)),
        ordered: el
            .child(&["ordered"])
            .and_then(|e| ctx.flag(e, owner, "ask the controller for its relative order"))
            .unwrap_or(false),
        data: common.data,
        people: common.people,
    }
}

/// Reads the `<preconditions>` of activity `el` (the `index`th), skipping those with no id.
fn read_preconditions(ctx: &mut Ctx, el: &Element, index: usize, owner: &str) -> Vec<Precondition> {
    let mut preconditions = Vec::new();
    let Some(list) = el.child(&["preconditions"]) else {
        return preconditions;
    };
    let what = format!("<preconditions> of {owner}");
    ctx.check_shape(list, &what, &[many(&["precondition"])], false);
    for pre in list.children_named(&["precondition"]) {
        let Some(pre_id) = ctx.id_attr(pre, "precondition") else {
            continue;
        };
        let j = preconditions.len();
        preconditions.push(read_precondition(ctx, pre, pre_id, index, j, owner));
    }
    preconditions.shrink_to_fit();
    preconditions
}

/// Reads precondition `pre`, the `j`th, mapping it and its `local` for the validator.
fn read_precondition(
    ctx: &mut Ctx,
    pre: &Element,
    pre_id: u64,
    index: usize,
    j: usize,
    owner: &str,
) -> Precondition {
    let pre_owner = format!("precondition {pre_id} of {owner}");
    ctx.check_shape(
        pre,
        &format!("<precondition> ({pre_owner})"),
        PRECONDITION,
        true,
    );
    ctx.map.set(Node::Precondition(index, j), pre.pos);
    if let Some(local) = pre.child(&["local"]) {
        let pos = local.value_pos();
        ctx.map.set(Node::PreconditionField(index, j, "local"), pos);
    }
    Precondition {
        id: ActivityId(pre_id),
        status: pre
            .child(&["status"])
            .and_then(|e| ctx.status(e, &pre_owner))
            .unwrap_or_default(),
        local: pre
            .child(&["local"])
            .and_then(|e| ctx.flag(e, &pre_owner, "in this partition"))
            .unwrap_or(false),
        time_out_secs: pre
            .child(TIME_OUT)
            .and_then(|e| ctx.secs(e, &pre_owner))
            .unwrap_or(0),
    }
}

/// Reads the `<adjacents>` of activity `el` (the `index`th), skipping those with no id.
fn read_adjacents(ctx: &mut Ctx, el: &Element, index: usize, owner: &str) -> Vec<Adjacent> {
    let mut adjacents = Vec::new();
    let Some(list) = el.child(&["adjacents"]) else {
        return adjacents;
    };
    ctx.check_shape(
        list,
        &format!("<adjacents> of {owner}"),
        &[many(&["adjacent"])],
        false,
    );
    for adj in list.children_named(&["adjacent"]) {
        let Some(adj_id) = ctx.id_attr(adj, "adjacent") else {
            continue;
        };
        let adj_owner = format!("<adjacent> ({adj_id} of {owner})");
        ctx.check_shape(adj, &adj_owner, ADJACENT, true);
        let j = adjacents.len();
        ctx.map.set(Node::Adjacent(index, j), adj.pos);
        let states = adj.child(&["states"]).map(|e| {
            ctx.map.set(Node::AdjacentStates(index, j), e.value_pos());
            ctx.states(e, &format!("adjacent {adj_id} of {owner}"))
        });
        let carries = adj.child(&["carries"]).map(|e| {
            let what = format!("adjacent {adj_id} of {owner}");
            let at = Node::Carries(index, j);
            ctx.names(e, &what, at, |k| Node::CarriedName(index, j, k))
        });
        adjacents.push(Adjacent {
            id: ActivityId(adj_id),
            location: adj
                .child(&["ip"])
                .map(|e| ctx.leaf(e).to_string())
                .unwrap_or_default(),
            states: states.unwrap_or_default(),
            carries: carries.unwrap_or_default(),
        });
    }
    adjacents.shrink_to_fit();
    adjacents
}
