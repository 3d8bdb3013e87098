//! What the node's core is given and what it answers: the inputs (a peer's message once
//! translated, time, a command's end, people's and operators' words, a link's news), the
//! messages it sends, and the replies the daemon hands to whoever asked once the changes are
//! written.

use std::collections::BTreeSet;

use mobiwf_engine::{Claimed, Ended, Finish, Finisher, Input, Refusal, Target};
use mobiwf_people::{DeskInput, ItemKey, LocalClaim};
use mobiwf_proto::{
    ActivityId, DataValue, Datum, FileRef, InstanceId, Location, Message, NodeId, PartitionId,
    UserId, Verdict,
};

/// One input to the node's core.
#[derive(Debug, Clone)]
pub enum NodeInput {
    /// A peer's message for the partition engine (see [`crate::NodeCore::accept`]), or the
    /// daemon's word that a held command's lease ran out (`Input::SyncLost`).
    Engine(Input),
    /// A peer's message for the desk (see [`crate::NodeCore::accept`]).
    Desk(DeskInput),
    /// The node's next deadline came.
    Tick,
    /// A command (or a compensation) the engine started ended.
    Ended(CommandEnd),
    /// A person finishes a manual activity of the node's worklist.
    Complete(PersonEnd),
    /// A user acts on a work item through this node, their device.
    Claim(LocalClaim),
    /// A claim of this node's desk on an item of its own engine, once its instance is back
    /// in memory ([`crate::Output::deferred`]).
    OwnClaim(Claimed),
    /// Deliveries to a peer failed too often (`reachable: false`), or it was heard from again.
    Link {
        /// The peer.
        peer: NodeId,
        /// True when it answers again.
        reachable: bool,
    },
    /// A peer refused a message this node sent it (the outbox recorded the refusal): a
    /// user's claim it carried is answered so, instead of waiting for an answer that will
    /// never come.
    Refused {
        /// The message refused.
        message: Message,
        /// The receiver's words.
        reason: String,
    },
    /// A file content is whole on this node; the instances that waited for it.
    Fetched {
        /// The content.
        file: FileRef,
        /// The instances that wait for it.
        waiting: BTreeSet<InstanceId>,
    },
    /// An item's host answered what the item reads, for offline work.
    Copied {
        /// The item.
        key: ItemKey,
        /// What it reads.
        data: Vec<Datum>,
        /// The files among them already on this node.
        held: Vec<FileRef>,
    },
    /// The application a user of this device selected an item for ended
    /// (`Desk::to_launch`): its completion is claimed as theirs, or they are told.
    ApplicationEnded {
        /// The item.
        key: ItemKey,
        /// The user it ran for.
        user: UserId,
        /// How it ended.
        end: mobiwf_people::AppEnd,
    },
    /// A user of this device goes away.
    Away(UserId),
    /// A user of this device comes back.
    Back(UserId),
}

impl NodeInput {
    /// The instance of the engine's this input is about, if any.
    pub fn instance(&self) -> Option<InstanceId> {
        match self {
            NodeInput::Engine(input) => input.instance(),
            NodeInput::OwnClaim(claimed) => Some(claimed.claim.instance),
            NodeInput::Ended(end) => Some(end.instance),
            NodeInput::Complete(end) => Some(end.instance),
            _ => None,
        }
    }
}

/// How a command or a compensation the engine started ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEnd {
    /// Its instance.
    pub instance: InstanceId,
    /// Its partition.
    pub partition: PartitionId,
    /// Its activity.
    pub activity: ActivityId,
    /// Which try it was (0 the first).
    pub attempt: u32,
    /// True for a compensation.
    pub compensation: bool,
    /// How it ended (a compensation's flag is not read).
    pub finish: Finish,
    /// The instance data it set.
    pub written: Vec<(String, DataValue)>,
}

/// How a person ended an activity of the node's worklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonEnd {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// How the work ended: the person's words, and the completion flag they chose when it
    /// was done.
    pub finish: Finish,
    /// The instance data they set (`--set`, `--file`: files already in the file store).
    pub written: Vec<(String, DataValue)>,
}

impl PersonEnd {
    /// The engine's input.
    pub(crate) fn input(self) -> Input {
        Input::Finished(Ended {
            instance: self.instance,
            activity: self.activity,
            finish: self.finish,
            by: Finisher::Person,
            attempt: 0,
            written: self.written,
        })
    }
}

/// A message to send once the changes are written.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// To whom: the controller, or a partner's location.
    pub to: Target,
    /// What.
    pub message: Message,
}

/// The answer to an input someone waits for.
#[derive(Debug)]
pub enum Reply {
    /// What a user's action on a work item came to.
    Claim(ClaimOutcome),
    /// A person's completion: applied, or the engine's refusal.
    Completion(Result<(), Refusal>),
    /// A disconnection or a reconnection.
    Presence(Result<(), Refused>),
}

/// What a user's action on a work item came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// Decided: by this node's desk, or by the item's host.
    Answered(Verdict),
    /// Sent to the item's host, which has not answered yet; the answer will show in the
    /// worklist.
    Pending {
        /// The desk's number for the claim.
        request: u64,
        /// Where it was sent.
        host: Location,
    },
    /// The user's worklist is not on this node (or the user is unknown).
    NotHere(String),
    /// This node's desk has no such item for the user.
    UnknownItem(String),
}

/// Why a user may not go, or is not here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Their worklist is on another node, or they are unknown.
    NotHere(String),
    /// They hold selected items.
    Selected(String),
}

/// Something worth the daemon's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// How much it matters.
    pub level: Level,
    /// What happened.
    pub text: String,
}

/// How much a [`Note`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Worth knowing.
    Info,
    /// Something went wrong, and the node went on.
    Warn,
}

impl Note {
    /// A note worth knowing.
    pub fn info(text: String) -> Note {
        Note {
            level: Level::Info,
            text,
        }
    }

    /// A note of something gone wrong.
    pub fn warn(text: String) -> Note {
        Note {
            level: Level::Warn,
            text,
        }
    }
}
