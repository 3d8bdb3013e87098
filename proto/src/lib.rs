//! The plain types the controller, the nodes and their pure cores share: typed ids (`ids`),
//! milliseconds (`time`), peers' addresses (`location`), instance data (`data`) and an
//! instance's inputs (`inputs`), a loop's passes (`passes`), the shard and epoch a clustered controller's
//! messages carry (`shard`), and the wire messages with their limits (`wire`), each
//! message's content named by what it is about (`run`, `reports`, `recovery`, `people`,
//! `queries`).
//!
//! **Architecture invariant:** no I/O and no codec. The framing lives in `mobiwf-runtime`;
//! this crate only says what a message is, so that the partition engine and the controller's
//! book can speak it without linking the network stack.

pub mod data;
pub mod data_passes;
mod ids;
pub mod inputs;
mod location;
pub mod passes;
pub mod pause;
pub mod people;
pub mod queries;
pub mod recovery;
pub mod reports;
pub mod run;
mod shard;
mod states;
pub mod sync;
mod time;
pub mod wire;

pub use data::{DataValue, Datum, FileBody, FileRef, Writer, Written};
pub use ids::{InstanceId, NodeId, NodeName};
pub use inputs::{GivenInputs, InstanceInputs};
pub use location::{Location, NotALocation};
pub use mobiwf_xml_schema::{ActivityId, ActivityTypeId, PartitionId, TaskState};
pub use passes::{NewPass, Pass};
pub use pause::{PauseAction, PauseOrder, PauseOutcome, PauseReport};
pub use people::{
    Answer, Claim, DEADLINE_THRESHOLDS, DEFAULT_HOUR_MS, DeviceEntry, DirectoryVersion,
    HAND_OVER_HOURS_LEFT, Hold, Holder, ItemAction, ItemAnswer, ItemApplication, ItemDeadline,
    ItemEvent, ItemEvents, ItemInfo, ItemSnapshot, ItemStatus, Notice, Presence, RoleId, Tell,
    UserId, Verdict, thresholds_of,
};
pub use queries::{Fetch, ItemData, Locate, ReadData};
pub use recovery::{Compensate, Compensated, Rerun};
pub use reports::{Overdue, PartitionResult, Report};
pub use run::{Completed, ControlInstance, Deploy, Notify, StateChanged, Substitute, Withdraw};
pub use shard::{Epoch, ShardEpoch, ShardId};
pub use sync::{
    BeginSync, ClassName, EndSync, Probe, SyncGranted, SyncRefused, SyncTicket, fence_ms,
    watchdog_period_ms,
};
pub use time::Millis;
pub use wire::{
    ActivityRecord, ActivityState, CANCELLED_BY_OPERATOR, CANCELLED_BY_RULE, Control, Envelope,
    MAX_BATCH, MAX_MESSAGE_BYTES, Message, MessageId, Outcome, PROTOCOL, Register, Reply, StateSet,
    cancelled_by_design, completed_reason,
};
