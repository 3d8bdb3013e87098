//! A peer id's text, remembered. The text is base58 of the id's multihash, whose encoding is
//! quadratic in its length (microseconds for an ed25519 id); every message names its sender
//! and its receiver by it, so a daemon would write the same few ids thousands of times a
//! second.

use std::cell::RefCell;
use std::collections::HashMap;

use libp2p::PeerId;
use mobiwf_proto::NodeId;

/// Most ids one thread remembers; past it the memo starts over. A daemon speaks with its
/// controller or its nodes, far fewer. Per thread: the actor's groups run on the blocking
/// pool's threads, so the bound is this times the threads that ever applied a group.
pub const REMEMBERED_PEERS: usize = 4096;

thread_local! {
    static TEXTS: RefCell<HashMap<PeerId, NodeId>> = RefCell::new(HashMap::new());
}

/// `peer` as the pure cores and the stored messages name it (its base58 text).
pub fn node_id(peer: &PeerId) -> NodeId {
    TEXTS.with(|texts| {
        let mut texts = texts.borrow_mut();
        if let Some(known) = texts.get(peer) {
            return known.clone();
        }
        if texts.len() >= REMEMBERED_PEERS {
            texts.clear();
        }
        let text = NodeId::new(peer.to_base58());
        texts.insert(*peer, text.clone());
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_peer_id_s_base58_whether_remembered_or_not() {
        let peers: Vec<PeerId> = (0..REMEMBERED_PEERS + 3)
            .map(|_| PeerId::random())
            .collect();
        for peer in &peers {
            assert_eq!(node_id(peer).as_str(), peer.to_base58());
        }
        // The memo started over on the way; asked again, every text is still the id's.
        for peer in &peers {
            assert_eq!(node_id(peer).as_str(), peer.to_string());
        }
        let size = TEXTS.with(|t| t.borrow().len());
        assert!(size <= REMEMBERED_PEERS, "{size} remembered");
    }
}
