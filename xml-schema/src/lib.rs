//! The MobiWfMS XML languages: a typed model of the workflow definition (*MobiWfMS*, "Linguagem de
//! workflow do MobiWfMS", §4.1, Figure 9) and of the partition document sent to partners (§4.2,
//! Figure 10), with a reader that reports every problem at once with line and column, a writer,
//! cross-reference validation, and the derivation of partition documents from a definition. The
//! organisation document (users, roles, departments, teams and their devices) is read, checked and
//! written the same way (`load_organisation`, `write_organisation`), and so is the ordering
//! document (`load_orderings_named`, in XML or PDL; `write_orderings`, `write_orderings_pdl`;
//! `resolve_orderings` against the deployed definitions).
//!
//! Instance data, an extension of both languages: a definition declares once, in `<data>`
//! after `<partners>`, the named values and files every instance of it has of its own
//! (`<value name="reading" type="number"/>`, `<value name="note" type="string"/>`,
//! `<file name="photo"/>`); an activity lists the names it reads and writes
//! (`<reads>reading photo</reads>`, `<writes>note</writes>`: its command finds and leaves each as
//! a file of that name in `MOBIWF_DATA_DIR`, a person sets them when completing it). Validation
//! refuses a name not declared or listed twice, data on a dummy, and a read that no activity
//! before the reader writes (through preconditions and `<depends>` rules). A derived partition
//! document declares in its own `<data>` (after `<activities>`) the names its activities use,
//! and each adjacent to another partition lists in `<carries>` the names the notification to
//! that partner takes along: those the successor, or an activity after it, reads that this
//! activity, or one before it, wrote ([`carried_names`]). Documents without data are read and
//! written exactly as before.
//!
//! Architecture invariant: this crate does no I/O. It reads from bytes it is given and
//! returns text; callers own files and sockets.
//!
//! ```
//! let src = br#"<workflow id="1"><activities>
//!   <activity id="1"><activityTypeId>1</activityTypeId></activity>
//! </activities><activityTypes><activityType id="1"/></activityTypes></workflow>"#;
//! let loaded = mobiwf_xml_schema::load_definition(src).expect("valid");
//! assert_eq!(loaded.value.activities.len(), 1);
//! ```

#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod bpmn;
mod classes;
mod decode;
mod derive;
mod diagnostic;
mod flow;
mod language;
pub mod limits;
mod model;
mod named;
mod ordering;
mod org;
mod pdl;
mod read;
mod source_map;
mod text;
mod tree;
mod validate;
mod work;
mod write;

pub use classes::{load_classes, validate_classes, write_classes};
pub use derive::{
    DeriveOptions, DerivedPartition, carried_names, derive_contingency, derive_partitions,
    loop_body,
};
pub use diagnostic::{Diagnostic, Diagnostics, Pos};
pub use language::{
    Language, load_definition_in, load_definition_named, load_new_definition_in,
    load_new_definition_named,
};
pub use model::*;
pub use named::{Checked, check_named};
pub use ordering::{
    ResolvedOrdering, load_orderings, load_orderings_in, load_orderings_named, resolve_orderings,
    task_id, validate_orderings, write_orderings,
};
pub use org::{load_organisation, validate_organisation, write_organisation};
pub use pdl::{read_pdl, write_orderings_pdl, write_pdl};
pub use source_map::{Node, SourceMap};
pub use validate::{validate_definition, validate_new_definition, validate_partition};
pub use write::{write_definition, write_partition};

use std::collections::HashSet;

use read::Ctx;
use tree::Element;

/// A document read and validated without problems, with where its parts came from.
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    /// The document.
    pub value: T,
    /// Positions of its parts in the text it was read from.
    pub source_map: SourceMap,
}

/// Which of the two languages a document is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// A workflow definition (Figure 9).
    Definition,
    /// A partition document (Figure 10).
    Partition,
    /// An organisation document (users, roles, departments, teams): its root is
    /// `organisation`.
    Organisation,
    /// An ordering document (the relative order of tasks between two definitions' instances):
    /// its root is `orderings`.
    Orderings,
    /// A class document (task classes for the synchronization manager): its root is
    /// `classes`.
    Classes,
}

/// Reads and validates a workflow definition; every problem when there is any.
pub fn load_definition(src: &[u8]) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    load(&parse(src)?, read::read_definition, validate_definition)
}

/// Reads and validates a partition document; every problem when there is any.
pub fn load_partition(src: &[u8]) -> Result<Loaded<PartitionDocument>, Diagnostics> {
    load(&parse(src)?, read::read_partition, validate_partition)
}

/// Reads a workflow definition's structure without cross-reference validation (unknown ids,
/// cycles and placement are not checked); problems of form are still reported.
pub fn read_definition(src: &[u8]) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    load(&parse(src)?, read::read_definition, no_validation)
}

/// Reads a partition document's structure without consistency validation.
pub fn read_partition(src: &[u8]) -> Result<Loaded<PartitionDocument>, Diagnostics> {
    load(&parse(src)?, read::read_partition, no_validation)
}

/// Which language `src` is written in: an organisation document has the root
/// `organisation`, an ordering document `orderings`, a class document `classes`; a partition
/// document has a `startTime`, activities directly under the root,
/// or activities with `responseImmediate`, `adjacents` or `precondition` elements; anything
/// else is read as a definition.
pub fn detect_kind(src: &[u8]) -> Result<DocumentKind, Diagnostics> {
    Ok(kind_of(&parse(src)?))
}

/// Every problem of a document of any of the four kinds (detected with [`detect_kind`]);
/// empty when the document is valid.
pub fn check(src: &[u8]) -> Diagnostics {
    let root = match parse(src) {
        Ok(root) => root,
        Err(diags) => return diags,
    };
    match kind_of(&root) {
        DocumentKind::Definition => {
            load(&root, read::read_definition, validate_new_definition).err()
        }
        DocumentKind::Partition => load(&root, read::read_partition, validate_partition).err(),
        // Parsed again with the organisation's own wording of the tree's problems.
        DocumentKind::Organisation => load_organisation(src).err(),
        DocumentKind::Orderings => load_orderings(src).err(),
        DocumentKind::Classes => load_classes(src).err(),
    }
    .unwrap_or_default()
}

fn parse(src: &[u8]) -> Result<Element, Diagnostics> {
    parse_as(src, tree::WORKFLOW)
}

/// Decodes `src` and parses it as a document of `language`.
pub(crate) fn parse_as(src: &[u8], language: tree::Language) -> Result<Element, Diagnostics> {
    let text = decode::decode(src).map_err(|d| Diagnostics(vec![d]))?;
    tree::parse(&text, language).map_err(|d| Diagnostics(vec![d]))
}

/// Reads a model from `root` with `read`, then checks it with `validate`.
pub(crate) fn load<T>(
    root: &Element,
    read: fn(&mut Ctx, &Element) -> Option<T>,
    validate: fn(&T, &SourceMap) -> Vec<Diagnostic>,
) -> Result<Loaded<T>, Diagnostics> {
    let mut ctx = Ctx::default();
    let value = read(&mut ctx, root);
    let Some(value) = value else {
        return Err(Diagnostics(ctx.diags));
    };
    settle(value, ctx.diags, ctx.map, validate)
}

/// Checks `value`, read from a text (any language) with the problems of form `diags` and the
/// places `map`, with `validate`: the document when nothing is wrong, else every problem.
pub(crate) fn settle<T>(
    value: T,
    mut diags: Vec<Diagnostic>,
    map: SourceMap,
    validate: fn(&T, &SourceMap) -> Vec<Diagnostic>,
) -> Result<Loaded<T>, Diagnostics> {
    // Cross-references are checked even when the form has problems, so one pass shows
    // everything. Where a value could not be read, the model holds a default; a
    // cross-reference problem at the very place of a form problem is that default echoing,
    // so it is left out.
    let form_problems: HashSet<Pos> = diags.iter().map(|d| d.pos).collect();
    let references = validate(&value, &map);
    diags.extend(
        references
            .into_iter()
            .filter(|d| !form_problems.contains(&d.pos)),
    );
    if diags.is_empty() {
        Ok(Loaded {
            value,
            source_map: map,
        })
    } else {
        Err(Diagnostics(diags))
    }
}

fn no_validation<T>(_: &T, _: &SourceMap) -> Vec<Diagnostic> {
    Vec::new()
}

fn kind_of(root: &Element) -> DocumentKind {
    if root.name == "organisation" {
        return DocumentKind::Organisation;
    }
    if root.name == "orderings" {
        return DocumentKind::Orderings;
    }
    if root.name == "classes" {
        return DocumentKind::Classes;
    }
    const PARTITION_ONLY: &[&str] = &["responseImmediate", "adjacents"];
    let partition_activity = |a: &Element| {
        a.children
            .iter()
            .any(|c| PARTITION_ONLY.contains(&c.name.as_str()))
            || a.child(&["preconditions"])
                .is_some_and(|p| p.child(&["precondition"]).is_some())
    };
    let is_partition = root.child(&["startTime", "activity"]).is_some()
        || root
            .child(&["activities"])
            .is_some_and(|list| list.children_named(&["activity"]).any(partition_activity));
    if is_partition {
        DocumentKind::Partition
    } else {
        DocumentKind::Definition
    }
}
