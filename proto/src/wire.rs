//! The messages controller and nodes exchange over libp2p, and the limits on them.
//!
//! Every message is an [`Envelope`]: a [`MessageId`] the receiver deduplicates on, and a
//! [`Message`]. Its answer is a [`Reply`]. A request carries up to [`MAX_BATCH`] envelopes
//! for one peer, its reply their answers in order. Frames are a 4-byte big-endian length
//! followed by that many bytes of JSON; `PROTOCOL` carries the version, so an incompatible
//! change gets a new protocol name and old peers refuse it at negotiation instead of
//! misreading it.

use serde::{Deserialize, Serialize};

use crate::data::Datum;
use crate::people::{
    Claim, DirectoryVersion, ItemAnswer, ItemEvents, ItemSnapshot, Presence, Tell,
};
use crate::queries::{Fetch, ItemData, Locate, ReadData};
use crate::recovery::{Compensate, Compensated, Rerun};
use crate::reports::{Overdue, PartitionResult, Report};
use crate::run::{Completed, ControlInstance, Deploy, Notify, StateChanged, Substitute, Withdraw};
use crate::{ActivityId, ActivityTypeId, NodeId, NodeName};

/// The request-response protocol name (and version) of mobiwf execution messages.
/// Version 2: task states (`not_ready` for `waiting`), `StateChanged`, `Completed`, and the
/// fields of rules and routing on `Notify` and in records. Version 3: instance data on
/// `Notify`, `Fetch` and `ReadData` with their `Chunk` and `Data` replies; `Compensate`,
/// `Compensated` and `Rerun`. Version 4: the sender's `incarnation` in [`MessageId`] and
/// `answered_below` on [`Envelope`] (what lets receivers forget the ids they applied).
/// Within version 4, a clustered controller's `epoch` on [`Envelope`]: left out by every
/// other sender and ignored by a receiver that does not know it (it then takes the message as
/// before), so peers of either side still understand each other. Version 5: a request carries
/// a batch of envelopes to one peer (a JSON array of 1 to [`MAX_BATCH`]), its reply one answer
/// for each in the same order (a [`Reply`], or `null` for one left unanswered): under load,
/// the messages waiting for one peer share a stream, an encryption and a write.
pub const PROTOCOL: &str = "/mobiwf/exec/5";

/// The most envelopes one request carries; a receiver refuses a larger batch before decoding
/// any of its envelopes.
pub const MAX_BATCH: usize = 32;

/// The largest request or reply frame accepted, in bytes. A partition document is at most
/// `mobiwf_xml_schema::limits::MAX_DOCUMENT_BYTES` (4 MiB); this leaves room for JSON escaping.
pub const MAX_MESSAGE_BYTES: usize = 12 << 20;

/// Identifies one message for deduplication: the sending peer, the incarnation of its store
/// and its own sequence number. The same message sent again (a retry after a lost
/// acknowledgement) has the same id. A data directory wiped with its key kept starts a new
/// incarnation, so the sequence numbers starting again from 1 are new ids to every receiver.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MessageId {
    /// The sender's peer id.
    pub origin: NodeId,
    /// The sender's incarnation: a random number made once when its store was created
    /// (0 for messages that are never stored nor deduplicated: probes, fetches).
    #[serde(default)]
    pub incarnation: u64,
    /// The sender's sequence number, unique per origin and incarnation.
    pub seq: u64,
}

impl MessageId {
    /// The store key that marks this message as applied by its receiver.
    pub fn seen_key(&self) -> String {
        format!("{}{:020}", self.seen_prefix(), self.seq)
    }

    /// The prefix of the `seen/` keys of this message's origin and incarnation.
    pub fn seen_prefix(&self) -> String {
        format!("seen/{}/{:016x}/", self.origin, self.incarnation)
    }

    /// The store key of the receiver's floor for this message's origin and incarnation:
    /// every message of theirs numbered below it was answered.
    pub fn floor_key(&self) -> String {
        format!("seen-floor/{}/{:016x}", self.origin, self.incarnation)
    }
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{:x}/{}", self.origin, self.incarnation, self.seq)
    }
}

/// A request on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// What the receiver deduplicates on.
    pub id: MessageId,
    /// Every message of this origin and incarnation to this receiver numbered below this was
    /// answered (acknowledged or refused) and will never be sent again: the receiver may
    /// forget their ids. Set by the outbox at each try; 0 says nothing.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub answered_below: u64,
    /// The shard and epoch of the clustered controller that sent it (`serve --etcd`), set by
    /// its mesh at each try, never stored with the message: a node that heard a later epoch
    /// of the shard refuses it, its sender having been fenced. Left out by every other
    /// sender (a controller without a cluster, a node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<crate::ShardEpoch>,
    /// The content.
    pub message: Message,
}

impl Envelope {
    /// A message with its id, saying nothing of earlier ones.
    pub fn new(id: MessageId, message: Message) -> Envelope {
        Envelope {
            id,
            answered_below: 0,
            epoch: None,
            message,
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// The predecessor was skipped (a path not taken), or its route led elsewhere: the
    /// successor is skipped too, unless its `<merge>` can still go on without it.
    Skipped,
}

pub use crate::states::{ActivityState, StateSet};

/// What a node knows about one activity of its partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityRecord {
    /// The activity id.
    pub activity: ActivityId,
    /// Its state.
    pub state: ActivityState,
    /// When its preconditions and dependency rule held (it entered `synchronizing`), in
    /// milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synchronized_ms: Option<u64>,
    /// When it entered `ready` (a manual one: when it was offered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_ms: Option<u64>,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When it finished, in milliseconds since the Unix epoch.
    pub finished_ms: Option<u64>,
    /// `started_ms` to the microsecond, as the node's clock read it: hand-off latencies are
    /// measured from these (`mobiwf-bench`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_us: Option<u64>,
    /// `finished_ms` to the microsecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_us: Option<u64>,
    /// Why it failed or was cancelled, when it did.
    pub detail: Option<String>,
    /// True when it was started by its `timeToWait` emergency trigger, before its
    /// preconditions were met.
    #[serde(default)]
    pub emergency: bool,
    /// How many times its command was tried again after failing (`<retries>`).
    #[serde(default)]
    pub retried: u32,
    /// The completion flag it ended with (a person's `--flag`, or what its command wrote to
    /// `$MOBIWF_FLAG_FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<String>,
    /// The pass this record is about (a loop's body runs in passes); left out for the first,
    /// so records from before loops are about it.
    #[serde(default, skip_serializing_if = "crate::Pass::is_first")]
    pub pass: crate::Pass,
}

/// The reason an operator's cancel gives the activities it ends: the controller records it and
/// the nodes fail their unfinished activities with it, so both say the same words.
pub const CANCELLED_BY_OPERATOR: &str = "the instance was cancelled by an operator";

/// How the reason of an activity cancelled by its dependency rule begins (the rule follows):
/// the controller does not count such a cancellation as a failure of the instance.
pub const CANCELLED_BY_RULE: &str = "its dependency rule";

/// The reason the activities left when a completion activity succeeded are cancelled with.
pub fn completed_reason(by: ActivityId) -> String {
    format!("the instance was completed by its completion activity {by}")
}

/// True when `detail` is the reason of a cancellation that is part of the workflow's design
/// (its dependency rule can no longer hold, or a completion activity ended the instance),
/// not the sign of a failure.
pub fn cancelled_by_design(detail: &str) -> bool {
    detail.starts_with(CANCELLED_BY_RULE)
        || detail.starts_with("the instance was completed by its completion activity")
}

/// What an operator does to a whole instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// Start nothing new until resumed (running activities finish).
    Interrupt,
    /// Go on after an interruption.
    Resume,
    /// Cancel every activity not finished; the instance ends cancelled.
    Cancel,
}

impl Control {
    /// The word used on the command line, in the API and in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Interrupt => "interrupt",
            Control::Resume => "resume",
            Control::Cancel => "cancel",
        }
    }
}

/// Node → controller: here I am, this is what I can do and where to reach me
/// ([`Message::Register`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Register {
    /// The node's name (matched against a workflow partner's name or id).
    pub name: NodeName,
    /// The activity types the node can run.
    pub skills: Vec<ActivityTypeId>,
    /// The node's listen addresses, each ending in `/p2p/<peer id>`.
    pub addrs: Vec<String>,
    /// The join token the node was given (`--join-token-file`), for a node the controller
    /// does not know yet; a registered node needs none (its peer id is its proof). Left
    /// out when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_token: Option<String>,
}

/// The content of a request: each kind carries a named struct, whose fields are the message's
/// own on the wire, beside `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Message {
    /// Node → controller: here I am, this is what I can do and where to reach me.
    Register(Register),
    /// Controller → node: run this partition of this instance.
    Deploy(Deploy),
    /// Node → node: an activity that one of yours waits for has finished.
    Notify(Notify),
    /// Node → node: an activity that a dependency rule of yours names entered a state the
    /// rule looks at (not final: its end comes as a [`Message::Notify`], or as this message
    /// when the end has no outcome for successors yet).
    StateChanged(StateChanged),
    /// Controller → node: a completion activity succeeded: the instance is complete.
    Completed(Completed),
    /// Node → controller: an activity with `responseImmediate` 1 finished.
    Report(Report),
    /// Node → controller: every activity of the partition is final.
    PartitionResult(PartitionResult),
    /// Node → controller: an activity waited longer than its precondition's `timeOut` for the
    /// notification of a remote predecessor.
    Overdue(Overdue),
    /// Controller → node: the controller decided that these activities of your partition
    /// failed.
    Withdraw(Withdraw),
    /// Controller → node: a contingency activity runs in place of a failed one.
    Substitute(Substitute),
    /// Controller → node: an operator interrupted, resumed or cancelled the instance.
    Control(ControlInstance),
    /// Controller → node: are you there? Answered at once, never stored; the controller's
    /// failure detector sends it to partners with unfinished work (see [`crate::sync::Probe`]).
    Probe(crate::sync::Probe),
    /// Controller → node: the organisation directory, at a version.
    Directory(DirectoryVersion),
    /// Device (or controller, for insert and remove) → host: a user acts on a work item.
    Claim(Claim),
    /// Host → device: a work item as this device's users see it now. Newer versions win
    /// (messages may arrive out of order).
    Item(ItemSnapshot),
    /// Host → device: the answer to a claim on something that is not (or not yet) a work
    /// item on that host.
    Answer(ItemAnswer),
    /// Host → controller: what happened to a work item (history, status).
    ItemEvents(ItemEvents),
    /// Node → node: send me a chunk of this file's content. Answered at once with
    /// [`Reply::Chunk`] (or refused), never stored.
    Fetch(Fetch),
    /// Controller → node: what do you know of this instance's data? Answered at once with
    /// [`Reply::Data`], never stored.
    ReadData(ReadData),
    /// Device → host: what does this work item read? Answered at once with [`Reply::Data`],
    /// never stored.
    ItemData(ItemData),
    /// Device → controller: the users of this device who are disconnected now.
    Presence(Presence),
    /// Controller → device: tell a user something.
    Notice(Tell),
    /// Controller → node: run an activity's compensation (see [`crate::recovery`]).
    Compensate(Compensate),
    /// Node → controller: how a compensation ended.
    Compensated(Compensated),
    /// Controller → node: run failed and cancelled activities again.
    Rerun(Rerun),
    /// Node → controller: where is this peer now? Answered at once with [`Reply::Located`],
    /// never stored.
    Locate(Locate),
    /// Node → controller: may this activity of a task class run (see [`crate::sync`])?
    BeginSync(crate::sync::BeginSync),
    /// Controller → node: the class is held for the activity: it may run.
    SyncGranted(crate::sync::SyncGranted),
    /// Controller → node: the activity waited too long for its class: it fails.
    SyncRefused(crate::sync::SyncRefused),
    /// Node → controller: the activity is final: its class is free of it.
    EndSync(crate::sync::EndSync),
    /// Controller → node: an operator pauses or resumes one activity.
    Pause(crate::pause::PauseOrder),
    /// Node → controller: an activity was paused or resumed (by an operator or its holder),
    /// or an operator's order was refused.
    PauseReport(crate::pause::PauseReport),
    /// Node → node: a loop runs again: the activities of its body start their next pass
    /// (see [`crate::passes`]).
    NewPass(crate::passes::NewPass),
}

impl Message {
    /// A short name for logs and metrics labels.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Register(_) => "register",
            Message::Deploy(_) => "deploy",
            Message::Notify(_) => "notify",
            Message::StateChanged(_) => "state_changed",
            Message::Completed(_) => "completed",
            Message::Report(_) => "report",
            Message::PartitionResult(_) => "partition_result",
            Message::Overdue(_) => "overdue",
            Message::Withdraw(_) => "withdraw",
            Message::Substitute(_) => "substitute",
            Message::Control(_) => "control",
            Message::Probe(_) => "probe",
            Message::Directory(_) => "directory",
            Message::Claim(_) => "claim",
            Message::Item(_) => "item",
            Message::Answer(_) => "answer",
            Message::ItemEvents(_) => "item_events",
            Message::Notice(_) => "notice",
            Message::Fetch(_) => "fetch",
            Message::ReadData(_) => "read_data",
            Message::ItemData(_) => "item_data",
            Message::Presence(_) => "presence",
            Message::Compensate(_) => "compensate",
            Message::Compensated(_) => "compensated",
            Message::Rerun(_) => "rerun",
            Message::Locate(_) => "locate",
            Message::BeginSync(_) => "begin_sync",
            Message::SyncGranted(_) => "sync_granted",
            Message::SyncRefused(_) => "sync_refused",
            Message::NewPass(_) => "new_pass",
            Message::EndSync(_) => "end_sync",
            Message::Pause(_) => "pause",
            Message::PauseReport(_) => "pause_report",
        }
    }

    /// Whether the message goes in a request of its own, never waiting behind others to its
    /// peer: a probe, whose round trip is the link's liveness and a lease's measure, and the
    /// questions whose answers may be large (a file's chunk, an instance's data), which would
    /// not fit a frame beside others. None of them is stored by its receiver.
    pub fn goes_alone(&self) -> bool {
        matches!(
            self,
            Message::Probe(_)
                | Message::Locate(_)
                | Message::Fetch(_)
                | Message::ReadData(_)
                | Message::ItemData(_)
        )
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
    /// The answer to a [`Message::Fetch`]: a part of the file's content.
    Chunk {
        /// The bytes from the asked offset on, base64 (at most `FETCH_CHUNK_BYTES` of them;
        /// none at the end of the content).
        base64: String,
    },
    /// The answer to a [`Message::ReadData`]: every value the node knows of the instance.
    Data {
        /// The values, by name.
        data: Vec<Datum>,
    },
    /// The answer to a [`Message::Locate`]: the peer's addresses as it last registered them
    /// (each ending in `/p2p/<peer id>`; empty when the controller does not know it).
    Located {
        /// The addresses, the first preferred.
        addrs: Vec<String>,
    },
}
