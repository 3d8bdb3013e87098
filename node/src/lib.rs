//! A mobiwf partner node: the pure partition engine (`engine`), its durable state (`state`),
//! the daemon that connects it to the mesh, the store and the commands it runs (`daemon`,
//! `executor`), and the HTTP API (`api`).

pub mod api;
pub mod daemon;
pub mod engine;
pub mod executor;
pub mod state;

pub use daemon::{Node, NodeClient, NodeConfig};
