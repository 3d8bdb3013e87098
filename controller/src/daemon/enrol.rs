//! The actor's side of enrolment: a registration is let in only as the enrolment says, a
//! stranger's other messages are refused (counted and logged with its peer id), and the
//! operators' enrolment commands (join tokens, the allow list, removing a node) are applied
//! and stored with the group.

use libp2p::PeerId;
use mobiwf_book::{Book, Effect, Input, NodeInfo};
use mobiwf_proto::{Message, NodeId, NodeName, Register, Reply};
use mobiwf_runtime::daemon::Group;
use mobiwf_runtime::metrics::Peer;
use mobiwf_runtime::store::StoreError;
use serde::Serialize;
use tokio::sync::oneshot;

use super::actor::ControllerActor;
use crate::enrolment::{Admission, Change, Enrolment, JoinToken};

/// An operator's enrolment command.
pub(crate) enum EnrolAction {
    /// A new join token (the client made it and keeps the text; the controller keeps its
    /// hash).
    CreateToken { hash: String, label: String },
    /// Revoke a join token by id.
    RevokeToken { id: String },
    /// Put a peer id on the allow list.
    Allow { peer: NodeId },
    /// Remove a registered node: its partitions are given up, its name is free.
    RemoveNode { name: NodeName },
    /// The tokens and the allow list.
    List,
}

/// What an enrolment command did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "done")]
pub enum EnrolAnswer {
    /// The token made (its hash and id; the client shows the text).
    Created {
        /// What the controller keeps of it.
        token: JoinToken,
    },
    /// The token revoked.
    Revoked {
        /// Its id.
        id: String,
    },
    /// The peer allowed.
    Allowed {
        /// Its peer id.
        peer: NodeId,
    },
    /// The node removed.
    Removed {
        /// Its name, now free.
        name: NodeName,
        /// Its peer id.
        peer: NodeId,
    },
    /// The join tokens (hashes left out) and the allow list.
    Listing {
        /// The tokens.
        tokens: Vec<TokenView>,
        /// The peer ids allowed.
        allowed: Vec<NodeId>,
        /// Whether anyone may join.
        open: bool,
    },
}

/// A join token as operators see it.
#[derive(Debug, Clone, Serialize)]
pub struct TokenView {
    /// Its id.
    pub id: String,
    /// Its label.
    pub label: String,
    /// When it was made, ms since the epoch.
    pub created_ms: u64,
}

/// Where an enrolment command's answer goes.
pub(crate) type EnrolReply = oneshot::Sender<Result<EnrolAnswer, String>>;

/// Whether `message` from `from` may go on to the book: a registration as the enrolment
/// admits it (a new node logged with how it got in), anything else from a registered node.
pub(super) fn admit(
    enrolment: &Enrolment,
    book: &Book,
    from: &PeerId,
    message: &Message,
) -> Result<(), String> {
    let peer = NodeId::new(from.to_string());
    let Message::Register(Register {
        name, join_token, ..
    }) = message
    else {
        return match book.node(&peer) {
            Some(_) => Ok(()),
            None => Err(not_a_member(&peer)),
        };
    };
    let hash = join_token.as_deref().map(mobiwf_runtime::secret::hash);
    match enrolment.admit(&peer, name, hash.as_deref(), book.nodes())? {
        Admission::Member => {}
        Admission::Token(id) => {
            tracing::info!(%name, %peer, token = %id, "node enrolled with a join token")
        }
        Admission::Allowed => tracing::info!(%name, %peer, "node enrolled from the allow list"),
        Admission::Open => tracing::info!(%name, %peer, "node enrolled (open enrolment)"),
    }
    Ok(())
}

fn not_a_member(peer: &NodeId) -> String {
    format!(
        "peer {peer} is not a registered node of this mesh: a node registers first (with a \
         join token, or allowed by an operator)"
    )
}

impl ControllerActor {
    /// A message from a peer that is not a registered node, and not a registration: refused
    /// at once, counted and logged, nothing stored.
    pub(super) fn stranger(&self, inbound: mobiwf_runtime::mesh::Inbound, group: &mut Group) {
        let kind = inbound.envelope.message.kind();
        let peer = NodeId::new(inbound.from.to_string());
        self.metrics.refused(kind, Peer::Partner);
        tracing::warn!(peer = %inbound.from, "refused a {kind} message from a stranger");
        group.reply(
            inbound.reply,
            Reply::Refused {
                reason: not_a_member(&peer),
            },
        );
    }

    /// An operator's enrolment command, staged in this group; answered after the write.
    pub(super) fn enrol(
        &mut self,
        now: u64,
        action: EnrolAction,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<Result<EnrolAnswer, String>, StoreError> {
        let (change, answer) = match action {
            EnrolAction::List => return Ok(Ok(self.listing())),
            EnrolAction::CreateToken { hash, label } => {
                match self.enrolment.add_token(hash, label, now) {
                    Ok(Change::Token(token)) => {
                        tracing::info!(id = %token.id, "join token created");
                        (Change::Token(token.clone()), EnrolAnswer::Created { token })
                    }
                    Ok(_) => return Ok(Err("not a token".to_owned())),
                    Err(e) => return Ok(Err(e)),
                }
            }
            EnrolAction::RevokeToken { id } => match self.enrolment.revoke(&id) {
                Ok(change) => {
                    tracing::info!(%id, "join token revoked");
                    (change, EnrolAnswer::Revoked { id })
                }
                Err(e) => return Ok(Err(e)),
            },
            EnrolAction::Allow { peer } => match self.enrolment.allow(peer.clone()) {
                Ok(change) => {
                    tracing::info!(%peer, "peer id allowed to join");
                    (change, EnrolAnswer::Allowed { peer })
                }
                Err(e) => return Ok(Err(e)),
            },
            EnrolAction::RemoveNode { name } => return self.remove(now, name, group, effects),
        };
        crate::enrolment::stage(&mut group.batch, &change)?;
        Ok(Ok(answer))
    }

    /// Removes the node named `name` from the book and from the allow list.
    fn remove(
        &mut self,
        now: u64,
        name: NodeName,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<Result<EnrolAnswer, String>, StoreError> {
        let peer = self
            .book
            .nodes()
            .find(|n| n.name == name)
            .map(|n: &NodeInfo| n.peer.clone());
        let applied = match self
            .book
            .apply(now, Input::RemoveNode { name: name.clone() })
        {
            Ok(applied) => applied,
            Err(e) => return Ok(Err(e.to_string())),
        };
        effects.extend(applied.effects);
        let Some(peer) = peer else {
            return Ok(Err(format!("no registered node is named {name}")));
        };
        if let Some(change) = self.enrolment.disallow(&peer) {
            crate::enrolment::stage(&mut group.batch, &change)?;
        }
        tracing::warn!(%name, %peer, "node removed by an operator");
        Ok(Ok(EnrolAnswer::Removed { name, peer }))
    }

    fn listing(&self) -> EnrolAnswer {
        EnrolAnswer::Listing {
            tokens: self
                .enrolment
                .tokens()
                .map(|t| TokenView {
                    id: t.id.clone(),
                    label: t.label.clone(),
                    created_ms: t.created_ms,
                })
                .collect(),
            allowed: self.enrolment.allowed().cloned().collect(),
            open: self.enrolment.open,
        }
    }
}
