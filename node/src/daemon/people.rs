//! The node's people side on the actor: the API calls waiting for a host's answer to their
//! user's claim, woken once the group that holds the answer is on disk. (What a claim comes to
//! is the node core's decision.)

use mobiwf_node_core::ClaimOutcome;
use mobiwf_proto::Location;
use tokio::sync::oneshot;

use super::actor::{After, NodeActor};

/// A claim sent to a host, waiting for its answer after the group is on disk.
pub(super) struct SentClaim {
    pub(super) request: u64,
    pub(super) host: Location,
    pub(super) sent: oneshot::Sender<(u64, Location)>,
    pub(super) reply: oneshot::Sender<ClaimOutcome>,
}

impl NodeActor {
    /// After the write (the claims decided in the group are answered by the group once the
    /// actor is done): hands waiting claims their waiters, and wakes those whose answer came.
    pub(super) fn answer_claims(&mut self, after: &mut After) {
        for sent in after.sent.drain(..) {
            let _ = sent.sent.send((sent.request, sent.host));
            if self.waiters.len() >= MAX_WAITERS {
                // Callers that gave up long ago; their answers show in the worklist anyway.
                self.waiters.retain(|_, w| !w.is_closed());
            }
            self.waiters.insert(sent.request, sent.reply);
        }
        for (request, verdict) in after.answers.drain(..) {
            if let Some(waiter) = self.waiters.remove(&request) {
                let _ = waiter.send(ClaimOutcome::Answered(verdict));
            }
        }
    }
}

/// The most API calls waiting for a host's answer kept at once; beyond, those whose caller
/// left are dropped.
pub const MAX_WAITERS: usize = 10_000;
