//! The node's actor: the one owner of the node's core. It gives each event of a group to the
//! core (reading back from the store what the core needs first) and stages what changed and
//! what to send; once the shell has written the group, it starts and kills commands, answers
//! queries and publishes the next deadline (people's answers are the group's, given after). Each event's messages are staged as
//! the core decides them, in the order of the events.

use std::path::PathBuf;
use std::sync::Arc;

use libp2p::{Multiaddr, PeerId};
use mobiwf_engine::{Effect, Target};
use mobiwf_node_core::{ClaimOutcome, CommandEnd, NodeCore, NodeInput, NotTaken, Output, Reply};
use mobiwf_proto::{ActivityTypeId, Message, Millis, NodeId, Register};
use mobiwf_runtime::daemon::{Actor, Destination, Group, NotApplied, Sequencer};
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::outbox::{self, Outbox};
use mobiwf_runtime::store::{Store, StoreError};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use super::people::SentClaim;
use super::{Command, Event, Query};
use crate::executor::{self, Execution};
use crate::state;

pub(super) struct NodeActor {
    /// The node's decisions: its engine and desk.
    pub(super) core: NodeCore,
    pub(super) store: Arc<dyn Store>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) data_dir: PathBuf,
    /// Which `<command>`s this node runs (`--commands`).
    pub(super) commands: Arc<crate::command_policy::CommandPolicy>,
    /// The controller's peer id and address.
    pub(super) controller: (PeerId, Multiaddr),
    /// The actor's own queue, for the commands it starts to report their end.
    pub(super) events: mpsc::Sender<Event>,
    /// The node's next deadline, for the timer task.
    pub(super) deadline: watch::Sender<Option<u64>>,
    /// Goes up after each group that changed the desk, once it is on disk (`NodeClient::desk_news`).
    pub(super) desk_news: watch::Sender<u64>,
    /// API calls waiting for a host's answer to their claim, by request number.
    pub(super) waiters: std::collections::HashMap<u64, oneshot::Sender<ClaimOutcome>>,
    /// The contents of instance data files.
    pub(super) files: crate::files::Files,
    /// The mesh, for fetching files from their holders.
    pub(super) mesh: mobiwf_runtime::mesh::MeshHandle,
    /// The fetches under way and the instances waiting for each.
    pub(super) fetching: super::data::Fetching,
    /// The copies for offline work under way.
    pub(super) copying: super::offline::Copying,
    /// The round trips with the controller, and the leases of the commands run under a task
    /// class's grant (`crate::lease`).
    pub(super) leases: crate::lease::Leases,
    /// The applications of semi-automatic items running on this device.
    pub(super) running: super::applications::Running,
    /// The peers this node cannot reach now, with when the outbox said so (ms since the
    /// epoch), for the worklist page's link state; forgotten on a restart, as the desk's.
    pub(super) cut_off: std::collections::BTreeMap<NodeId, u64>,
}

/// What to do once a group of events is on disk (the answers of people's completions, claims
/// and presences are given by the group itself, `Group::answer`, once this is done).
#[derive(Default)]
pub(super) struct After {
    /// Commands to start and kill.
    pub(super) effects: Vec<Effect>,
    queries: Vec<Query>,
    /// Claims sent to their hosts in this group.
    pub(super) sent: Vec<SentClaim>,
    /// Answers to claims that came in this group (request number, verdict).
    pub(super) answers: Vec<(u64, mobiwf_proto::Verdict)>,
    /// Whether the group changed the desk (a worklist, a notice).
    desk_changed: bool,
}

impl Actor for NodeActor {
    type Event = Event;
    type After = After;

    fn apply(
        &mut self,
        events: Vec<Event>,
        group: &mut Group,
        seq: &mut Sequencer,
    ) -> Result<After, StoreError> {
        let now = mobiwf_runtime::process::now_us();
        let mut after = After::default();
        let mut writing = Writing { group, seq };
        for event in events {
            self.apply_one(now, event, &mut writing, &mut after)?;
        }
        after.desk_changed = state::stage_core(&mut group.batch, &mut self.core)?;
        self.metrics
            .set_runs_in_memory(self.core.engine().runs_in_memory());
        Ok(after)
    }

    fn committed(&mut self, mut after: After, _wrote: bool) {
        self.answer_claims(&mut after);
        // What waits on this commit goes first (commands, deadlines, copies, queries' answers;
        // the messages went out before, the group's own answers, `Group::answer`, come after);
        // logs and metrics of the transitions last.
        self.deadline.send_replace(self.core.next_deadline());
        if after.desk_changed {
            self.desk_news.send_modify(|n| *n = n.wrapping_add(1));
        }
        self.carry_out(after.effects);
        self.prune_fetches();
        self.copy_items(Millis::from_micros(mobiwf_runtime::process::now_us()).as_u64());
        self.launch_applications();
        for query in after.queries {
            self.answer(query);
        }
        let transitions = self.core.take_transitions();
        self.watch_people(&transitions);
        super::journal::transitions(&self.metrics, transitions);
        super::journal::refused(&self.metrics, self.core.take_refused_transitions());
    }
}

/// Where an event's changes, messages and answers are staged: the group being applied, and
/// the sequencer that numbers the messages it sends.
pub(super) struct Writing<'a> {
    pub(super) group: &'a mut Group,
    seq: &'a mut Sequencer,
}

impl Writing<'_> {
    /// Stages `message` for `to` in the group.
    fn send(&mut self, to: Destination, role: Peer, message: Message) -> Result<(), StoreError> {
        self.group.send(self.seq, to, role, message)
    }
}

impl NodeActor {
    /// Registers with the controller, and restarts the commands that were running when the
    /// node stopped (the executor runs each try at most once); before the actor runs.
    pub(super) fn register(
        &mut self,
        seq: &mut Sequencer,
        outbox: &Outbox,
        skills: &[ActivityTypeId],
        join_token: Option<String>,
        addrs: &[String],
    ) -> anyhow::Result<()> {
        let mut group = Group::default();
        let message = Message::Register(Register {
            name: self.core.identity().name.clone(),
            skills: skills.to_vec(),
            addrs: addrs.to_vec(),
            join_token,
        });
        let (to, role) = self.destination(Target::Controller);
        group.send(seq, to, role, message)?;
        group.write_now(self.store.as_ref(), seq, outbox)?;
        let resumed = self.core.resume();
        self.carry_out(resumed);
        self.watch_held_people();
        Ok(())
    }

    pub(super) fn destination(&self, to: Target) -> (Destination, Peer) {
        match to {
            Target::Controller => (
                Destination::Peer(self.controller.0, vec![self.controller.1.clone()]),
                Peer::Controller,
            ),
            Target::Partner(location) => (Destination::Location(location), Peer::Partner),
        }
    }

    /// One input to the core: the instance it is about read back first when it was retired;
    /// what it came to staged in the group. Gives back the reply for whoever asked.
    pub(super) fn step(
        &mut self,
        now: u64,
        input: NodeInput,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<Option<Reply>, StoreError> {
        self.readmit(&input)?;
        match self.core.apply(now, input) {
            Ok(out) => self.settle(now, out, writing, after),
            // Only a peer's message can be refused, and those come through `receive`.
            Err(e) => {
                tracing::warn!("an input not taken: {e}");
                Ok(None)
            }
        }
    }

    /// Reads back the instance `input` is about when the engine retired it.
    fn readmit(&mut self, input: &NodeInput) -> Result<(), StoreError> {
        state::readmit_for(&mut self.core, self.store.as_ref(), input)
    }

    /// Stages what the core decided: messages into the group's outbox (small files inline),
    /// commands and answers for after the write; applies the claims it deferred until their
    /// instance is back in memory. Gives back the reply.
    fn settle(
        &mut self,
        now: u64,
        out: Output,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<Option<Reply>, StoreError> {
        let mut reply = None;
        for out in state::with_deferred(&mut self.core, self.store.as_ref(), now, out)? {
            reply = reply.or(out.reply);
            super::journal::notes(out.notes);
            for mut sent in out.sends {
                let location = self.core.engine().location();
                super::data::inline(&self.files, location, &mut sent.message);
                let (to, role) = self.destination(sent.to);
                writing.send(to, role, sent.message)?;
            }
            self.unfence_killed(&out.effects);
            after.effects.extend(out.effects);
            after.answers.extend(out.answers);
        }
        Ok(reply)
    }

    /// A message from a peer, through the apply-once prelude, to the core.
    fn receive(
        &mut self,
        now: u64,
        inbound: mobiwf_runtime::mesh::Inbound,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        // An owner of the controllers' book that was fenced is not heard at all.
        let Some(inbound) = self.admit_epoch(inbound, writing.group) else {
            return Ok(());
        };
        let from = mobiwf_runtime::peer_text::node_id(&inbound.from);
        self.note_probe(now, &inbound);
        if self.core.is_unreachable(&from) {
            // Any word from a peer says it is back.
            let back = NodeInput::Link {
                peer: from.clone(),
                reachable: true,
            };
            self.step(now, back, writing, after)?;
        }
        let Some(inbound) = self.answer_at_once(inbound, writing.group) else {
            return Ok(());
        };
        let role = if inbound.from == self.controller.0 {
            Peer::Controller
        } else {
            Peer::Partner
        };
        // Inline contents are kept before the engine records them as held; a content the disk
        // did not take leaves the message unanswered, so its sender tries again.
        let missing = match super::data::unpack(&self.files, &inbound.envelope.message) {
            Ok(missing) => Ok(missing),
            Err(super::data::NotKept::Invalid(why)) => Err(why),
            Err(super::data::NotKept::Io(why)) => {
                tracing::warn!(peer = %inbound.from, "a message's file content not kept, not answered: {why}");
                return Ok(());
            }
        };
        let (core, store, leases) = (&mut self.core, self.store.as_ref(), &self.leases);
        let mut failed = None;
        let mut output = None;
        let group = &mut *writing.group;
        group.receive(store, &self.metrics, role, inbound, |_, _id, message| {
            let input = core.accept(&from, message, missing).map_err(not_applied)?;
            // A store that fails stops the daemon: nothing of this group is written or
            // answered (the refusal below never leaves).
            if let Err(e) = state::readmit_for(core, store, &input) {
                let why = e.to_string();
                failed = Some(e);
                return Err(why.into());
            }
            let now_ms = Millis::from_micros(now).as_u64();
            let input = leases.with_trips(|trips| core.fence_grant(input, trips, now_ms));
            super::journal::taken(&input);
            output = Some(core.apply(now, input).map_err(not_applied)?);
            Ok(())
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if let Some(out) = output {
            self.settle(now, out, writing, after)?;
        }
        Ok(())
    }

    /// Gives one event to the core (or to the part of the actor that handles it).
    fn apply_one(
        &mut self,
        now: u64,
        event: Event,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        match event {
            Event::Inbound(inbound) => self.receive(now, inbound, writing, after)?,
            Event::Command(Command::Claim { claim, reply, sent }) => {
                match self.step(now, NodeInput::Claim(claim), writing, after)? {
                    Some(Reply::Claim(ClaimOutcome::Pending { request, host })) => {
                        after.sent.push(SentClaim {
                            request,
                            host,
                            sent,
                            reply,
                        });
                    }
                    Some(Reply::Claim(outcome)) => writing.group.answer(reply, outcome),
                    _ => {}
                }
            }
            Event::Tick => {
                self.step(now, NodeInput::Tick, writing, after)?;
            }
            Event::LeaseOut((key, activity)) => {
                let lost = mobiwf_engine::Lost {
                    instance: key.instance,
                    partition: key.partition,
                    activity,
                    attempt: 0,
                };
                let input = NodeInput::Engine(mobiwf_engine::Input::SyncLost(lost));
                self.step(now, input, writing, after)?;
            }
            Event::Ended { execution, ended } => {
                self.step(now, ended_input(&execution, ended), writing, after)?;
            }
            Event::ApplicationEnded { key, user, ended } => {
                self.application_ended(now, (key, user), ended, writing, after)?;
            }
            Event::Command(Command::Complete { end, reply }) => {
                if let Some(Reply::Completion(result)) =
                    self.step(now, NodeInput::Complete(end), writing, after)?
                {
                    writing.group.answer(reply, result);
                }
            }
            Event::Query(query) => after.queries.push(query),
            Event::Fetched(file) => {
                let waiting = self.fetching.done(&file);
                self.step(now, NodeInput::Fetched { file, waiting }, writing, after)?;
            }
            Event::Offline(command) => self.offline(now, command, writing, after)?,
            Event::Refused(refused) => self.refused(now, refused, writing, after)?,
            Event::Link(news) => {
                let peer = NodeId::new(news.peer.to_string());
                let reachable = news.reachable;
                self.note_link(now, &peer, reachable);
                self.step(now, NodeInput::Link { peer, reachable }, writing, after)?;
            }
        }
        Ok(())
    }

    /// A host refused a claim outright: its entry leaves the outbox in this group, with the
    /// desk's answer to the user.
    fn refused(
        &mut self,
        now: u64,
        outbox::Delivered { message, reply }: outbox::Delivered,
        writing: &mut Writing<'_>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        writing.group.answered(&message, &reply)?;
        if let mobiwf_proto::Reply::Refused { reason } = reply {
            let message = message.envelope.message;
            self.step(now, NodeInput::Refused { message, reason }, writing, after)?;
        }
        Ok(())
    }

    /// Keeps since when `peer` cannot be reached (`now` in µs), or forgets it once it answers.
    fn note_link(&mut self, now: u64, peer: &NodeId, reachable: bool) {
        if reachable {
            self.cut_off.remove(peer);
        } else {
            let at = Millis::from_micros(now).as_u64();
            self.cut_off.entry(peer.clone()).or_insert(at);
        }
    }

    /// Kills the command of `execution` (the engine gave up on it: `why`), off the actor task:
    /// it reads files and runs `kill`.
    fn kill(&self, execution: Execution, why: String) {
        let span = tracing::info_span!(
            "activity",
            instance = %execution.instance,
            activity = %execution.activity
        );
        let data_dir = self.data_dir.clone();
        tokio::task::spawn_blocking(move || {
            let _enter = span.enter();
            match executor::kill(&data_dir, &execution) {
                Ok(()) => tracing::info!("command killed: {why}"),
                Err(e) => tracing::warn!("cannot kill the command: {e}"),
            }
        });
    }

    /// Starts and kills the commands the engine asked for (after the state saying so is on
    /// disk).
    fn carry_out(&mut self, effects: Vec<Effect>) {
        let partner = self.core.identity().name.to_string();
        let of = |key, activity| Execution::of(key, activity, partner.clone());
        for effect in effects {
            match effect {
                Effect::Kill {
                    key,
                    activity,
                    attempt,
                    why,
                } => self.kill(
                    Execution {
                        attempt,
                        ..of(key, activity)
                    },
                    why,
                ),
                Effect::Execute {
                    key,
                    activity,
                    attempt,
                    command,
                    reads,
                    writes,
                    lease_ms,
                    asked_ms,
                } => self.spawn(Execution {
                    attempt,
                    command,
                    reads,
                    writes,
                    held: lease_ms.map(|lease_ms| executor::Hold {
                        lease_ms,
                        asked_ms,
                        leases: self.leases.clone(),
                    }),
                    ..of(key, activity)
                }),
                Effect::Compensate {
                    key,
                    activity,
                    command,
                    reads,
                } => self.spawn(Execution {
                    command,
                    reads,
                    run: executor::RunKind::Compensation,
                    ..of(key, activity)
                }),
                Effect::Fetch {
                    instance,
                    file,
                    from,
                } => self.start_fetch(instance, file, from),
                Effect::Refused {
                    from,
                    instance,
                    activity,
                    reason,
                } => {
                    self.metrics
                        .refused("notify", mobiwf_runtime::metrics::Peer::Partner);
                    tracing::warn!(peer = %from, %instance, %activity, "a kept word refused: {reason}");
                }
                // Sends were staged before the write.
                Effect::Send { .. } => {}
            }
        }
    }
}

impl NodeActor {
    /// Runs a command (an activity's try, or its compensation) on a task of its own; its end
    /// comes back to the actor as [`Event::Ended`].
    fn spawn(&self, execution: Execution) {
        let data_dir = self.data_dir.clone();
        let commands = self.commands.clone();
        let events = self.events.clone();
        let span = tracing::info_span!("activity", instance = %execution.instance, activity = %execution.activity);
        tokio::spawn(
            async move {
                let ended = executor::execute(&data_dir, &execution, &commands).await;
                let what = if execution.run.is_compensation() {
                    "compensation ended"
                } else {
                    "command ended"
                };
                tracing::info!(succeeded = ended.finish.succeeded(), "{what}");
                let _ = events.send(Event::Ended { execution, ended }).await;
            }
            .instrument(span),
        );
    }
}

/// The apply-once prelude's word for a message the core did not take.
fn not_applied(not: NotTaken) -> NotApplied {
    match not {
        NotTaken::Refused(why) => NotApplied::Refused(why),
        NotTaken::Later(why) => NotApplied::Later(why),
    }
}

/// What an executor's end of a command is to the node core: a try that ran past its lost
/// lease is the loss of the synchronization it ran under; any other end is the command's.
fn ended_input(execution: &Execution, ended: executor::Ended) -> NodeInput {
    if ended.lost && execution.run == executor::RunKind::Try {
        return NodeInput::Engine(mobiwf_engine::Input::SyncLost(mobiwf_engine::Lost {
            instance: execution.instance,
            partition: execution.partition,
            activity: execution.activity,
            attempt: execution.attempt,
        }));
    }
    NodeInput::Ended(CommandEnd {
        instance: execution.instance,
        partition: execution.partition,
        activity: execution.activity,
        attempt: execution.attempt,
        compensation: execution.run.is_compensation(),
        finish: ended.finish,
        written: ended.written,
    })
}
