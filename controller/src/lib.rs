//! The mobiwf controller: the durable state of the pure instance bookkeeping (`mobiwf-book`)
//! (`state`), the daemon that connects it to the mesh and the store (`daemon`), and the
//! operators' HTTP API (`api`, its bodies held to the document limit by `body_limit`; the deployed definitions and starts by name:
//! `api_definitions`), which takes an instance's inputs with its submission or start
//! (`inputs`) and shows instance data by asking the nodes (`data`), with
//! what each of its routes needs (`api_access`: bearer tokens and roles), pages the instance
//! list from the store (`listing`) and deletes old finished instances (`retention`), and sheds
//! new instances past its limit of instances under way (`admission`, pure, and its HTTP shell
//! `api_admission`: 429 with `Retry-After`); history
//! events in words (`render`) and instances, histories and nodes as tables (`table`) for the
//! command line and the demo.

pub mod admission;
pub mod api;
pub mod api_access;
pub mod api_admission;
pub mod api_definitions;
pub mod api_enrol;
pub mod api_people;
pub mod api_sync;
pub mod body_limit;
pub mod cluster;
pub mod console;
pub mod daemon;
pub mod data;
pub mod detector;
pub mod enrolment;
pub mod inputs;
pub mod listing;
pub mod render;
pub mod retention;
pub mod state;
pub mod table;

pub use daemon::{Controller, ControllerClient, ControllerConfig, start};
