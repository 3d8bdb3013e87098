//! Orderings → XML text: one element per line, a task by `first`/`second` when the document
//! names it, by `firstId`/`secondId` when it gives its id, so that reading the text gives the
//! same value back.

use super::read::id_attribute;
use crate::model::{Orderings, Side, TaskRef};
use crate::write::escape_attr;

/// Writes an ordering document (UTF-8 XML).
pub fn write_orderings(orderings: &Orderings) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    if orderings.orderings.is_empty() {
        out.push_str("<orderings/>\n");
        return out;
    }
    out.push_str("<orderings>\n");
    for o in &orderings.orderings {
        let head = format!(
            "  <ordering first=\"{}\" second=\"{}\"",
            escape_attr(o.first.as_str()),
            escape_attr(o.second.as_str())
        );
        if o.pairs.is_empty() {
            out.push_str(&format!("{head}/>\n"));
            continue;
        }
        out.push_str(&format!("{head}>\n"));
        for pair in &o.pairs {
            out.push_str("    <order");
            for side in [Side::First, Side::Second] {
                let (attr, value) = match pair.task(side) {
                    TaskRef::Name(name) => (side.word(), escape_attr(name)),
                    TaskRef::Id(id) => (id_attribute(side), id.to_string()),
                };
                out.push_str(&format!(" {attr}=\"{value}\""));
            }
            out.push_str("/>\n");
        }
        out.push_str("  </ordering>\n");
    }
    out.push_str("</orderings>\n");
    out
}
