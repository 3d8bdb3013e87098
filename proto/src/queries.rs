//! The questions a peer answers at once, never stored nor deduplicated: a chunk of a file's
//! content, what a node knows of an instance's data, what a work item reads, where a peer is
//! now. Each has its own [`crate::Reply`]; one that breaks off is simply asked again. Named
//! structs, apart from `wire`; each is the content of its [`crate::Message`] variant, and its
//! bytes are the ones that variant always had.

use serde::{Deserialize, Serialize};

use crate::data::FileRef;
use crate::{ActivityId, InstanceId, NodeId};

/// Node → node: send me `FETCH_CHUNK_BYTES` of this file's content from `offset` on
/// ([`crate::Message::Fetch`]). Answered with [`crate::Reply::Chunk`] (or refused): a fetch
/// that breaks off is asked again from where it stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fetch {
    /// The content's reference.
    pub file: FileRef,
    /// Where to start, in bytes.
    pub offset: u64,
}

/// Controller → node: what do you know of this instance's data
/// ([`crate::Message::ReadData`])? Answered with [`crate::Reply::Data`] (`status --data`:
/// values are shown, never kept, by the controller).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadData {
    /// The instance.
    pub instance: InstanceId,
}

/// Device → host: what does this work item read ([`crate::Message::ItemData`])? Answered with
/// [`crate::Reply::Data`] (the values of the activity's `<reads>` the host knows); asked only
/// by the device of a user offered or holding the item, to copy it for offline work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemData {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
}

/// Node → controller: where is this peer now ([`crate::Message::Locate`])? Answered with
/// [`crate::Reply::Located`] (the addresses of its latest registration): a node whose
/// deliveries to a peer fail asks, and retries there (a peer restarted on another port or
/// moved to another network keeps its peer id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Locate {
    /// The peer sought.
    pub peer: NodeId,
}
