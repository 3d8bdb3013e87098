//! Checks the instance-data extensions, apart from the other checks because they look at the
//! document's `<data>` from every activity: each declaration has a good name, declared once,
//! and at most [`MAX_DATA_ITEMS`] of them; every name an activity reads or writes (in a
//! partition document, every name an adjacent carries) is declared, and listed once; a dummy
//! uses no data; and, in a definition, every read has a write before it (through preconditions
//! and `<depends>` rules; a contingency activity, before the activity it stands in for).

use std::collections::{HashMap, HashSet};

use crate::diagnostic::{Diagnostic, Pos};
use crate::flow::{Flow, StandIns};
use crate::limits::{MAX_DATA_ITEMS, MAX_DEFAULT_BYTES, MAX_DEFAULTS_BYTES};
use crate::model::{
    ActivityId, ActivityKind, DataAccess, DataItem, Input, WorkflowDefinition, data_name_problem,
};
use crate::read::suggest;
use crate::source_map::{Node, SourceMap};

/// The first known position among `nodes`, else unknown (a model built in code).
fn first_pos(map: &SourceMap, nodes: &[Node]) -> Pos {
    nodes
        .iter()
        .map(|n| map.pos(*n))
        .find(|p| p.is_known())
        .unwrap_or(Pos::UNKNOWN)
}

/// Reports the problems of the declarations `items` (a document's `<data>`): names that are
/// not data names, names declared twice, more than [`MAX_DATA_ITEMS`] of them, defaults longer
/// than an instance's values may be.
pub(super) fn check_declarations(diags: &mut Vec<Diagnostic>, map: &SourceMap, items: &[DataItem]) {
    check_defaults(diags, map, items);
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (k, item) in items.iter().enumerate() {
        crate::work::count(1);
        let at = first_pos(
            map,
            &[Node::DataItemAttr(k, "name"), Node::DataItem(k), Node::Data],
        );
        if let Some(problem) = data_name_problem(&item.name) {
            diags.push(Diagnostic::new(
                at,
                format!(
                    "{problem}; rename this declaration in <data>, and the activities that use it"
                ),
            ));
        } else if let Some(&earlier) = first.get(item.name.as_str()) {
            let where_ =
                match map.pos_or(Node::DataItemAttr(earlier, "name"), Node::DataItem(earlier)) {
                    p if p.is_known() => format!(" (first at {p})"),
                    _ => String::new(),
                };
            diags.push(Diagnostic::new(
                at,
                format!(
                    "`{}` is declared twice in <data>{where_}; declare each name once, as a \
                     <value> or a <file>",
                    item.name
                ),
            ));
        } else {
            first.insert(item.name.as_str(), k);
        }
    }
    if items.len() > MAX_DATA_ITEMS {
        diags.push(Diagnostic::new(
            first_pos(map, &[Node::Data, Node::Root]),
            format!(
                "<data> declares {} names, over the limit of {MAX_DATA_ITEMS} (MAX_DATA_ITEMS); \
                 declare fewer, e.g. keep values that travel together in one <file>",
                items.len()
            ),
        ));
    }
}

/// Reports defaults over [`MAX_DEFAULT_BYTES`] each or [`MAX_DEFAULTS_BYTES`] together: the
/// nodes refuse such values, so every start of the definition would fail.
fn check_defaults(diags: &mut Vec<Diagnostic>, map: &SourceMap, items: &[DataItem]) {
    let mut total = 0usize;
    for (k, item) in items.iter().enumerate() {
        let Input::Default(value) = &item.input else {
            continue;
        };
        total = total.saturating_add(value.len());
        if value.len() > MAX_DEFAULT_BYTES {
            diags.push(Diagnostic::new(
                first_pos(
                    map,
                    &[
                        Node::DataItemAttr(k, "default"),
                        Node::DataItem(k),
                        Node::Data,
                    ],
                ),
                format!(
                    "the default of `{}` is {} bytes, over the limit of {MAX_DEFAULT_BYTES} \
                     bytes for a value (MAX_DEFAULT_BYTES); shorten it, or make `{}` a <file>",
                    item.name,
                    value.len(),
                    item.name
                ),
            ));
        }
    }
    if total > MAX_DEFAULTS_BYTES {
        diags.push(Diagnostic::new(
            first_pos(map, &[Node::Data, Node::Root]),
            format!(
                "the defaults in <data> are {total} bytes together, over the limit of \
                 {MAX_DEFAULTS_BYTES} bytes of values for one instance (MAX_DEFAULTS_BYTES); \
                 shorten them, or keep long text in <file>s"
            ),
        ));
    }
}

/// The names a document declares, which its lists must name: built once per document.
pub(super) struct Declared<'a> {
    names: HashSet<&'a str>,
    /// The names, in declaration order, to suggest from (none when there are more than
    /// [`MAX_DATA_ITEMS`]: that is refused anyway, and would make suggesting slow).
    suggestions: Vec<&'a str>,
    /// Whether the document is a partition document (its own `<data>`), for messages.
    partition: bool,
}

impl<'a> Declared<'a> {
    /// The names `items` declare; `partition` for a partition document.
    pub(super) fn new(items: &'a [DataItem], partition: bool) -> Self {
        let names: HashSet<&str> = items.iter().map(|d| d.name.as_str()).collect();
        let suggestions = if items.len() <= MAX_DATA_ITEMS {
            items.iter().map(|d| d.name.as_str()).collect()
        } else {
            Vec::new()
        };
        Declared {
            names,
            suggestions,
            partition,
        }
    }
}

/// One list of names to check: who uses them and how (`activity 3 reads`), where the list and
/// each name are, and the names.
pub(super) struct List<'a> {
    /// How messages say the use: `activity 3 reads`, `adjacent 4 of activity 3 carries`.
    pub says: String,
    /// The element, for messages: `reads`, `writes` or `carries`.
    pub element: &'static str,
    /// Where the list is (a fallback for its names).
    pub at: Node,
    /// Where name `k` is.
    pub name: &'a dyn Fn(usize) -> Node,
    pub names: &'a [String],
    /// The activity's node, the last fallback.
    pub activity: Node,
}

/// Reports each name of `list` that is listed twice in it, or not `declared`.
pub(super) fn check_list(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    declared: &Declared<'_>,
    list: &List<'_>,
) {
    let mut seen: HashSet<&str> = HashSet::with_capacity(list.names.len());
    for (k, name) in list.names.iter().enumerate() {
        crate::work::count(1);
        let pos = first_pos(map, &[(list.name)(k), list.at, list.activity]);
        if !seen.insert(name.as_str()) {
            diags.push(Diagnostic::new(
                pos,
                format!(
                    "{} `{name}` twice; list each name once in <{}>",
                    list.says, list.element
                ),
            ));
        } else if !declared.names.contains(name.as_str()) {
            diags.push(Diagnostic::new(pos, undeclared(&list.says, name, declared)));
        }
    }
}

/// The message for `name`, used (`says`: `activity 3 reads`) but not `declared`.
fn undeclared(says: &str, name: &str, declared: &Declared<'_>) -> String {
    let data = if declared.partition {
        "this document's <data>"
    } else {
        "<data>"
    };
    let hint = suggest(name, &declared.suggestions)
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default();
    format!(
        "{says} `{name}`, which {data} does not declare{hint}; declare it there, e.g. <value \
         name=\"{name}\" type=\"string\"/> or <file name=\"{name}\"/>, or fix the name",
    )
}

/// Reports the `<reads>` and `<writes>` of activity `id` of `kind` (the `i`th of its
/// document): each name `declared` and listed once; none on a dummy.
pub(super) fn check_access(
    diags: &mut Vec<Diagnostic>,
    map: &SourceMap,
    declared: &Declared<'_>,
    i: usize,
    id: ActivityId,
    kind: ActivityKind,
    access: &DataAccess,
) {
    let read_name = |k| Node::ReadName(i, k);
    let write_name = |k| Node::WriteName(i, k);
    let lists = [
        (
            "reads",
            Node::Reads(i),
            &read_name as &dyn Fn(usize) -> Node,
            &access.reads,
        ),
        ("writes", Node::Writes(i), &write_name, &access.writes),
    ];
    for (element, at, name, names) in lists {
        if kind == ActivityKind::Dummy && !names.is_empty() {
            diags.push(Diagnostic::new(
                first_pos(map, &[at, Node::Activity(i)]),
                format!(
                    "activity {id} is a dummy and has <{element}>: a dummy activity passes at \
                     once and uses no data; remove <{element}>, or make the activity \
                     <kind>automatic</kind>"
                ),
            ));
            continue;
        }
        let list = List {
            says: format!("activity {id} {element}"),
            element,
            at,
            name,
            names,
            activity: Node::Activity(i),
        };
        check_list(diags, map, declared, &list);
    }
}

/// Reports each read of a definition's activity that no activity before it writes (through
/// preconditions and `<depends>` rules). A contingency activity runs in place of a failed
/// activity, so before it means before that activity (each one it may stand in for, a stand-in
/// for a stand-in looked through to the activity in the graph). Activities on
/// or after a cycle are left out (the cycle is reported), and so are names not declared; with
/// more than [`MAX_DATA_ITEMS`] declarations (refused) nothing is checked.
pub(super) fn check_reads_before(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    map: &SourceMap,
) {
    if def.activities.iter().all(|a| a.data.reads.is_empty()) || def.data.len() > MAX_DATA_ITEMS {
        return;
    }
    let flow = Flow::new(def);
    let stand_ins = StandIns::new(def, &flow);
    let contingencies = def.contingency_activities();
    for (i, a) in def.activities.iter().enumerate() {
        crate::work::count(1);
        if a.data.reads.is_empty() || flow.index(a.id) != Some(i) || !flow.is_ordered(i) {
            continue;
        }
        let failed = if contingencies.contains(&a.id) {
            stand_ins.failed(a.id)
        } else {
            Vec::new()
        };
        let mut contexts: Vec<Option<usize>> = failed.iter().copied().map(Some).collect();
        if failed.is_empty() || flow.has_predecessors(i) {
            contexts.insert(0, None);
        }
        for context in contexts {
            if context.is_some_and(|f| !flow.is_ordered(f)) {
                continue;
            }
            check_reads_in(diags, def, map, &flow, i, context);
        }
    }
}

/// Reports each read of activity `i` that nothing writes before it, or, with `failed`, before
/// it or before the `failed`th activity it stands in for.
fn check_reads_in(
    diags: &mut Vec<Diagnostic>,
    def: &WorkflowDefinition,
    map: &SourceMap,
    flow: &Flow<'_>,
    i: usize,
    failed: Option<usize>,
) {
    let Some(a) = def.activities.get(i) else {
        return;
    };
    let mut before = flow.before(i);
    if let Some(f) = failed {
        before.add(&flow.before(f));
    }
    let failed = failed.and_then(|f| def.activities.get(f)).map(|f| f.id);
    let mut seen: HashSet<&str> = HashSet::new();
    for (k, name) in a.data.reads.iter().enumerate() {
        crate::work::count(1);
        let Some(bit) = flow.bit(name) else { continue };
        let input = def
            .data
            .iter()
            .any(|d| d.name == *name && d.input.is_input());
        if input || before.contains(bit) || !seen.insert(name.as_str()) {
            continue;
        }
        let pos = first_pos(
            map,
            &[Node::ReadName(i, k), Node::Reads(i), Node::Activity(i)],
        );
        let message = match failed {
            Some(f) => format!(
                "activity {} reads `{name}`, but no activity before activity {f}, which it stands \
                 in for, writes it (through preconditions and <depends> rules): add `{name}` to \
                 the <writes> of one of them",
                a.id
            ),
            None if flow.has_predecessors(i) => format!(
                "activity {} reads `{name}`, but no activity before it writes it (through \
                 preconditions and <depends> rules): add `{name}` to the <writes> of one of them, \
                 or make it an input given at start (input=\"true\" on its <value>)",
                a.id
            ),
            None => format!(
                "activity {} reads `{name}`, but no activity comes before it (it has no \
                 preconditions and no <depends> rule), so nothing can have written it: make it \
                 wait for an activity that writes `{name}`, make it an input given at start \
                 (input=\"true\" on its <value>), or remove `{name}` from its <reads>",
                a.id
            ),
        };
        diags.push(Diagnostic::new(pos, message));
    }
}
