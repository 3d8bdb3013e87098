//! The messages controller and nodes exchange over libp2p, and the limits on them.
//!
//! Every request is an [`Envelope`]: a [`MessageId`] the receiver deduplicates on, and a
//! [`Message`]. The answer is a [`Reply`]. Frames are a 4-byte big-endian length followed by
//! that many bytes of JSON; `PROTOCOL` carries the version, so an incompatible change gets a
//! new protocol name and old peers refuse it at negotiation instead of misreading it.

use serde::{Deserialize, Serialize};

/// The request-response protocol name (and version) of mobiwf execution messages.
pub const PROTOCOL: &str = "/mobiwf/exec/1";

/// The largest request or reply frame accepted, in bytes. A partition document is at most
/// `mobiwf_xml_schema::limits::MAX_DOCUMENT_BYTES` (4 MiB); this leaves room for JSON escaping.
pub const MAX_MESSAGE_BYTES: usize = 12 << 20;

/// Identifies one message for deduplication: the sending peer and its own sequence number.
/// The same message sent again (a retry after a lost acknowledgement) has the same id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MessageId {
    /// The sender's peer id, as text.
    pub origin: String,
    /// The sender's sequence number, unique per origin.
    pub seq: u64,
}

impl MessageId {
    /// The store key that marks this message as applied by its receiver.
    pub fn seen_key(&self) -> String {
        format!("seen/{}/{:020}", self.origin, self.seq)
    }
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.origin, self.seq)
    }
}

/// A request on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// What the receiver deduplicates on.
    pub id: MessageId,
    /// The content.
    pub message: Message,
}

/// What a successor learns about a finished predecessor in another partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The predecessor succeeded: the precondition is met.
    Succeeded,
    /// The predecessor failed with contingency 0: the precondition is released (met).
    Released,
    /// The predecessor failed with contingency -1, or was cancelled: the successor is cancelled.
    Blocked,
}

/// Where an activity is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityState {
    /// Not started: preconditions not yet met (or not yet deployed).
    Waiting,
    /// Started: its command runs, or (manual) it is on a worklist.
    Running,
    /// Finished with success.
    Succeeded,
    /// Finished without success.
    Failed,
    /// Will never run: a predecessor failed with contingency -1 or was cancelled.
    Cancelled,
}

impl ActivityState {
    /// True once the activity can no longer change.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            ActivityState::Succeeded | ActivityState::Failed | ActivityState::Cancelled
        )
    }

    /// The word used in tables and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityState::Waiting => "waiting",
            ActivityState::Running => "running",
            ActivityState::Succeeded => "succeeded",
            ActivityState::Failed => "failed",
            ActivityState::Cancelled => "cancelled",
        }
    }
}

/// What a node knows about one activity of its partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityRecord {
    /// The activity id.
    pub activity: u64,
    /// Its state.
    pub state: ActivityState,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When it finished, in milliseconds since the Unix epoch.
    pub finished_ms: Option<u64>,
    /// Why it failed or was cancelled, when it did.
    pub detail: Option<String>,
    /// True when it was started by its `timeToWait` emergency trigger, before its
    /// preconditions were met.
    #[serde(default)]
    pub emergency: bool,
}

/// The content of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// Node → controller: here I am, this is what I can do and where to reach me.
    Register {
        /// The node's name (matched against a workflow partner's name or id).
        name: String,
        /// The activity types the node can run.
        skills: Vec<u64>,
        /// The node's listen addresses, each ending in `/p2p/<peer id>`.
        addrs: Vec<String>,
    },
    /// Controller → node: run this partition of this instance.
    Deploy {
        /// The instance.
        instance: u64,
        /// The partition's id in the workflow definition.
        partition: u64,
        /// The partition document (MobiWfMS partition XML; `workflow@id` is the instance).
        document: String,
    },
    /// Node → node: an activity that one of yours waits for has finished.
    Notify {
        /// The instance.
        instance: u64,
        /// The finished activity (a precondition of the receiver's activity).
        activity: u64,
        /// What it means for the successors.
        outcome: Outcome,
    },
    /// Node → controller: an activity with `responseImmediate` 1 finished.
    Report {
        /// The instance.
        instance: u64,
        /// The partition the activity belongs to.
        partition: u64,
        /// The activity.
        record: ActivityRecord,
    },
    /// Node → controller: every activity of the partition is final.
    PartitionResult {
        /// The instance.
        instance: u64,
        /// The partition.
        partition: u64,
        /// Every activity of the partition.
        activities: Vec<ActivityRecord>,
    },
}

impl Message {
    /// A short name for logs and metrics labels.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Register { .. } => "register",
            Message::Deploy { .. } => "deploy",
            Message::Notify { .. } => "notify",
            Message::Report { .. } => "report",
            Message::PartitionResult { .. } => "partition_result",
        }
    }
}

/// The answer to an [`Envelope`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// Applied (or already applied before: a duplicate) and on the receiver's disk.
    Ack,
    /// Will never be applied, whatever the retries: the reason says why. The sender stops
    /// retrying and logs it.
    Refused {
        /// What is wrong.
        reason: String,
    },
}
