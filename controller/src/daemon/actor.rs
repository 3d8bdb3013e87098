//! The controller's actor: the one owner of the book. It applies each group of events to the
//! book and stages what changed and what to send; once the shell has written the group, it
//! answers operators and queries, publishes the next deadline and the watched nodes, and
//! tells waiters which instances became final.

use std::collections::BTreeSet;
use std::sync::Arc;

use libp2p::PeerId;
use mobiwf_book::{Applied, Book, BookError, Effect, Input, Watched};
use mobiwf_proto::{InstanceId, Locate, Message, Reply};
use mobiwf_runtime::daemon::{Actor, Destination, Group, NotApplied, Sequencer};
use mobiwf_runtime::mesh::Inbound;
use mobiwf_runtime::metrics::{Metrics, Peer};
use mobiwf_runtime::outbox::Delivered;
use mobiwf_runtime::store::{Store, StoreError};
use tokio::sync::{broadcast, watch};

use super::recall::Recaller;
use super::registration::{self, Relays};
use super::{Command, Event, Query};
use crate::detector::Verdict;
use crate::state;

pub(super) struct ControllerActor {
    pub(super) book: Book,
    /// Who may join (join tokens, the allow list).
    pub(super) enrolment: crate::enrolment::Enrolment,
    pub(super) store: Arc<dyn Store>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) version: watch::Sender<u64>,
    pub(super) finished: broadcast::Sender<InstanceId>,
    /// The instances each commit changed (their state, an activity, a history row): what the
    /// console's live pages wait on.
    pub(super) touched: broadcast::Sender<InstanceId>,
    /// The book's next deadline, for the timer task.
    pub(super) deadline: watch::Sender<Option<u64>>,
    /// The nodes the failure detector watches.
    pub(super) watched: watch::Sender<Vec<Watched>>,
    /// The controller's own peer id: a registration may name it as the relay.
    pub(super) me: PeerId,
    /// How long settled instances are kept, in ms (`serve --retain-finished`).
    pub(super) retain_ms: Option<u64>,
    /// The instances the retention sweep deletes in this group (not recalled).
    pub(super) swept: BTreeSet<InstanceId>,
    /// The settled instances recalled in this group, let go once it is staged.
    pub(super) recalled: Vec<InstanceId>,
}

/// What to do once a group of events is on disk (the operators' commands are answered by the
/// group itself: `Group::answer`).
#[derive(Default)]
pub(super) struct After {
    queries: Vec<Query>,
    /// The instances that changed, with whether they are settled now, and their state.
    changed: Vec<(InstanceId, bool, &'static str)>,
    /// The instances changed or given a history row.
    touched: BTreeSet<InstanceId>,
}

impl Actor for ControllerActor {
    type Event = Event;
    type After = After;

    fn apply(
        &mut self,
        events: Vec<Event>,
        group: &mut Group,
        seq: &mut Sequencer,
    ) -> Result<After, StoreError> {
        let now = mobiwf_runtime::process::now_ms();
        let mut after = After::default();
        let mut effects = Vec::new();
        for event in events {
            self.apply_one(now, event, group, &mut effects, &mut after)?;
        }
        for effect in effects {
            match effect {
                Effect::Send { to, addrs, message } => {
                    group.send(seq, Destination::Text(to, addrs), Peer::Partner, message)?;
                }
                Effect::Suspected { name, reason } => {
                    tracing::warn!(partner = %name, %reason, "partner suspected");
                }
                Effect::AnswersAgain { name } => {
                    tracing::info!(partner = %name, "partner answers again");
                }
            }
        }
        let changes = self.book.take_changes();
        after.changed = changes
            .instances
            .iter()
            .map(|i| (i.id, i.is_settled(), i.state().as_str()))
            .collect();
        after.touched = changes.instances.iter().map(|i| i.id).collect();
        after
            .touched
            .extend(changes.history.iter().map(|(id, _, _)| *id));
        let book_changed = !changes.nodes.is_empty()
            || !changes.removed_nodes.is_empty()
            || !changes.instances.is_empty()
            || !changes.history.is_empty()
            || !changes.definitions.is_empty()
            || !changes.registry.is_empty()
            || changes.people.is_some()
            || changes.classes.is_some()
            || changes.sync.is_some()
            || changes.orderings.is_some();
        if book_changed {
            state::stage(&mut group.batch, &changes)?;
        }
        // Settled instances leave memory once staged; they are read back when asked for.
        let mut settled: Vec<InstanceId> = after
            .changed
            .iter()
            .filter(|(_, settled, _)| *settled)
            .map(|(id, _, _)| *id)
            .collect();
        settled.append(&mut self.recalled);
        self.book.evict_settled(settled);
        self.metrics.set_instances_in_memory(self.book.resident());
        Ok(after)
    }

    fn committed(&mut self, after: After, wrote: bool) {
        self.deadline.send_replace(self.book.next_deadline());
        let watched = self.book.watched();
        self.watched.send_if_modified(|w| {
            let differs = *w != watched;
            *w = watched;
            differs
        });
        for query in after.queries {
            self.answer(query);
        }
        if wrote {
            self.version.send_modify(|v| *v += 1);
        }
        self.swept.clear();
        for id in after.touched {
            // Nobody following is fine.
            let _ = self.touched.send(id);
        }
        for (id, now_final, state) in after.changed {
            tracing::info!(instance = %id, state, "instance updated");
            if now_final {
                // Nobody waiting is fine.
                let _ = self.finished.send(id);
            }
        }
        super::refused::journal(&self.metrics, self.book.take_refused_transitions());
    }
}

impl ControllerActor {
    fn apply_one(
        &mut self,
        now: u64,
        event: Event,
        group: &mut Group,
        effects: &mut Vec<Effect>,
        after: &mut After,
    ) -> Result<(), StoreError> {
        match event {
            Event::Inbound(inbound) => self.receive(now, inbound, group, effects)?,
            Event::Delivered(delivered) => self.delivered(now, delivered, group, effects)?,
            Event::Tick => self.apply_internal(now, Input::Tick, effects),
            Event::Verdict(Verdict::Suspect { peer, reason }) => {
                self.apply_internal(
                    now,
                    Input::Suspect {
                        peer: peer.into(),
                        reason,
                    },
                    effects,
                );
            }
            Event::Verdict(Verdict::Answering { peer }) => {
                self.apply_internal(now, Input::Answering { peer: peer.into() }, effects);
            }
            Event::Command(Command::Enrol { action, reply }) => {
                let answer = self.enrol(now, action, group, effects)?;
                group.answer(reply, answer);
            }
            Event::Command(command) => self.command(now, command, effects, group),
            Event::Query(query) => after.queries.push(query),
            Event::Sweep(reply) => {
                let more = self.sweep(now, group)?;
                // The sweeper waiting for it may have stopped.
                let _ = reply.send(more);
            }
        }
        Ok(())
    }

    /// A message from a peer: a stranger's is refused unless it registers, where a peer is
    /// is answered at once, anything else goes to the book (its instance read back first).
    fn receive(
        &mut self,
        now: u64,
        inbound: Inbound,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<(), StoreError> {
        // Strangers are refused everything but a registration the enrolment admits.
        let from = mobiwf_runtime::peer_text::node_id(&inbound.from);
        if !matches!(inbound.envelope.message, Message::Register(_))
            && self.book.node(&from).is_none()
            && !matches!(inbound.envelope.message, Message::Probe(_))
        {
            self.stranger(inbound, group);
            return Ok(());
        }
        // Where a peer is: answered at once, never stored.
        if let Message::Locate(Locate { peer }) = &inbound.envelope.message {
            let addrs = self.book.node(peer).map(|n| n.addrs.clone());
            tracing::debug!(from = %inbound.from, %peer, ?addrs, "located");
            let reply = Reply::Located {
                addrs: addrs.unwrap_or_default(),
            };
            group.reply(inbound.reply, reply);
            return Ok(());
        }
        let (book, enrolment, me) = (&mut self.book, &self.enrolment, self.me);
        let mut recaller = Recaller {
            store: self.store.as_ref(),
            swept: &self.swept,
            recalled: &mut self.recalled,
        };
        group.receive(
            self.store.as_ref(),
            &self.metrics,
            Peer::Partner,
            inbound,
            |from, id, message| {
                super::enrol::admit(enrolment, book, from, &message)?;
                let relays = Relays { me, book };
                let input = registration::input_of(now, from, id, message, &relays)?;
                // A store that cannot give the instance back leaves the message
                // unanswered (tried again), not refused: a refusal would be for good.
                recaller
                    .recall(book, now, &input)
                    .map_err(|e| NotApplied::Later(format!("reading its instance back: {e}")))?;
                let applied = book.apply(now, input).map_err(|e| e.to_string())?;
                effects.extend(applied.effects);
                Ok(())
            },
        )
    }

    /// A node answered a message of the controller's outbox: its entry leaves the outbox in
    /// this group, and the book hears how a deployment or a rerun was taken.
    fn delivered(
        &mut self,
        now: u64,
        Delivered { message, reply }: Delivered,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<(), StoreError> {
        group.answered(&message, &reply)?;
        if let Message::Rerun(rerun) = &message.envelope.message {
            // A refusal is logged by the outbox; the rerun goes on without it.
            let input = Input::RerunDelivered {
                instance: rerun.instance,
                partition: rerun.partition,
            };
            self.apply_internal(now, input, effects);
        } else if let Message::Deploy(mobiwf_proto::Deploy {
            instance,
            partition,
            ..
        }) = message.envelope.message
        {
            let refused = match reply {
                Reply::Ack => None,
                Reply::Refused { reason } => Some(reason),
                other => Some(format!(
                    "an answer that is not an acknowledgement: {other:?}"
                )),
            };
            let input = Input::Delivered {
                instance,
                partition,
                refused,
            };
            self.apply_internal(now, input, effects);
        }
        Ok(())
    }

    /// Applies an input the controller gives itself (deliveries, timers, the failure
    /// detector); the book refusing one is worth a warning, not an answer.
    pub(super) fn apply_internal(&mut self, now: u64, input: Input, effects: &mut Vec<Effect>) {
        match self.apply_book(now, input) {
            Ok(applied) => effects.extend(applied.effects),
            Err(e) => tracing::warn!("{e}"),
        }
    }

    /// Applies `input` to the book, the settled instance it names read back first.
    pub(super) fn apply_book(&mut self, now: u64, input: Input) -> Result<Applied, BookError> {
        let mut recaller = Recaller {
            store: self.store.as_ref(),
            swept: &self.swept,
            recalled: &mut self.recalled,
        };
        if let Err(e) = recaller.recall(&mut self.book, now, &input) {
            // Not applied without it: the book would take the instance for unknown.
            tracing::error!("cannot read a finished instance back from the store: {e}");
            return Err(BookError::Invalid(format!(
                "cannot read the instance back from the store: {e}"
            )));
        }
        self.book.apply(now, input)
    }

    /// One retention sweep (`serve --retain-finished`), staged in this group; true when more
    /// instances may be due.
    fn sweep(&mut self, now: u64, group: &mut Group) -> Result<bool, StoreError> {
        let Some(retain_ms) = self.retain_ms else {
            return Ok(false);
        };
        let (book, swept) = (&self.book, &self.swept);
        let held = |id: InstanceId| book.holds(id) || swept.contains(&id);
        let cutoff = now.saturating_sub(retain_ms);
        let done = crate::retention::sweep(self.store.as_ref(), &mut group.batch, cutoff, &held)?;
        if !done.deleted.is_empty() {
            tracing::info!(
                count = done.deleted.len(),
                "finished instances deleted (retention)"
            );
            self.metrics.instances_deleted(done.deleted.len());
        }
        // The versions they named: a removed one goes with its last instance, in this batch.
        self.book.released(&done.released);
        self.swept.extend(done.deleted);
        Ok(done.more)
    }
}
