//! Class document → XML text: one class per element, defaults left out (no empty
//! `<conflicts>`, no `<maxWait>` of the default), so that reading the text gives the same
//! value back.

use crate::model::{ClassDocument, DEFAULT_MAX_WAIT_SECS, TaskClass};
use crate::write::escape_attr;

/// Writes a class document (UTF-8 XML).
pub fn write_classes(doc: &ClassDocument) -> String {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    if doc.classes.is_empty() {
        out.push_str("<classes/>\n");
        return out;
    }
    out.push_str("<classes>\n");
    for class in &doc.classes {
        write_class(&mut out, class);
    }
    out.push_str("</classes>\n");
    out
}

fn write_class(out: &mut String, class: &TaskClass) {
    let open = format!("  <class id=\"{}\"", escape_attr(class.id.as_str()));
    let default_wait = class.max_wait_secs == DEFAULT_MAX_WAIT_SECS;
    if class.conflicts.is_empty() && default_wait {
        out.push_str(&format!("{open}/>\n"));
        return;
    }
    out.push_str(&format!("{open}>\n"));
    if !class.conflicts.is_empty() {
        let names: Vec<&str> = class.conflicts.iter().map(|c| c.as_str()).collect();
        out.push_str(&format!(
            "    <conflicts>{}</conflicts>\n",
            escape_attr(&names.join(" "))
        ));
    }
    if !default_wait {
        out.push_str(&format!("    <maxWait>{}</maxWait>\n", class.max_wait_secs));
    }
    out.push_str("  </class>\n");
}
