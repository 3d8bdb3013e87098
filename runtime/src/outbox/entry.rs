//! An outbox entry as the store keeps it: the message and where it goes, staged in the batch
//! of the change that caused it and removed (a refusal recorded) in the batch that takes its
//! answer. Apart from the delivery task because the daemons' groups stage and remove entries
//! themselves, and because what is stored must stay readable whatever delivery becomes.

use libp2p::{Multiaddr, PeerId};
use serde::{Deserialize, Serialize};

use crate::metrics::Peer;
use crate::store::{Batch, StoreError, encode};
use mobiwf_proto::{Envelope, Location, NodeId, Reply};

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
            to: crate::peer_text::node_id(&peer),
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

/// An address someone gives (a document's `ip`, `--controller`, a registration), read once
/// where it comes in: it must be a multiaddr libp2p can dial, ending in `/p2p/<peer id>`.
pub fn location(text: &str) -> Result<Location, String> {
    let (peer, _) = dialable(text)?;
    let location = Location::parse(text).map_err(|e| e.to_string())?;
    same_peer(&location, &peer)?;
    Ok(location)
}

/// Where to dial the peer at `location`: its peer id and multiaddr, as libp2p reads them.
pub fn peer_of(location: &Location) -> Result<(PeerId, Multiaddr), String> {
    let (peer, addr) = dialable(location.as_str())?;
    same_peer(location, &peer)?;
    Ok((peer, addr))
}

/// The peer id at the end of a multiaddr (`.../p2p/<peer id>`) and the multiaddr: the one place
/// an address's text is read with libp2p.
fn dialable(addr: &str) -> Result<(PeerId, Multiaddr), String> {
    let ma: Multiaddr = addr
        .parse()
        .map_err(|e| format!("{addr:?} is not a multiaddr: {e}"))?;
    match ma.iter().last() {
        Some(libp2p::multiaddr::Protocol::P2p(peer)) => Ok((peer, ma)),
        _ => Err(format!(
            "{addr:?} does not end in /p2p/<peer id>; give its full libp2p address"
        )),
    }
}

/// The peer libp2p dials is the one the location carries: the pure cores decide by the
/// latter (a base58 peer id reads back as the text it was read from, so they never differ
/// for an address libp2p takes; checked all the same, since a mismatch would send one peer's
/// messages to another).
fn same_peer(location: &Location, peer: &PeerId) -> Result<(), String> {
    match location.peer() {
        Some(named) if *named == crate::peer_text::node_id(peer) => Ok(()),
        _ => Err(format!(
            "{:?} names the peer {peer} to libp2p, not the one its text ends in",
            location.as_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_read_once_with_the_peer_libp2p_dials() {
        let peer = PeerId::random();
        for text in [
            format!("/ip4/127.0.0.1/tcp/4001/p2p/{peer}"),
            format!("/ip4/127.0.0.1/tcp/4001/ipfs/{peer}"),
            format!(
                "/ip4/10.0.0.1/tcp/1/p2p/{}/p2p-circuit/p2p/{peer}",
                PeerId::random()
            ),
        ] {
            let at = location(&text).unwrap();
            assert_eq!(at.as_str(), text);
            assert_eq!(at.peer().unwrap().as_str(), peer.to_string());
            let (dialled, addr) = peer_of(&at).unwrap();
            assert_eq!(dialled, peer);
            assert_eq!(addr, text.parse::<Multiaddr>().unwrap());
        }
    }

    #[test]
    fn what_libp2p_cannot_dial_is_refused_with_what_it_was() {
        let err = location("139.82.2.149").unwrap_err();
        assert!(
            err.starts_with("\"139.82.2.149\" is not a multiaddr"),
            "{err}"
        );
        let err = location("/ip4/127.0.0.1/tcp/7711").unwrap_err();
        assert_eq!(
            err,
            "\"/ip4/127.0.0.1/tcp/7711\" does not end in /p2p/<peer id>; give its full libp2p \
             address"
        );
        // A peer id libp2p does not take, though the text names one.
        let text = "/ip4/127.0.0.1/tcp/4001/p2p/peer-partner";
        assert!(location(text).is_err());
        let err = peer_of(&Location::parse(text).unwrap()).unwrap_err();
        assert!(err.contains("is not a multiaddr"), "{err}");
        assert!(peer_of(&Location::lenient("")).is_err());
    }
}
