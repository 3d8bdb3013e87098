//! A mobiwf partner node: the durable state of the pure partition engine (`mobiwf-engine`)
//! (`state`), the daemon that connects it to the mesh, the store and the commands it runs (`daemon`,
//! `executor`), and the HTTP API (`api`).

pub mod api;
pub mod api_people;
pub mod daemon;
pub mod executor;
pub mod state;

pub use daemon::{ClaimOutcome, DirectoryView, Node, NodeClient, NodeConfig, WorklistEntry, start};
