//! One module per subcommand; each returns the exit code, or an error for exit status 2.

pub mod api_client;
pub mod api_tokens;
pub mod classes;
pub mod cluster;
pub mod control;
pub mod convert;
pub mod definitions;
pub mod enrol;
pub mod graph;
pub mod history;
pub mod login_link;
pub mod orderings;
pub mod org;
pub mod partition;
pub mod serve;
pub mod status;
pub mod submit;
pub mod validate;
pub mod wait;
pub mod worklist;

use std::path::Path;

use anyhow::Context;

/// The bytes of `path`, with the path in the error when it cannot be read.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}
