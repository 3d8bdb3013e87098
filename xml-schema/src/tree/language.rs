//! What each language's documents look like to the tree: the root the messages name, and the
//! limits of nesting and attributes, which BPMN's modelers need higher than MobiWfMS documents.

use crate::limits::{MAX_ATTRIBUTES, MAX_BPMN_ATTRIBUTES, MAX_BPMN_DEPTH, MAX_DEPTH};

/// What a language's documents look like from outside, for the messages of this module.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Language {
    /// The root element, as messages name it: `a <workflow> element`.
    pub root: &'static str,
    /// How a document of the language opens, e.g. `<workflow id="...">`.
    pub opening: &'static str,
    /// What the messages call a document of the language, e.g. `a MobiWfMS document`.
    pub document: &'static str,
    /// What the refusal of a DOCTYPE calls the language's documents, e.g. `MobiWfMS documents`.
    pub documents: &'static str,
    /// The deepest nesting accepted, its limit's name, and what the language needs.
    pub depth: Limit,
    /// The most attributes accepted on one element, and its limit's name.
    pub attributes: Limit,
    /// Whether an attribute value must be what element text may hold (no character the
    /// MobiWfMS XML cannot keep, at most `MAX_TEXT_BYTES`): BPMN's attribute values become
    /// element text of the MobiWfMS XML the controller stores for the definition. The
    /// MobiWfMS and organisation documents are stored as they were read, so their reading
    /// stays what it was for the documents stored before.
    pub text_like_attributes: bool,
}

/// A named limit of the tree, as its messages name it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limit {
    /// The limit.
    pub max: usize,
    /// Its constant's name in `limits.rs`, e.g. `MAX_DEPTH`.
    pub name: &'static str,
    /// What the language needs, said after the limit (may be empty).
    pub hint: &'static str,
}

/// The depth limit of the MobiWfMS languages.
const MOBIWF_DEPTH: Limit = Limit {
    max: MAX_DEPTH,
    name: "MAX_DEPTH",
    hint: "; the MobiWfMS languages need at most 6, more only for <and> and <or> nested in \
           <depends>",
};

/// The attribute limit of the MobiWfMS languages.
const MOBIWF_ATTRIBUTES: Limit = Limit {
    max: MAX_ATTRIBUTES,
    name: "MAX_ATTRIBUTES",
    hint: "",
};

/// The two workflow languages (definition and partition documents).
pub(crate) const WORKFLOW: Language = Language {
    root: "a <workflow> element",
    opening: "<workflow id=\"...\">",
    document: "a MobiWfMS document",
    documents: "MobiWfMS documents",
    depth: MOBIWF_DEPTH,
    attributes: MOBIWF_ATTRIBUTES,
    text_like_attributes: false,
};

/// The organisation document.
pub(crate) const ORGANISATION: Language = Language {
    root: "an <organisation> element",
    opening: "<organisation>",
    document: "an organisation document",
    documents: "MobiWfMS documents",
    depth: MOBIWF_DEPTH,
    attributes: MOBIWF_ATTRIBUTES,
    text_like_attributes: false,
};

/// The ordering document.
pub(crate) const ORDERINGS: Language = Language {
    root: "an <orderings> element",
    opening: "<orderings>",
    document: "an ordering document",
    documents: "MobiWfMS documents",
    depth: MOBIWF_DEPTH,
    attributes: MOBIWF_ATTRIBUTES,
    text_like_attributes: false,
};

/// The class document (task classes for the synchronization manager).
pub(crate) const CLASSES: Language = Language {
    root: "a <classes> element",
    opening: "<classes>",
    document: "a class document",
    documents: "MobiWfMS documents",
    depth: MOBIWF_DEPTH,
    attributes: MOBIWF_ATTRIBUTES,
    text_like_attributes: false,
};

/// A BPMN 2.0 document: its modelers write many namespace declarations on the root and nest
/// diagram interchange and their own extensions deeper than the MobiWfMS languages.
pub(crate) const BPMN: Language = Language {
    root: "a <definitions> element of the BPMN 2.0 model namespace",
    opening: "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">",
    document: "a BPMN document",
    documents: "BPMN documents",
    depth: Limit {
        max: MAX_BPMN_DEPTH,
        name: "MAX_BPMN_DEPTH",
        hint: "",
    },
    attributes: Limit {
        max: MAX_BPMN_ATTRIBUTES,
        name: "MAX_BPMN_ATTRIBUTES",
        hint: "",
    },
    text_like_attributes: true,
};
