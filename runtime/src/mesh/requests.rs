//! The request-response exchanges the swarm task carries: the handles' requests out and their
//! replies back, the peers' requests in to the application (through the per-peer gate) and its
//! answers back. Apart from the task's connections and listeners because this is what the
//! mesh is for, and what its callers see ([`SendError`]).

use libp2p::request_response::{self, InboundRequestId, OutboundFailure, ResponseChannel};
use libp2p::{Multiaddr, PeerId};
use tokio::sync::{mpsc, oneshot};

use super::addresses::Freshness;
use super::task::Task;
use super::{INBOUND_CAPACITY, Inbound, SendError};
use mobiwf_proto::{Envelope, Reply};

/// An outgoing request waiting for its reply.
pub(super) struct PendingRequest {
    pub(super) to: PeerId,
    pub(super) reply: oneshot::Sender<Result<Reply, SendError>>,
}

/// An inbound request whose answer the application has given (or not).
pub(super) struct Answer {
    peer: PeerId,
    request_id: InboundRequestId,
    channel: ResponseChannel<Reply>,
    /// `None` when the application took longer than the request timeout.
    reply: Option<Result<Reply, oneshot::error::RecvError>>,
}

impl Task {
    /// A handle's request: sent to the peer at the addresses the book knows, newest first; its
    /// reply (or failure) goes back to the handle.
    pub(super) fn send_request(
        &mut self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        envelope: Envelope,
        reply: oneshot::Sender<Result<Reply, SendError>>,
    ) {
        // What the message was staged with is a hint: the book's newer addresses go first.
        self.book.learn(to, &addrs, Freshness::Hint);
        let addrs = self.book.addresses(&to);
        if tracing::enabled!(tracing::Level::DEBUG) {
            let (kind, message) = (envelope.message.kind(), &envelope.id);
            tracing::debug!(%to, kind, %message, ?addrs, "sending request");
        }
        let request_id = self
            .swarm
            .behaviour_mut()
            .rpc
            .send_request_with_addresses(&to, envelope, addrs);
        self.outbound
            .insert(request_id, PendingRequest { to, reply });
    }

    /// The application answered a peer's request (or dropped it, or took too long): the
    /// answer goes back on the request's stream, and the peer's turn in the gate ends.
    pub(super) fn answer(&mut self, answer: Answer) {
        let Answer {
            peer,
            request_id,
            channel,
            reply,
        } = answer;
        self.gate.done(peer);
        match reply {
            Some(Ok(reply)) => {
                tracing::debug!(%peer, %request_id, ?reply, "answering request");
                if self
                    .swarm
                    .behaviour_mut()
                    .rpc
                    .send_response(channel, reply)
                    .is_err()
                {
                    tracing::warn!(
                        %peer, %request_id,
                        "cannot answer: the request timed out or its connection closed"
                    );
                }
            }
            Some(Err(_)) => {
                tracing::warn!(%peer, %request_id, "the application dropped a request unanswered");
            }
            None => {
                tracing::warn!(
                    %peer, %request_id,
                    "the application did not answer a request within {:?}",
                    self.request_timeout
                );
            }
        }
    }

    /// What the request-response protocol reports: a peer's request, a reply to one of ours,
    /// a failure either way.
    pub(super) fn on_rpc(&mut self, event: request_response::Event<Envelope, Reply>) {
        match event {
            request_response::Event::Message { peer, message, .. } => match message {
                request_response::Message::Request {
                    request_id,
                    request,
                    channel,
                } => self.on_request(peer, request_id, request, channel),
                request_response::Message::Response {
                    request_id,
                    response,
                } => {
                    tracing::debug!(from = %peer, %request_id, reply = ?response, "received reply");
                    match self.outbound.remove(&request_id) {
                        Some(pending) => {
                            let _ = pending.reply.send(Ok(response));
                        }
                        None => tracing::warn!(
                            from = %peer, %request_id,
                            "reply to a request nobody waits for"
                        ),
                    }
                }
            },
            request_response::Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                let error = self.send_error(peer, error);
                tracing::warn!(to = %peer, %request_id, "request failed: {error}");
                if let Some(pending) = self.outbound.remove(&request_id) {
                    let _ = pending.reply.send(Err(error));
                }
            }
            request_response::Event::InboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                tracing::warn!(from = %peer, %request_id, "inbound request failed: {error}");
            }
            request_response::Event::ResponseSent {
                peer, request_id, ..
            } => {
                tracing::debug!(to = %peer, %request_id, "reply sent");
            }
        }
    }

    /// A peer's request: handed to the application, whose answer (or silence past the request
    /// timeout) goes back to the peer.
    fn on_request(
        &mut self,
        peer: PeerId,
        request_id: InboundRequestId,
        request: Envelope,
        channel: ResponseChannel<Reply>,
    ) {
        tracing::debug!(
            from = %peer, %request_id,
            kind = request.message.kind(), message = %request.id,
            "received request"
        );
        if let Err(why) = self.gate.admit(peer, std::time::Instant::now()) {
            // Unanswered: the sender tries again later.
            tracing::debug!(from = %peer, %request_id, "request shed: {why}");
            drop(channel);
            return;
        }
        let (reply, answer) = oneshot::channel();
        let timeout = self.request_timeout;
        self.replies.push(Box::pin(async move {
            let reply = tokio::time::timeout(timeout, answer).await.ok();
            Answer {
                peer,
                request_id,
                channel,
                reply,
            }
        }));
        self.deliver(Inbound {
            from: peer,
            envelope: request,
            reply,
        });
    }

    /// What a failed request to `peer` tells its sender, with the dial error when there was
    /// one.
    fn send_error(&self, peer: PeerId, error: OutboundFailure) -> SendError {
        match error {
            OutboundFailure::DialFailure => SendError::Dial {
                peer,
                reason: self
                    .dial_errors
                    .get(&peer)
                    .cloned()
                    .unwrap_or_else(|| "no reachable address".to_owned()),
            },
            OutboundFailure::Timeout => SendError::Timeout {
                peer,
                after: self.request_timeout,
            },
            OutboundFailure::ConnectionClosed => SendError::ConnectionClosed { peer },
            OutboundFailure::UnsupportedProtocols => SendError::UnsupportedProtocol { peer },
            OutboundFailure::Io(source) => SendError::Codec { peer, source },
        }
    }

    /// Hands a request to the application; when its channel is full, the request waits
    /// in `blocked` and the swarm is not polled until there is room.
    fn deliver(&mut self, inbound: Inbound) {
        match self.inbound.try_send(inbound) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(inbound)) => {
                tracing::warn!(
                    "inbound channel full ({INBOUND_CAPACITY}); not reading further requests until \
                     the application takes one"
                );
                self.blocked = Some(inbound);
            }
            Err(mpsc::error::TrySendError::Closed(inbound)) => {
                tracing::warn!(
                    from = %inbound.from,
                    "no receiver for inbound requests; dropping one unanswered"
                );
            }
        }
    }
}
