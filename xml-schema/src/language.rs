//! The three languages a workflow definition may be written in, and the one door every caller
//! (the controller's `validate`, `partition`, `submit`, `deploy` and `convert`) goes through:
//! MobiWfMS XML as the paper publishes it, WorkToDo's textual process definition language
//! (PDL), and a subset of BPMN 2.0. Each reader gives the same model and a source map into its
//! own text, so validation speaks of `file:line:col` in the file the person wrote.

use crate::{Diagnostics, Loaded, WorkflowDefinition};

/// The language a definition's text is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// MobiWfMS XML (`.xml`): the paper's definition language with our extensions.
    MobiWfMs,
    /// WorkToDo's textual process definition language (`.pdl`).
    Pdl,
    /// BPMN 2.0 (`.bpmn`), the subset `docs/languages.md` lists.
    Bpmn,
}

impl Language {
    /// The language of a text named `file_name` (a path or a bare name): by its extension
    /// (`.pdl`, `.bpmn`, `.xml`) when it has one of these, else by its content: a document
    /// whose root element is BPMN's `definitions` is BPMN, one that starts with `<` (after
    /// white space and a byte-order mark) is MobiWfMS XML, anything else is PDL.
    pub fn of(file_name: &str, src: &[u8]) -> Language {
        let lower = file_name.to_ascii_lowercase();
        if lower.ends_with(".pdl") {
            return Language::Pdl;
        }
        if lower.ends_with(".bpmn") || lower.ends_with(".bpmn2") {
            return Language::Bpmn;
        }
        if lower.ends_with(".xml") {
            return Language::MobiWfMs;
        }
        Language::sniff(src)
    }

    /// The language of `src` by its content alone (see [`Language::of`]).
    pub fn sniff(src: &[u8]) -> Language {
        let src = src.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(src);
        let start = src.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else {
            return Language::MobiWfMs;
        };
        if src[start] != b'<' {
            return Language::Pdl;
        }
        if root_is_bpmn(&src[start..]) {
            Language::Bpmn
        } else {
            Language::MobiWfMs
        }
    }

    /// The name the command line and the docs use (`xml`, `pdl`, `bpmn`).
    pub fn name(self) -> &'static str {
        match self {
            Language::MobiWfMs => "xml",
            Language::Pdl => "pdl",
            Language::Bpmn => "bpmn",
        }
    }
}

/// The root element's local name is `definitions` (BPMN's root, under any prefix): the first
/// element that is not a declaration, comment or processing instruction. Only the first
/// 64 KiB are looked at; a root further in than that is not worth finding here.
fn root_is_bpmn(src: &[u8]) -> bool {
    let head = &src[..src.len().min(64 * 1024)];
    let text = String::from_utf8_lossy(head);
    let mut rest = text.as_ref();
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        if rest.starts_with('?') || rest.starts_with('!') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
            .collect();
        let local = name.rsplit(':').next().unwrap_or(&name);
        return local == "definitions";
    }
    false
}

/// Reads and validates a workflow definition written in `language`; every problem when there
/// is any, positioned in `src`.
pub fn load_definition_in(
    language: Language,
    src: &[u8],
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    match language {
        Language::MobiWfMs => crate::load_definition(src),
        Language::Pdl => crate::pdl::load(src),
        Language::Bpmn => crate::bpmn::load(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_decides_and_the_content_otherwise() {
        assert_eq!(Language::of("a/b.PDL", b"<workflow/>"), Language::Pdl);
        assert_eq!(Language::of("b.bpmn", b"WORKFLOW x {}"), Language::Bpmn);
        assert_eq!(Language::of("b.xml", b"WORKFLOW x {}"), Language::MobiWfMs);
        assert_eq!(Language::of("-", b"  WORKFLOW x {}"), Language::Pdl);
        assert_eq!(
            Language::of(
                "stdin",
                b"\xEF\xBB\xBF<?xml version=\"1.0\"?><workflow id=\"1\"/>"
            ),
            Language::MobiWfMs
        );
        let bpmn = br#"<?xml version="1.0"?>
<!-- a comment -->
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"/>"#;
        assert_eq!(Language::of("upload", bpmn), Language::Bpmn);
        assert_eq!(
            Language::sniff(b"<definitions xmlns=\"x\"></definitions>"),
            Language::Bpmn
        );
        assert_eq!(Language::sniff(b""), Language::MobiWfMs);
    }
}
