//! The ordering document (*Synchronization and Disconnected Operation in WorkToDo*, §6.2,
//! ordering requirements between definitions), which the controller holds beside the
//! definitions: for pairs of deployed definitions, the tasks whose runs keep one relative
//! order between their running instances. Read like the organisation document (`decode` +
//! `tree` for form and limits, `read.rs` into the model with positions, `validate.rs`, every
//! problem at once), written by `write.rs`; in PDL by `crate::pdl` into the same model. The
//! one door for both languages is [`load_orderings_named`]; `resolve.rs` finds the tasks in the
//! definitions.
//!
//! ```
//! let src = br#"<orderings>
//!   <ordering first="P1" second="P2"><order first="T11" second="T21"/></ordering>
//! </orderings>"#;
//! let doc = mobiwf_xml_schema::load_orderings(src).expect("valid").value;
//! assert_eq!(doc.orderings[0].pairs.len(), 1);
//! ```

mod read;
mod resolve;
mod validate;
mod write;

pub use resolve::{ResolvedOrdering, resolve_orderings, task_id};
pub use validate::validate_orderings;
pub use write::write_orderings;

use crate::diagnostic::{Diagnostic, Pos};
use crate::language::Language;
use crate::model::Orderings;
use crate::tree::ORDERINGS;
use crate::{Diagnostics, Loaded};

/// Reads and validates an ordering document in XML; every problem when there is any.
pub fn load_orderings(src: &[u8]) -> Result<Loaded<Orderings>, Diagnostics> {
    let root = crate::parse_as(src, ORDERINGS)?;
    crate::load(&root, read::read_orderings, validate_orderings)
}

/// Reads and validates an ordering document written in `language`: XML (`<orderings>`) or
/// PDL (`WORKFLOW_DEFINITIONS` and `RELATIVE_ORDER`); BPMN has no orderings.
pub fn load_orderings_in(language: Language, src: &[u8]) -> Result<Loaded<Orderings>, Diagnostics> {
    match language {
        Language::MobiWfMs => load_orderings(src),
        Language::Pdl => crate::pdl::load_orderings(src),
        Language::Bpmn => Err(Diagnostics(vec![Diagnostic::new(
            Pos::START,
            "BPMN has no orderings between definitions; write them in XML (<orderings>) or in \
             PDL (WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { T11 : T21; })",
        )])),
    }
}

/// Reads the ordering document `file_name` (a path or a bare name) holds, in the language its
/// extension says (`.xml`, `.pdl`), else its content: a text that starts with `<` is XML,
/// anything else PDL. What `mobiwf-controller orderings apply FILE` reads.
pub fn load_orderings_named(file_name: &str, src: &[u8]) -> Result<Loaded<Orderings>, Diagnostics> {
    let language = match Language::of(file_name, src) {
        // A `.bpmn` file is refused by name; a text that merely looks like BPMN is XML here.
        Language::Bpmn if !has_bpmn_extension(file_name) => Language::MobiWfMs,
        language => language,
    };
    load_orderings_in(language, src)
}

fn has_bpmn_extension(file_name: &str) -> bool {
    let lower = file_name.to_ascii_lowercase();
    lower.ends_with(".bpmn") || lower.ends_with(".bpmn2")
}
