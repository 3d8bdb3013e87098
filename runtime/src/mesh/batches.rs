//! The requests waiting to go to each peer, and which of them go together: a request leaves at
//! once while fewer than [`MAX_BATCHES_IN_FLIGHT_PER_PEER`] of its peer's are under way;
//! otherwise it waits, and the next request to that peer carries everything that waited (up to
//! [`MAX_BATCH`] envelopes and [`MAX_MESSAGE_BYTES`] a frame). So a lone message costs no wait,
//! and under load the messages to one peer share a stream, an encryption, a write and the
//! receiver's group commit, instead of each paying for its own.

use std::collections::{HashMap, VecDeque};

use libp2p::PeerId;
use tokio::sync::oneshot;

use super::SendError;
use crate::codec::{Encoded, FrameBytes};
use mobiwf_proto::{MAX_BATCH, MAX_MESSAGE_BYTES, Reply};

/// Most requests to one peer under way at once; what comes meanwhile waits and goes together.
pub const MAX_BATCHES_IN_FLIGHT_PER_PEER: usize = 2;

/// Where one envelope's answer goes.
pub(super) type ReplyTo = oneshot::Sender<Result<Reply, SendError>>;

/// One envelope waiting to go, and who waits for its answer.
pub(super) struct Waiting {
    pub(super) envelope: Encoded,
    pub(super) reply: ReplyTo,
}

/// One peer's waiting envelopes and its requests under way.
#[derive(Default)]
struct PeerQueue {
    waiting: VecDeque<Waiting>,
    in_flight: usize,
}

/// Every peer's queue (a peer with nothing waiting or under way has none).
#[derive(Default)]
pub(super) struct Queues {
    peers: HashMap<PeerId, PeerQueue>,
}

impl Queues {
    /// `waiting` goes to `to`, in its turn.
    pub(super) fn push(&mut self, to: PeerId, waiting: Waiting) {
        self.peers.entry(to).or_default().waiting.push_back(waiting);
    }

    /// The next request to `to`, when one may go now: the envelopes that waited longest, as
    /// many as fit in one frame and one batch. Envelopes whose callers gave up are dropped
    /// unsent (their outbox sends them again if it still wants to).
    pub(super) fn next(&mut self, to: PeerId) -> Option<Vec<Waiting>> {
        let queue = self.peers.get_mut(&to)?;
        if queue.in_flight >= MAX_BATCHES_IN_FLIGHT_PER_PEER {
            return None;
        }
        let mut batch: Vec<Waiting> = Vec::new();
        let mut frame = FrameBytes::EMPTY;
        while batch.len() < MAX_BATCH {
            let Some(front) = queue.waiting.front() else {
                break;
            };
            if front.reply.is_closed() {
                queue.waiting.pop_front();
                continue;
            }
            let len = front.envelope.get().len();
            // The first always fits (`codec::encode` refused any that alone would not).
            if !batch.is_empty() && frame.with(len) > MAX_MESSAGE_BYTES {
                break;
            }
            frame.add(len);
            batch.extend(queue.waiting.pop_front());
        }
        if batch.is_empty() {
            if queue.in_flight == 0 {
                self.peers.remove(&to);
            }
            return None;
        }
        queue.in_flight += 1;
        Some(batch)
    }

    /// A request to `to` got its answer (or failed): another may go.
    pub(super) fn finished(&mut self, to: PeerId) {
        if let Some(queue) = self.peers.get_mut(&to) {
            queue.in_flight = queue.in_flight.saturating_sub(1);
            if queue.in_flight == 0 && queue.waiting.is_empty() {
                self.peers.remove(&to);
            }
        }
    }

    /// Everything still waiting, taken out (the mesh stops).
    pub(super) fn drain(&mut self) -> Vec<(PeerId, Waiting)> {
        self.peers
            .drain()
            .flat_map(|(peer, queue)| queue.waiting.into_iter().map(move |w| (peer, w)))
            .collect()
    }

    /// How many envelopes wait.
    pub(super) fn waiting(&self) -> usize {
        self.peers.values().map(|q| q.waiting.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch_bytes;

    fn waiting(bytes: usize) -> (Waiting, oneshot::Receiver<Result<Reply, SendError>>) {
        let (reply, answer) = oneshot::channel();
        // A JSON string of `bytes` bytes in all.
        let text = format!("\"{}\"", "x".repeat(bytes - 2));
        let envelope = serde_json::value::RawValue::from_string(text).unwrap();
        (Waiting { envelope, reply }, answer)
    }

    #[test]
    fn a_lone_request_goes_at_once_and_what_comes_meanwhile_waits_to_go_together() {
        let mut queues = Queues::default();
        let peer = PeerId::random();
        let mut held = Vec::new();
        for _ in 0..MAX_BATCHES_IN_FLIGHT_PER_PEER {
            let (w, a) = waiting(10);
            held.push(a);
            queues.push(peer, w);
            assert_eq!(queues.next(peer).map(|b| b.len()), Some(1), "goes at once");
        }
        for _ in 0..5 {
            let (w, a) = waiting(10);
            held.push(a);
            queues.push(peer, w);
            assert!(
                queues.next(peer).is_none(),
                "waits: the peer's requests are under way"
            );
        }
        queues.finished(peer);
        assert_eq!(queues.next(peer).map(|b| b.len()), Some(5), "together");
        assert!(queues.next(peer).is_none());
        assert_eq!(queues.waiting(), 0);
        // Another peer never waits for this one's.
        let other = PeerId::random();
        let (w, _a) = waiting(10);
        queues.push(other, w);
        assert_eq!(queues.next(other).map(|b| b.len()), Some(1));
        drop(held);
    }

    #[test]
    fn a_batch_holds_at_most_max_batch_envelopes_and_one_frame() {
        let mut queues = Queues::default();
        let peer = PeerId::random();
        let mut held = Vec::new();
        for _ in 0..MAX_BATCH + 3 {
            let (w, a) = waiting(10);
            held.push(a);
            queues.push(peer, w);
        }
        assert_eq!(queues.next(peer).map(|b| b.len()), Some(MAX_BATCH));
        assert_eq!(queues.next(peer).map(|b| b.len()), Some(3));

        // Two envelopes of a bit less than half a frame go together; a third does not fit.
        let peer = PeerId::random();
        let big = MAX_MESSAGE_BYTES / 2 - 2;
        for _ in 0..3 {
            let (w, a) = waiting(big);
            held.push(a);
            queues.push(peer, w);
        }
        let batch = queues.next(peer).unwrap();
        assert_eq!(batch.len(), 2);
        assert!(batch_bytes(batch.iter().map(|w| w.envelope.get().len())) <= MAX_MESSAGE_BYTES);
        assert_eq!(queues.next(peer).map(|b| b.len()), Some(1));
    }

    #[test]
    fn envelopes_whose_callers_gave_up_are_not_sent_and_an_idle_peer_is_forgotten() {
        let mut queues = Queues::default();
        let peer = PeerId::random();
        let (gone, answer) = waiting(10);
        drop(answer);
        queues.push(peer, gone);
        assert!(queues.next(peer).is_none());
        assert!(queues.peers.is_empty(), "nothing left for the peer");

        let (w, _a) = waiting(10);
        queues.push(peer, w);
        assert!(queues.next(peer).is_some());
        queues.finished(peer);
        assert!(queues.peers.is_empty());
        let (w, _b) = waiting(10);
        queues.push(peer, w);
        assert_eq!(queues.drain().len(), 1);
        assert_eq!(queues.waiting(), 0);
    }
}
