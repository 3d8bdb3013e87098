//! Hub routing (`serve --routing hub`): the centralized alternative the benchmark compares
//! peer-to-peer execution with. Every partition document names the controller as the location
//! of every adjacent, so partners send each notification to the controller, which relays it
//! to the nodes of the successors, the way a central engine moves work between workers.

use std::collections::BTreeMap;

use mobiwf_proto::{ActivityId, InstanceId, Message, NodeId, PartitionId};
use mobiwf_xml_schema::WorkflowDefinition;

use crate::recovery::{partition_of, successor_nodes};
use crate::{Applied, Book, BookError, Effect, Instance, NodeInfo};

/// How notifications between partners travel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Routing {
    /// Partner to partner (the design).
    #[default]
    PeerToPeer,
    /// Through the controller, which listens at `address` (a full libp2p address).
    Hub {
        /// The controller's address, written as every adjacent's location.
        address: String,
    },
}

impl Routing {
    /// The location to write for an adjacent that runs at `node_address`.
    pub fn location(&self, node_address: &str) -> String {
        match self {
            Routing::PeerToPeer => node_address.to_owned(),
            Routing::Hub { address } => address.clone(),
        }
    }
}

impl Book {
    /// A partner's notification (`Notify` or `StateChanged`), sent to the controller under hub
    /// routing: relayed as it came.
    pub(crate) fn relay(
        &self,
        peer: &NodeId,
        instance: InstanceId,
        activity: ActivityId,
        message: Message,
    ) -> Result<Applied, BookError> {
        let inst = self
            .instances
            .get(&instance)
            .ok_or(BookError::UnknownInstance(instance))?;
        let def = self.definitions.get(&instance).map(|d| &**d);
        let effects = relay(inst, def, &self.nodes, peer, activity, &message)?;
        Ok(Applied {
            effects,
            instance: None,
        })
    }
}

/// A partner's notification about `activity`, sent to the controller (hub routing): the same
/// message to each node running a successor (by precondition or rule) in another partition
/// (which may be the sender's node, when it runs several partitions).
fn relay(
    inst: &Instance,
    def: Option<&WorkflowDefinition>,
    nodes: &BTreeMap<NodeId, NodeInfo>,
    from: &NodeId,
    activity: ActivityId,
    message: &Message,
) -> Result<Vec<Effect>, BookError> {
    let partition = partition_of(inst, activity).unwrap_or(PartitionId(0));
    crate::check_sender(inst, from, partition)?;
    let Some(def) = def else {
        return Ok(Vec::new());
    };
    Ok(successor_nodes(inst, nodes, def, activity)
        .into_iter()
        .map(|node| Effect::Send {
            to: node.peer.clone(),
            addrs: node.addrs.clone(),
            message: message.clone(),
        })
        .collect())
}
