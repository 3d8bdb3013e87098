//! What `validate` reads: a document of any kind in any of its languages, told by its file's
//! name and content, and checked on its own: a workflow definition (MobiWfMS XML, PDL or
//! BPMN), a partition document, an organisation document, a class document (XML) and an
//! ordering document (XML, or a PDL ordering text: `WORKFLOW_DEFINITIONS` and
//! `RELATIVE_ORDER`). What only a controller holds is not looked at here: the deployed
//! definitions whose names and tasks an ordering names, the running instances whose classes a
//! class document must keep.

use crate::language::Language;
use crate::{Diagnostics, DocumentKind};

/// A document checked on its own.
#[derive(Debug, Clone)]
pub struct Checked {
    /// What it is.
    pub kind: DocumentKind,
    /// The language it was read in.
    pub language: Language,
    /// Every problem, each where it is written; empty when it is valid.
    pub problems: Diagnostics,
}

impl DocumentKind {
    /// What people call it: `workflow definition`, `ordering document`, ...
    pub fn name(self) -> &'static str {
        match self {
            DocumentKind::Definition => "workflow definition",
            DocumentKind::Partition => "partition document",
            DocumentKind::Organisation => "organisation document",
            DocumentKind::Orderings => "ordering document",
            DocumentKind::Classes => "class document",
        }
    }
}

/// Checks the document `file_name` (a path or a bare name) holds: its language by
/// [`Language::of`]; in XML, its kind by its root ([`crate::detect_kind`]); in PDL, an
/// ordering text when its first word is `WORKFLOW_DEFINITIONS` or `RELATIVE_ORDER`, else a
/// definition; BPMN holds definitions only. A new definition is held to
/// [`crate::validate_new_definition`] too.
pub fn check_named(file_name: &str, src: &[u8]) -> Checked {
    let language = Language::of(file_name, src);
    let (kind, problems) = match language {
        Language::MobiWfMs => {
            let kind = crate::detect_kind(src).unwrap_or(DocumentKind::Definition);
            (kind, crate::check(src))
        }
        Language::Pdl if crate::pdl::is_ordering_text(src) => {
            let problems = crate::load_orderings_in(language, src).err();
            (DocumentKind::Orderings, problems.unwrap_or_default())
        }
        Language::Pdl | Language::Bpmn => {
            let problems = crate::load_new_definition_in(language, src).err();
            (DocumentKind::Definition, problems.unwrap_or_default())
        }
    };
    Checked {
        kind,
        language,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "// one ordering\nWORKFLOW_DEFINITIONS P1 : P2;\nRELATIVE_ORDER {\n    \
                        T11 : T21;\n}\n";

    #[test]
    fn a_pdl_ordering_text_is_checked_as_an_ordering_document() {
        for name in ["seed.pdl", "seed"] {
            let checked = check_named(name, SEED.as_bytes());
            assert_eq!(checked.kind, DocumentKind::Orderings, "{name}");
            assert_eq!(checked.language, Language::Pdl);
            assert!(checked.problems.is_empty(), "{:?}", checked.problems);
        }
    }

    #[test]
    fn a_bad_ordering_text_is_refused_where_it_is_written() {
        let bad = "WORKFLOW_DEFINITIONS P1 : P1;\nRELATIVE_ORDER {\n    T11 : ;\n}\n";
        let checked = check_named("bad.pdl", bad.as_bytes());
        assert_eq!(checked.kind, DocumentKind::Orderings);
        let shown = checked.problems.render("bad.pdl");
        assert!(shown.contains("bad.pdl:1:"), "{shown}");
        assert!(shown.contains("bad.pdl:3:"), "{shown}");
    }

    #[test]
    fn a_definition_and_the_xml_documents_keep_their_kinds() {
        let pdl = "WORKFLOW W {\n    TASK A : M { }\n}\nTASK M { TYPE Automatic; }\n";
        assert_eq!(
            check_named("w.pdl", pdl.as_bytes()).kind,
            DocumentKind::Definition
        );
        let classes = "<classes><class id=\"press\"/></classes>";
        let checked = check_named("plant.xml", classes.as_bytes());
        assert_eq!(checked.kind, DocumentKind::Classes);
        assert!(checked.problems.is_empty());
        let orderings = "<orderings><ordering first=\"P1\" second=\"P2\">\
                         <order first=\"T11\" second=\"T21\"/></ordering></orderings>";
        let checked = check_named("seed.xml", orderings.as_bytes());
        assert_eq!(checked.kind, DocumentKind::Orderings);
        assert!(checked.problems.is_empty());
    }
}
