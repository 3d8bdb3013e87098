//! Ordering texts in PDL (*Synchronization and Disconnected Operation in WorkToDo*, §6.2):
//! `WORKFLOW_DEFINITIONS P1 : P2; RELATIVE_ORDER { T11 : T21; T12 : T22; }`, read into the same
//! model as the XML ordering document and checked the same way, and written back.

use std::fmt::Write as _;

use super::write::word;
use crate::model::{Orderings, TaskRef};
use crate::{Diagnostics, Loaded};

/// Reads and validates an ordering text; every problem when there is any.
pub(crate) fn load_orderings(src: &[u8]) -> Result<Loaded<Orderings>, Diagnostics> {
    let text = super::decode(src).map_err(|d| Diagnostics(vec![d]))?;
    let (doc, diags) = super::parse::parse_orderings(&text);
    let Some((doc, map)) = doc else {
        return Err(Diagnostics(diags));
    };
    crate::settle(doc, diags, map, crate::ordering::validate_orderings)
        .map_err(super::at_most_the_limit)
}

/// Whether a PDL text is an ordering text: its first word (after white space and comments) is
/// `WORKFLOW_DEFINITIONS` or `RELATIVE_ORDER`. A text that cannot be decoded is none: it is read
/// as a definition, whose reader says what is wrong with it.
pub(crate) fn is_ordering_text(src: &[u8]) -> bool {
    let Ok(text) = super::decode(src) else {
        return false;
    };
    let first = super::lexer::Lexer::new(&text).next_token();
    first.is_word("WORKFLOW_DEFINITIONS") || first.is_word("RELATIVE_ORDER")
}

/// Writes orderings as a PDL text: one `WORKFLOW_DEFINITIONS` and its `RELATIVE_ORDER` per
/// ordering; a task by its name (quoted where it is no plain word), or by its id.
pub fn write_orderings_pdl(orderings: &Orderings) -> String {
    let mut out = String::new();
    for (k, o) in orderings.orderings.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "WORKFLOW_DEFINITIONS {} : {};",
            word(o.first.as_str()),
            word(o.second.as_str())
        );
        out.push_str("RELATIVE_ORDER {\n");
        for pair in &o.pairs {
            let _ = writeln!(out, "    {} : {};", task(&pair.first), task(&pair.second));
        }
        out.push_str("}\n");
    }
    out
}

fn task(task: &TaskRef) -> String {
    match task {
        TaskRef::Name(name) => word(name),
        TaskRef::Id(id) => id.to_string(),
    }
}
