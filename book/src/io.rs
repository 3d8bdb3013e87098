//! What goes into the book and what comes out: the inputs (`Input`), the effects the daemon
//! carries out once the changes are on disk (`Effect`), what `apply` did (`Applied`) and why
//! an input was refused (`BookError`).

use mobiwf_proto::{
    ActivityId, Control, GivenInputs, InstanceId, ItemAction, Message, NodeId, NodeName,
    PartitionId,
};
use mobiwf_xml_schema::{Organisation, UserId};

use crate::{NodeInfo, PlacementError};

/// What happens to the controller.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A node says who it is.
    Register(NodeInfo),
    /// An operator submits a workflow definition.
    Submit {
        /// The definition, as XML (any encoding its declaration names).
        definition: Vec<u8>,
        /// Its name for error messages (a file name).
        source: String,
        /// The user told when it starts, when an activity of it fails or is cancelled, and
        /// when it ends (`--responsible`); must be in the organisation directory.
        responsible: Option<UserId>,
        /// The instance's inputs given (`--data name=value`), checked against the values the
        /// definition declares as inputs.
        inputs: GivenInputs,
        /// Who submits it: checked against the definition's creator role, as a start is.
        starter: crate::Starter,
    },
    /// An operator starts an instance of a deployed definition by name.
    Start(crate::Start),
    /// A node acknowledged or refused a partition.
    Delivered {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The refusal's reason, if it was refused.
        refused: Option<String>,
    },
    /// The failure detector stopped hearing from a node.
    Suspect {
        /// Its peer id.
        peer: NodeId,
        /// What the detector saw.
        reason: String,
    },
    /// An operator removes a node (`mobiwf-controller nodes remove NAME`): gone for good, or
    /// its name is to go to another key.
    RemoveNode {
        /// Its name.
        name: NodeName,
    },
    /// A suspected node answers again.
    Answering {
        /// Its peer id.
        peer: NodeId,
    },
    /// Time passed: partition `timeOut`s that ran out are acted on. Sent at
    /// [`Book::next_deadline`].
    Tick,
    /// An operator interrupts, resumes or cancels an instance.
    Control {
        /// The instance.
        instance: InstanceId,
        /// What to do.
        action: Control,
    },
    /// An operator pauses or resumes one activity (its node decides, and tells).
    Pause {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: mobiwf_proto::ActivityId,
        /// Pause (perhaps killing its command) or resume.
        action: mobiwf_proto::PauseAction,
        /// Who asks (the operator's name, for the history).
        by: String,
    },
    /// An operator applies an organisation document (validated by the daemon with
    /// `mobiwf_xml_schema::load_organisation`): the directory's next version, sent to every
    /// registered node.
    Organisation {
        /// The document, as applied (sent to the nodes as it is).
        document: String,
        /// What it says.
        org: Organisation,
    },
    /// An operator applies a class document (validated by the daemon with
    /// `mobiwf_xml_schema::load_classes`): the task classes the synchronization manager
    /// decides by from now on.
    Classes {
        /// The document, as applied.
        document: String,
        /// What it says.
        classes: mobiwf_xml_schema::ClassDocument,
    },
    /// An operator applies an ordering document (XML or PDL): read, checked and resolved
    /// against the deployed definitions by the book; it applies to instances placed from now
    /// on.
    Orderings {
        /// Its name (a file name): its extension says its language.
        source: String,
        /// The document, as applied.
        document: String,
    },
    /// An operator inserts a work item on a user's worklist, removes it from one, or
    /// delegates it (`Delegate { to }`) from `user` to another: a claim sent to the item's
    /// host.
    Worklist {
        /// The instance.
        instance: InstanceId,
        /// The activity (a manual one with people extensions).
        activity: ActivityId,
        /// Whose worklist (for a delegation: who gives it).
        user: UserId,
        /// `Insert`, `Remove` or `Delegate { to }`; the others are the users' own, done on
        /// their devices.
        action: ItemAction,
    },
    /// An operator reruns a failed activity of a failed instance (forward recovery).
    Rerun {
        /// The instance.
        instance: InstanceId,
        /// The activity that failed.
        activity: ActivityId,
    },
    /// A node acknowledged (or refused) the rerun of a partition (`Message::Rerun`).
    RerunDelivered {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
    },
    /// A settled instance the daemon read back from its store, before an input that names
    /// it (the book lets settled instances go: [`crate::Book::evict_settled`]).
    Recall(Box<crate::Recalled>),
    /// A node reports (`Report`, `PartitionResult` or `Overdue`), or a host tells what
    /// happened to a work item (`ItemEvents`), or answers the controller's claim (`Item`).
    FromNode {
        /// The sending node's peer id (authenticated by the transport).
        peer: NodeId,
        /// What it says.
        message: Message,
    },
}

/// Something to do once the changes are on disk.
// Effects live from `apply` to the daemon's staging, a few at a time: a boxed message would
// cost an allocation each for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Send a message through the outbox.
    Send {
        /// The receiver's peer id.
        to: NodeId,
        /// Its addresses.
        addrs: Vec<String>,
        /// The message.
        message: Message,
    },
    /// A partner became suspected: nothing to carry out, worth the daemon's log.
    Suspected {
        /// Its name.
        name: NodeName,
        /// What the failure detector saw.
        reason: String,
    },
    /// A suspected partner answers again: worth the daemon's log.
    AnswersAgain {
        /// Its name.
        name: NodeName,
    },
}

/// Why an input was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    /// The submitted definition has problems (rendered `file:line:col: error: ...` lines).
    #[error("{0}")]
    Invalid(String),
    /// A document larger than the book takes ([`crate::Book::with_largest_document`]): the
    /// words say how large, the limit and what to do.
    #[error("{0}")]
    TooLarge(String),
    /// The workflow cannot be placed on the registered nodes.
    #[error(transparent)]
    Placement(#[from] PlacementError),
    /// A report about an instance the controller does not have.
    #[error("no instance {0}")]
    UnknownInstance(InstanceId),
    /// A report from a node that does not run that partition.
    #[error("peer {peer} does not run partition {partition} of instance {instance}")]
    NotYours {
        /// The sender.
        peer: NodeId,
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
    },
    /// No registered node has that name.
    #[error("no registered node is named {0} (`mobiwf-controller nodes` lists them)")]
    UnknownNode(NodeName),
    /// A message the controller does not take.
    #[error("the controller does not take {0} messages")]
    Unexpected(&'static str),
    /// The operator's control does not apply to the instance as it is.
    #[error("instance {instance} is {state}: cannot {action} it")]
    NotNow {
        /// The instance.
        instance: InstanceId,
        /// Its state.
        state: &'static str,
        /// What was asked.
        action: &'static str,
    },
    /// A people-side input that cannot be taken: the organisation, the responsible user, the
    /// roles a submission names, or a worklist administration (the words say what and what
    /// to do; one line per problem).
    #[error("{0}")]
    People(String),
    /// An operator's pause or resumption of an activity that does not apply (the words say
    /// why and what to do).
    #[error("{0}")]
    Pause(String),
    /// An operator's rerun that does not apply (the words say why and what to do).
    #[error("{0}")]
    Rerun(String),
    /// The inputs given when starting an instance do not fit the definition: one line per
    /// problem, then what it expects.
    #[error("{0}")]
    Inputs(String),
    /// No deployed definition (or version of one) by that name to start, show or remove (the
    /// words say what there is).
    #[error("{0}")]
    UnknownDefinition(String),
    /// A definition's removal while instances of it run.
    #[error(
        "definition {name} has instances running: {}; wait for them to end, or cancel them, \
         then remove it",
        ids(instances)
    )]
    DefinitionRunning {
        /// The definition's name.
        name: mobiwf_xml_schema::DefinitionName,
        /// Its instances not over.
        instances: Vec<InstanceId>,
    },
    /// A start by someone the definition's creator role does not let start it (the words
    /// say which role it needs).
    #[error("{0}")]
    NotCreator(String),
    /// A deployment past the registry's limit (the words say what to do).
    #[error("{0}")]
    RegistryFull(String),
    /// A definition naming a task class the controller's class document does not have, a
    /// class document leaving out a class in use, or a node asking for a class its
    /// activity does not have (the words say which and what to do; one line per problem).
    #[error("{0}")]
    Classes(String),
    /// A start of a deployed version whose stored document does not read back (the words say
    /// which and what to do).
    #[error("{0}")]
    Unreadable(String),
}

/// Instance ids as a list in words: `3, 5`.
fn ids(instances: &[InstanceId]) -> String {
    let ids: Vec<String> = instances.iter().map(ToString::to_string).collect();
    ids.join(", ")
}

/// What `apply` did.
#[derive(Debug, Default)]
pub struct Applied {
    /// Messages to send.
    pub effects: Vec<Effect>,
    /// The new instance, for a submission.
    pub instance: Option<InstanceId>,
}
