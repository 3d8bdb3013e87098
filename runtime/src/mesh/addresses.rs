//! The mesh's address book: where each peer was last heard to be, newest first, so that peers
//! are addressed by peer id and a peer that comes back from a new address (restarted on another
//! port, moved to another network) is dialled there, not only at the addresses a message was
//! staged with.
//!
//! A circuit address (through a relay, `mesh::relay`) is kept like any other, but bounded
//! apart: a peer behind a relay that reports many direct addresses nobody can dial does not
//! push its way in out of the book, and a direct address that failed goes after it.
//!
//! Fed by what the peers say of themselves (libp2p identify: their listen addresses when they
//! connect), by the addresses that worked (a dial that connected), by the controller (a
//! registration; a node's `locate` answer) and, last, by the addresses messages carry. Kept in
//! memory: after a restart it fills again from the same sources.

use std::collections::{HashMap, VecDeque};

use libp2p::multiaddr::Protocol;
use libp2p::{Multiaddr, PeerId};

/// Most direct addresses kept per peer; the oldest go first.
pub const MAX_ADDRESSES_PER_PEER: usize = 8;
/// Most circuit addresses (through a relay) kept per peer, besides the direct ones.
pub const MAX_RELAYED_PER_PEER: usize = 4;
/// Most peers kept; when full, the peer heard of least recently is forgotten.
pub const MAX_PEERS: usize = 4096;

/// How sure the book is of an address it is told: a fresh one goes first, a hint (an address
/// a message was staged with, possibly long ago) goes after those already known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Heard just now from the peer itself or the controller: tried first.
    Fresh,
    /// Known from a document or a stored message: tried after the fresh ones.
    Hint,
}

/// Peer id → addresses, newest first.
#[derive(Debug, Default)]
pub struct AddressBook {
    peers: HashMap<PeerId, VecDeque<Multiaddr>>,
    /// Peers in the order they were last told about, to forget the oldest when full.
    touched: VecDeque<PeerId>,
}

impl AddressBook {
    /// Adds `addrs` for `peer` (each without its `/p2p/<peer id>` suffix, and only dialable
    /// ones: not 0.0.0.0, not another peer's), fresh ones first, hints after what is known.
    /// Returns whether the addresses to dial changed.
    pub fn learn(&mut self, peer: PeerId, addrs: &[Multiaddr], freshness: Freshness) -> bool {
        let usable: Vec<Multiaddr> = addrs.iter().filter_map(|a| dialable(peer, a)).collect();
        if usable.is_empty() {
            return false;
        }
        if !self.peers.contains_key(&peer) && self.peers.len() >= MAX_PEERS {
            self.forget_oldest();
        }
        let known = self.peers.entry(peer).or_default();
        let before = known.clone();
        match freshness {
            Freshness::Fresh => {
                for addr in usable.into_iter().rev() {
                    known.retain(|a| *a != addr);
                    known.push_front(addr);
                }
            }
            Freshness::Hint => {
                for addr in usable {
                    if !known.contains(&addr) {
                        known.push_back(addr);
                    }
                }
            }
        }
        bound(known);
        let changed = *known != before;
        if freshness == Freshness::Fresh {
            self.touched.retain(|p| *p != peer);
            self.touched.push_back(peer);
        } else if !self.touched.contains(&peer) {
            self.touched.push_back(peer);
        }
        changed
    }

    /// The addresses to dial `peer` at, newest first.
    pub fn addresses(&self, peer: &PeerId) -> Vec<Multiaddr> {
        self.peers
            .get(peer)
            .map(|a| a.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Drops an address that failed to connect, unless it is the peer's only one (a peer
    /// whose link is down comes back at the address it had).
    pub fn failed(&mut self, peer: &PeerId, addr: &Multiaddr) {
        let Some(addr) = dialable(*peer, addr) else {
            return;
        };
        if let Some(known) = self.peers.get_mut(peer)
            && known.len() > 1
        {
            // Tried last from now on.
            if let Some(at) = known.iter().position(|a| *a == addr)
                && let Some(a) = known.remove(at)
            {
                known.push_back(a);
            }
        }
    }

    fn forget_oldest(&mut self) {
        if let Some(oldest) = self.touched.pop_front() {
            self.peers.remove(&oldest);
        }
    }
}

/// Keeps the newest [`MAX_ADDRESSES_PER_PEER`] direct and [`MAX_RELAYED_PER_PEER`] circuit
/// addresses, in their order.
fn bound(known: &mut VecDeque<Multiaddr>) {
    let (mut direct, mut relayed) = (0, 0);
    known.retain(|a| {
        if super::relay::is_circuit(a) {
            relayed += 1;
            relayed <= MAX_RELAYED_PER_PEER
        } else {
            direct += 1;
            direct <= MAX_ADDRESSES_PER_PEER
        }
    });
}

/// `addr` without a trailing `/p2p/<peer>`, when it is an address `peer` can be dialled at:
/// not one of another peer, not an unspecified IP (0.0.0.0, ::), not empty.
fn dialable(peer: PeerId, addr: &Multiaddr) -> Option<Multiaddr> {
    let mut addr = addr.clone();
    if let Some(Protocol::P2p(owner)) = addr.iter().last() {
        if owner != peer {
            return None;
        }
        addr.pop();
    }
    let unspecified = addr.iter().any(|p| match p {
        Protocol::Ip4(ip) => ip.is_unspecified(),
        Protocol::Ip6(ip) => ip.is_unspecified(),
        _ => false,
    });
    (!unspecified && !addr.is_empty()).then_some(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(port: u16) -> Multiaddr {
        format!("/ip4/127.0.0.1/tcp/{port}").parse().unwrap()
    }

    #[test]
    fn fresh_addresses_go_first_and_hints_last() {
        let peer = PeerId::random();
        let mut book = AddressBook::default();
        assert!(book.learn(peer, &[at(1)], Freshness::Hint));
        assert!(book.learn(peer, &[at(2)], Freshness::Fresh));
        assert_eq!(book.addresses(&peer), vec![at(2), at(1)]);
        // A stale hint does not overtake what the peer said itself.
        assert!(!book.learn(peer, &[at(1)], Freshness::Hint));
        assert_eq!(book.addresses(&peer), vec![at(2), at(1)]);
        // The peer moved again: its newest address first, the older ones after.
        assert!(book.learn(peer, &[at(3)], Freshness::Fresh));
        assert_eq!(book.addresses(&peer), vec![at(3), at(2), at(1)]);
        // Told again of an older address as fresh: it moves to the front.
        assert!(book.learn(peer, &[at(1)], Freshness::Fresh));
        assert_eq!(book.addresses(&peer), vec![at(1), at(3), at(2)]);
    }

    #[test]
    fn the_peer_suffix_is_dropped_and_foreign_or_unspecified_addresses_are_not_kept() {
        let peer = PeerId::random();
        let other = PeerId::random();
        let mut book = AddressBook::default();
        let with_suffix = at(7).with_p2p(peer).unwrap();
        let foreign = at(8).with_p2p(other).unwrap();
        let any: Multiaddr = "/ip4/0.0.0.0/tcp/9".parse().unwrap();
        book.learn(peer, &[with_suffix, foreign, any], Freshness::Fresh);
        assert_eq!(book.addresses(&peer), vec![at(7)]);
        assert!(book.addresses(&other).is_empty());
        assert!(!book.learn(peer, &[], Freshness::Fresh));
    }

    #[test]
    fn a_failed_address_is_tried_last_but_an_only_one_is_kept() {
        let peer = PeerId::random();
        let mut book = AddressBook::default();
        book.learn(peer, &[at(1)], Freshness::Fresh);
        book.failed(&peer, &at(1));
        assert_eq!(book.addresses(&peer), vec![at(1)]);
        book.learn(peer, &[at(2)], Freshness::Fresh);
        book.failed(&peer, &at(2).with_p2p(peer).unwrap());
        assert_eq!(book.addresses(&peer), vec![at(1), at(2)]);
    }

    /// `/ip4/10.0.0.1/tcp/4001/p2p/<relay>/p2p-circuit`: `peer` through `relay`.
    fn circuit(relay: PeerId) -> Multiaddr {
        format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}/p2p-circuit")
            .parse()
            .unwrap()
    }

    #[test]
    fn a_circuit_address_is_kept_beside_many_direct_ones_and_a_failed_direct_one_goes_after_it() {
        let (peer, relay) = (PeerId::random(), PeerId::random());
        let mut book = AddressBook::default();
        // What the controller says (a registration through the relay), with the suffix.
        let registered = circuit(relay).with(Protocol::P2p(peer));
        assert!(book.learn(peer, &[registered], Freshness::Fresh));
        assert_eq!(book.addresses(&peer), vec![circuit(relay)]);
        // Identify then reports many direct addresses, newer: none pushes the circuit out.
        let many: Vec<Multiaddr> = (0..20).map(at).collect();
        book.learn(peer, &many, Freshness::Fresh);
        let mut expected = many[..MAX_ADDRESSES_PER_PEER].to_vec();
        expected.push(circuit(relay));
        assert_eq!(book.addresses(&peer), expected);
        // Direct addresses that fail go after the circuit.
        for addr in &many[..MAX_ADDRESSES_PER_PEER] {
            book.failed(&peer, addr);
        }
        assert_eq!(book.addresses(&peer)[0], circuit(relay));
        // Circuits are bounded too, the newest kept.
        let relays: Vec<Multiaddr> = (0..6).map(|_| circuit(PeerId::random())).collect();
        book.learn(peer, &relays, Freshness::Fresh);
        let kept: Vec<Multiaddr> = book
            .addresses(&peer)
            .into_iter()
            .filter(super::super::relay::is_circuit)
            .collect();
        assert_eq!(kept, relays[..MAX_RELAYED_PER_PEER].to_vec());
    }

    #[test]
    fn the_book_is_bounded_per_peer_and_in_peers() {
        let peer = PeerId::random();
        let mut book = AddressBook::default();
        let many: Vec<Multiaddr> = (0..20).map(at).collect();
        book.learn(peer, &many, Freshness::Fresh);
        assert_eq!(
            book.addresses(&peer),
            many[..MAX_ADDRESSES_PER_PEER].to_vec()
        );
        let first = PeerId::random();
        book.learn(first, &[at(1)], Freshness::Fresh);
        for _ in 0..MAX_PEERS {
            book.learn(PeerId::random(), &[at(1)], Freshness::Fresh);
        }
        assert!(book.peers.len() <= MAX_PEERS);
        assert!(
            book.addresses(&peer).is_empty(),
            "the oldest peer is forgotten"
        );
        assert!(book.addresses(&first).is_empty());
    }
}
