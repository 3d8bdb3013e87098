//! A peer's address, a libp2p multiaddr ending in `/p2p/<peer id>`: read once where it comes
//! in (a document, a message, the command line, a registration), so that whoever needs the
//! peer it names (is it this node? did the reply come from it? which link is down?) reads the
//! peer id it carries instead of reading the text again.
//!
//! This crate links no libp2p: a [`Location`] is read from its text alone (the peer id is the
//! last component, after `/p2p/`, or its older spelling `/ipfs/`). Whether libp2p can dial it is
//! the runtime's check (`mobiwf_runtime::outbox`), made where an address comes in from people
//! and documents and again where a message is sent; for every address libp2p takes, both name
//! the same peer (base58 text of a peer id reads back the same).
//!
//! On the wire and in the stores a location is its text, unchanged. Anything a store or an
//! older peer may hold is still read ([`Location::lenient`]): a device's entry made from a
//! registration without addresses holds the empty text, and records made before addresses were
//! checked may hold one that names no peer; such a location has no [`Location::peer`].

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::NodeId;

/// A peer's address as given (`/ip4/10.0.0.2/tcp/4001/p2p/12D3Koo…`), with the peer id it
/// ends in, when it ends in one.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    /// The address as given: what is stored and sent.
    text: String,
    /// The peer at its end; `None` when the text ends in no `/p2p/<peer id>`.
    peer: Option<NodeId>,
}

impl Location {
    /// An address people or documents give: it must end in `/p2p/<peer id>`.
    pub fn parse(text: impl Into<String>) -> Result<Location, NotALocation> {
        let location = Location::lenient(text);
        if location.peer.is_none() {
            return Err(NotALocation {
                text: location.text,
            });
        }
        Ok(location)
    }

    /// Any text as an address, as the stores and the wire may hold it: with its peer when it
    /// names one. For what was checked when it came in, or must load whatever it holds (see
    /// the module's doc); what people and documents give is read with [`Location::parse`].
    pub fn lenient(text: impl Into<String>) -> Location {
        let text = text.into();
        let peer = peer_in(&text).map(NodeId::new);
        Location { text, peer }
    }

    /// Where a registered node is reached: the first of the addresses it registered with (the
    /// empty text, naming no peer, when it gave none; registration checks every address).
    pub fn registered(addrs: &[String]) -> Location {
        Location::lenient(addrs.first().cloned().unwrap_or_default())
    }

    /// The peer it names (its `/p2p/<peer id>`), if it names one.
    pub fn peer(&self) -> Option<&NodeId> {
        self.peer.as_ref()
    }

    /// The peer it names, or why it names none.
    pub fn named_peer(&self) -> Result<&NodeId, NotALocation> {
        self.peer.as_ref().ok_or_else(|| NotALocation {
            text: self.text.clone(),
        })
    }

    /// The address as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The peer id at the end of a multiaddr's text: its last component, after a `p2p` (or the
/// older `ipfs`) protocol name; `None` when it ends otherwise.
fn peer_in(text: &str) -> Option<&str> {
    let (rest, peer) = text.rsplit_once('/')?;
    let (before, protocol) = rest.rsplit_once('/')?;
    let at_start = before.is_empty() || before.starts_with('/');
    (at_start && !peer.is_empty() && matches!(protocol, "p2p" | "ipfs")).then_some(peer)
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Location {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Location {
    /// Any text: the stores keep what was checked when it came in, and what older versions
    /// kept (see the module's doc) must still load.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Location::lenient)
    }
}

/// An address that does not end in `/p2p/<peer id>`: no peer could be reached at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotALocation {
    /// The address as given.
    pub text: String,
}

impl fmt::Display for NotALocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} does not end in /p2p/<peer id>; give its full libp2p address",
            self.text
        )
    }
}

impl std::error::Error for NotALocation {}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "/ip4/10.0.0.2/tcp/4001/p2p/12D3KooWPeer";

    #[test]
    fn a_full_address_carries_its_peer() {
        let at = Location::parse(FULL).unwrap();
        assert_eq!(at.peer(), Some(&NodeId::new("12D3KooWPeer")));
        assert_eq!(at.as_str(), FULL);
        assert_eq!(at.to_string(), FULL);
        let relayed = "/ip4/1.2.3.4/tcp/1/p2p/Relay/p2p-circuit/p2p/Target";
        assert_eq!(Location::parse(relayed).unwrap().peer().unwrap(), "Target");
        assert_eq!(
            Location::parse("/p2p/Alone").unwrap().peer().unwrap(),
            "Alone"
        );
        // libp2p reads `/ipfs/` as `/p2p/`.
        let older = "/ip4/1.2.3.4/tcp/1/ipfs/Old";
        assert_eq!(Location::parse(older).unwrap().peer().unwrap(), "Old");
    }

    #[test]
    fn an_address_without_its_peer_is_refused_with_what_it_was() {
        for text in [
            "",
            "139.82.2.149",
            "/ip4/127.0.0.1/tcp/7711",
            "/ip4/127.0.0.1/tcp/7711/p2p/",
            "/ip4/127.0.0.1/tcp/7711/p2p/Peer/",
            "/ip4/1.2.3.4/tcp/1/p2p/Relay/p2p-circuit",
            "p2p/Peer",
            "/dns4/x/tcp/1/xp2p/Peer",
        ] {
            let err = Location::parse(text).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "{text:?} does not end in /p2p/<peer id>; give its full libp2p \
                     address"
                )
            );
            let kept = Location::lenient(text);
            assert_eq!((kept.as_str(), kept.peer()), (text, None));
            assert_eq!(kept.named_peer().unwrap_err(), err);
        }
    }

    #[test]
    fn a_location_is_stored_and_sent_as_its_text() {
        let at = Location::parse(FULL).unwrap();
        let json = serde_json::to_string(&at).unwrap();
        assert_eq!(json, format!("\"{FULL}\""));
        let back: Location = serde_json::from_str(&json).unwrap();
        assert_eq!(back, at);
        assert_eq!(back.peer().unwrap(), "12D3KooWPeer");
    }

    /// What older versions stored as a bare string loads: a full address with its peer, and
    /// the empty text (a device registered without addresses) or an address without a peer
    /// with none, each written back byte for byte.
    #[test]
    fn every_text_older_versions_stored_still_loads() {
        for (stored, peer) in [
            (format!("\"{FULL}\""), Some("12D3KooWPeer")),
            ("\"\"".to_owned(), None),
            ("\"/ip4/127.0.0.1/tcp/7711\"".to_owned(), None),
            ("\"192.168.0.2\"".to_owned(), None),
        ] {
            let back: Location = serde_json::from_str(&stored).unwrap();
            assert_eq!(back.peer().map(NodeId::as_str), peer, "{stored}");
            assert_eq!(serde_json::to_string(&back).unwrap(), stored);
        }
    }
}
