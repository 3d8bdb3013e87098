//! Why the engine refused an input (nothing changed): what the daemon answers the sender, a
//! person or the API with.

use mobiwf_proto::{ActivityId, InstanceId, NodeId, PartitionId};

/// Why the engine refused an input. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The partition document does not load.
    #[error(
        "partition document of instance {instance}, partition {partition} is invalid:\n{diagnostics}"
    )]
    BadDocument {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// The problems, rendered.
        diagnostics: String,
    },
    /// The document is for another instance.
    #[error("the document says workflow id {found}, but it was sent for instance {instance}")]
    WrongInstance {
        /// The instance it was sent for.
        instance: InstanceId,
        /// The id in the document.
        found: InstanceId,
    },
    /// Another document was deployed before under the same instance and partition.
    #[error(
        "instance {instance}, partition {partition} was deployed here before with another \
         document; was the controller's data directory reset? Give this node a fresh data \
         directory, or restore the controller's"
    )]
    Conflict {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
    },
    /// The inputs deployed with a partition do not fit its document's declarations.
    #[error(
        "the inputs deployed with instance {instance}, partition {partition} do not fit its \
         document: {reason}"
    )]
    BadInputs {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// What does not fit.
        reason: String,
    },
    /// A remote adjacent's location cannot be read: its notifications could never be
    /// delivered.
    #[error("{reason}")]
    UnreadableLocation {
        /// The instance.
        instance: InstanceId,
        /// The partition.
        partition: PartitionId,
        /// Which adjacent, and why.
        reason: String,
    },
    /// No such activity on this node.
    #[error("no activity {activity} of instance {instance} on this node")]
    UnknownActivity {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
    },
    /// The activity cannot be finished now or by this finisher.
    #[error("activity {activity} of instance {instance} cannot be completed: {reason}")]
    NotCompletable {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// Why.
        reason: String,
    },
    /// What a person gave to complete the activity is invalid (a flag that is not one, data
    /// of the wrong type or that the activity does not write): their input, not the moment.
    #[error("activity {activity} of instance {instance} cannot be completed: {reason}")]
    InvalidCompletion {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// What is wrong with it.
        reason: String,
    },
    /// The activity is not a work item here.
    #[error("activity {activity} of instance {instance} is not a work item: {reason}")]
    NotAnItem {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// Why.
        reason: String,
    },
    /// A claim came from a node the directory does not know as a device.
    #[error(
        "node {node} is not a registered device in organisation directory version {version}; \
         register it with the controller and name it as the users' device"
    )]
    UnknownDevice {
        /// The sending node's peer id.
        node: NodeId,
        /// The version of the directory this node holds.
        version: u64,
    },
    /// A partner's word about an activity from a peer that does not run it.
    #[error("{reason}")]
    NotTheSpeaker {
        /// Who sent it.
        from: NodeId,
        /// Why it is refused (who runs the activity, or that it is not part of the instance
        /// here).
        reason: String,
    },
    /// Too many words waiting for their instance's deployment.
    #[error(
        "{what}: words about instances not deployed here yet are kept up to a limit, and this \
         one is past it"
    )]
    TooEarly {
        /// Which limit.
        what: String,
    },
}
