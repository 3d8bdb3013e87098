//! The node's decisions, pure: the partition engine (the partitions this node runs and the
//! work items it hosts) and the desk (the worklists of the users whose device it is) side by
//! side, with what a peer's message means to them, who may send what, and the messages they
//! pass each other without the network when the host of an item and the device of its user
//! are this same node.
//!
//! `NodeCore::apply(now, input) -> Output`: no clock, disk, network or processes inside. The
//! node's daemon reads what an input needs from the disk first (file contents a message
//! carries, an instance retired from memory: [`NodeCore::needs`]), applies the input, writes
//! what changed ([`NodeCore::take_changes`]) with the messages of the [`Output`] in one synced
//! batch, and only then carries out the rest (commands started and killed, answers).
//!
//! Layout: this file holds the core and its dispatch, one call per input; `input` the inputs
//! and what they come to; `translate` what a message means and who may send it; `local` the
//! rounds of messages between the engine and the desk on this node; `people` users' claims,
//! presence and copies for offline work; `link` the peers that cannot be reached; `lease` how
//! the node counts a grant's lease on its round trips with the controller; `epochs` which
//! owner of a clustered controller's book the node still takes messages from.

mod epochs;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
mod input;
pub mod lease;
mod link;
mod local;
mod people;
mod translate;

#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use mobiwf_engine::{
    Changes, Claimed, Effect, EncodeError, Ended, Engine, Finisher, Input, StoredInstance,
};
use mobiwf_people::{Desk, DeskChanges, DeskEncodeError, DeskInput};
use mobiwf_proto::{Compensated, InstanceId, Millis, NodeId, NodeName};

pub use epochs::Heard;
pub use input::{
    ClaimOutcome, CommandEnd, Level, NodeInput, Note, Outgoing, PersonEnd, Refused, Reply,
};
pub use lease::RoundTrips;
pub use local::MAX_LOCAL_ROUNDS;
pub use translate::NotTaken;

/// Reads a full libp2p address a document gives (`.../p2p/<peer id>`), or says why the node
/// could not dial it. The daemon gives libp2p's checks (the core links no libp2p); the peer a
/// [`mobiwf_proto::Location`] names is read from the location, never from its text again.
pub type ReadLocation = mobiwf_engine::ReadLocation;

/// Who this node is, and who its controller is.
#[derive(Debug, Clone)]
pub struct Identity {
    /// This node's peer id.
    pub me: NodeId,
    /// This node's name (users' devices are named by it).
    pub name: NodeName,
    /// The controller's peer id: only it deploys, controls and sends the directory.
    pub controller: NodeId,
    /// How a location a document gives is read.
    pub read_location: ReadLocation,
}

/// The node's engine and desk, and what it knows of its links.
pub struct NodeCore {
    engine: Engine,
    desk: Desk,
    who: Identity,
    /// The peers deliveries failed to, not heard from since.
    unreachable: BTreeSet<NodeId>,
    /// The highest epoch heard per shard of the controllers' book.
    epochs: epochs::Epochs,
}

/// What one input came to: messages to stage with the changes, the engine's effects to carry
/// out once they are written, and the answer to whoever asked.
#[derive(Debug, Default)]
pub struct Output {
    /// Messages to send, staged in the same batch as the changes.
    pub sends: Vec<Outgoing>,
    /// The engine's effects for after the write: commands to start and kill, files to
    /// fetch, kept words refused. (Its sends are in `sends`.)
    pub effects: Vec<Effect>,
    /// Answers to this device's claims that came in (request number, verdict).
    pub answers: Vec<(u64, mobiwf_proto::Verdict)>,
    /// The answer to an API input (a claim, a completion, a presence).
    pub reply: Option<Reply>,
    /// Claims of this node's desk on items of its own engine whose instance is not in
    /// memory: the daemon reads the instance back ([`NodeCore::readmit`]) and applies each
    /// as [`NodeInput::OwnClaim`] in the same group.
    pub deferred: Vec<Claimed>,
    /// What is worth the daemon's log.
    pub notes: Vec<Note>,
}

impl NodeCore {
    /// The core of a node with its engine and desk (as loaded from the store).
    pub fn new(mut engine: Engine, desk: Desk, who: Identity) -> NodeCore {
        engine.set_read_location(who.read_location);
        NodeCore {
            engine,
            desk,
            who,
            unreachable: BTreeSet::new(),
            epochs: epochs::Epochs::default(),
        }
    }

    /// What this device is (its operating system and installed applications), from the
    /// daemon's configuration at each start.
    pub fn set_device(&mut self, profile: mobiwf_people::DeviceProfile) {
        self.desk.set_device(profile);
    }

    /// The partition engine, for the daemon's queries.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The desk, for the daemon's queries.
    pub fn desk(&self) -> &Desk {
        &self.desk
    }

    /// Who this node is.
    pub fn identity(&self) -> &Identity {
        &self.who
    }

    /// Applies one input. `Err` only for a message the node does not take (nothing changed):
    /// every other input is decided, its refusals in [`Output::reply`] or [`Output::notes`].
    pub fn apply(&mut self, now_us: u64, input: NodeInput) -> Result<Output, NotTaken> {
        let mut out = Output::default();
        let now_ms = Millis::from_micros(now_us).as_u64();
        match input {
            NodeInput::Engine(input) => {
                let effects = self
                    .engine
                    .apply_us(now_us, input)
                    .map_err(NotTaken::from)?;
                self.route(now_us, effects, Vec::new(), &mut out);
            }
            NodeInput::Desk(input) => {
                let applied = self
                    .desk
                    .apply(now_ms, self.engine.directory(), &self.who.name, input)
                    .map_err(|r| NotTaken::Refused(r.to_string()))?;
                self.route(now_us, Vec::new(), applied.effects, &mut out);
            }
            NodeInput::Tick => self.tick(now_us, &mut out),
            NodeInput::Ended(end) => self.ended(now_us, end, &mut out),
            NodeInput::Complete(end) => {
                let input = end.input();
                let result = self.engine.apply_us(now_us, input);
                let result =
                    result.map(|effects| self.route(now_us, effects, Vec::new(), &mut out));
                out.reply = Some(Reply::Completion(result));
            }
            NodeInput::Claim(claim) => self.claim(now_us, claim, &mut out),
            NodeInput::OwnClaim(claim) => self.local_claim(now_us, claim, &mut out),
            NodeInput::Link { peer, reachable } => self.link(now_us, peer, reachable, &mut out),
            NodeInput::Refused { message, reason } => {
                self.refused(now_us, message, &reason, &mut out);
            }
            NodeInput::Fetched { file, waiting } => self.fetched(now_us, file, waiting, &mut out),
            NodeInput::Copied { key, data, held } => self.copied(now_ms, key, data, held, &mut out),
            NodeInput::ApplicationEnded { key, user, end } => {
                let input = DeskInput::ApplicationEnded { key, user, end };
                self.application_ended(now_us, input, &mut out);
            }
            NodeInput::Away(user) => self.presence(now_ms, DeskInput::Disconnect(user), &mut out),
            NodeInput::Back(user) => self.presence(now_ms, DeskInput::Reconnect(user), &mut out),
        }
        Ok(out)
    }

    /// A grant of a class is used only when the node's lease for the request it answers did
    /// not run out at any instant since the request was asked, as `trips` count
    /// it at `now_ms` ([`RoundTrips::lapsed_at`]): else it comes to the engine as lapsed
    /// (`Input::SyncLapsed`: released and asked for again), since the controller may have
    /// counted the class free meanwhile. Any other input is left as it is. Called once the
    /// instance is in memory ([`NodeCore::needs`]).
    pub fn fence_grant(&self, input: NodeInput, trips: &RoundTrips, now_ms: u64) -> NodeInput {
        let NodeInput::Engine(Input::SyncGranted(granted)) = input else {
            return input;
        };
        let ticket = granted.ticket;
        let key = mobiwf_engine::RunKey {
            instance: ticket.instance,
            partition: ticket.partition,
        };
        // A grant without a class (an ordering's) fences nothing: its wait may be long.
        let classed = self
            .engine
            .run(&key)
            .and_then(|run| run.activity(ticket.activity))
            .is_some_and(|a| a.class.is_some());
        let asked_ms = self.engine.asked_ms(key, ticket.activity);
        let lapsed = classed
            && trips
                .lapsed_at(asked_ms, granted.lease_ms, now_ms)
                .is_some();
        NodeInput::Engine(if lapsed {
            Input::SyncLapsed(granted)
        } else {
            Input::SyncGranted(granted)
        })
    }

    /// The instance `input` is about that the engine does not hold in memory (a finished
    /// one it retired, or one it never had): the daemon reads it back from the store and
    /// gives it to [`NodeCore::readmit`] before applying `input`.
    pub fn needs(&self, input: &NodeInput) -> Option<InstanceId> {
        input.instance().filter(|i| !self.engine.holds(*i))
    }

    /// Gives the engine back an instance it retired, as read from the store.
    pub fn readmit(&mut self, stored: StoredInstance) {
        if !stored.is_empty() {
            self.engine.readmit(stored);
        }
    }

    /// The commands to start again after a restart (the executor runs each try at most once).
    pub fn resume(&self) -> Vec<Effect> {
        self.engine.resume()
    }

    /// What changed in the engine since the last call, for the daemon to write.
    pub fn take_changes(&mut self) -> Result<Changes, EncodeError> {
        self.engine.take_changes()
    }

    /// What changed in the desk since the last call, for the daemon to write.
    pub fn take_desk_changes(&mut self) -> Result<DeskChanges, DeskEncodeError> {
        self.desk.take_changes()
    }

    /// Retires from memory the finished instances among those `changes` writes and those read
    /// back since the last call; each instance whose retired mark changes, with the mark (a
    /// readmitted instance that goes on loses its mark).
    pub fn retire_finished(&mut self, changes: &Changes) -> Vec<(InstanceId, bool)> {
        let readmitted = self.engine.take_readmitted();
        let mut touched = readmitted.clone();
        touched.extend(changes.runs.iter().map(|r| r.key.instance));
        touched.extend(changes.known.iter().map(|k| k.instance));
        touched.extend(changes.items.iter().map(|i| i.instance));
        let mut marks = Vec::new();
        for instance in touched {
            if self.engine.retire(instance) {
                marks.push((instance, true));
            } else if readmitted.contains(&instance) {
                marks.push((instance, false));
            }
        }
        marks
    }

    /// The activities' changes of state since the last call, for the log and the metrics.
    pub fn take_transitions(&mut self) -> Vec<mobiwf_engine::Transition> {
        self.engine.take_transitions()
    }

    /// The transitions the engine's lifecycle table refused since the last call (a bug: the
    /// daemon logs and counts them).
    pub fn take_refused_transitions(&mut self) -> mobiwf_engine::Refusals {
        self.engine.take_refused_transitions()
    }

    /// When the node must tick next: the engine's earliest timer or the desk's next deadline
    /// notice, whichever comes first (both on this node's clock).
    pub fn next_deadline(&self) -> Option<u64> {
        match (self.engine.next_deadline(), self.desk.next_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Time passed: the engine's timers and the desk's deadline notices.
    fn tick(&mut self, now_us: u64, out: &mut Output) {
        let effects = self
            .engine
            .apply_us(now_us, Input::Tick)
            .unwrap_or_else(|e| {
                out.notes.push(Note::warn(format!("timer: {e}")));
                Vec::new()
            });
        let dir = self.engine.directory();
        let desk = match self.desk.apply(
            Millis::from_micros(now_us).as_u64(),
            dir,
            &self.who.name,
            DeskInput::Tick,
        ) {
            Ok(applied) => applied.effects,
            Err(e) => {
                out.notes.push(Note::warn(format!("desk timer: {e}")));
                Vec::new()
            }
        };
        self.route(now_us, effects, desk, out);
    }

    /// A command or a compensation the engine started ended: the engine hears how.
    fn ended(&mut self, now_us: u64, end: CommandEnd, out: &mut Output) {
        let (input, late) = if end.compensation {
            let input = Input::CompensationEnded(Compensated {
                instance: end.instance,
                partition: end.partition,
                activity: end.activity,
                succeeded: end.finish.succeeded(),
                detail: end.finish.into_detail(),
            });
            (input, "a compensation's end")
        } else {
            let input = Input::Finished(Ended {
                instance: end.instance,
                activity: end.activity,
                finish: end.finish,
                by: Finisher::Command,
                attempt: end.attempt,
                written: end.written,
            });
            // Its activity was decided before (timeOut, withdrawal, cancel): the command had
            // been killed, or its word comes too late.
            (input, "a command ended after its activity was decided")
        };
        match self.engine.apply_us(now_us, input) {
            Ok(effects) => self.route(now_us, effects, Vec::new(), out),
            Err(e) if end.compensation => out.notes.push(Note::warn(format!("{late}: {e}"))),
            Err(e) => out.notes.push(Note::info(format!("{late}: {e}"))),
        }
    }

    /// A fetch ended with the content whole: every instance that waited for it goes on, and
    /// no copy for offline work waits for it any more.
    fn fetched(
        &mut self,
        now_us: u64,
        file: mobiwf_proto::FileRef,
        waiting: BTreeSet<InstanceId>,
        out: &mut Output,
    ) {
        let dir = self.engine.directory();
        let held = DeskInput::FileHeld(file.clone());
        if let Err(e) = self.desk.apply(
            Millis::from_micros(now_us).as_u64(),
            dir,
            &self.who.name,
            held,
        ) {
            out.notes.push(Note::warn(format!(
                "a fetched file for an item's copy: {e}"
            )));
        }
        for instance in waiting {
            let input = Input::Fetched {
                instance,
                file: file.clone(),
            };
            match self.engine.apply_us(now_us, input) {
                Ok(effects) => self.route(now_us, effects, Vec::new(), out),
                Err(e) => out.notes.push(Note::warn(format!("a fetched file: {e}"))),
            }
        }
    }
}
