//! What a node's message means to the controller's book, and the checks of a registration's
//! addresses (the sender's own; a circuit address through this controller or a registered
//! node), kept apart from the actor that applies it.

use libp2p::PeerId;
use libp2p::multiaddr::Protocol;
use mobiwf_book::{Book, Input, NodeInfo};
use mobiwf_proto::{Message, MessageId, NodeId, Register};
use mobiwf_runtime::mesh::relay;
use mobiwf_runtime::outbox;

/// Who may carry a node's traffic as its relay: the controller itself, or a registered node.
pub(super) struct Relays<'a> {
    pub(super) me: PeerId,
    pub(super) book: &'a Book,
}

impl Relays<'_> {
    fn allows(&self, relay: &PeerId) -> bool {
        *relay == self.me
            || self
                .book
                .node(&mobiwf_runtime::peer_text::node_id(relay))
                .is_some()
    }
}

/// What a node's message means to the book: a registration (whose addresses must be the
/// sender's own, dialable, so that nothing the controller later sends it is unaddressable),
/// or a report for the book to judge.
pub(super) fn input_of(
    now: u64,
    from: &PeerId,
    id: &MessageId,
    message: Message,
    relays: &Relays<'_>,
) -> Result<Input, String> {
    Ok(match message {
        Message::Register(register) => {
            Input::Register(registered(now, from, id, register, relays)?)
        }
        other => Input::FromNode {
            peer: NodeId::new(from.to_string()),
            message: other,
        },
    })
}

/// The node a registration makes known, once its addresses are checked.
fn registered(
    now: u64,
    from: &PeerId,
    id: &MessageId,
    register: Register,
    relays: &Relays<'_>,
) -> Result<NodeInfo, String> {
    let Register {
        name,
        skills,
        addrs,
        join_token: _,
    } = register;
    if addrs.is_empty() {
        return Err("registration: no address to reach the node at".to_owned());
    }
    for addr in &addrs {
        check_address(addr, from, relays).map_err(|e| format!("registration: {e}"))?;
    }
    let peer = NodeId::new(from.to_string());
    tracing::info!(%name, %peer, "node registered");
    Ok(NodeInfo {
        peer,
        name,
        skills,
        addrs,
        registered_ms: now,
        seq: id.seq,
        suspected: None,
    })
}

/// A registered address must be the sender's (end in its `/p2p/<peer id>`); a circuit address
/// (`/…/p2p/<relay>/p2p-circuit/p2p/<sender>`) must also name where the relay listens, and a
/// relay that is this controller or a registered node (not the sender itself), so that a
/// node cannot have others dial through a stranger.
fn check_address(addr: &str, from: &PeerId, relays: &Relays<'_>) -> Result<(), String> {
    let (owner, addr) = outbox::peer_of(&outbox::location(addr)?)?;
    if owner != *from {
        return Err(format!("address {addr} is not the sender's ({from})"));
    }
    if !relay::is_circuit(&addr) {
        return Ok(());
    }
    let Some(relay) = relay::relay_of(&addr) else {
        return Err(format!(
            "address {addr} goes through a relay it does not name; give \
             /<relay's address>/p2p/<relay>/p2p-circuit/p2p/<node>"
        ));
    };
    if relay == *from {
        return Err(format!("address {addr} names the node itself as its relay"));
    }
    let mut before: Vec<_> = addr
        .iter()
        .take_while(|p| *p != Protocol::P2pCircuit)
        .collect();
    before.pop();
    if before.is_empty() {
        return Err(format!(
            "address {addr} does not say where the relay {relay} listens"
        ));
    }
    if !relays.allows(&relay) {
        return Err(format!(
            "address {addr} goes through {relay}, which is neither this controller nor a \
             registered node: start the node --via-relay with the controller's address or a \
             registered relay node's"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_proto::{ActivityTypeId, NodeName};

    fn register(addrs: Vec<String>) -> Message {
        Message::Register(Register {
            name: NodeName::new("P1"),
            skills: vec![ActivityTypeId(1)],
            addrs,
            join_token: None,
        })
    }

    fn id() -> MessageId {
        MessageId {
            incarnation: 0,
            origin: NodeId::new("sender"),
            seq: 3,
        }
    }

    /// `input_of` for a registration of `addrs` from `me`, with `book` as what is registered
    /// and `controller` as the controller's peer id.
    fn registration(
        me: &PeerId,
        addrs: Vec<String>,
        controller: PeerId,
        book: &Book,
    ) -> Result<Input, String> {
        let relays = Relays {
            me: controller,
            book,
        };
        input_of(5, me, &id(), register(addrs), &relays)
    }

    #[test]
    fn a_registration_must_give_the_senders_own_dialable_addresses() {
        let (me, controller, book) = (PeerId::random(), PeerId::random(), Book::new());
        let own = format!("/ip4/127.0.0.1/tcp/7711/p2p/{me}");
        let Ok(Input::Register(info)) = registration(&me, vec![own.clone()], controller, &book)
        else {
            panic!("its own address is fine");
        };
        assert_eq!(
            (info.peer.as_str(), info.seq, info.registered_ms),
            (me.to_string().as_str(), 3, 5)
        );

        let other = PeerId::random();
        let foreign = format!("/ip4/127.0.0.1/tcp/7711/p2p/{other}");
        let err = registration(&me, vec![own, foreign], controller, &book).unwrap_err();
        assert!(err.contains("is not the sender's"), "{err}");

        let bare = vec!["/ip4/127.0.0.1/tcp/7711".into()];
        let err = registration(&me, bare, controller, &book).unwrap_err();
        assert!(err.contains("does not end in /p2p/"), "{err}");
    }

    #[test]
    fn a_circuit_address_must_go_through_this_controller_or_a_registered_node() {
        let (me, controller) = (PeerId::random(), PeerId::random());
        let relay_node = PeerId::random();
        let mut book = Book::new();
        let relay_info = NodeInfo {
            peer: NodeId::new(relay_node.to_string()),
            name: NodeName::new("R"),
            skills: vec![],
            addrs: vec![format!("/ip4/10.0.0.3/tcp/4003/p2p/{relay_node}")],
            registered_ms: 1,
            seq: 1,
            suspected: None,
        };
        book.apply(1, Input::Register(relay_info)).unwrap();
        let via =
            |relay: PeerId| format!("/ip4/10.0.0.1/tcp/4001/p2p/{relay}/p2p-circuit/p2p/{me}");

        for relay in [controller, relay_node] {
            let Ok(Input::Register(info)) = registration(&me, vec![via(relay)], controller, &book)
            else {
                panic!("a circuit through {relay} is fine");
            };
            assert_eq!(info.addrs, vec![via(relay)]);
        }

        let stranger = PeerId::random();
        let err = registration(&me, vec![via(stranger)], controller, &book).unwrap_err();
        assert!(
            err.contains("neither this controller nor a registered node"),
            "{err}"
        );

        let err = registration(&me, vec![via(me)], controller, &book).unwrap_err();
        assert!(err.contains("names the node itself as its relay"), "{err}");

        let unnamed = format!("/ip4/10.0.0.1/tcp/4001/p2p-circuit/p2p/{me}");
        let err = registration(&me, vec![unnamed], controller, &book).unwrap_err();
        assert!(err.contains("does not name"), "{err}");

        let nowhere = format!("/p2p/{controller}/p2p-circuit/p2p/{me}");
        let err = registration(&me, vec![nowhere], controller, &book).unwrap_err();
        assert!(err.contains("does not say where the relay"), "{err}");

        // Someone else's node behind the controller is not the sender.
        let theirs = format!(
            "/ip4/10.0.0.1/tcp/4001/p2p/{controller}/p2p-circuit/p2p/{}",
            PeerId::random()
        );
        let err = registration(&me, vec![theirs], controller, &book).unwrap_err();
        assert!(err.contains("is not the sender's"), "{err}");
    }
}
