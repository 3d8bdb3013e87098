//! The people side of mobiwf, pure (no clock, disk, network or logging): the organisation
//! directory as every node replicates it (`directory`), who a work item is offered to
//! (`assign`), and the worklists a user's device keeps (`desk`).
//!
//! The host of a manual activity (the node that runs its partition) assigns it from its
//! replica of the directory and arbitrates claims on it (`mobiwf-engine`); the device of each
//! user keeps that user's worklist and notices (`desk`). See ARCHITECTURE.md → People.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod assign;
pub mod desk;
pub mod directory;

pub use assign::{Choice, Load, choose};
pub use desk::{
    AppEnd, AppEnded, AppToTake, Applied, Desk, DeskChanges, DeskEffect, DeskEncodeError,
    DeskInput, DeskItem, DeskRefusal, DeskRestoreError, DeviceProfile, Entry, EntryLink,
    EntryState, ItemCopy, ItemKey, ItemSnapshot, Launch, LocalClaim, Offline, Order, PendingClaim,
    WorklistPage,
};
pub use directory::{ADMINISTRATOR, Directory, DirectoryError};
