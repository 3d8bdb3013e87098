//! Nodes joining and failing: a registration (a newer one replaces an older one), the failure
//! detector's suspicion (the controller gives up on the node's unfinished partitions) and a
//! suspected node answering again. A node that (re)joins or answers may be the one a
//! contingency activity waits for: every live instance is settled again. A registration also
//! updates the node's entry in the organisation directory (`directory`). Which nodes the
//! failure detector watches is decided here too.

use std::collections::BTreeSet;

use mobiwf_proto::{NodeId, NodeName, PartitionId};

use crate::recovery;
use crate::{Applied, Book, BookError, Effect, NodeInfo, Watched};

impl Book {
    /// A node says who it is.
    pub(crate) fn register(&mut self, now_ms: u64, mut node: NodeInfo) -> Applied {
        if self.nodes.get(&node.peer).is_some_and(|n| n.seq > node.seq) {
            return Applied::default();
        }
        node.registered_ms = now_ms;
        node.suspected = None;
        self.dirty_nodes.insert(node.peer.clone());
        self.nodes.insert(node.peer.clone(), node.clone());
        let mut directory = self.device_registered(now_ms, &node);
        let mut applied = self.settle_all(now_ms);
        directory.append(&mut applied.effects);
        applied.effects = directory;
        applied
    }

    /// The failure detector stopped hearing from a node: its unfinished partitions are given
    /// up.
    pub(crate) fn suspect(
        &mut self,
        now_ms: u64,
        peer: &NodeId,
        reason: &str,
    ) -> Result<Applied, BookError> {
        let Some(node) = self.nodes.get_mut(peer) else {
            return Ok(Applied::default());
        };
        if node.suspected.is_some() {
            return Ok(Applied::default());
        }
        node.suspected = Some(reason.to_owned());
        let name = node.name.clone();
        self.dirty_nodes.insert(peer.clone());
        let why = format!("partner {name} stopped answering ({reason})");
        let mut effects = vec![Effect::Suspected {
            name,
            reason: reason.to_owned(),
        }];
        for id in self.live_instances() {
            let parts: Vec<PartitionId> = self.instances[&id]
                .partitions
                .iter()
                .filter(|p| &p.peer == peer && !p.is_over())
                .map(|p| p.id)
                .collect();
            if parts.is_empty() {
                continue;
            }
            self.with_instance(id, now_ms, &mut effects, |inst, ctx| {
                for p in parts {
                    recovery::abandon(inst, ctx, p, &why);
                }
            })?;
        }
        let mut applied = self.settle_all(now_ms);
        effects.append(&mut applied.effects);
        applied.effects = effects;
        Ok(applied)
    }

    /// An operator removes the node named `name`: its unfinished partitions are given up as
    /// for a suspected node, its holds of task classes end once its lease is over there
    /// (`sync/fence.rs`), and it leaves the registered nodes (its name is free for another
    /// key; to come back it must enrol again).
    pub(crate) fn remove_node(
        &mut self,
        now_ms: u64,
        name: &NodeName,
    ) -> Result<Applied, BookError> {
        let peer = self
            .nodes
            .values()
            .find(|n| &n.name == name)
            .map(|n| n.peer.clone())
            .ok_or_else(|| BookError::UnknownNode(name.clone()))?;
        let applied = self.suspect(now_ms, &peer, "removed by an operator")?;
        self.fence_removed(now_ms, &peer, name);
        self.nodes.remove(&peer);
        self.dirty_nodes.insert(peer);
        Ok(applied)
    }

    /// A suspected node answers again.
    pub(crate) fn answering(&mut self, now_ms: u64, peer: &NodeId) -> Applied {
        let Some(node) = self.nodes.get_mut(peer) else {
            return Applied::default();
        };
        if node.suspected.take().is_none() {
            return Applied::default();
        }
        let name = node.name.clone();
        self.dirty_nodes.insert(peer.clone());
        let mut applied = self.settle_all(now_ms);
        applied.effects.insert(0, Effect::AnswersAgain { name });
        applied
    }
}

impl Book {
    /// The nodes the failure detector should watch: those running unfinished partitions of
    /// instances not over, and the suspected ones (to notice when they answer again).
    pub fn watched(&self) -> Vec<Watched> {
        let mut peers: BTreeSet<&NodeId> = self
            .live()
            .flat_map(|i| i.partitions.iter())
            .filter(|p| !p.is_over())
            .map(|p| &p.peer)
            .collect();
        peers.extend(
            self.nodes
                .values()
                .filter(|n| n.suspected.is_some())
                .map(|n| &n.peer),
        );
        // A node whose user disconnected on purpose is not suspected while they are away: its
        // own partitions go on offline and report when it is back.
        // A node holding a task class is watched until it releases it, away or not: only its
        // suspicion frees a class whose holder never says so (its lease ended the held work
        // there before).
        let holders: BTreeSet<&NodeId> = self.sync_holders().collect();
        peers.extend(holders.iter().copied());
        let away: BTreeSet<&NodeId> = self
            .directory
            .devices
            .values()
            .filter(|d| !d.away.is_empty())
            .map(|d| &d.node)
            .collect();
        peers
            .into_iter()
            .filter(|p| !away.contains(p) || holders.contains(p))
            .filter_map(|p| self.nodes.get(p))
            .map(|n| Watched {
                peer: n.peer.clone(),
                addrs: n.addrs.clone(),
                suspected: n.suspected.is_some(),
            })
            .collect()
    }
}
