//! Users' words on their device: their actions on work items (decided by the desk, or sent
//! to the item's host), going away and coming back (*Synchronization and Disconnected
//! Operation in WorkToDo* (IC-03-006), §5.1.2-5.1.3: the desk's state and the controller told
//! the device's whole presence, in the same batch), and the values an item's host gave for
//! offline work or an item's application, and how that application ended.

use mobiwf_engine::Target;
use mobiwf_people::{DeskEffect, DeskInput, DeskRefusal, ItemKey, LocalClaim};
use mobiwf_proto::{Datum, FileRef, Message, Millis};

use crate::{ClaimOutcome, NodeCore, Note, Outgoing, Output, Refused, Reply};

impl NodeCore {
    /// A user's action through the API: the desk decides it, or sends it to the item's host
    /// (this node's own engine, in the same input, when it is the host).
    pub(crate) fn claim(&mut self, now_us: u64, claim: LocalClaim, out: &mut Output) {
        let input = DeskInput::Claim(claim);
        let directory = self.engine.directory();
        let applied = self.desk.apply(
            Millis::from_micros(now_us).as_u64(),
            directory,
            &self.who.name,
            input,
        );
        let applied = match applied {
            Err(DeskRefusal::NotHere { why, .. }) => {
                out.reply = Some(Reply::Claim(ClaimOutcome::NotHere(why)));
                return;
            }
            Err(e @ (DeskRefusal::UnknownItem { .. } | DeskRefusal::Selected { .. })) => {
                out.reply = Some(Reply::Claim(ClaimOutcome::UnknownItem(e.to_string())));
                return;
            }
            Ok(applied) => applied,
        };
        if let Some(verdict) = applied.verdict() {
            out.reply = Some(Reply::Claim(ClaimOutcome::Answered(verdict.clone())));
        } else if let (Some(request), Some(host)) = (applied.request, applied.sent_to()) {
            let host = host.clone();
            out.reply = Some(Reply::Claim(ClaimOutcome::Pending { request, host }));
        }
        // The claim's own answer is the reply; a host's answer to it comes later.
        let effects = applied
            .effects
            .into_iter()
            .filter(|e| !matches!(e, DeskEffect::Answered { .. }))
            .collect();
        self.route(now_us, Vec::new(), effects, out);
    }

    /// The desk's change, and the controller told the device's whole presence, every time:
    /// a presence that arrives late never undoes a newer one.
    pub(crate) fn presence(&mut self, now_ms: u64, input: DeskInput, out: &mut Output) {
        let directory = self.engine.directory();
        let result = match self.desk.apply(now_ms, directory, &self.who.name, input) {
            Err(e @ DeskRefusal::Selected { .. }) => Err(Refused::Selected(e.to_string())),
            Err(e) => Err(Refused::NotHere(e.to_string())),
            Ok(_) => {
                out.sends.push(Outgoing {
                    to: Target::Controller,
                    message: Message::Presence(self.desk.presence()),
                });
                Ok(())
            }
        };
        out.reply = Some(Reply::Presence(result));
    }

    /// An application ran for an item of a user of this device and ended: the desk's
    /// completion claim goes to the item's host like the user's own.
    pub(crate) fn application_ended(&mut self, now_us: u64, input: DeskInput, out: &mut Output) {
        let directory = self.engine.directory();
        let now_ms = Millis::from_micros(now_us).as_u64();
        match self.desk.apply(now_ms, directory, &self.who.name, input) {
            Ok(applied) => {
                let effects = applied
                    .effects
                    .into_iter()
                    .filter(|e| !matches!(e, DeskEffect::Answered { .. }))
                    .collect();
                self.route(now_us, Vec::new(), effects, out);
            }
            Err(e) => out
                .notes
                .push(Note::warn(format!("an item's application ended: {e}"))),
        }
    }

    /// An item's host answered what the item reads.
    pub(crate) fn copied(
        &mut self,
        now_ms: u64,
        key: ItemKey,
        data: Vec<Datum>,
        held: Vec<FileRef>,
        out: &mut Output,
    ) {
        let input = DeskInput::Copied {
            instance: key.0,
            activity: key.1,
            data,
            held,
        };
        let directory = self.engine.directory();
        if let Err(e) = self.desk.apply(now_ms, directory, &self.who.name, input) {
            out.notes.push(Note::warn(format!("an item's copy: {e}")));
        }
    }
}
