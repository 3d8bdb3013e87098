//! The messages between this node's engine (the host of work items) and its desk (the device
//! of users): when the host of an item and the device of its user are this same node, they
//! go from one to the other within the same input, without the network, in rounds until none
//! is left; the others are sent like every message.

use std::collections::VecDeque;

use mobiwf_engine::{Claimed, Effect, Input, Target};
use mobiwf_people::{DeskEffect, DeskInput};
use mobiwf_proto::{Claim, ItemAnswer, Location, Message, Millis};

use crate::{NodeCore, Note, Outgoing, Output};

/// The most rounds of messages between this node's engine and desk for one input: each round
/// is one claim or one snapshot; a claim takes two, so this is never reached in practice.
/// Past it, the messages go through the network like any other.
pub const MAX_LOCAL_ROUNDS: usize = 64;

impl NodeCore {
    /// Carries out the engine's and the desk's effects: messages between them on this node
    /// are applied here and now; the others go to `out`.
    pub(crate) fn route(
        &mut self,
        now_us: u64,
        engine: Vec<Effect>,
        desk: Vec<DeskEffect>,
        out: &mut Output,
    ) {
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
                        message: message @ (Message::Item(_) | Message::Answer(_)),
                    } if local && self.is_me(&location) => {
                        desk.extend(self.for_own_desk(now_us, message, out));
                    }
                    Effect::Send { to, message } => out.sends.push(Outgoing { to, message }),
                    other => out.effects.push(other),
                }
            }
            while let Some(effect) = desk.pop_front() {
                match effect {
                    DeskEffect::Answered {
                        request, verdict, ..
                    } => out.answers.push((request, verdict)),
                    DeskEffect::Send { to, claim } if local && self.is_me(&to) => {
                        let input = Claimed {
                            claim: *claim,
                            from: Some(self.who.me.clone()),
                            missing: Vec::new(),
                        };
                        if !self.engine.holds(input.claim.instance) {
                            // A late claim on an item of a retired instance is judged once the
                            // instance is read back (unavailable, or done for a repeat), not
                            // as unknown.
                            out.deferred.push(input);
                            continue;
                        }
                        let (effects, answered) = self.judge_local_claim(now_us, input);
                        engine.extend(effects);
                        desk.extend(answered);
                    }
                    DeskEffect::Send { to, claim } => out.sends.push(Outgoing {
                        to: Target::Partner(to),
                        message: Message::Claim(*claim),
                    }),
                }
            }
        }
    }

    /// A claim of this node's desk whose instance was read back into memory.
    pub(crate) fn local_claim(&mut self, now_us: u64, claimed: Claimed, out: &mut Output) {
        let (effects, answered) = self.judge_local_claim(now_us, claimed);
        self.route(now_us, effects, answered, out);
    }

    /// The engine judges a claim of this node's desk; its refusal is the user's answer.
    fn judge_local_claim(
        &mut self,
        now_us: u64,
        claimed: Claimed,
    ) -> (Vec<Effect>, Vec<DeskEffect>) {
        let claim = claimed.claim.clone();
        match self.engine.apply_us(now_us, Input::Claim(claimed)) {
            Ok(effects) => (effects, Vec::new()),
            Err(e) => {
                let answer = refusal(claim, e.to_string());
                let directory = self.engine.directory();
                let answered = self
                    .desk
                    .apply(
                        Millis::from_micros(now_us).as_u64(),
                        directory,
                        &self.who.name,
                        answer,
                    )
                    .map(|a| a.effects)
                    .unwrap_or_default();
                (Vec::new(), answered)
            }
        }
    }

    /// An item's snapshot or an answer of this node's engine for its own desk.
    fn for_own_desk(&mut self, now_us: u64, message: Message, out: &mut Output) -> Vec<DeskEffect> {
        let Some(input) = DeskInput::from_message(message) else {
            return Vec::new();
        };
        let directory = self.engine.directory();
        match self.desk.apply(
            Millis::from_micros(now_us).as_u64(),
            directory,
            &self.who.name,
            input,
        ) {
            Ok(applied) => applied.effects,
            Err(e) => {
                let text = format!("an item for this node's users: {e}");
                out.notes.push(Note::warn(text));
                Vec::new()
            }
        }
    }

    /// Whether a location is this node's own: it names this node's peer.
    pub(crate) fn is_me(&self, location: &Location) -> bool {
        location.peer() == Some(&self.who.me)
    }
}

/// The desk's input that answers a claim of this node's own engine refused, with the reason.
fn refusal(claim: Claim, reason: String) -> DeskInput {
    let verdict = mobiwf_proto::Verdict::Invalid { reason };
    DeskInput::Answer(ItemAnswer {
        instance: claim.instance,
        activity: claim.activity,
        answer: mobiwf_proto::Answer {
            user: claim.user,
            request: claim.request,
            verdict,
        },
    })
}
