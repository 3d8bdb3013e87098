//! The node's actor: the one owner of the partition engine. It applies each group of events
//! to the engine and stages what changed and what to send; once the shell has written the
//! group, it starts and kills commands, answers people and queries, and publishes the next
//! deadline.

use std::path::PathBuf;
use std::sync::Arc;

use libp2p::{Multiaddr, PeerId};
use mobiwf_engine::{Effect, Engine, Finisher, Input, Refusal, Run, Target};
use mobiwf_people::DeskInput;
use mobiwf_proto::{ActivityState, ActivityTypeId, Message, NodeName};
use mobiwf_runtime::daemon::{Actor, Destination, Group, NotApplied, Sequencer};
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::outbox::Outbox;
use mobiwf_runtime::store::{Store, StoreError};
use tokio::sync::{mpsc, oneshot, watch};
use tracing::Instrument;

use super::people::SentClaim;
use super::translate::{Routed, route_of};
use super::{ClaimOutcome, Command, Event, Query, RunView, RunsPage, WorklistEntry};
use crate::executor::{self, Execution};
use crate::state;

pub(super) struct NodeActor {
    pub(super) engine: Engine,
    pub(super) store: Arc<dyn Store>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) name: NodeName,
    pub(super) data_dir: PathBuf,
    /// Which `<command>`s this node runs (`--commands`).
    pub(super) commands: Arc<crate::command_policy::CommandPolicy>,
    /// The controller's peer id and address.
    pub(super) controller: (PeerId, Multiaddr),
    /// The actor's own queue, for the commands it starts to report their end.
    pub(super) events: mpsc::Sender<Event>,
    /// The engine's next deadline, for the timer task.
    pub(super) deadline: watch::Sender<Option<u64>>,
    /// The worklists and notices of the users whose device this node is.
    pub(super) desk: mobiwf_people::Desk,
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
    /// The peers deliveries failed to, not heard from since (`Event::Link`).
    pub(super) unreachable: std::collections::BTreeSet<PeerId>,
}

/// A person's completion waiting for its answer, and the answer.
type Completion = (oneshot::Sender<Result<(), Refusal>>, Result<(), Refusal>);

/// What the engine and the desk asked for while a group's events were applied; carried out
/// by `route` before the write.
pub(super) type Produced = (Vec<Effect>, Vec<mobiwf_people::DeskEffect>);

/// What to do once a group of events is on disk.
#[derive(Default)]
pub(super) struct After {
    completions: Vec<Completion>,
    /// Commands to start and kill.
    pub(super) effects: Vec<Effect>,
    queries: Vec<Query>,
    /// Claims decided in this group, with their outcome.
    pub(super) claims: Vec<(oneshot::Sender<ClaimOutcome>, ClaimOutcome)>,
    /// Claims sent to their hosts in this group.
    pub(super) sent: Vec<SentClaim>,
    /// Answers to claims that came in this group (request number, verdict).
    pub(super) answers: Vec<(u64, mobiwf_proto::Verdict)>,
    /// Disconnection plans asked in this group.
    pub(super) plans: Vec<super::offline::PlanReply>,
    /// Disconnections and reconnections applied in this group.
    pub(super) presences: Vec<super::offline::PresenceReply>,
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
        let mut produced = Produced::default();
        for event in events {
            if let Event::Offline(command) = event {
                self.offline(now / 1000, command, (group, seq), &mut after)?;
                continue;
            }
            self.apply_one(now, event, group, &mut produced, &mut after)?;
        }
        let (engine, desk) = produced;
        self.route(now, engine, desk, (group, seq), &mut after)?;
        // An encoding failure stops the daemon before anything is written (the store is not
        // given an empty value for a run), as a failed write does.
        let changes = self.engine.take_changes().map_err(|e| StoreError::Encode {
            what: "the engine's changes".to_owned(),
            why: e.to_string(),
        })?;
        state::stage_changes(&mut group.batch, &changes);
        super::memory::retire_finished(&mut self.engine, &changes, &mut group.batch);
        self.metrics
            .set_runs_in_memory(self.engine.runs_in_memory());
        let desk = self.desk.take_changes().map_err(|e| StoreError::Encode {
            what: "the desk's changes".to_owned(),
            why: e.to_string(),
        })?;
        state::stage_desk(&mut group.batch, desk);
        Ok(after)
    }

    fn committed(&mut self, mut after: After, _wrote: bool) {
        self.answer_claims(&mut after);
        // What waits on this commit goes first (messages, commands, answers); logs and
        // metrics of the transitions after.
        self.deadline
            .send_replace(next_deadline(&self.engine, &self.desk));
        self.carry_out(after.effects);
        self.prune_fetches();
        self.copy_items(mobiwf_runtime::process::now_us() / 1000);
        for (tx, result) in after.completions {
            let _ = tx.send(result);
        }
        for query in after.queries {
            self.answer(query);
        }
        for (reply, plan) in after.plans {
            let _ = reply.send(plan);
        }
        for (reply, result) in after.presences {
            let _ = reply.send(result);
        }
        for t in self.engine.take_transitions() {
            let span = tracing::info_span!("activity", instance = %t.key.instance, activity = %t.activity, name = %t.name);
            let _enter = span.enter();
            // Passing synchronizing and ready on the way to running is told at debug level.
            if t.state.is_pending() {
                tracing::debug!(state = t.state.as_str(), "activity {}", t.state.as_str());
            } else {
                tracing::info!(state = t.state.as_str(), "activity {}", t.state.as_str());
            }
            self.metrics.activity_entered(t.state.as_str());
            match t.state {
                ActivityState::Running => self.metrics.activity_started(),
                s if s.is_final() => self.metrics.activity_finished(s.as_str()),
                _ => {}
            }
        }
    }
}

impl NodeActor {
    /// Registers with the controller, and restarts the commands that were running when the
    /// node stopped (the executor runs each try at most once); before the actor runs.
    pub(super) fn register(
        &mut self,
        seq: &mut Sequencer,
        outbox: &Outbox,
        (skills, join_token): (&[ActivityTypeId], Option<String>),
        addrs: &[String],
    ) -> anyhow::Result<()> {
        let mut group = Group::default();
        let message = Message::Register {
            name: self.name.clone(),
            skills: skills.to_vec(),
            addrs: addrs.to_vec(),
            join_token,
        };
        let (to, role) = self.destination(Target::Controller);
        group.send(seq, to, role, message)?;
        group.write_now(self.store.as_ref(), seq, outbox)?;
        let resumed = self.engine.resume();
        self.carry_out(resumed);
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

    /// A message from a peer, through the apply-once prelude, to the engine or the desk.
    fn receive(
        &mut self,
        now: u64,
        inbound: mobiwf_runtime::mesh::Inbound,
        group: &mut Group,
        produced: &mut Produced,
    ) -> Result<(), StoreError> {
        if self.unreachable.contains(&inbound.from) {
            // Any word from a peer says it is back.
            self.link(now, inbound.from, true, produced);
        }
        let (effects, desk_effects) = produced;
        let inbound = match self.answer_at_once(inbound, group) {
            Some(inbound) => inbound,
            None => return Ok(()),
        };
        let from_controller = inbound.from == self.controller.0;
        let role = if from_controller {
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
        let (engine, desk, name) = (&mut self.engine, &mut self.desk, &self.name);
        let store = self.store.as_ref();
        let mut failed = None;
        group.receive(store, &self.metrics, role, inbound, |from, _id, message| {
            let missing = missing?;
            match route_of(from, from_controller, message)? {
                Routed::Engine(mut input) => {
                    // A store that fails stops the daemon: nothing of this group is
                    // written or answered (the refusal below never leaves).
                    if let Err(e) = super::memory::readmit(engine, store, &input) {
                        let why = e.to_string();
                        failed = Some(e);
                        return Err(why.into());
                    }
                    match &mut input {
                        Input::Notified { carried, .. } => carried.missing = missing,
                        Input::Claim { missing: m, .. } => *m = missing,
                        _ => {}
                    }
                    let applied = engine.apply_us(now, input).map_err(|r| match r {
                        // No room now for a word about an instance not deployed here yet:
                        // the sender tries again, by when the deployment may have come.
                        Refusal::TooEarly { .. } => NotApplied::Later(r.to_string()),
                        r => NotApplied::Refused(r.to_string()),
                    })?;
                    effects.extend(applied);
                    Ok(())
                }
                Routed::Desk(input) => {
                    super::translate::answer_from_its_host(desk, from, &input)?;
                    let applied = desk
                        .apply(now / 1000, engine.directory(), name, input)
                        .map_err(|r| r.to_string())?;
                    desk_effects.extend(applied.effects);
                    Ok(())
                }
            }
        })?;
        failed.map_or(Ok(()), Err)
    }

    fn apply_one(
        &mut self,
        now: u64,
        event: Event,
        group: &mut Group,
        produced: &mut Produced,
        after: &mut After,
    ) -> Result<(), StoreError> {
        let (effects, desk_effects) = produced;
        match event {
            Event::Inbound(inbound) => self.receive(now, inbound, group, produced)?,
            Event::Command(Command::Claim { claim, reply, sent }) => {
                let produced = self.claim(now / 1000, claim, (reply, sent), after);
                desk_effects.extend(produced);
            }
            Event::Tick => {
                match self.engine.apply_us(now, Input::Tick) {
                    Ok(applied) => effects.extend(applied),
                    Err(e) => tracing::warn!("timer: {e}"),
                }
                let dir = self.engine.directory();
                match self
                    .desk
                    .apply(now / 1000, dir, &self.name, DeskInput::Tick)
                {
                    Ok(applied) => desk_effects.extend(applied.effects),
                    Err(e) => tracing::warn!("desk timer: {e}"),
                }
            }
            Event::Ended { execution, ended } => {
                self.command_ended(now, execution, ended, effects)?;
            }
            Event::Command(Command::Complete {
                instance,
                activity,
                outcome,
                reply,
            }) => {
                let input = Input::Finished {
                    instance,
                    activity,
                    succeeded: outcome.succeeded,
                    detail: outcome.detail,
                    by: Finisher::Person,
                    attempt: 0,
                    flag: outcome.flag,
                    written: outcome.written,
                };
                super::memory::readmit(&mut self.engine, self.store.as_ref(), &input)?;
                let result = self
                    .engine
                    .apply_us(now, input)
                    .map(|applied| effects.extend(applied));
                after.completions.push((reply, result));
            }
            Event::Query(query) => after.queries.push(query),
            Event::Fetched(file) => self.fetched(now, &file, effects),
            // Applied by `apply`, which has the sequencer.
            Event::Offline(_) => {}
            Event::Link(news) => self.link(now, news.peer, news.reachable, produced),
        }
        Ok(())
    }

    /// A command or a compensation the engine started ended: the engine hears how.
    fn command_ended(
        &mut self,
        now: u64,
        execution: Execution,
        ended: executor::Ended,
        effects: &mut Vec<Effect>,
    ) -> Result<(), StoreError> {
        let instance = Some(execution.instance);
        super::memory::readmit_instance(&mut self.engine, self.store.as_ref(), instance)?;
        if execution.compensation {
            let input = Input::CompensationEnded {
                instance: execution.instance,
                partition: execution.partition,
                activity: execution.activity,
                succeeded: ended.succeeded,
                detail: ended.detail,
            };
            match self.engine.apply_us(now, input) {
                Ok(applied) => effects.extend(applied),
                Err(e) => tracing::warn!("a compensation's end: {e}"),
            }
            return Ok(());
        }
        let input = Input::Finished {
            instance: execution.instance,
            activity: execution.activity,
            succeeded: ended.succeeded,
            detail: ended.detail,
            by: Finisher::Command,
            attempt: execution.attempt,
            flag: ended.flag,
            written: ended.written,
        };
        match self.engine.apply_us(now, input) {
            Ok(applied) => effects.extend(applied),
            // Its activity was decided before (timeOut, withdrawal, cancel): the command had
            // been killed, or its word comes too late.
            Err(e) => tracing::info!("a command ended after its activity was decided: {e}"),
        }
        Ok(())
    }

    fn answer(&self, query: Query) {
        match query {
            Query::Worklist(reply) => {
                let _ = reply.send(self.engine.worklist());
            }
            Query::Data(instance, reply) => {
                let mut data =
                    match super::memory::data(&self.engine, self.store.as_ref(), instance) {
                        Ok(data) => data,
                        Err(e) => {
                            tracing::error!("reading instance {instance}'s data: {e}");
                            return;
                        }
                    };
                // On a device: what its users' items of the instance read, as copied.
                for copy in self.desk.items().filter_map(|i| {
                    (i.info.instance == instance)
                        .then_some(i.copy.as_ref())
                        .flatten()
                }) {
                    for datum in &copy.data {
                        match data.iter_mut().find(|d| d.name == datum.name) {
                            Some(known) if datum.supersedes(known) => *known = datum.clone(),
                            Some(_) => {}
                            None => data.push(datum.clone()),
                        }
                    }
                }
                let _ = reply.send(data);
            }
            Query::Runs(wanted, reply) => {
                match super::memory::runs_page(&self.engine, self.store.as_ref(), wanted, view) {
                    Ok((runs, next)) => {
                        let next = next.map(|i| i.0);
                        let _ = reply.send(RunsPage { runs, next });
                    }
                    // The caller hears that the node did not answer.
                    Err(e) => tracing::error!("reading the runs: {e}"),
                }
            }
            Query::UserWorklist { user, order, reply } => {
                let dir = self.engine.directory();
                let entry = |entry: mobiwf_people::Entry| WorklistEntry {
                    host_name: mobiwf_runtime::outbox::peer_of(&entry.info.host)
                        .ok()
                        .and_then(|(peer, _)| {
                            dir.device_by_node(&mobiwf_proto::NodeId::new(peer.to_string()))
                        })
                        .map(|d| d.name.clone()),
                    entry,
                    user: user.clone(),
                };
                let answer = mobiwf_people::desk::here(dir, &self.name, user.as_str())
                    .map(|_| {
                        let list = self.desk.worklist(user.as_str(), order);
                        list.into_iter().map(entry).collect()
                    })
                    .map_err(|e| e.to_string());
                let _ = reply.send(answer);
            }
            Query::Notices { user, reply } => {
                let dir = self.engine.directory();
                let answer = mobiwf_people::desk::here(dir, &self.name, user.as_str())
                    .map(|_| self.desk.notices(user.as_str()).to_vec())
                    .map_err(|e| e.to_string());
                let _ = reply.send(answer);
            }
            Query::Directory(reply) => {
                let _ = reply.send(self.directory_view());
            }
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
        for effect in effects {
            match effect {
                Effect::Kill {
                    key,
                    activity,
                    attempt,
                    why,
                } => self.kill(
                    Execution {
                        instance: key.instance,
                        partition: key.partition,
                        activity,
                        attempt,
                        command: String::new(),
                        partner: self.name.to_string(),
                        reads: Vec::new(),
                        writes: Vec::new(),
                        compensation: false,
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
                } => self.spawn(Execution {
                    instance: key.instance,
                    partition: key.partition,
                    activity,
                    attempt,
                    command,
                    partner: self.name.to_string(),
                    reads,
                    writes,
                    compensation: false,
                }),
                Effect::Compensate {
                    key,
                    activity,
                    command,
                    reads,
                } => self.spawn(Execution {
                    instance: key.instance,
                    partition: key.partition,
                    activity,
                    attempt: 0,
                    command,
                    partner: self.name.to_string(),
                    reads,
                    writes: Vec::new(),
                    compensation: true,
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
                let what = if execution.compensation {
                    "compensation ended"
                } else {
                    "command ended"
                };
                tracing::info!(succeeded = ended.succeeded, "{what}");
                let _ = events.send(Event::Ended { execution, ended }).await;
            }
            .instrument(span),
        );
    }
}

fn view(run: &Run) -> RunView {
    RunView {
        instance: run.key.instance,
        partition: run.key.partition,
        done: run.all_final(),
        activities: run.records(),
    }
}

/// When the node must tick next: the engine's earliest timer or the desk's next deadline
/// notice, whichever comes first (both on this node's clock).
pub(super) fn next_deadline(engine: &Engine, desk: &mobiwf_people::Desk) -> Option<u64> {
    match (engine.next_deadline(), desk.next_deadline()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
