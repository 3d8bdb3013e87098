//! The class document, the fourth language: the task classes the controller's synchronization
//! manager keeps conflicting activities apart by (*Synchronization and Disconnected Operation
//! in WorkToDo* (IC-03-006), §4.8). Read like the organisation document (`decode` + `tree` for
//! form and limits, `read.rs` into the model with positions, `validate.rs` for names and
//! cross-references, every problem at once), written by `write.rs`.

mod read;
mod validate;
mod write;

pub use validate::validate_classes;
pub use write::write_classes;

use crate::Loaded;
use crate::diagnostic::Diagnostics;
use crate::model::ClassDocument;
use crate::tree::CLASSES;

/// Reads and validates a class document; every problem when there is any.
///
/// ```
/// let src = br#"<classes>
///   <class id="press"><conflicts>press drill</conflicts><maxWait>30</maxWait></class>
///   <class id="drill"/>
/// </classes>"#;
/// let doc = mobiwf_xml_schema::load_classes(src).expect("valid").value;
/// assert!(doc.conflict(&"drill".into(), &"press".into()));
/// assert!(!doc.conflict(&"drill".into(), &"drill".into()));
/// ```
pub fn load_classes(src: &[u8]) -> Result<Loaded<ClassDocument>, Diagnostics> {
    let root = crate::parse_as(src, CLASSES)?;
    crate::load(&root, read::read_classes, validate_classes)
}

#[cfg(test)]
mod tests;
