//! Reads a workflow definition (Figure 9) from its element tree.

use super::{Ctx, check_root, many, one};
use crate::model::{
    Activity, ActivityId, ActivityType, ActivityTypeId, Partition, PartitionId, Partner, PartnerId,
    WorkflowDefinition, WorkflowId,
};
use crate::source_map::Node;
use crate::tree::Element;

const ROOT: &[super::Child] = &[
    one(&["description"]),
    one(&["activities"]),
    one(&["activityTypes"]),
    one(&["partitions"]),
    one(&["partners"]),
];
const ACTIVITY: &[super::Child] = &[
    one(&["nameActivity"]),
    one(&["descriptionActivity"]),
    one(&["activityTypeId"]),
    one(&["status"]),
    one(&["timeToWait"]),
    one(&["contingencyActivityId"]),
    one(&["timeOut"]),
    one(&["preconditions"]),
    one(&["kind"]),
    one(&["command"]),
];
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
            ctx.map
                .set(Node::ActivityType(activity_types.len()), el.pos);
            ctx.check_shape(
                el,
                &format!("<{}>", el.name),
                &[one(&["description"])],
                true,
            );
            activity_types.push(ActivityType {
                id: ActivityTypeId(ctx.id_attr(el, &el.name).unwrap_or(0)),
                description: el
                    .child(&["description"])
                    .map(|e| ctx.leaf(e).to_string())
                    .unwrap_or_default(),
            });
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

    Some(WorkflowDefinition {
        id: WorkflowId(id),
        description,
        activities,
        activity_types,
        partitions,
        partners,
    })
}

fn read_activity(ctx: &mut Ctx, el: &Element, index: usize) -> Activity {
    ctx.map.set(Node::Activity(index), el.pos);
    let id = ctx.id_attr(el, "activity");
    let owner = match id {
        Some(id) => format!("activity {id}"),
        None => "this activity".to_string(),
    };
    ctx.check_shape(el, &format!("<activity> ({owner})"), ACTIVITY, true);
    for child in &el.children {
        if let Some(name) = ACTIVITY
            .iter()
            .flat_map(|c| c.names)
            .find(|n| **n == child.name)
        {
            ctx.map.set(
                Node::ActivityField(index, name),
                child.text_pos.unwrap_or(child.pos),
            );
        }
    }
    let text = |ctx: &mut Ctx, name: &str| {
        el.child(&[name])
            .map(|e| ctx.leaf(e).to_string())
            .unwrap_or_default()
    };
    let name = text(ctx, "nameActivity");
    let description = text(ctx, "descriptionActivity");
    let activity_type = match el.child(&["activityTypeId"]) {
        Some(e) => ctx.id_text(e, &owner),
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
        ctx.check_shape(
            list,
            &format!("<preconditions> of {owner}"),
            &[many(&["preconditionId"])],
            false,
        );
        for pre in list.children_named(&["preconditionId"]) {
            if let Some(id) = ctx.id_text(pre, &owner) {
                ctx.map.set(
                    Node::Precondition(index, preconditions.len()),
                    pre.text_pos.unwrap_or(pre.pos),
                );
                preconditions.push(ActivityId(id));
            }
        }
    }
    Activity {
        id: ActivityId(id.unwrap_or(0)),
        name,
        description,
        activity_type: ActivityTypeId(activity_type.unwrap_or(0)),
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
        preconditions,
        kind: el
            .child(&["kind"])
            .and_then(|e| ctx.kind(e, &owner))
            .unwrap_or_default(),
        command: el.child(&["command"]).map(|e| ctx.leaf(e).to_string()),
    }
}

fn read_partition(ctx: &mut Ctx, el: &Element, index: usize) -> Partition {
    ctx.map.set(Node::Partition(index), el.pos);
    let id = ctx.id_attr(el, "partition");
    let owner = match id {
        Some(id) => format!("partition {id}"),
        None => "this partition".to_string(),
    };
    ctx.check_shape(el, &format!("<partition> ({owner})"), PARTITION, true);
    let partner = match el.child(&["partnerId"]) {
        Some(e) => {
            ctx.map.set(
                Node::PartitionField(index, "partnerId"),
                e.text_pos.unwrap_or(e.pos),
            );
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
                a.text_pos.unwrap_or(a.pos),
            );
            activities.push(ActivityId(id));
        }
    }
    Partition {
        id: PartitionId(id.unwrap_or(0)),
        name: el
            .child(&["name"])
            .map(|e| ctx.leaf(e).to_string())
            .unwrap_or_default(),
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
    let owner = match id {
        Some(id) => format!("partner {id}"),
        None => "this partner".to_string(),
    };
    ctx.check_shape(el, &format!("<partner> ({owner})"), PARTNER, true);
    let text = |ctx: &mut Ctx, name: &str| {
        el.child(&[name])
            .map(|e| ctx.leaf(e).to_string())
            .unwrap_or_default()
    };
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
                ctx.map.set(
                    Node::PartnerSkill(index, skills.len()),
                    s.text_pos.unwrap_or(s.pos),
                );
                skills.push(ActivityTypeId(id));
            }
        }
    }
    Partner {
        id: PartnerId(id.unwrap_or(0)),
        name: text(ctx, "name"),
        description: text(ctx, "description"),
        location: text(ctx, "ip"),
        skills,
    }
}
