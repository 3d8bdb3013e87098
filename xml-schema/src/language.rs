//! The three languages a workflow definition may be written in, and the one door every caller
//! (the controller's `validate`, `partition`, `submit`, `deploy` and `convert`) goes through:
//! MobiWfMS XML as the paper publishes it, WorkToDo's textual process definition language
//! (PDL), and a subset of BPMN 2.0. Each reader gives the same model and a source map into its
//! own text, so validation speaks of `file:line:col` in the file the person wrote.

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::MAX_SNIFF_BYTES;
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
/// element after the XML declaration, comments, processing instructions and the DOCTYPE, each
/// skipped whole (a comment may mention `<definitions>`). Only the first [`MAX_SNIFF_BYTES`]
/// are looked at.
fn root_is_bpmn(src: &[u8]) -> bool {
    let head = &src[..src.len().min(MAX_SNIFF_BYTES)];
    let text = String::from_utf8_lossy(head);
    let mut rest = text.as_ref();
    loop {
        let Some(i) = rest.find('<') else {
            return false;
        };
        rest = &rest[i..];
        let skipped = if rest.starts_with("<!--") {
            rest.find("-->").map(|end| end + 3)
        } else if rest.starts_with("<?") {
            rest.find("?>").map(|end| end + 2)
        } else if rest.starts_with("<!") {
            declaration_end(rest)
        } else {
            let name: String = rest[1..]
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '>' && *c != '/')
                .collect();
            let local = name.rsplit(':').next().unwrap_or(&name);
            return local == "definitions";
        };
        let Some(end) = skipped else {
            return false;
        };
        rest = &rest[end..];
    }
}

/// Just after the `>` that ends the declaration (`<!DOCTYPE ...>`) `text` starts with: the
/// first one outside its internal subset `[...]`, which holds declarations of its own.
fn declaration_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            '>' if depth == 0 => return Some(i + 1),
            _ => {}
        }
    }
    None
}

/// Reads and validates a workflow definition written in `language`; every problem when there
/// is any, positioned in `src`.
pub fn load_definition_in(
    language: Language,
    src: &[u8],
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    let loaded = match language {
        Language::MobiWfMs => return crate::load_definition(src),
        Language::Pdl => crate::pdl::load(src)?,
        Language::Bpmn => crate::bpmn::load(src)?,
    };
    kept_as_xml(&loaded.value).map_err(|d| Diagnostics(vec![d]))?;
    Ok(loaded)
}

/// [`load_definition_in`] for a new definition (submitted, deployed, validated): held to the
/// rules of [`crate::validate_new_definition`] too, which stored copies read back are not.
pub fn load_new_definition_in(
    language: Language,
    src: &[u8],
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    let loaded = load_definition_in(language, src)?;
    let problems = crate::validate_new_definition(&loaded.value, &loaded.source_map);
    if problems.is_empty() {
        Ok(loaded)
    } else {
        Err(Diagnostics(problems))
    }
}

/// [`load_new_definition_in`] in the language [`Language::of`] says `file_name` (a path or a
/// bare name) with the text `src` is written in: what `validate`, `partition` and `convert`
/// read.
pub fn load_new_definition_named(
    file_name: &str,
    src: &[u8],
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    load_new_definition_in(Language::of(file_name, src), src)
}

/// Reads the definition in the language [`Language::of`] says `file_name` (a path or a bare
/// name) with the text `src` is written in, as a stored copy is read back.
pub fn load_definition_named(
    file_name: &str,
    src: &[u8],
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    load_definition_in(Language::of(file_name, src), src)
}

/// Whether `def`, read from PDL or BPMN, can be kept as MobiWfMS XML: the controller stores and
/// sends every definition so, and reads it back at every start. The readers refuse what the
/// XML cannot hold where it is written; this catches the rest, chiefly a text within the
/// limits of its own language whose XML is over [`crate::limits::MAX_DOCUMENT_BYTES`] or
/// [`crate::limits::MAX_ELEMENTS`] (PDL is terser than XML). A MobiWfMS text needs no such
/// check, and is spared its cost.
fn kept_as_xml(def: &WorkflowDefinition) -> Result<(), Diagnostic> {
    let xml = crate::write_definition(def);
    let problem = match crate::load_definition(xml.as_bytes()) {
        Ok(again) if again.value == *def => return Ok(()),
        Ok(_) => "read back, it differs from what was written, which is a fault of mobiwf's; \
                  please report it with this text"
            .to_owned(),
        Err(diags) => diags.0.first().map_or_else(String::new, |d| {
            if d.message.contains("split") {
                d.message.clone()
            } else if d.message.contains("(MAX_") {
                format!("{}; split the workflow into smaller ones", d.message)
            } else {
                format!("{} (at {} of the XML)", d.message, d.pos)
            }
        }),
    };
    Err(Diagnostic::new(
        Pos::START,
        format!("this definition cannot be kept as MobiWfMS XML: {problem}"),
    ))
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

    #[test]
    fn what_comes_before_the_root_is_skipped_whole() {
        let bpmn = "<definitions xmlns=\"http://www.omg.org/spec/BPMN/20100524/MODEL\"/>";
        let workflow = "<workflow id=\"1\"/>";
        for before in [
            "<!-- copied from <definitions id=\"x\"> -->",
            "<?xml version=\"1.0\"?><?tool <definitions> ?>",
            "<!DOCTYPE workflow [<!ELEMENT definitions ANY> <!-- <definitions> -->]>",
            "<!DOCTYPE workflow>\n<!---->",
        ] {
            let text = format!("{before}\n{workflow}");
            assert_eq!(
                Language::sniff(text.as_bytes()),
                Language::MobiWfMs,
                "{text}"
            );
            let text = format!("{before}\n{bpmn}");
            assert_eq!(Language::sniff(text.as_bytes()), Language::Bpmn, "{text}");
        }
        // A comment not closed within the look-ahead hides the root: taken for MobiWfMS.
        let long = format!("<!-- {} -->{bpmn}", "x".repeat(MAX_SNIFF_BYTES));
        assert_eq!(Language::sniff(long.as_bytes()), Language::MobiWfMs);
        assert_eq!(
            Language::sniff(b"<!-- open <definitions/>"),
            Language::MobiWfMs
        );
    }

    #[test]
    fn a_text_whose_xml_is_over_the_limits_is_refused() {
        // Each one-line task is over 300 bytes and a dozen elements of XML.
        let mut text = String::from("TASK S { } WORKFLOW w {\n");
        let tasks = crate::limits::MAX_ELEMENTS / 12;
        for k in 0..tasks {
            text.push_str(&format!("TASK t{k} : S {{ }}\n"));
        }
        text.push('}');
        assert!(text.len() < crate::limits::MAX_DOCUMENT_BYTES / 10);
        let err = load_definition_in(Language::Pdl, text.as_bytes()).unwrap_err();
        let message = &err.0[0].message;
        assert!(
            message.starts_with("this definition cannot be kept as MobiWfMS XML: the document"),
            "{message}"
        );
        assert!(
            message.contains("(MAX_DOCUMENT_BYTES); split the workflow"),
            "{message}"
        );
    }

    #[test]
    fn tabs_line_breaks_and_returns_are_kept_as_xml() {
        let text =
            "TASK S { } WORKFLOW w { DESCRIPTION \"a\\tb\\nc\\rd \\u{e9}\"; TASK t : S { } }";
        let loaded = load_definition_named("w.pdl", text.as_bytes())
            .unwrap_or_else(|d| panic!("{}", d.render("w.pdl")));
        assert_eq!(loaded.value.description, "a\tb\nc\rd é");
    }
}
