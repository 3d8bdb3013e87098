//! An outbox entry as the store keeps it: the message and where it goes, staged in the batch
//! of the change that caused it and removed (a refusal recorded) in the batch that takes its
//! answer. Apart from the delivery task because the daemons' groups stage and remove entries
//! themselves, and because what is stored must stay readable whatever delivery becomes.

use libp2p::{Multiaddr, PeerId};
use serde::{Deserialize, Serialize};

use crate::metrics::Peer;
use crate::store::{Batch, StoreError, encode};
use mobiwf_proto::{Envelope, NodeId, Reply};

/// Key prefix of outbox entries: `out/<origin seq, 20 digits>`.
pub const OUTBOX_PREFIX: &str = "out/";
/// Key prefix of messages the receiver refused (kept for the operator to look at).
pub const REFUSED_PREFIX: &str = "refused/";

/// A message to deliver, as kept in the outbox.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outgoing {
    /// The receiver's peer id.
    pub to: NodeId,
    /// Addresses to dial the receiver at.
    pub addrs: Vec<String>,
    /// Whether the receiver is the controller or a partner (for metrics).
    pub role: Peer,
    /// The message.
    pub envelope: Envelope,
    /// `to` and `addrs` parsed, when the sender had them parsed already: delivery then does
    /// not parse them again. Not stored; a message read back from the store is parsed once.
    #[serde(skip)]
    parsed: Option<(PeerId, Vec<Multiaddr>)>,
}

impl PartialEq for Outgoing {
    fn eq(&self, other: &Self) -> bool {
        (&self.to, &self.addrs, self.role, &self.envelope)
            == (&other.to, &other.addrs, other.role, &other.envelope)
    }
}

impl Outgoing {
    /// A message to a peer whose id and addresses are parsed already.
    pub fn parsed(peer: PeerId, addrs: Vec<Multiaddr>, role: Peer, envelope: Envelope) -> Self {
        Outgoing {
            to: NodeId::new(peer.to_string()),
            addrs: addrs.iter().map(ToString::to_string).collect(),
            role,
            envelope,
            parsed: Some((peer, addrs)),
        }
    }

    /// A message to a peer given as text (parsed when it is delivered).
    pub fn text(to: NodeId, addrs: Vec<String>, role: Peer, envelope: Envelope) -> Self {
        Outgoing {
            to,
            addrs,
            role,
            envelope,
            parsed: None,
        }
    }

    /// The receiver's peer id and addresses, parsed (once: as the sender had them, or from
    /// their text); a bad one is a reason to refuse the message.
    pub(super) fn destination(&self) -> Result<(PeerId, Vec<Multiaddr>), String> {
        if let Some(parsed) = &self.parsed {
            return Ok(parsed.clone());
        }
        let to: PeerId = self
            .to
            .as_str()
            .parse()
            .map_err(|e| format!("bad peer id {:?}: {e}", self.to.as_str()))?;
        let mut addrs = Vec::new();
        for a in &self.addrs {
            let addr: Multiaddr = a.parse().map_err(|e| format!("bad address {a:?}: {e}"))?;
            addrs.push(addr);
        }
        Ok((to, addrs))
    }
}

fn key(seq: u64) -> String {
    format!("{OUTBOX_PREFIX}{seq:020}")
}

/// A refused message as kept under [`REFUSED_PREFIX`], for the operator.
#[derive(Serialize)]
struct RefusedRecord<'a> {
    #[serde(flatten)]
    message: &'a Outgoing,
    refused: &'a str,
}

/// Adds to `batch` the removal of an answered message, and the record of a refusal.
pub fn stage_answered(batch: &mut Batch, msg: &Outgoing, reply: &Reply) -> Result<(), StoreError> {
    batch.delete(key(msg.envelope.id.seq));
    if let Reply::Refused { reason } = reply {
        let record = RefusedRecord {
            message: msg,
            refused: reason,
        };
        batch.put(
            format!("{REFUSED_PREFIX}{:020}", msg.envelope.id.seq),
            encode("a refused message", &record)?,
        );
    }
    Ok(())
}

/// Adds `msg` to `batch`, so that it is written with the state change that caused it.
pub fn stage(batch: &mut Batch, msg: &Outgoing) -> Result<(), StoreError> {
    batch.put(
        key(msg.envelope.id.seq),
        encode("an outgoing message", msg)?,
    );
    Ok(())
}

/// The peer id at the end of a multiaddr (`.../p2p/<peer id>`), as the documents' `ip` give it.
pub fn peer_of(addr: &str) -> Result<(PeerId, Multiaddr), String> {
    let ma: Multiaddr = addr
        .parse()
        .map_err(|e| format!("{addr:?} is not a multiaddr: {e}"))?;
    match ma.iter().last() {
        Some(libp2p::multiaddr::Protocol::P2p(peer)) => Ok((peer, ma)),
        _ => Err(format!(
            "{addr:?} does not end in /p2p/<peer id>; give the partner's full libp2p address"
        )),
    }
}
