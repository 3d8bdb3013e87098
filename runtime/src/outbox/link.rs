//! What the outbox delivers through: the mesh (with the controller as the locator of peers
//! that moved), or a stand-in in tests, so that the lanes and their backoff are tested without
//! a network.

use std::time::Duration;

use futures::future::BoxFuture;
use libp2p::{Multiaddr, PeerId};
use tokio::sync::broadcast;

use crate::mesh::{Freshness, MeshHandle};
use mobiwf_proto::{Envelope, Locate, Message, MessageId, Reply};

/// How long a `locate` question to the controller may take.
pub const LOCATE_TIMEOUT: Duration = Duration::from_secs(2);

pub use mobiwf_delivery::LinkError;

/// The way messages leave.
pub trait Link: Send + Sync + 'static {
    /// This daemon's peer id (messages to it go to the local queue).
    fn me(&self) -> PeerId;
    /// Sends one request and waits for its answer.
    fn request(
        &self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        envelope: Envelope,
    ) -> BoxFuture<'static, Result<Reply, LinkError>>;
    /// Announces every peer connected from now on.
    fn seen(&self) -> broadcast::Receiver<PeerId>;
    /// Finds out where `peer` is now, after deliveries to it failed; true when it learnt
    /// addresses it did not try yet (the next attempt then goes at once).
    fn relocate(&self, peer: PeerId) -> BoxFuture<'static, bool>;
}

/// The mesh, and the peer to ask where others are (a node's controller; none for the
/// controller itself, which hears every node's registration).
pub struct MeshLink {
    /// The mesh.
    pub mesh: MeshHandle,
    /// The controller: its peer id and addresses.
    pub locator: Option<(PeerId, Vec<Multiaddr>)>,
}

impl Link for MeshLink {
    fn me(&self) -> PeerId {
        self.mesh.peer_id()
    }

    fn request(
        &self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        envelope: Envelope,
    ) -> BoxFuture<'static, Result<Reply, LinkError>> {
        let mesh = self.mesh.clone();
        Box::pin(async move {
            mesh.request(to, addrs, envelope).await.map_err(|e| {
                if e.unanswered() {
                    LinkError::Unanswered(e.to_string())
                } else {
                    LinkError::Failed(e.to_string())
                }
            })
        })
    }

    fn seen(&self) -> broadcast::Receiver<PeerId> {
        self.mesh.seen()
    }

    fn relocate(&self, peer: PeerId) -> BoxFuture<'static, bool> {
        let mesh = self.mesh.clone();
        let locator = self.locator.clone();
        Box::pin(async move {
            let Some((controller, controller_addrs)) = locator else {
                return false;
            };
            if controller == peer {
                return false;
            }
            match locate(&mesh, controller, controller_addrs, peer).await {
                Ok(addrs) => {
                    let new = any_new(&mesh.addresses(peer).await, &addrs);
                    if new {
                        tracing::info!(%peer, ?addrs, "the controller says the peer is elsewhere now");
                    }
                    mesh.learn(peer, addrs, Freshness::Fresh).await;
                    new
                }
                Err(why) => {
                    tracing::debug!(%peer, "cannot ask the controller where the peer is: {why}");
                    false
                }
            }
        })
    }
}

/// Asks the controller where `peer` is; its addresses as the controller knows them.
async fn locate(
    mesh: &MeshHandle,
    controller: PeerId,
    addrs: Vec<Multiaddr>,
    peer: PeerId,
) -> Result<Vec<Multiaddr>, String> {
    let envelope = Envelope {
        // Never stored or deduplicated, like a probe: sequence 0.
        answered_below: 0,
        epoch: None,
        id: MessageId {
            incarnation: 0,
            origin: crate::peer_text::node_id(&mesh.peer_id()),
            seq: 0,
        },
        message: Message::Locate(Locate {
            peer: crate::peer_text::node_id(&peer),
        }),
    };
    let answer = tokio::time::timeout(LOCATE_TIMEOUT, mesh.request(controller, addrs, envelope))
        .await
        .map_err(|_| format!("no answer within {LOCATE_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
    located(answer)
}

/// The addresses a `locate` answer gives (those that parse), or why it gives none.
fn located(answer: Reply) -> Result<Vec<Multiaddr>, String> {
    match answer {
        Reply::Located { addrs } => Ok(addrs.iter().filter_map(|a| a.parse().ok()).collect()),
        Reply::Refused { reason } => Err(format!("refused: {reason}")),
        other => Err(format!("an answer that is not a location: {other:?}")),
    }
}

/// Whether `found` (addresses ending in the peer's id) holds one the mesh does not know yet
/// (`known`, as its address book keeps them: without the peer id).
fn any_new(known: &[Multiaddr], found: &[Multiaddr]) -> bool {
    found.iter().any(|a| !known.contains(&strip_peer(a)))
}

fn strip_peer(addr: &Multiaddr) -> Multiaddr {
    let mut addr = addr.clone();
    if let Some(libp2p::multiaddr::Protocol::P2p(_)) = addr.iter().last() {
        addr.pop();
    }
    addr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> Multiaddr {
        text.parse().unwrap()
    }

    #[test]
    fn a_locate_answer_gives_the_addresses_that_parse_or_why_none() {
        let peer = PeerId::random();
        let good = format!("/ip4/10.0.0.2/tcp/4002/p2p/{peer}");
        let answer = Reply::Located {
            addrs: vec![good.clone(), "not an address".to_owned()],
        };
        assert_eq!(located(answer), Ok(vec![addr(&good)]));
        let refused = located(Reply::Refused {
            reason: "stranger".to_owned(),
        });
        assert_eq!(refused, Err("refused: stranger".to_owned()));
        assert!(located(Reply::Ack).unwrap_err().contains("not a location"));
    }

    #[test]
    fn an_address_is_new_when_the_address_book_lacks_it_without_the_peer_id() {
        let peer = PeerId::random();
        let at = |ip: &str| addr(&format!("/ip4/{ip}/tcp/4002/p2p/{peer}"));
        let bare = |ip: &str| addr(&format!("/ip4/{ip}/tcp/4002"));
        let known = [bare("10.0.0.2")];
        assert!(!any_new(&known, &[at("10.0.0.2")]));
        assert!(any_new(&known, &[at("10.0.0.2"), at("10.0.0.3")]));
        assert!(!any_new(&known, &[]), "nothing found is nothing new");
        assert!(any_new(&[], &[at("10.0.0.2")]));
        // Given without its peer id, it is compared as it is.
        assert!(!any_new(&known, &[bare("10.0.0.2")]));
    }
}
