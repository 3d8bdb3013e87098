//! WorkToDo's textual process definition language (PDL; *WorkToDo: um sistema de
//! gerenciamento de workflows para ambientes de comunicação sem fio*, §4.1; *Synchronization
//! and Disconnected Operation in WorkToDo*, §2.5 and §6), read into the definition model and
//! written back, so that a definition may be written by hand as text and converted to and from
//! the MobiWfMS XML without loss.
//!
//! ```text
//! // A comment runs to the end of its line.
//! TASK Form { TYPE Semi-automatic; PRIORITY 10; DEADLINE 48 HOURS; }   // a task model
//! WORKFLOW Manutencao {
//!     FILE OrdemServico;
//!     TASK Criar : Form { ROLE Escritorio; OUT_CONTEXT OrdemServico; }
//!     TASK Visitar : Form {
//!         ROLE Tecnico;
//!         IN_CONTEXT OrdemServico;
//!         DEPENDS Criar -> SUCCEEDED;
//!         DESCRIPTION "Preencher a Ordem de Serviço";
//!     }
//! }
//! ```
//!
//! The keywords are WorkToDo's (upper case), the clauses of a block come in any order, and
//! tasks are named: names become ids by appearance (`names`), or `ID n;` says the id.
//! `docs/languages.md` gives the whole grammar, what maps to what, and what is refused.
//!
//! Here: the two entry points (read and load) and the bytes → text step; one module per step
//! (`lexer`, `parse`, `names` and `activity` for names → ids, `write`), and the keywords
//! (`grammar`). An ordering text (`WORKFLOW_DEFINITIONS` and `RELATIVE_ORDER`) is read and
//! written by `orderings`; a definition's text never holds one.

mod activity;
mod ast;
mod grammar;
mod lexer;
mod names;
mod orderings;
mod parse;
mod write;

pub use orderings::write_orderings_pdl;
pub(crate) use orderings::{is_ordering_text, load_orderings};
pub use write::write_pdl;

use encoding_rs::{Encoding, UTF_8};

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{MAX_DOCUMENT_BYTES, MAX_PDL_PROBLEMS};
use crate::source_map::SourceMap;
use crate::{Diagnostics, Loaded, WorkflowDefinition, validate_definition};

/// Reads and validates a definition written in PDL; every problem when there is any: those
/// of form and those of cross-references together, as [`crate::load_definition`] reports an
/// XML definition's.
pub(crate) fn load(src: &[u8]) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    read_with(src, validate_definition)
}

/// Reads a definition written in PDL without cross-reference validation (as
/// [`crate::read_definition`] reads XML): problems of form, and names that name nothing, are
/// still reported.
pub fn read_pdl(src: &[u8]) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    read_with(src, |_, _| Vec::new())
}

fn read_with(
    src: &[u8],
    validate: fn(&WorkflowDefinition, &SourceMap) -> Vec<Diagnostic>,
) -> Result<Loaded<WorkflowDefinition>, Diagnostics> {
    let text = decode(src).map_err(|d| Diagnostics(vec![d]))?;
    let (ast, mut diags) = parse::parse(&text);
    let mut map = SourceMap::default();
    let value = ast.and_then(|ast| names::build(ast, &mut diags, &mut map));
    let Some(value) = value else {
        return Err(Diagnostics(diags));
    };
    crate::settle(value, diags, map, validate).map_err(at_most_the_limit)
}

/// `problems`, the first [`MAX_PDL_PROBLEMS`] of them and a word on the rest when there are
/// more.
fn at_most_the_limit(mut problems: Diagnostics) -> Diagnostics {
    let total = problems.len();
    if total > MAX_PDL_PROBLEMS {
        problems.0.truncate(MAX_PDL_PROBLEMS);
        let pos = problems.0.last().map_or(Pos::START, |d| d.pos);
        problems.0.push(Diagnostic::new(
            pos,
            format!(
                "and {} more problems, not shown: at most {MAX_PDL_PROBLEMS} are listed \
                 (MAX_PDL_PROBLEMS); fix these first",
                total - MAX_PDL_PROBLEMS
            ),
        ));
    }
    problems
}

/// The text of `src`: UTF-8 (a byte-order mark of UTF-8 or UTF-16 is honoured), at most
/// [`MAX_DOCUMENT_BYTES`].
fn decode(src: &[u8]) -> Result<std::borrow::Cow<'_, str>, Diagnostic> {
    if src.len() > MAX_DOCUMENT_BYTES {
        return Err(Diagnostic::new(
            Pos::START,
            format!(
                "the text is {} bytes, over the limit of {MAX_DOCUMENT_BYTES} bytes \
                 (MAX_DOCUMENT_BYTES); split the workflow",
                src.len()
            ),
        ));
    }
    let (encoding, body) = match Encoding::for_bom(src) {
        Some((encoding, bom)) => (encoding, &src[bom..]),
        None => (UTF_8, src),
    };
    if encoding == UTF_8 {
        return std::str::from_utf8(body)
            .map(std::borrow::Cow::Borrowed)
            .map_err(|e| {
                let valid = String::from_utf8_lossy(&body[..e.valid_up_to()]);
                let pos = crate::text::LineIndex::new(&valid).pos(valid.len());
                let byte = body.get(e.valid_up_to()).copied().unwrap_or_default();
                Diagnostic::new(
                    pos,
                    format!(
                        "byte 0x{byte:02X} is not valid UTF-8; a PDL text is read as UTF-8: \
                         save it so"
                    ),
                )
            });
    }
    encoding
        .decode_without_bom_handling_and_without_replacement(body)
        .ok_or_else(|| {
            Diagnostic::new(
                Pos::START,
                format!(
                    "the text has bytes that are not valid {}, which its byte-order mark names; \
                     save it as UTF-8",
                    encoding.name()
                ),
            )
        })
}

#[cfg(test)]
mod tests;
