//! A simulated controller daemon: the real book (`mobiwf_book::Book`) in the shell the
//! controller daemon (`mobiwf-controller`, `src/daemon/actor.rs`) puts it in. Each group of
//! events (nodes' messages through the apply-once prelude, the answers its own outbox got,
//! ticks, the failure detector's verdicts, operators' commands) is applied to the book, a
//! settled instance read back first when an input names it; the book's changes, the messages
//! they cause, the removal of answered entries and the ids of the messages applied are staged
//! together, and the world writes them synced before anything of it is sent or answered.
//! Settled instances leave the book once staged.

pub mod detector;
pub mod store;

use mobiwf_book::{Applied, Book, BookError, Effect, Input, NodeInfo, Starter};
use mobiwf_proto::{
    ActivityId, Control, GivenInputs, InstanceId, ItemAction, Locate, Message, MessageId, NodeId,
    PauseAction, Reply, UserId,
};

use crate::disk::Disk;
use crate::group::{Group, Inbound, NotApplied, Received, Sequencer};
use crate::outbox::{Outbox, Outgoing};
use detector::{Detector, SUSPECT_AFTER_US};

/// The name an operator's pauses are made under (`by`).
pub const OPERATOR: &str = "operator";

/// An operator's command.
#[derive(Debug, Clone)]
pub enum Operator {
    /// Submit a workflow definition (MobiWfMS XML).
    Submit {
        /// The document.
        definition: String,
        /// Its name.
        source: String,
        /// The workload's tag of it.
        tag: usize,
        /// Its responsible user (`--responsible`).
        responsible: Option<UserId>,
    },
    /// Interrupt, resume or cancel an instance.
    Control {
        /// The instance.
        instance: InstanceId,
        /// What.
        action: Control,
    },
    /// Pause or resume one activity of an instance.
    Pause {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// What.
        action: PauseAction,
    },
    /// Rerun a failed activity of a failed instance.
    Rerun {
        /// The instance.
        instance: InstanceId,
        /// The activity that failed.
        activity: ActivityId,
    },
    /// An administrator's action on a work item (a delegation: from `user` to another).
    Worklist {
        /// The instance.
        instance: InstanceId,
        /// The activity.
        activity: ActivityId,
        /// Whose worklist.
        user: UserId,
        /// What.
        action: ItemAction,
    },
    /// Apply an organisation document.
    Organisation(String),
    /// Apply a class document.
    Classes(String),
}

/// What the controller's actor is given.
#[derive(Debug, Clone)]
pub enum CtlEvent {
    /// A message from a node.
    Inbound(Inbound),
    /// A node answered a message of the controller's outbox.
    Delivered {
        /// The entry.
        msg: Outgoing,
        /// The answer.
        reply: Reply,
    },
    /// A deadline of the book came.
    Tick,
    /// The failure detector's news.
    Verdict(detector::Verdict),
    /// An operator's command.
    Operator(Operator),
}

/// A running controller process.
pub struct ControllerProc {
    /// The book.
    pub book: Book,
    /// Its message numbers.
    pub seq: Sequencer,
    /// Its outbox (the controller removes answered entries itself, in its groups).
    pub outbox: Outbox,
    /// The events waiting for the next group.
    pub pending: Vec<CtlEvent>,
    /// Its failure detector.
    pub detector: Detector,
    /// What its last group did, for the trace.
    pub log: Vec<String>,
    /// The instances the last group wrote, for the checks.
    pub changed: Vec<mobiwf_book::Instance>,
    /// The answers to the submissions of the last group, by the workload's tag: the new
    /// instance, or why it was refused (given once the group is written).
    pub answers: Vec<(usize, Result<InstanceId, String>)>,
    /// The reruns the last group accepted: the instance and the activities put back to
    /// waiting (for the checks: their final states may change once).
    pub reruns: Vec<(InstanceId, Vec<ActivityId>)>,
    recalled: Vec<InstanceId>,
}

impl ControllerProc {
    /// The controller as its disk left it (`daemon::book_of`): the lease half the suspicion
    /// time, the run's short hour for deadlines (`--hour-ms`); `fresh` is the incarnation a new store gets, `first_seq` the number its failure
    /// detector's probes count on from (its start, µs on its clock).
    pub fn start(
        me: NodeId,
        disk: &mut Disk,
        fresh: u64,
        first_seq: u64,
    ) -> Result<ControllerProc, String> {
        let book = store::load(disk)?
            .with_lease_ms(SUSPECT_AFTER_US / 1000 / 2)
            .with_hour_ms(crate::workload::defs::SIM_HOUR_MS);
        let seq = Sequencer::load(disk, me.clone(), fresh);
        let mut detector = Detector::numbered_from(first_seq);
        detector.watched = book.watched();
        Ok(ControllerProc {
            book,
            seq,
            outbox: Outbox::new(me, false),
            pending: Vec::new(),
            detector,
            log: Vec::new(),
            answers: Vec::new(),
            reruns: Vec::new(),
            changed: Vec::new(),
            recalled: Vec::new(),
        })
    }

    /// Applies a group of events (`ControllerActor::apply`). `Err`: a change that cannot be
    /// encoded, or a stored instance that does not read back (the daemon stops).
    pub fn apply(
        &mut self,
        disk: &Disk,
        now_ms: u64,
        events: Vec<CtlEvent>,
    ) -> Result<Group, String> {
        let mut group = Group::default();
        let mut effects = Vec::new();
        for event in events {
            self.apply_one(disk, now_ms, event, &mut group, &mut effects)?;
        }
        for effect in effects {
            match effect {
                Effect::Send { to, addrs, message } => {
                    group.send(&mut self.seq, to, addrs, message);
                }
                Effect::Suspected { name, reason } => {
                    self.log.push(format!("{name} suspected: {reason}"));
                }
                Effect::AnswersAgain { name } => self.log.push(format!("{name} answers again")),
            }
        }
        let changes = self.book.take_changes();
        let mut settled: Vec<InstanceId> = changes
            .instances
            .iter()
            .filter(|i| i.is_settled())
            .map(|i| i.id)
            .collect();
        store::stage(&mut group.batch, &changes)?;
        // The book's own account of what happened, for the trace.
        for (id, _, e) in &changes.history {
            self.log.push(format!("instance {id}: {:?}", e.what));
        }
        self.changed = changes.instances;
        settled.append(&mut self.recalled);
        self.book.evict_settled(settled);
        self.detector.watched = self.book.watched();
        Ok(group)
    }

    fn apply_one(
        &mut self,
        disk: &Disk,
        now: u64,
        event: CtlEvent,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<(), String> {
        match event {
            CtlEvent::Inbound(inbound) => return self.receive(disk, now, inbound, group, effects),
            CtlEvent::Delivered { msg, reply } => {
                group.answered(&msg, &reply);
                let input = match msg.envelope.message {
                    Message::Rerun(rerun) => Input::RerunDelivered {
                        instance: rerun.instance,
                        partition: rerun.partition,
                    },
                    Message::Deploy(deploy) => Input::Delivered {
                        instance: deploy.instance,
                        partition: deploy.partition,
                        refused: match reply {
                            Reply::Ack => None,
                            Reply::Refused { reason } => Some(reason),
                            other => Some(format!("an answer that is not an ack: {other:?}")),
                        },
                    },
                    _ => return Ok(()),
                };
                self.internal(disk, now, input, effects)?;
            }
            CtlEvent::Tick => self.internal(disk, now, Input::Tick, effects)?,
            CtlEvent::Verdict(detector::Verdict::Suspect { peer, reason }) => {
                self.internal(disk, now, Input::Suspect { peer, reason }, effects)?;
            }
            CtlEvent::Verdict(detector::Verdict::Answering { peer }) => {
                self.internal(disk, now, Input::Answering { peer }, effects)?;
            }
            CtlEvent::Operator(op) => self.operator(disk, now, op, effects)?,
        }
        Ok(())
    }

    fn operator(
        &mut self,
        disk: &Disk,
        now: u64,
        op: Operator,
        effects: &mut Vec<Effect>,
    ) -> Result<(), String> {
        let mut tag = None;
        let input = match op {
            Operator::Submit {
                definition,
                source,
                tag: t,
                responsible,
            } => {
                tag = Some(t);
                Input::Submit {
                    definition: definition.into_bytes(),
                    source,
                    responsible,
                    inputs: GivenInputs::default(),
                    starter: Starter::Anyone,
                }
            }
            Operator::Control { instance, action } => Input::Control { instance, action },
            Operator::Pause {
                instance,
                activity,
                action,
            } => Input::Pause {
                instance,
                activity,
                action,
                by: OPERATOR.to_owned(),
            },
            Operator::Rerun { instance, activity } => Input::Rerun { instance, activity },
            Operator::Worklist {
                instance,
                activity,
                user,
                action,
            } => Input::Worklist {
                instance,
                activity,
                user,
                action,
            },
            Operator::Organisation(document) => {
                let org = mobiwf_xml_schema::load_organisation(document.as_bytes())
                    .map_err(|d| d.render("organisation"))?
                    .value;
                Input::Organisation { document, org }
            }
            Operator::Classes(document) => {
                let classes = mobiwf_xml_schema::load_classes(document.as_bytes())
                    .map_err(|d| d.render("classes"))?
                    .value;
                Input::Classes { document, classes }
            }
        };
        match self.apply_book(disk, now, input)? {
            Ok(applied) => {
                if let (Some(tag), Some(id)) = (tag, applied.instance) {
                    self.answers.push((tag, Ok(id)));
                    self.log.push(format!("instance {id} submitted"));
                }
                self.reruns.extend(reruns_in(&applied.effects));
                effects.extend(applied.effects);
            }
            Err(e) => {
                if let Some(tag) = tag {
                    self.answers.push((tag, Err(e.to_string())));
                }
                self.log.push(format!("operator refused: {e}"));
            }
        }
        Ok(())
    }

    /// An input the controller gives itself; a refusal is logged.
    fn internal(
        &mut self,
        disk: &Disk,
        now: u64,
        input: Input,
        effects: &mut Vec<Effect>,
    ) -> Result<(), String> {
        match self.apply_book(disk, now, input)? {
            Ok(applied) => effects.extend(applied.effects),
            Err(e) => self.log.push(format!("{e}")),
        }
        Ok(())
    }

    /// Applies `input`, the settled instance it names read back first (`apply_book`).
    fn apply_book(
        &mut self,
        disk: &Disk,
        now: u64,
        input: Input,
    ) -> Result<Result<Applied, BookError>, String> {
        recall(&mut self.book, &mut self.recalled, disk, now, &input)?;
        Ok(self.book.apply(now, input))
    }

    /// A message from a node (`ControllerActor::receive`).
    fn receive(
        &mut self,
        disk: &Disk,
        now: u64,
        inbound: Inbound,
        group: &mut Group,
        effects: &mut Vec<Effect>,
    ) -> Result<(), String> {
        let from = inbound.from.clone();
        let message = &inbound.envelope.message;
        if !matches!(message, Message::Register(_) | Message::Probe(_))
            && self.book.node(&from).is_none()
        {
            let reason = format!("{from} is not a member of this mesh: register first");
            group
                .acks
                .push((inbound.reply, Some(Reply::Refused { reason })));
            return Ok(());
        }
        if let Message::Locate(Locate { peer }) = message {
            let addrs = self
                .book
                .node(peer)
                .map(|n| n.addrs.clone())
                .unwrap_or_default();
            group
                .acks
                .push((inbound.reply, Some(Reply::Located { addrs })));
            return Ok(());
        }
        let kind = message.kind();
        let (book, recalled) = (&mut self.book, &mut self.recalled);
        let mut failed = None;
        let received = group.receive(disk, inbound, |from, id, message| {
            let input = input_of(now, from, id, message).map_err(NotApplied::Refused)?;
            if let Err(e) = recall(book, recalled, disk, now, &input) {
                failed = Some(e.clone());
                return Err(NotApplied::Later(e));
            }
            let applied = book
                .apply(now, input)
                .map_err(|e| NotApplied::Refused(e.to_string()))?;
            effects.extend(applied.effects);
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        if received != Received::Applied && received != Received::Probe {
            self.log.push(format!("{kind} from {from}: {received:?}"));
        }
        Ok(())
    }
}

/// The reruns an operator's command sent: each of its messages names the instance and every
/// activity put back to waiting (one message of a rerun is enough).
fn reruns_in(effects: &[Effect]) -> Option<(InstanceId, Vec<ActivityId>)> {
    effects.iter().find_map(|e| match e {
        Effect::Send {
            message: Message::Rerun(rerun),
            ..
        } => Some((rerun.instance, rerun.activities.clone())),
        _ => None,
    })
}

/// Reads back the settled instance `input` names when the book let it go (`Recaller::recall`).
fn recall(
    book: &mut Book,
    recalled: &mut Vec<InstanceId>,
    disk: &Disk,
    now: u64,
    input: &Input,
) -> Result<(), String> {
    let Some(id) = input.instance() else {
        return Ok(());
    };
    if book.holds(id) {
        return Ok(());
    }
    let Some(stored) = store::recall(disk, id)? else {
        return Ok(());
    };
    if book.apply(now, Input::Recall(Box::new(stored))).is_ok() {
        recalled.push(id);
    }
    Ok(())
}

/// What a node's message means to the book (`registration::input_of`): a registration's
/// addresses must end in the sender's own peer id.
fn input_of(now: u64, from: &NodeId, id: &MessageId, message: Message) -> Result<Input, String> {
    Ok(match message {
        Message::Register(register) => {
            if register.addrs.is_empty() {
                return Err("registration: no address to reach the node at".to_owned());
            }
            let suffix = format!("/p2p/{from}");
            if let Some(bad) = register.addrs.iter().find(|a| !a.ends_with(&suffix)) {
                return Err(format!("registration: address {bad} is not the sender's"));
            }
            Input::Register(NodeInfo {
                peer: from.clone(),
                name: register.name,
                skills: register.skills,
                addrs: register.addrs,
                registered_ms: now,
                seq: id.seq,
                suspected: None,
            })
        }
        other => Input::FromNode {
            peer: from.clone(),
            message: other,
        },
    })
}
