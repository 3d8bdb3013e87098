//! Every dial from a port of its own. Unless a dial says otherwise, libp2p's TCP transport
//! binds it to the port the mesh listens on (`PortUse::Reuse`, the default of every
//! behaviour's dial, request-response's too), on the wildcard address. The kernel refuses
//! that bind with "address in use" while any socket on the host holds the port on another
//! local address without `SO_REUSEPORT`: binding 127.0.0.2:P (or a LAN address:P) is allowed
//! while the mesh listens on 127.0.0.1:P, binding 0.0.0.0:P then is not. libp2p retries with
//! a new port only when the connect fails, not the bind, so any program on the host (the
//! source port picked for one of a stranger's connections, as the half-open flood of
//! `tests/flood.rs` showed) could stop a node's every dial for as long as it held the port.
//!
//! Nothing in the mesh needs the listen port as a dial's source: there is no hole punching
//! (what libp2p keeps it for), identify's observed addresses are not used (the address book
//! learns a peer's own listen addresses, and addresses we dialled), a relayed connection's
//! address is the relay's, and `guard` knows a source by its IP address alone.

use std::pin::Pin;
use std::task::{Context, Poll};

use libp2p::Multiaddr;
use libp2p::core::transport::{
    DialOpts, ListenerId, PortUse, Transport, TransportError, TransportEvent,
};

/// `T` with every dial on a new port (`PortUse::New`); listening is `T`'s own.
pub(super) struct NewPortDials<T>(pub(super) T);

impl<T: Transport + Unpin> Transport for NewPortDials<T> {
    type Output = T::Output;
    type Error = T::Error;
    type ListenerUpgrade = T::ListenerUpgrade;
    type Dial = T::Dial;

    fn listen_on(
        &mut self,
        id: ListenerId,
        addr: Multiaddr,
    ) -> Result<(), TransportError<Self::Error>> {
        self.0.listen_on(id, addr)
    }

    fn remove_listener(&mut self, id: ListenerId) -> bool {
        self.0.remove_listener(id)
    }

    fn dial(
        &mut self,
        addr: Multiaddr,
        opts: DialOpts,
    ) -> Result<Self::Dial, TransportError<Self::Error>> {
        let opts = DialOpts {
            port_use: PortUse::New,
            ..opts
        };
        self.0.dial(addr, opts)
    }

    fn poll(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<TransportEvent<Self::ListenerUpgrade, Self::Error>> {
        Pin::new(&mut self.get_mut().0).poll(cx)
    }
}
