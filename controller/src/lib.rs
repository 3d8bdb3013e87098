//! The mobiwf controller: the pure instance bookkeeping (`book`), its durable state
//! (`state`), the daemon that connects it to the mesh and the store (`daemon`), and the
//! operators' HTTP API (`api`).

pub mod api;
pub mod book;
pub mod daemon;
pub mod detector;
pub mod state;

pub use daemon::{Controller, ControllerClient, ControllerConfig};
