//! The request-response exchanges the swarm task carries: the handles' messages out (in
//! batches per peer, `batches`) and their replies back, the peers' batches in to the
//! application (each envelope through the per-peer gate) and its answers back. Apart from the
//! task's connections and listeners because this is what the mesh is for, and what its callers
//! see ([`SendError`]).

use libp2p::request_response::{self, InboundRequestId, OutboundFailure, ResponseChannel};
use libp2p::{Multiaddr, PeerId};
use tokio::sync::{mpsc, oneshot};

use super::addresses::Freshness;
use super::batches::{ReplyTo, Waiting};
use super::task::Task;
use super::{Inbound, OutgoingEnvelope, SendError};
use crate::codec::{Answers, Batch, Encoded, FrameBytes};
use mobiwf_proto::MAX_MESSAGE_BYTES;

/// An outgoing request waiting for its answers: one per envelope it carries, in order.
pub(super) struct PendingRequest {
    pub(super) to: PeerId,
    pub(super) replies: Vec<ReplyTo>,
    /// Whether it holds one of its peer's turns (`batches`): a message that goes alone does
    /// not.
    queued: bool,
}

/// An inbound request whose envelopes the application has answered (or not).
pub(super) struct Answer {
    peer: PeerId,
    request_id: InboundRequestId,
    channel: ResponseChannel<Answers>,
    /// How many of its envelopes the gate let in (each holds a turn until answered).
    admitted: usize,
    /// One per envelope: `None` for one shed, dropped unanswered, or not answered within the
    /// request timeout.
    replies: Answers,
}

impl Task {
    /// A handle's message for `to`: it waits in the peer's queue, and goes when the peer has
    /// room for another request (`batches`); one that goes alone (`Message::goes_alone`) goes
    /// now, in a request of its own.
    pub(super) fn send_request(
        &mut self,
        to: PeerId,
        addrs: Vec<Multiaddr>,
        outgoing: OutgoingEnvelope,
    ) {
        // What the message was staged with is a hint: the book's newer addresses go first.
        self.book.learn(to, &addrs, Freshness::Hint);
        let OutgoingEnvelope {
            envelope,
            alone,
            reply,
        } = outgoing;
        if alone {
            self.send_batch(to, vec![Waiting { envelope, reply }], false);
        } else {
            self.queues.push(to, Waiting { envelope, reply });
            self.send_next(to);
        }
    }

    /// Sends what waits for `to`, as many requests as may be under way.
    fn send_next(&mut self, to: PeerId) {
        while let Some(batch) = self.queues.next(to) {
            self.send_batch(to, batch, true);
        }
    }

    fn send_batch(&mut self, to: PeerId, batch: Vec<Waiting>, queued: bool) {
        let addrs = self.book.addresses(&to);
        let (envelopes, replies): (Vec<Encoded>, Vec<ReplyTo>) =
            batch.into_iter().map(|w| (w.envelope, w.reply)).unzip();
        tracing::debug!(%to, envelopes = envelopes.len(), ?addrs, "sending request");
        let request_id = self.swarm.behaviour_mut().rpc.send_request_with_addresses(
            &to,
            Batch::Out(envelopes),
            addrs,
        );
        self.outbound.insert(
            request_id,
            PendingRequest {
                to,
                replies,
                queued,
            },
        );
    }

    /// A request of ours got its answers, or failed: each envelope's caller is told, and what
    /// waits for the peer may go.
    fn settle(
        &mut self,
        request_id: request_response::OutboundRequestId,
        outcome: Result<Answers, SendError>,
    ) {
        let Some(PendingRequest {
            to,
            replies,
            queued,
        }) = self.outbound.remove(&request_id)
        else {
            tracing::warn!(%request_id, "an answer to a request nobody waits for");
            return;
        };
        match outcome {
            Ok(answers) if answers.len() == replies.len() => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = reply.send(answer.ok_or_else(|| SendError::left_unanswered(to)));
                }
            }
            Ok(answers) => {
                let error = SendError::Codec {
                    peer: to,
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "{} answers to a request of {} envelopes",
                            answers.len(),
                            replies.len()
                        ),
                    ),
                };
                tracing::warn!(%to, %request_id, "{error}");
                for reply in replies {
                    let _ = reply.send(Err(error.again()));
                }
            }
            Err(error) => {
                tracing::warn!(%to, %request_id, "request failed: {error}");
                for reply in replies {
                    let _ = reply.send(Err(error.again()));
                }
            }
        }
        if queued {
            self.queues.finished(to);
            self.send_next(to);
        }
    }

    /// The application answered a peer's request (or some of it went unanswered): the answers
    /// go back on the request's stream, and the peer's turns in the gate end.
    pub(super) fn answer(&mut self, answer: Answer) {
        let Answer {
            peer,
            request_id,
            channel,
            admitted,
            replies,
        } = answer;
        for _ in 0..admitted {
            self.gate.done(peer);
        }
        let replies = within_a_frame(replies);
        let unanswered = replies.iter().filter(|r| r.is_none()).count();
        if unanswered > 0 {
            tracing::debug!(
                %peer, %request_id,
                "{unanswered} of {} envelopes left unanswered (shed, dropped, or not answered \
                 within {:?})",
                replies.len(),
                self.request_timeout
            );
        }
        tracing::debug!(%peer, %request_id, ?replies, "answering request");
        if self
            .swarm
            .behaviour_mut()
            .rpc
            .send_response(channel, replies)
            .is_err()
        {
            tracing::warn!(
                %peer, %request_id,
                "cannot answer: the request timed out or its connection closed"
            );
        }
    }

    /// What the request-response protocol reports: a peer's request, the answers to one of
    /// ours, a failure either way.
    pub(super) fn on_rpc(&mut self, event: request_response::Event<Batch, Answers>) {
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
                    tracing::debug!(from = %peer, %request_id, reply = ?response, "received answers");
                    self.settle(request_id, Ok(response));
                }
            },
            request_response::Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                let error = self.send_error(peer, error);
                self.settle(request_id, Err(error));
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

    /// A peer's request: each envelope the gate lets in goes to the application; the answers
    /// (or silence past the request timeout) go back to the peer together.
    fn on_request(
        &mut self,
        peer: PeerId,
        request_id: InboundRequestId,
        request: Batch,
        channel: ResponseChannel<Answers>,
    ) {
        let envelopes = match request {
            Batch::In(envelopes) => envelopes,
            // What a codec reads is always `In`; an `Out` here would be a mistake of ours.
            Batch::Out(_) => Vec::new(),
        };
        tracing::debug!(from = %peer, %request_id, envelopes = envelopes.len(), "received request");
        let now = std::time::Instant::now();
        let mut answers = Vec::with_capacity(envelopes.len());
        for envelope in envelopes {
            let envelope = match envelope {
                Ok(envelope) => envelope,
                Err(why) => {
                    // Unanswered, as a request that did not decode always was.
                    tracing::warn!(from = %peer, %request_id, "an envelope left unanswered: {why}");
                    answers.push(None);
                    continue;
                }
            };
            if let Err(why) = self.gate.admit(peer, now) {
                // Unanswered: the sender tries it again later.
                tracing::debug!(from = %peer, %request_id, message = %envelope.id, "shed: {why}");
                answers.push(None);
                continue;
            }
            let (reply, answer) = oneshot::channel();
            answers.push(Some(answer));
            self.deliver(Inbound {
                from: peer,
                envelope,
                reply,
            });
        }
        let admitted = answers.iter().filter(|a| a.is_some()).count();
        let deadline = tokio::time::Instant::now() + self.request_timeout;
        self.replies.push(Box::pin(async move {
            let mut replies = Vec::with_capacity(answers.len());
            for answer in answers {
                replies.push(match answer {
                    Some(answer) => tokio::time::timeout_at(deadline, answer)
                        .await
                        .ok()
                        .and_then(Result::ok),
                    None => None,
                });
            }
            Answer {
                peer,
                request_id,
                channel,
                admitted,
                replies,
            }
        }));
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

    /// Hands an envelope to the application; when its channel is full, the envelope (and
    /// the rest of its batch after it) waits in `blocked`, and the swarm is not polled until
    /// there is room.
    fn deliver(&mut self, inbound: Inbound) {
        if !self.blocked.is_empty() {
            self.blocked.push_back(inbound);
            return;
        }
        match self.inbound.try_send(inbound) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(inbound)) => {
                tracing::warn!(
                    "inbound channel full ({} waiting); not reading further requests until the \
                     application takes one",
                    self.inbound.max_capacity()
                );
                self.blocked.push_back(inbound);
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

/// The answers as they fit in one frame: past [`MAX_MESSAGE_BYTES`] together (a few large
/// answers to questions batched by a peer that does not send them alone), the rest are left
/// unanswered, for their senders to ask again.
fn within_a_frame(mut replies: Answers) -> Answers {
    if replies.len() < 2 {
        // One answer always fits: each message kind's answer is bounded below the limit.
        return replies;
    }
    let mut frame = FrameBytes::EMPTY;
    for reply in &mut replies {
        // `null` for one left unanswered.
        let len = reply
            .as_ref()
            .map_or(4, |r| serde_json::to_vec(r).map_or(usize::MAX, |v| v.len()));
        if frame.with(len) > MAX_MESSAGE_BYTES {
            *reply = None;
            frame.add(4);
        } else {
            frame.add(len);
        }
    }
    replies
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_proto::Reply;

    #[test]
    fn answers_past_one_frame_together_are_left_unanswered() {
        // A bit less than half a frame each: two fit, the third does not.
        let chunk = || Reply::Chunk {
            base64: "x".repeat(MAX_MESSAGE_BYTES / 2 - 100),
        };
        let replies = within_a_frame(vec![
            Some(chunk()),
            Some(Reply::Ack),
            Some(chunk()),
            Some(chunk()),
        ]);
        assert_eq!(
            replies.iter().map(Option::is_some).collect::<Vec<_>>(),
            vec![true, true, true, false]
        );
        let small = vec![Some(Reply::Ack), None, Some(Reply::Ack)];
        assert_eq!(within_a_frame(small.clone()), small);
    }
}
