//! Scenarios of the node's core: a node that is both the host of a work item and the device
//! of its user, its controller, and partners; what each message from whom comes to.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failure is the report

mod epochs;
mod fence;
mod offline;
mod props;
mod scenarios;

use crate::NodeInput;
use crate::fixtures::*;
