//! Reads an ordering document from its element tree, recording where every ordering, pair and
//! attribute is, and reporting every problem of form (unknown elements and attributes, a
//! missing definition or task, a task named both ways, a bad id) at once. What the names
//! say (their form, repeats, limits) is `validate`'s.

use crate::model::{ActivityId, DefinitionName, OrderPair, Ordering, Orderings, Side, TaskRef};
use crate::org::check_attrs;
use crate::read::{Child, Ctx, abbreviate, many};
use crate::source_map::Node;
use crate::tree::{Attribute, Element};

const ROOT: &[Child] = &[many(&["ordering"])];
const ORDERING: &[Child] = &[many(&["order"])];
const ORDERING_ATTRS: &[&str] = &["first", "second"];
const ORDER_ATTRS: &[&str] = &["first", "firstId", "second", "secondId"];

/// Reads an ordering document; `None` only when the root is not `orderings`. Problems go to
/// `ctx`.
pub(crate) fn read_orderings(ctx: &mut Ctx, root: &Element) -> Option<Orderings> {
    if root.name != "orderings" {
        ctx.error(
            root.pos,
            format!(
                "the root element is <{}>; an ordering document starts with <orderings>",
                root.name
            ),
        );
        return None;
    }
    ctx.map.set(Node::Root, root.pos);
    check_attrs(ctx, root, "<orderings>", &[]);
    ctx.check_content(root, "<orderings>", ROOT);
    let orderings = root
        .children_named(&["ordering"])
        .enumerate()
        .map(|(i, el)| read_ordering(ctx, el, i))
        .collect();
    Some(Orderings { orderings })
}

fn read_ordering(ctx: &mut Ctx, el: &Element, i: usize) -> Ordering {
    ctx.map.set(Node::Ordering(i), el.pos);
    let mut names = [Side::First, Side::Second].map(|side| {
        let attr = attribute(el, side.word());
        if let Some(attr) = attr {
            ctx.map.set(Node::OrderingAttr(i, side.word()), attr.pos);
        }
        attr.map(|a| a.value.clone())
    });
    let what = match &names {
        [Some(first), Some(second)] => format!(
            "<ordering> of {} and {}",
            abbreviate(first),
            abbreviate(second)
        ),
        _ => format!("<ordering> number {}", i + 1),
    };
    check_attrs(ctx, el, &what, ORDERING_ATTRS);
    ctx.check_content(el, &what, ORDERING);
    for (side, name) in [Side::First, Side::Second].iter().zip(&names) {
        if name.is_none() {
            ctx.error(
                el.pos,
                format!(
                    "{what} has no {word} attribute; name the {word} definition as it is \
                     deployed, e.g. {word}=\"{example}\"",
                    word = side.word(),
                    example = example_definition(*side)
                ),
            );
        }
    }
    let pairs = el
        .children_named(&["order"])
        .enumerate()
        .filter_map(|(j, child)| read_pair(ctx, child, (i, j), &what))
        .collect();
    let [first, second] = names
        .each_mut()
        .map(|n| DefinitionName::new(n.take().unwrap_or_default()));
    Ordering {
        first,
        second,
        pairs,
    }
}

/// Pair `j` of ordering `i`, called `owner` in messages; `None` when a task is missing or
/// cannot be read.
fn read_pair(
    ctx: &mut Ctx,
    el: &Element,
    (i, j): (usize, usize),
    owner: &str,
) -> Option<OrderPair> {
    ctx.map.set(Node::Order(i, j), el.pos);
    let what = format!("<order> number {} of {owner}", j + 1);
    check_attrs(ctx, el, &what, ORDER_ATTRS);
    ctx.check_content(el, &what, &[]);
    let first = read_task(ctx, el, (i, j), Side::First, &what);
    let second = read_task(ctx, el, (i, j), Side::Second, &what);
    Some(OrderPair {
        first: first?,
        second: second?,
    })
}

/// The task on `side` of pair `(i, j)`: its name (`first="T11"`) or its id (`firstId="3"`),
/// exactly one of them.
fn read_task(
    ctx: &mut Ctx,
    el: &Element,
    (i, j): (usize, usize),
    side: Side,
    what: &str,
) -> Option<TaskRef> {
    let word = side.word();
    let id_word = id_attribute(side);
    let by_name = attribute(el, word);
    let by_id = attribute(el, id_word);
    match (by_name, by_id) {
        (Some(name), None) => {
            ctx.map.set(Node::OrderTask(i, j, word), name.pos);
            Some(TaskRef::Name(name.value.clone()))
        }
        (None, Some(id)) => {
            ctx.map.set(Node::OrderTask(i, j, word), id.pos);
            activity_id(ctx, id, what).map(TaskRef::Id)
        }
        (Some(_), Some(id)) => {
            ctx.error(
                id.pos,
                format!(
                    "{what} names its {word} task twice, by {word} and by {id_word}; keep one \
                     (the activity's name, or its id)"
                ),
            );
            None
        }
        (None, None) => {
            ctx.error(
                el.pos,
                format!(
                    "{what} names no {word} task; write {word}=\"{example}\" (the activity's \
                     name) or {id_word}=\"3\" (its id)",
                    example = example_task(side)
                ),
            );
            None
        }
    }
}

/// An activity id: a whole number, at least 1.
fn activity_id(ctx: &mut Ctx, attr: &Attribute, what: &str) -> Option<ActivityId> {
    let text = attr.value.trim();
    match text.parse::<u64>() {
        Ok(id) if id >= 1 => Some(ActivityId(id)),
        _ => {
            ctx.error(
                attr.pos,
                format!(
                    "{} of {what} is \"{}\"; an activity id is a whole number, 1 or more",
                    attr.name,
                    abbreviate(text)
                ),
            );
            None
        }
    }
}

fn attribute<'a>(el: &'a Element, name: &str) -> Option<&'a Attribute> {
    el.attrs.iter().find(|a| a.name == name)
}

/// `firstId` or `secondId`.
pub(crate) fn id_attribute(side: Side) -> &'static str {
    match side {
        Side::First => "firstId",
        Side::Second => "secondId",
    }
}

/// A definition name for messages to show.
fn example_definition(side: Side) -> &'static str {
    match side {
        Side::First => "maintenance",
        Side::Second => "billing",
    }
}

/// A task name for messages to show.
fn example_task(side: Side) -> &'static str {
    match side {
        Side::First => "Visit",
        Side::Second => "Invoice",
    }
}
