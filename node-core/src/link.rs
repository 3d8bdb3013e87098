//! A link that breaks and comes back (*Synchronization and Disconnected Operation in WorkToDo*
//! (IC-03-006), §5.3): the outbox's news of a peer that cannot be reached (or answers again),
//! and any message from it, go to the engine (as a host: that device's users inactive
//! meanwhile) and the desk (as a device: the items that peer hosts disabled, but for those
//! held with their data here). A message the peer refused outright answers the claim it
//! carried.

use mobiwf_engine::Input;
use mobiwf_people::DeskInput;
use mobiwf_proto::{Answer, ItemAnswer, Message, Millis, NodeId, Verdict};

use crate::{NodeCore, Note, Output};

impl NodeCore {
    /// A peer became unreachable or answered again; nothing when that is no news.
    pub(crate) fn link(&mut self, now_us: u64, peer: NodeId, reachable: bool, out: &mut Output) {
        let changed = if reachable {
            self.unreachable.remove(&peer)
        } else {
            self.unreachable.insert(peer.clone())
        };
        if !changed {
            return;
        }
        let word = if reachable {
            "a peer answers again"
        } else {
            "a peer cannot be reached"
        };
        out.notes.push(Note::info(format!("{word}: {peer}")));
        let host = peer.clone();
        let input = Input::Link { peer, reachable };
        let effects = self.engine.apply_us(now_us, input).unwrap_or_else(|e| {
            out.notes.push(Note::warn(format!("a link's news: {e}")));
            Vec::new()
        });
        let input = DeskInput::HostLink { host, reachable };
        let directory = self.engine.directory();
        let desk = match self.desk.apply(
            Millis::from_micros(now_us).as_u64(),
            directory,
            &self.who.name,
            input,
        ) {
            Ok(applied) => applied.effects,
            Err(e) => {
                out.notes.push(Note::warn(format!("a link's news: {e}")));
                Vec::new()
            }
        };
        self.route(now_us, effects, desk, out);
    }

    /// A peer refused a message of this node's: a claim it carried is answered as refused
    /// (the desk wakes whoever waits for it and tells the user why); any other refusal is the
    /// outbox's to record.
    pub(crate) fn refused(
        &mut self,
        now_us: u64,
        message: Message,
        reason: &str,
        out: &mut Output,
    ) {
        let Message::Claim(claim) = message else {
            return;
        };
        let answer = ItemAnswer {
            instance: claim.instance,
            activity: claim.activity,
            answer: Answer {
                user: claim.user,
                request: claim.request,
                verdict: Verdict::Invalid {
                    reason: format!("its host refused the claim: {reason}"),
                },
            },
        };
        let now_ms = Millis::from_micros(now_us).as_u64();
        let directory = self.engine.directory();
        let input = DeskInput::Answer(answer);
        match self.desk.apply(now_ms, directory, &self.who.name, input) {
            Ok(applied) => self.route(now_us, Vec::new(), applied.effects, out),
            Err(e) => out.notes.push(Note::warn(format!("a refused claim: {e}"))),
        }
    }

    /// Whether deliveries to `peer` failed and nothing was heard from it since.
    pub fn is_unreachable(&self, peer: &NodeId) -> bool {
        self.unreachable.contains(peer)
    }
}
