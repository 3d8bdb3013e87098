//! A simulated node daemon: the node's real pure core (`mobiwf_node_core::NodeCore`: the
//! engine and the desk) in the shell the node daemon (`mobiwf-node`, `src/daemon/actor.rs`)
//! puts it in. Each group of events is applied to the core (an inbound message through the
//! apply-once prelude, the instance it names read back first when it was retired), what
//! changed is staged with the messages it causes and the ids of the messages applied, and the
//! world writes it synced before anything of it is acknowledged, sent or started. At start
//! the node loads its core from the disk, resumes its outbox, registers with the controller
//! and starts again the commands that were running (the executor runs each try at most once).

pub mod executor;
pub mod store;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_engine::{Effect, Life, Lost, Target};
use mobiwf_node_core::{
    CommandEnd, Identity, NodeCore, NodeInput, NotTaken, Output, Reply, RoundTrips,
};
use mobiwf_people::{DeviceProfile, LocalClaim};
use mobiwf_proto::{ActivityTypeId, Location, Message, Millis, NodeId, NodeName, Register, UserId};

use crate::disk::Disk;
use crate::group::{Group, Inbound, NotApplied, Received, Sequencer};
use crate::outbox::{Outbox, Outgoing};
use executor::{Ended, RunDir, RunKind};

/// Who a node is, as its command line says.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Its name.
    pub name: NodeName,
    /// Its peer id.
    pub peer: NodeId,
    /// Its skills.
    pub skills: Vec<ActivityTypeId>,
    /// The controller's peer id.
    pub controller: NodeId,
    /// The controller's address.
    pub controller_addr: String,
    /// The length of an hour for deadlines, ms.
    pub hour_ms: u64,
}

/// What a node's actor is given. Inbound messages are the common case and the largest: a box
/// per message would cost more than the rarer variants save (as the node daemon's own events).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum NodeEvent {
    /// A message from a peer (or from itself).
    Inbound(Inbound),
    /// Its next deadline came.
    Tick,
    /// A command it started (or watches again) ended.
    Ended {
        /// Its run directory.
        dir: RunDir,
        /// How.
        ended: Ended,
    },
    /// A user acts on a work item through this node, their device.
    Claim(LocalClaim),
    /// The outbox's news of a peer.
    Link {
        /// The peer.
        peer: NodeId,
        /// True when it answers again.
        reachable: bool,
    },
    /// A host refused a claim of this device outright (the outbox hands the answer back,
    /// `outbox_news::refused_claim`): the entry leaves with the desk's answer to the user.
    Refused {
        /// The claim message, as the outbox kept it.
        msg: Outgoing,
        /// The host's answer.
        reply: mobiwf_proto::Reply,
    },
    /// A user of this device goes away.
    Away(UserId),
    /// A user of this device comes back.
    Back(UserId),
}

/// A running node process.
pub struct NodeProc {
    /// The node's core.
    pub core: NodeCore,
    /// Its message numbers.
    pub seq: Sequencer,
    /// Its outbox.
    pub outbox: Outbox,
    /// The events waiting for the next group.
    pub pending: Vec<NodeEvent>,
    /// Its round trips with the controller (`Leases`: in memory, none at a start).
    pub trips: RoundTrips,
    /// The held commands whose lease files it keeps up, with their lease.
    pub held: BTreeMap<RunDir, Hold>,
    /// The executions whose end it waits for.
    pub watching: BTreeSet<RunDir>,
    /// Its lease refresher runs (while it holds commands).
    pub refreshing: bool,
    /// What its last group did, for the trace.
    pub log: Vec<String>,
    /// The executions its last group asked for that must start nothing new, and why (its
    /// instance interrupted or cancelled, its activity paused, right after the input that
    /// asked): a command one of them starts is a violation (`World::spawn`).
    pub forbidden: BTreeMap<RunDir, &'static str>,
    config: NodeConfig,
}

/// The lease a held command runs under (`executor::Hold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hold {
    /// The grant's lease, ms.
    pub lease_ms: u64,
    /// When the request the grant answers was asked (ms since the epoch, the node's clock; 0:
    /// not known): the lease counts from there at the latest.
    pub asked_ms: u64,
}

/// What a group came to, for the world to carry out once it is written.
#[derive(Debug, Default)]
pub struct After {
    /// Commands to start and kill, compensations.
    pub effects: Vec<Effect>,
    /// What the group wrote, for the checks.
    pub touched: store::Touched,
}

impl NodeProc {
    /// The node as its disk left it (`daemon::load_core`), listening at `addr`; `fresh` is
    /// the incarnation a new store gets.
    pub fn start(
        config: NodeConfig,
        disk: &mut Disk,
        addr: &str,
        fresh: u64,
    ) -> Result<NodeProc, String> {
        let mut engine = store::load(disk)?;
        engine.set_location(Location::lenient(addr));
        engine.set_hour_ms(config.hour_ms);
        let desk = store::load_desk(disk)?;
        let who = Identity {
            me: config.peer.clone(),
            name: config.name.clone(),
            controller: config.controller.clone(),
            read_location,
        };
        let mut core = NodeCore::new(engine, desk, who);
        core.set_device(DeviceProfile {
            os: "linux".to_owned(),
            installed: BTreeSet::new(),
        });
        let seq = Sequencer::load(disk, config.peer.clone(), fresh);
        Ok(NodeProc {
            core,
            seq,
            outbox: Outbox::new(config.peer.clone(), true),
            pending: Vec::new(),
            trips: RoundTrips::new(),
            held: BTreeMap::new(),
            watching: BTreeSet::new(),
            refreshing: false,
            log: Vec::new(),
            forbidden: BTreeMap::new(),
            config,
        })
    }

    /// The registration every start stages at once (`NodeActor::register`), at `addr`.
    pub fn register(&mut self, addr: &str) -> Group {
        let mut group = Group::default();
        let message = Message::Register(Register {
            name: self.config.name.clone(),
            skills: self.config.skills.clone(),
            addrs: vec![addr.to_owned()],
            join_token: None,
        });
        let (to, addrs) = self.destination(Target::Controller);
        group.send(&mut self.seq, to, addrs, message);
        group
    }

    fn destination(&self, to: Target) -> (NodeId, Vec<String>) {
        match to {
            Target::Controller => (
                self.config.controller.clone(),
                vec![self.config.controller_addr.clone()],
            ),
            // A location that names no peer is staged as it is: delivery refuses it.
            Target::Partner(location) => match location.peer() {
                Some(peer) => (peer.clone(), vec![location.as_str().to_owned()]),
                None => (
                    NodeId::new(location.as_str()),
                    vec![location.as_str().to_owned()],
                ),
            },
        }
    }

    /// Applies a group of events (`NodeActor::apply`): the staged group, and what to do once
    /// it is written. `Err`: the store failed to read something back (the daemon stops).
    pub fn apply(
        &mut self,
        disk: &Disk,
        now_us: u64,
        events: Vec<NodeEvent>,
    ) -> Result<(Group, After), String> {
        let mut group = Group::default();
        let mut after = After::default();
        self.forbidden.clear();
        for event in events {
            self.apply_one(disk, now_us, event, &mut group, &mut after)?;
        }
        after.touched = store::stage_core(&mut group.batch, &mut self.core)?;
        Ok((group, after))
    }

    fn apply_one(
        &mut self,
        disk: &Disk,
        now: u64,
        event: NodeEvent,
        group: &mut Group,
        after: &mut After,
    ) -> Result<(), String> {
        let input = match event {
            NodeEvent::Inbound(inbound) => return self.receive(disk, now, inbound, group, after),
            NodeEvent::Tick => NodeInput::Tick,
            NodeEvent::Ended { dir, ended } => ended_input(dir, ended),
            NodeEvent::Claim(claim) => NodeInput::Claim(claim),
            NodeEvent::Link { peer, reachable } => NodeInput::Link { peer, reachable },
            NodeEvent::Refused { msg, reply } => {
                return self.refused(disk, now, msg, reply, group, after);
            }
            NodeEvent::Away(user) => NodeInput::Away(user),
            NodeEvent::Back(user) => NodeInput::Back(user),
        };
        let reply = self.step(disk, now, input, group, after)?;
        if let Some(reply) = reply {
            self.log.push(reply_text(&reply));
        }
        Ok(())
    }

    /// A host refused a claim outright (`NodeActor::refused`): its entry leaves the outbox
    /// in this group, with the desk's answer to the user (the outbox forgets its number once
    /// the group is written).
    fn refused(
        &mut self,
        disk: &Disk,
        now: u64,
        msg: Outgoing,
        reply: mobiwf_proto::Reply,
        group: &mut Group,
        after: &mut After,
    ) -> Result<(), String> {
        group.answered(&msg, &reply);
        if let mobiwf_proto::Reply::Refused { reason } = reply {
            let message = msg.envelope.message;
            let input = NodeInput::Refused { message, reason };
            if let Some(reply) = self.step(disk, now, input, group, after)? {
                self.log.push(reply_text(&reply));
            }
        }
        Ok(())
    }

    /// One input to the core, the instance it names read back first (`NodeActor::step`).
    fn step(
        &mut self,
        disk: &Disk,
        now: u64,
        input: NodeInput,
        group: &mut Group,
        after: &mut After,
    ) -> Result<Option<Reply>, String> {
        store::readmit_for(&mut self.core, disk, &input)?;
        match self.core.apply(now, input) {
            Ok(out) => self.settle(disk, now, out, group, after),
            Err(e) => {
                self.log.push(format!("an input not taken: {e}"));
                Ok(None)
            }
        }
    }

    /// Stages what the core decided (`NodeActor::settle`).
    fn settle(
        &mut self,
        disk: &Disk,
        now: u64,
        out: Output,
        group: &mut Group,
        after: &mut After,
    ) -> Result<Option<Reply>, String> {
        let mut reply = None;
        for out in store::with_deferred(&mut self.core, disk, now, out)? {
            reply = reply.or(out.reply);
            for note in out.notes {
                self.log.push(note.text);
            }
            for sent in out.sends {
                let (to, addrs) = self.destination(sent.to);
                group.send(&mut self.seq, to, addrs, sent.message);
            }
            for (request, verdict) in out.answers {
                self.log
                    .push(format!("claim {request} answered: {verdict:?}"));
            }
            self.unfence_killed(&out.effects);
            self.note_forbidden(&out.effects);
            after.effects.extend(out.effects);
        }
        Ok(reply)
    }

    /// A message from a peer, through the apply-once prelude, to the core
    /// (`NodeActor::receive`).
    fn receive(
        &mut self,
        disk: &Disk,
        now: u64,
        inbound: Inbound,
        group: &mut Group,
        after: &mut After,
    ) -> Result<(), String> {
        let from = inbound.from.clone();
        // `NodeActor::note_probe`: only the controller's probes count, and only once a later
        // one echoes their answer; no other word renews a lease.
        if from == self.config.controller
            && let Message::Probe(probe) = &inbound.envelope.message
        {
            self.trips.probed(*probe, Millis::from_micros(now).as_u64());
        }
        if self.core.is_unreachable(&from) {
            let back = NodeInput::Link {
                peer: from.clone(),
                reachable: true,
            };
            self.step(disk, now, back, group, after)?;
        }
        let kind = inbound.envelope.message.kind();
        if matches!(kind, "fetch" | "read_data" | "item_data") {
            // Answered at once by the daemon, never stored: not part of what is simulated.
            let reason = format!("{kind} is not simulated");
            group
                .acks
                .push((inbound.reply, Some(mobiwf_proto::Reply::Refused { reason })));
            return Ok(());
        }
        let (core, trips) = (&mut self.core, &self.trips);
        let mut failed = None;
        let mut output = None;
        let received = group.receive(disk, inbound, |_, _, message| {
            let input = core
                .accept(&from, message, Ok(Vec::new()))
                .map_err(not_applied)?;
            if let Err(e) = store::readmit_for(core, disk, &input) {
                failed = Some(e.clone());
                return Err(NotApplied::Refused(e));
            }
            let input = core.fence_grant(input, trips, Millis::from_micros(now).as_u64());
            output = Some(core.apply(now, input).map_err(not_applied)?);
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        if received != Received::Applied && received != Received::Probe {
            self.log.push(format!("{kind} from {from}: {received:?}"));
        }
        if let Some(out) = output {
            self.settle(disk, now, out, group, after)?;
        }
        Ok(())
    }

    /// Notes the executions just asked for whose instance is interrupted or cancelled, or
    /// whose activity is paused: a command they start would be new work where none may start.
    fn note_forbidden(&mut self, effects: &[Effect]) {
        let engine = self.core.engine();
        for effect in effects {
            let Effect::Execute { key, activity, .. } = effect else {
                continue;
            };
            let known = engine.known(key.instance);
            let why = if known.is_some_and(|k| k.interrupted) {
                "its instance is interrupted"
            } else if known.is_some_and(|k| k.cancelled) {
                "its instance is cancelled"
            } else if let Some(Life::Paused { .. }) =
                engine.run(key).and_then(|r| r.life(*activity))
            {
                "it is paused"
            } else {
                continue;
            };
            if let Some((dir, _)) = NodeProc::run_dir(effect) {
                self.forbidden.insert(dir, why);
            }
        }
    }

    /// The tries the engine just decided to kill are no longer kept up under their lease,
    /// from this group on (`NodeActor::unfence_killed`).
    fn unfence_killed(&mut self, effects: &[Effect]) {
        for effect in effects {
            if let (Effect::Kill { .. }, Some((dir, _))) = (effect, NodeProc::run_dir(effect)) {
                self.held.remove(&dir);
            }
        }
    }

    /// Until when a held command may run with the round trips so far (`Held::due`).
    pub fn lease_until(&self, hold: Hold) -> u64 {
        self.trips.lease_until(hold.asked_ms, hold.lease_ms)
    }

    /// The time a held command's lease file is made to hold when it starts at `now_ms`
    /// (`Leases::hold`).
    pub fn due_at_hold(&self, hold: Hold, now_ms: u64) -> u64 {
        self.trips.due_at_hold(hold.asked_ms, hold.lease_ms, now_ms)
    }

    /// The run directory an effect names, with the lease it runs under.
    pub fn run_dir(effect: &Effect) -> Option<(RunDir, Option<Hold>)> {
        match effect {
            Effect::Execute {
                key,
                activity,
                attempt,
                lease_ms,
                asked_ms,
                ..
            } => Some((
                RunDir {
                    instance: key.instance,
                    partition: key.partition,
                    activity: *activity,
                    kind: RunKind::Try(*attempt),
                },
                lease_ms.map(|lease_ms| Hold {
                    lease_ms,
                    asked_ms: *asked_ms,
                }),
            )),
            Effect::Compensate { key, activity, .. } => Some((
                RunDir {
                    instance: key.instance,
                    partition: key.partition,
                    activity: *activity,
                    kind: RunKind::Compensation,
                },
                None,
            )),
            Effect::Kill {
                key,
                activity,
                attempt,
                ..
            } => Some((
                RunDir {
                    instance: key.instance,
                    partition: key.partition,
                    activity: *activity,
                    kind: RunKind::Try(*attempt),
                },
                None,
            )),
            _ => None,
        }
    }
}

/// What a command's end is to the core (`NodeActor::apply_one`, `Event::Ended`).
fn ended_input(dir: RunDir, ended: Ended) -> NodeInput {
    match dir.kind {
        RunKind::Try(attempt) if ended.lost => {
            NodeInput::Engine(mobiwf_engine::Input::SyncLost(Lost {
                instance: dir.instance,
                partition: dir.partition,
                activity: dir.activity,
                attempt,
            }))
        }
        kind => NodeInput::Ended(CommandEnd {
            instance: dir.instance,
            partition: dir.partition,
            activity: dir.activity,
            attempt: match kind {
                RunKind::Try(n) => n,
                RunKind::Compensation => 0,
            },
            compensation: kind == RunKind::Compensation,
            finish: ended.finish,
            written: ended.written,
        }),
    }
}

/// Which answers the node's actor takes from its outbox (`outbox_news::refused_claim`): a
/// claim refused outright, whose user waits for an answer the host will never send. The
/// outbox removes every other entry itself.
pub fn refused_claim(sent: &Outgoing, reply: &mobiwf_proto::Reply) -> bool {
    matches!(sent.envelope.message, Message::Claim(_))
        && matches!(reply, mobiwf_proto::Reply::Refused { .. })
}

/// The prelude's word for a message the core did not take.
fn not_applied(not: NotTaken) -> NotApplied {
    match not {
        NotTaken::Refused(why) => NotApplied::Refused(why),
        NotTaken::Later(why) => NotApplied::Later(why),
    }
}

/// How the node reads an address a document gives: a location must name its peer (libp2p's
/// own check is the runtime's; the simulated addresses are all well formed).
fn read_location(text: &str) -> Result<Location, String> {
    Location::parse(text).map_err(|e| e.to_string())
}

fn reply_text(reply: &Reply) -> String {
    match reply {
        Reply::Claim(outcome) => format!("claim: {outcome:?}"),
        Reply::Completion(result) => format!("completion: {result:?}"),
        Reply::Presence(result) => format!("presence: {result:?}"),
    }
}
