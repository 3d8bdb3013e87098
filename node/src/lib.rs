//! A mobiwf partner node: the durable state of its pure core (`mobiwf-node-core`: the
//! partition engine and the users' desk) (`state`), the daemon that connects it to the mesh, the store and the commands it runs (`daemon`,
//! `executor`, with the data directory of a run in `run_data`, the contents of data files in
//! `files` and the leases of commands run under a task class's grant in `lease`), and the HTTP API (`api`), with what each of its routes needs (`api_access`:
//! bearer tokens, roles and users' own tokens).

pub mod api;
pub mod api_access;
pub mod api_offline;
pub mod api_paging;
pub mod api_people;
pub mod command_policy;
pub mod daemon;
pub mod executor;
pub mod files;
pub mod lease;
pub mod run_data;
pub mod state;
pub mod web;

#[cfg(test)]
mod tests;

pub use daemon::{
    API_TOKEN_FILE, ClaimOutcome, DirectoryView, Node, NodeClient, NodeConfig, WorklistEntry, start,
};
