//! The subcommands of `mobiwf-node`, one module each.

pub mod api_client;
pub mod api_tokens;
pub mod complete;
pub mod data;
pub mod inspect;
pub mod login_link;
pub mod offline;
pub mod people;
pub mod run;
pub mod worklist;
