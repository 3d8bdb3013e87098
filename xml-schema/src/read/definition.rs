//! Reads a workflow definition (Figure 9) from its element tree.

use super::activity::HOW_DONE;
use super::{Ctx, check_root, many, one, owner, read_common_activity};
use crate::model::{
    Activity, ActivityId, ActivityType, ActivityTypeId, DefinitionName, Partition, PartitionId,
    Partner, PartnerId, RoleId, WorkflowDefinition, WorkflowId,
};
use crate::source_map::Node;
use crate::tree::Element;

const ROOT: &[super::Child] = &[
    one(&["description"]),
    one(&["name"]),
    one(&["creatorRole"]),
    one(&["activities"]),
    one(&["activityTypes"]),
    one(&["partitions"]),
    one(&["partners"]),
    one(&["data"]),
    one(&["applications"]),
];
const ACTIVITY: &[super::Child] = &super::joined::<30>(
    &[
        one(&["nameActivity"]),
        one(&["descriptionActivity"]),
        one(&["activityTypeId"]),
        one(&["status"]),
        one(&["timeToWait"]),
        one(&["contingencyActivityId"]),
        one(&["timeOut"]),
        one(&["preconditions"]),
        one(&["depends"]),
        one(&["merge"]),
        one(&["routes"]),
        one(&["completion"]),
        one(&["loop"]),
    ],
    HOW_DONE,
);
const ACTIVITY_TYPE_NAMES: &[&str] = &["activityType", "actitivityType"];
const PARTITION: &[super::Child] = &[
    one(&["name"]),
    one(&["partnerId"]),
    one(&["timeOut"]),
    many(&["activityId"]),
];
const PARTNER: &[super::Child] = &[
    one(&["name"]),
    one(&["description"]),
    one(&["ip"]),
    one(&["skills"]),
];

/// The definition's `<name>` `e`, checked as operators type it.
fn definition_name(ctx: &mut Ctx, e: &Element) -> DefinitionName {
    let text = ctx.leaf(e).trim().to_owned();
    if let Some(problem) = crate::model::definition_name_problem(&text) {
        ctx.error(e.pos, format!("<name>: {problem}"));
    }
    DefinitionName::new(text)
}

/// The definition's `<creatorRole>` `e`: a role id as the organisation document writes one.
fn creator_role(ctx: &mut Ctx, e: &Element) -> RoleId {
    let text = ctx.leaf(e).trim().to_owned();
    if text.is_empty() {
        ctx.error(
            e.pos,
            "<creatorRole> is empty; name the role whose members may start the workflow, or \
             leave the element out",
        );
    } else if let Some(problem) = crate::model::role_id_problem(&text) {
        ctx.error(e.value_pos(), format!("<creatorRole>: {problem}"));
    }
    RoleId::new(text)
}

/// Reads a definition; `None` only when the root is not `workflow`. Problems go to `ctx`.
pub(crate) fn read_definition(ctx: &mut Ctx, root: &Element) -> Option<WorkflowDefinition> {
    if !check_root(ctx, root) {
        return None;
    }
    ctx.check_shape(root, "<workflow>", ROOT, true);
    let id = ctx.id_attr(root, "workflow").unwrap_or(0);
    let description = root
        .child(&["description"])
        .map(|e| ctx.leaf(e).to_string())
        .unwrap_or_default();
    let name = root.child(&["name"]).map(|e| definition_name(ctx, e));
    let creator_role = root.child(&["creatorRole"]).map(|e| creator_role(ctx, e));

    let mut activities = Vec::new();
    if let Some(list) = root.child(&["activities"]) {
        ctx.check_shape(list, "<activities>", &[many(&["activity"])], false);
        for el in list.children_named(&["activity"]) {
            let index = activities.len();
            activities.push(read_activity(ctx, el, index));
        }
    } else {
        ctx.error(
            root.pos,
            "<workflow> has no <activities>; add <activities> with at least one <activity>",
        );
    }

    let mut activity_types = Vec::new();
    if let Some(list) = root.child(&["activityTypes"]) {
        ctx.check_shape(list, "<activityTypes>", &[many(ACTIVITY_TYPE_NAMES)], false);
        for el in list.children_named(ACTIVITY_TYPE_NAMES) {
            let index = activity_types.len();
            activity_types.push(read_activity_type(ctx, el, index));
        }
    }

    let mut partitions = Vec::new();
    if let Some(list) = root.child(&["partitions"]) {
        ctx.check_shape(list, "<partitions>", &[many(&["partition"])], false);
        for el in list.children_named(&["partition"]) {
            let index = partitions.len();
            partitions.push(read_partition(ctx, el, index));
        }
    }

    let mut partners = Vec::new();
    if let Some(list) = root.child(&["partners"]) {
        ctx.check_shape(list, "<partners>", &[many(&["partner"])], false);
        for el in list.children_named(&["partner"]) {
            let index = partners.len();
            partners.push(read_partner(ctx, el, index));
        }
    }

    let data = root
        .child(&["data"])
        .map(|e| ctx.data(e))
        .unwrap_or_default();
    let applications = root
        .child(&["applications"])
        .map(|e| ctx.applications(e))
        .unwrap_or_default();
    Some(WorkflowDefinition {
        id: WorkflowId(id),
        description,
        name,
        creator_role,
        activities,
        activity_types,
        partitions,
        partners,
        data,
        applications,
    })
}

fn read_activity_type(ctx: &mut Ctx, el: &Element, index: usize) -> ActivityType {
    ctx.map.set(Node::ActivityType(index), el.pos);
    ctx.check_shape(
        el,
        &format!("<{}>", el.name),
        &[one(&["description"])],
        true,
    );
    ActivityType {
        id: ActivityTypeId(ctx.id_attr(el, &el.name).unwrap_or(0)),
        description: el
            .child(&["description"])
            .map(|e| ctx.leaf(e).to_string())
            .unwrap_or_default(),
    }
}

fn read_activity(ctx: &mut Ctx, el: &Element, index: usize) -> Activity {
    let common = read_common_activity(ctx, el, index, ACTIVITY);
    let owner = &common.owner;
    let activity_type = match el.child(&["activityTypeId"]) {
        Some(e) => ctx.id_text(e, owner),
        None => {
            ctx.error(
                el.pos,
                format!(
                    "{owner} has no <activityTypeId>; add the id of its activity type, so that \
                     it can be given to a partner with that skill"
                ),
            );
            None
        }
    };
    let mut preconditions = Vec::new();
    if let Some(list) = el.child(&["preconditions"]) {
        let what = format!("<preconditions> of {owner}");
        ctx.check_shape(list, &what, &[many(&["preconditionId"])], false);
        for pre in list.children_named(&["preconditionId"]) {
            if let Some(id) = ctx.id_text(pre, owner) {
                let pos = pre.value_pos();
                ctx.map
                    .set(Node::Precondition(index, preconditions.len()), pos);
                preconditions.push(ActivityId(id));
            }
        }
    }
    Activity {
        id: common.id,
        name: common.name,
        description: common.description,
        activity_type: ActivityTypeId(activity_type.unwrap_or(0)),
        status: common.status,
        time_to_wait_secs: common.time_to_wait_secs,
        contingency: common.contingency,
        time_out_secs: common.time_out_secs,
        preconditions,
        depends: common.depends,
        merge: common.merge,
        routes: common.routes,
        completion: common.completion,
        loop_back: common.loop_back,
        kind: common.kind,
        command: common.command,
        compensation: common.compensation,
        retries: common.retries,
        class: common.class,
        application: el
            .child(&["application"])
            .and_then(|e| ctx.application_name(e, owner)),
        data: common.data,
        people: common.people,
    }
}

fn read_partition(ctx: &mut Ctx, el: &Element, index: usize) -> Partition {
    ctx.map.set(Node::Partition(index), el.pos);
    let id = ctx.id_attr(el, "partition");
    let owner = owner("partition", id);
    ctx.check_shape(el, &format!("<partition> ({owner})"), PARTITION, true);
    let partner = match el.child(&["partnerId"]) {
        Some(e) => {
            ctx.map
                .set(Node::PartitionField(index, "partnerId"), e.value_pos());
            ctx.id_text(e, &owner)
        }
        None => {
            ctx.error(
                el.pos,
                format!("{owner} has no <partnerId>; add the id of the partner that runs it"),
            );
            None
        }
    };
    let mut activities = Vec::new();
    for a in el.children_named(&["activityId"]) {
        if let Some(id) = ctx.id_text(a, &owner) {
            ctx.map.set(
                Node::PartitionActivity(index, activities.len()),
                a.value_pos(),
            );
            activities.push(ActivityId(id));
        }
    }
    Partition {
        id: PartitionId(id.unwrap_or(0)),
        name: ctx.text_of(el, "name"),
        partner: PartnerId(partner.unwrap_or(0)),
        time_out_secs: el
            .child(&["timeOut"])
            .and_then(|e| ctx.secs(e, &owner))
            .unwrap_or(0),
        activities,
    }
}

fn read_partner(ctx: &mut Ctx, el: &Element, index: usize) -> Partner {
    ctx.map.set(Node::Partner(index), el.pos);
    let id = ctx.id_attr(el, "partner");
    let owner = owner("partner", id);
    ctx.check_shape(el, &format!("<partner> ({owner})"), PARTNER, true);
    let mut skills = Vec::new();
    if let Some(list) = el.child(&["skills"]) {
        ctx.check_shape(
            list,
            &format!("<skills> of {owner}"),
            &[many(&["activityTypeId"])],
            false,
        );
        for s in list.children_named(&["activityTypeId"]) {
            if let Some(id) = ctx.id_text(s, &owner) {
                ctx.map
                    .set(Node::PartnerSkill(index, skills.len()), s.value_pos());
                skills.push(ActivityTypeId(id));
            }
        }
    }
    Partner {
        id: PartnerId(id.unwrap_or(0)),
        name: ctx.text_of(el, "name"),
        description: ctx.text_of(el, "description"),
        location: ctx.text_of(el, "ip"),
        skills,
    }
}
