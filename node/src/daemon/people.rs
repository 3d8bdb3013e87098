//! The node's people side on the actor: users' claims from the API, and the passing of
//! messages between the engine (the host of work items) and the desk (the device of users).
//! When the host of an item and the device of a user are this same node, their messages go
//! from one to the other in the same group, without the network; the others go through the
//! outbox like every message.

use std::collections::VecDeque;

use mobiwf_engine::{Effect, Input, Target};
use mobiwf_people::{DeskEffect, DeskInput, DeskRefusal};
use mobiwf_proto::{Message, NodeId};
use mobiwf_runtime::daemon::{Destination, Group, Sequencer};
use mobiwf_runtime::metrics::Peer;
use mobiwf_runtime::store::StoreError;
use tokio::sync::oneshot;

use super::ClaimOutcome;
use super::actor::{After, NodeActor};
use super::translate::claim_input;

/// The most rounds of messages between this node's engine and desk in one group: each round
/// is one claim or one snapshot; a claim takes two, so this is never reached in practice.
pub const MAX_LOCAL_ROUNDS: usize = 64;

/// A claim sent to a host, waiting for its answer after the group is on disk.
pub(super) struct SentClaim {
    pub(super) request: u64,
    pub(super) host: String,
    pub(super) sent: oneshot::Sender<(u64, String)>,
    pub(super) reply: oneshot::Sender<ClaimOutcome>,
}

impl NodeActor {
    /// A user's action through the API: the desk decides it, or sends it to the item's host.
    pub(super) fn claim(
        &mut self,
        now_ms: u64,
        claim: mobiwf_people::LocalClaim,
        replies: (
            oneshot::Sender<ClaimOutcome>,
            oneshot::Sender<(u64, String)>,
        ),
        after: &mut After,
    ) -> Vec<DeskEffect> {
        let (reply, sent) = replies;
        let input = DeskInput::Claim(claim);
        let applied = self
            .desk
            .apply(now_ms, self.engine.directory(), &self.name, input);
        match applied {
            Err(DeskRefusal::NotHere { why, .. }) => {
                after.claims.push((reply, ClaimOutcome::NotHere(why)));
                Vec::new()
            }
            Err(e @ (DeskRefusal::UnknownItem { .. } | DeskRefusal::Selected { .. })) => {
                after
                    .claims
                    .push((reply, ClaimOutcome::UnknownItem(e.to_string())));
                Vec::new()
            }
            Ok(applied) => {
                if let Some(verdict) = applied.verdict() {
                    after
                        .claims
                        .push((reply, ClaimOutcome::Answered(verdict.clone())));
                } else if let (Some(request), Some(host)) = (applied.request, applied.sent_to()) {
                    after.sent.push(SentClaim {
                        request,
                        host: host.to_owned(),
                        sent,
                        reply,
                    });
                }
                applied
                    .effects
                    .into_iter()
                    .filter(|e| !matches!(e, DeskEffect::Answered { .. }))
                    .collect()
            }
        }
    }

    /// Carries out the engine's and the desk's effects: messages between them on this node
    /// are applied here and now (in rounds, until none is left); the others are staged in the
    /// group's outbox; commands to start and kill wait in `after` for the write.
    pub(super) fn route(
        &mut self,
        now_us: u64,
        engine: Vec<Effect>,
        desk: Vec<DeskEffect>,
        (group, seq): (&mut Group, &mut Sequencer),
        after: &mut After,
    ) -> Result<(), StoreError> {
        let mut engine: VecDeque<Effect> = engine.into();
        let mut desk: VecDeque<DeskEffect> = desk.into();
        let mut rounds = 0;
        while !engine.is_empty() || !desk.is_empty() {
            rounds += 1;
            let local = rounds <= MAX_LOCAL_ROUNDS;
            while let Some(effect) = engine.pop_front() {
                match effect {
                    Effect::Send {
                        to: Target::Partner(location),
                        message: message @ (Message::Item { .. } | Message::Answer { .. }),
                    } if local && self.is_me(seq, &location) => {
                        if let Some(input) = DeskInput::from_message(message) {
                            let directory = self.engine.directory();
                            match self.desk.apply(now_us / 1000, directory, &self.name, input) {
                                Ok(applied) => desk.extend(applied.effects),
                                Err(e) => tracing::warn!("an item for this node's users: {e}"),
                            }
                        }
                    }
                    Effect::Send { to, mut message } => {
                        super::data::inline(&self.files, self.engine.location(), &mut message);
                        let (to, role) = self.destination(to);
                        group.send(seq, to, role, message)?;
                    }
                    other => after.effects.push(other),
                }
            }
            while let Some(effect) = desk.pop_front() {
                match effect {
                    DeskEffect::Answered {
                        request, verdict, ..
                    } => {
                        after.answers.push((request, verdict));
                    }
                    DeskEffect::Send { to, message } if local && self.is_me(seq, &to) => {
                        let me = NodeId::new(seq.me().as_str());
                        let Some(input) = claim_input(*message, Some(me)) else {
                            tracing::warn!("the desk sent something other than a claim");
                            continue;
                        };
                        // A late claim on an item of a retired instance is judged as if it were
                        // in memory (unavailable, or done for a repeat), not as unknown.
                        super::memory::readmit(&mut self.engine, self.store.as_ref(), &input)?;
                        match self.engine.apply_us(now_us, input.clone()) {
                            Ok(effects) => engine.extend(effects),
                            // The user waits for an answer: the refusal is one.
                            Err(e) => {
                                let answer = refusal(input, e.to_string());
                                let directory = self.engine.directory();
                                let answered = answer.and_then(|answer| {
                                    self.desk
                                        .apply(now_us / 1000, directory, &self.name, answer)
                                        .ok()
                                });
                                desk.extend(answered.into_iter().flat_map(|a| a.effects));
                            }
                        }
                    }
                    DeskEffect::Send { to, message } => {
                        let mut message = *message;
                        super::data::inline(&self.files, self.engine.location(), &mut message);
                        group.send(seq, Destination::Location(to), Peer::Partner, message)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a location is this node's own.
    fn is_me(&self, seq: &mut Sequencer, location: &str) -> bool {
        seq.address(location)
            .is_ok_and(|(peer, _)| peer.to_string() == seq.me().as_str())
    }

    /// After the write: answers the claims decided, hands waiting claims their waiters, and
    /// wakes those whose answer came.
    pub(super) fn answer_claims(&mut self, after: &mut After) {
        for (reply, outcome) in after.claims.drain(..) {
            let _ = reply.send(outcome);
        }
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

/// The desk's input that answers a claim of this node's own engine refused, with the reason.
fn refusal(claim: Input, reason: String) -> Option<DeskInput> {
    let Input::Claim {
        instance,
        activity,
        user,
        request,
        ..
    } = claim
    else {
        return None;
    };
    let verdict = mobiwf_proto::Verdict::Invalid { reason };
    Some(DeskInput::Answer {
        instance,
        activity,
        answer: mobiwf_proto::Answer {
            user,
            request,
            verdict,
        },
    })
}

/// The most API calls waiting for a host's answer kept at once; beyond, those whose caller
/// left are dropped.
pub const MAX_WAITERS: usize = 10_000;
