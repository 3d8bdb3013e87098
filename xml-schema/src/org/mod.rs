//! The organisation document, the third language: who works here (users), in which roles,
//! departments and teams, and on which device each user's worklist lives. Read like the
//! workflow languages (`decode` + `tree` for form and limits, `read.rs` into the model with
//! positions, `validate.rs` and `trees.rs` for ids and cross-references, every problem at
//! once), written by `write.rs`.

mod read;
pub(crate) use read::check_attrs;
mod trees;
mod validate;
mod write;

pub use validate::validate_organisation;
pub use write::write_organisation;

use crate::Loaded;
use crate::diagnostic::Diagnostics;
use crate::model::Organisation;
use crate::tree::ORGANISATION;

/// Reads and validates an organisation document; every problem when there is any.
///
/// ```
/// let src = br#"<organisation>
///   <roles><role id="tech"/></roles>
///   <users><user id="alice" device="N2"><role id="tech" priority="2"/></user></users>
/// </organisation>"#;
/// let org = mobiwf_xml_schema::load_organisation(src).expect("valid").value;
/// assert_eq!(org.users[0].roles[0].priority, 2);
/// ```
pub fn load_organisation(src: &[u8]) -> Result<Loaded<Organisation>, Diagnostics> {
    let root = crate::parse_as(src, ORGANISATION)?;
    crate::load(&root, read::read_organisation, validate_organisation)
}
