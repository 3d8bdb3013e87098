//! Reads a class document from its element tree, recording where every class, name and
//! number is, and reporting every problem of form (unknown elements and attributes, missing
//! ids, bad numbers) at once. Names and cross-references are `validate`'s.

use crate::model::{ClassDocument, ClassName, DEFAULT_MAX_WAIT_SECS, TaskClass};
use crate::read::{Child, Ctx, many, one, words};
use crate::source_map::Node;
use crate::tree::Element;

const ROOT: &[Child] = &[many(&["class"])];
const CLASS: &[Child] = &[one(&["conflicts"]), one(&["maxWait"])];

/// Reads a class document; `None` only when the root is not `classes`. Problems go to `ctx`.
pub(crate) fn read_classes(ctx: &mut Ctx, root: &Element) -> Option<ClassDocument> {
    if root.name != "classes" {
        ctx.error(
            root.pos,
            format!(
                "the root element is <{}>; a class document starts with <classes>",
                root.name
            ),
        );
        return None;
    }
    ctx.map.set(Node::Root, root.pos);
    ctx.check_shape(root, "<classes>", ROOT, false);
    let classes = root
        .children_named(&["class"])
        .enumerate()
        .map(|(i, el)| read_class(ctx, el, i))
        .collect();
    Some(ClassDocument { classes })
}

fn read_class(ctx: &mut Ctx, el: &Element, i: usize) -> TaskClass {
    ctx.map.set(Node::Class(i), el.pos);
    let id = el.attr(&["id"]);
    if let Some(attr) = el.attrs.iter().find(|a| a.name == "id") {
        ctx.map.set(Node::ClassId(i), attr.pos);
    }
    let owner = match id {
        Some(id) if !id.is_empty() => format!("class {id}"),
        _ => "this class".to_owned(),
    };
    if id.is_none() {
        ctx.error(
            el.pos,
            "<class> has no id attribute; add one that names the class, e.g. id=\"press\"",
        );
    }
    let what = format!("<class> ({owner})");
    ctx.check_shape(el, &what, CLASS, true);
    let conflicts = el
        .child(&["conflicts"])
        .map(|list| conflicts(ctx, list, &owner, i))
        .unwrap_or_default();
    let max_wait_secs = el
        .child(&["maxWait"])
        .and_then(|e| {
            ctx.map.set(Node::ClassField(i, "maxWait"), e.value_pos());
            ctx.secs(e, &owner)
        })
        .unwrap_or(DEFAULT_MAX_WAIT_SECS);
    TaskClass {
        id: ClassName::new(id.unwrap_or_default()),
        conflicts,
        max_wait_secs,
    }
}

/// The names of `<conflicts>` of class `i`, separated by white space, in document order,
/// repeats kept (`validate` reports them).
fn conflicts(ctx: &mut Ctx, list: &Element, owner: &str, i: usize) -> Vec<ClassName> {
    ctx.map
        .set(Node::ClassField(i, "conflicts"), list.value_pos());
    if let Some(child) = list.children.first() {
        ctx.error(
            child.pos,
            format!(
                "<conflicts> of {owner} holds <{}>; write the class names as text, separated \
                 by spaces, e.g. <conflicts>press drill</conflicts>",
                child.name
            ),
        );
    }
    words(&list.text, list.value_pos())
        .into_iter()
        .enumerate()
        .map(|(k, (word, pos))| {
            ctx.map.set(Node::ClassConflict(i, k), pos);
            ClassName::new(word)
        })
        .collect()
}
