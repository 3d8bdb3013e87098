//! One group of events on its way to disk: the changes, the messages they cause and the
//! replies owed (to peers, and to the daemon's own callers), staged together so that one
//! synced write covers them all, and the apply-once prelude every inbound message goes through.

use libp2p::{Multiaddr, PeerId};
use mobiwf_proto::{Envelope, Location, Message, MessageId, NodeId, Reply};
use tokio::sync::oneshot;

use super::seen::{Seen, Verdict, foreign_id};
use super::sequencer::Sequencer;
use crate::mesh::Inbound;
use crate::metrics::{Metrics, Peer};
use crate::outbox::{self, Outgoing};
use crate::store::{Batch, Store, StoreError};

/// Why a message was not applied: refused for good (the sender is told and drops it), or not
/// now (left unanswered: the sender tries it again later, when it may be taken: a word kept
/// for an instance not deployed yet, past the room for such words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotApplied {
    /// Refused, with the reason the sender is told.
    Refused(String),
    /// Not now, and why (logged).
    Later(String),
}

impl From<String> for NotApplied {
    fn from(reason: String) -> NotApplied {
        NotApplied::Refused(reason)
    }
}

/// Where an outgoing message goes.
#[derive(Debug, Clone)]
pub enum Destination {
    /// A peer whose id and addresses are known parsed (the controller of a node, or a node
    /// the controller registered).
    Peer(PeerId, Vec<Multiaddr>),
    /// A partner's full libp2p address as a document gives it (`.../p2p/<peer id>`).
    Location(Location),
    /// A peer as the controller's book names it: its id and addresses as text.
    Text(NodeId, Vec<String>),
}

/// The changes, messages and replies of one group of events, until they are on disk.
#[derive(Default)]
pub struct Group {
    /// The changes to write (the daemon's own state; the shell adds the outbox entries, the
    /// applied message ids and the sequence number).
    pub batch: Batch,
    seen: Seen,
    acks: Vec<(oneshot::Sender<Reply>, Reply)>,
    answers: Vec<CallerAnswer>,
    outgoing: Vec<Outgoing>,
    answered: Vec<(NodeId, u64)>,
}

/// An answer owed to one of the daemon's own callers (an API call waiting on its channel),
/// ready to be given.
type CallerAnswer = Box<dyn FnOnce() + Send>;

/// What the shell does once a group is on disk: send its messages, give its replies.
pub(crate) struct Written {
    pub(crate) outgoing: Vec<Outgoing>,
    pub(crate) acks: Vec<(oneshot::Sender<Reply>, Reply)>,
    answers: Vec<CallerAnswer>,
    pub(crate) answered: Vec<(NodeId, u64)>,
}

impl Written {
    /// The group is on disk: hands its messages to the outbox and gives its replies to
    /// peers; returns the answers owed to the daemon's callers, given once the actor has acted
    /// on the group (a caller told its completion is taken finds the next command started).
    pub(crate) fn hand_over(self, outbox: &crate::outbox::Outbox) -> Owed {
        outbox.release(&self.answered);
        outbox.dispatch(self.outgoing);
        for (tx, reply) in self.acks {
            // A sender that gave up waiting is fine: it will send again, deduplicated.
            let _ = tx.send(reply);
        }
        Owed(self.answers)
    }
}

/// The answers a written group owes the daemon's own callers.
#[must_use = "the daemon's callers wait for these answers"]
pub(crate) struct Owed(Vec<CallerAnswer>);

impl Owed {
    /// Gives every answer.
    pub(crate) fn give(self) {
        for answer in self.0 {
            answer();
        }
    }
}

impl Group {
    /// The apply-once prelude. A probe is answered at once and never stored (answering
    /// proves the actor is alive). A message whose id names another sender than the peer it
    /// came from is refused. A message applied before, in this group or an earlier one (below
    /// its sender's floor, or its `seen/` key: `seen`), is acknowledged without being applied
    /// again; one too far above the floor is left unanswered. Any other goes to
    /// `apply`, which translates it into an input of the daemon's core and applies it: when it
    /// accepts, the message is recorded as applied in this group's batch and acknowledged
    /// after the write; when it refuses, the sender is told why (and stops retrying).
    pub fn receive(
        &mut self,
        store: &dyn Store,
        metrics: &Metrics,
        role: Peer,
        inbound: Inbound,
        apply: impl FnOnce(&PeerId, &MessageId, Message) -> Result<(), NotApplied>,
    ) -> Result<(), StoreError> {
        let Inbound {
            from,
            envelope:
                Envelope {
                    id,
                    answered_below,
                    // Judged before, by the daemon that cares (a node's core: `admit`).
                    epoch: _,
                    message,
                },
            reply,
        } = inbound;
        if matches!(message, Message::Probe(_)) {
            self.acks.push((reply, Reply::Ack));
            return Ok(());
        }
        let kind = message.kind();
        if let Some(reason) = foreign_id(&id, crate::peer_text::node_id(&from).as_str()) {
            metrics.refused(kind, role);
            tracing::warn!(peer = %from, "refused a {kind} message: {reason}");
            self.acks.push((reply, Reply::Refused { reason }));
            return Ok(());
        }
        match self
            .seen
            .judge(store, &mut self.batch, &id, answered_below)?
        {
            Verdict::New => {}
            Verdict::Duplicate => {
                metrics.duplicate();
                self.acks.push((reply, Reply::Ack));
                return Ok(());
            }
            Verdict::TooFarAhead => {
                tracing::warn!(%id, "a message too far ahead of its sender's unanswered ones; left unanswered");
                drop(reply);
                return Ok(());
            }
        }
        match apply(&from, &id, message) {
            Ok(()) => {
                metrics.received(kind, role);
                self.seen.applied(&mut self.batch, id);
                self.acks.push((reply, Reply::Ack));
            }
            Err(NotApplied::Refused(reason)) => {
                metrics.refused(kind, role);
                tracing::warn!(peer = %from, "refused a {kind} message: {reason}");
                self.acks.push((reply, Reply::Refused { reason }));
            }
            Err(NotApplied::Later(reason)) => {
                tracing::warn!(peer = %from, "a {kind} message left unanswered, to be tried again: {reason}");
                drop(reply);
            }
        }
        Ok(())
    }

    /// Removes an answered message from the outbox in this group's batch, for an outbox owner
    /// that removes them itself ([`crate::outbox::Delivered`]); once the group is written, the
    /// message no longer holds back what its receiver is told was answered.
    pub fn answered(&mut self, msg: &Outgoing, reply: &Reply) -> Result<(), StoreError> {
        outbox::stage_answered(&mut self.batch, msg, reply)?;
        self.answered.push((msg.to.clone(), msg.envelope.id.seq));
        Ok(())
    }

    /// Answers a request after the write, whatever the daemon made of it.
    pub fn reply(&mut self, to: oneshot::Sender<Reply>, reply: Reply) {
        self.acks.push((to, reply));
    }

    /// Owes `answer` to a caller of the daemon's own (an API call waiting on `to`): given once
    /// the group is on disk, so that nobody hears of a change the disk does not hold yet, and
    /// the actor has acted on it (`Actor::committed`), so that what the change starts has
    /// started (a group written outside the actor loop answers right after its write).
    pub fn answer<T: Send + 'static>(&mut self, to: oneshot::Sender<T>, answer: T) {
        self.answers.push(Box::new(move || {
            // A caller that gave up waiting is fine.
            let _ = to.send(answer);
        }));
    }

    /// Stages `message` for `to`: it gets the next message id and goes into the outbox in
    /// this group's batch, to be delivered once the batch is on disk. A location that cannot
    /// be parsed is staged as it is: delivery refuses it and records the refusal under
    /// `refused/` (the daemons check locations when they take a document, so this is a
    /// backstop, never a silent drop).
    pub fn send(
        &mut self,
        seq: &mut Sequencer,
        to: Destination,
        role: Peer,
        message: Message,
    ) -> Result<(), StoreError> {
        let envelope = Envelope {
            answered_below: 0,
            epoch: None,
            id: seq.next(),
            message,
        };
        let msg = match to {
            Destination::Peer(peer, addrs) => Outgoing::parsed(peer, addrs, role, envelope),
            Destination::Location(location) => match seq.address(&location) {
                Ok((peer, addr)) => Outgoing::parsed(peer, vec![addr], role, envelope),
                Err(why) => {
                    tracing::error!(%location, "a message to an address that cannot be dialled: {why}");
                    let text = location.as_str().to_owned();
                    Outgoing::text(NodeId::new(text.clone()), vec![text], role, envelope)
                }
            },
            Destination::Text(peer, addrs) => Outgoing::text(peer, addrs, role, envelope),
        };
        outbox::stage(&mut self.batch, &msg)?;
        self.outgoing.push(msg);
        Ok(())
    }

    /// Writes the group at once (synced), then sends its messages and gives its replies: for
    /// what a daemon does before its actor loop runs (a node's registration at start).
    pub fn write_now(
        self,
        store: &dyn Store,
        seq: &mut Sequencer,
        outbox: &crate::outbox::Outbox,
    ) -> Result<(), StoreError> {
        let (batch, written) = self.finish(seq);
        if !batch.is_empty() {
            store.write(batch, crate::store::Durability::Synced)?;
        }
        written.hand_over(outbox).give();
        Ok(())
    }

    /// Adds the sequence number to the batch, and splits off what to do after the write.
    pub(crate) fn finish(mut self, seq: &mut Sequencer) -> (Batch, Written) {
        seq.stage(&mut self.batch);
        (
            self.batch,
            Written {
                outgoing: self.outgoing,
                acks: self.acks,
                answers: self.answers,
                answered: self.answered,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::SEQ_KEY;
    use crate::store::{Durability, MemoryStore, Op};
    use mobiwf_proto::{ActivityId, InstanceId, Outcome};

    fn notify() -> Message {
        Message::Notify(mobiwf_proto::Notify::new(
            InstanceId(1),
            ActivityId(2),
            Outcome::Succeeded,
        ))
    }

    /// The one sender of these tests.
    fn sender() -> PeerId {
        static SENDER: std::sync::OnceLock<PeerId> = std::sync::OnceLock::new();
        *SENDER.get_or_init(PeerId::random)
    }

    fn inbound(seq: u64, message: Message) -> (Inbound, oneshot::Receiver<Reply>) {
        let (reply, answer) = oneshot::channel();
        let from = sender();
        let envelope = Envelope {
            answered_below: 0,
            epoch: None,
            id: MessageId {
                incarnation: 5,
                origin: NodeId::new(from.to_string()),
                seq,
            },
            message,
        };
        (
            Inbound {
                from,
                envelope,
                reply,
            },
            answer,
        )
    }

    fn finish(group: Group, seq: &mut Sequencer) -> (Batch, Vec<Reply>) {
        let (batch, written) = group.finish(seq);
        let replies = written.acks.into_iter().map(|(_, reply)| reply).collect();
        (batch, replies)
    }

    fn keys(batch: &Batch) -> Vec<String> {
        batch
            .ops
            .iter()
            .map(|op| match op {
                Op::Put(k, _) | Op::Delete(k) => String::from_utf8_lossy(k).into_owned(),
            })
            .collect()
    }

    #[test]
    fn a_message_is_applied_once_within_a_group_and_across_groups() {
        let store = MemoryStore::default();
        let metrics = Metrics::new();
        let mut seq = Sequencer::load(&store, PeerId::random()).unwrap();
        let mut applied = 0;
        let mut group = Group::default();
        for _ in 0..2 {
            let (msg, _answer) = inbound(7, notify());
            group
                .receive(&store, &metrics, Peer::Partner, msg, |_, _, _| {
                    applied += 1;
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(applied, 1);
        let (batch, replies) = finish(group, &mut seq);
        assert_eq!(replies, vec![Reply::Ack, Reply::Ack]);
        assert_eq!(
            keys(&batch),
            vec![format!(
                "seen/{}/0000000000000005/00000000000000000007",
                sender()
            )]
        );
        store.write(batch, Durability::Synced).unwrap();

        let mut group = Group::default();
        let (msg, _answer) = inbound(7, notify());
        group
            .receive(&store, &metrics, Peer::Partner, msg, |_, _, _| {
                applied += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(applied, 1, "applied again after it was written");
        let (batch, replies) = finish(group, &mut seq);
        assert!(batch.is_empty());
        assert_eq!(replies, vec![Reply::Ack]);
    }

    #[test]
    fn a_message_not_taken_now_is_left_unanswered_and_not_recorded() {
        let store = MemoryStore::default();
        let metrics = Metrics::new();
        let mut seq = Sequencer::load(&store, PeerId::random()).unwrap();
        let mut group = Group::default();
        let (msg, mut answer) = inbound(1, notify());
        group
            .receive(&store, &metrics, Peer::Partner, msg, |_, _, _| {
                Err(NotApplied::Later("no room for early words".to_owned()))
            })
            .unwrap();
        let (batch, replies) = finish(group, &mut seq);
        assert!(batch.is_empty(), "{:?}", keys(&batch));
        assert!(replies.is_empty(), "{replies:?}");
        assert!(
            answer.try_recv().is_err(),
            "no answer: the sender tries again"
        );
    }

    #[test]
    fn a_refused_message_is_not_recorded_and_a_probe_is_never_stored() {
        let store = MemoryStore::default();
        let metrics = Metrics::new();
        let mut seq = Sequencer::load(&store, PeerId::random()).unwrap();
        let mut group = Group::default();
        let (msg, _a) = inbound(1, notify());
        group
            .receive(&store, &metrics, Peer::Partner, msg, |_, _, _| {
                Err("no such instance".to_owned().into())
            })
            .unwrap();
        let (probe, _b) = inbound(0, Message::Probe(Default::default()));
        group
            .receive(&store, &metrics, Peer::Controller, probe, |_, _, _| {
                panic!("a probe is not applied")
            })
            .unwrap();
        let (batch, replies) = finish(group, &mut seq);
        assert!(batch.is_empty(), "{:?}", keys(&batch));
        assert_eq!(
            replies,
            vec![
                Reply::Refused {
                    reason: "no such instance".to_owned()
                },
                Reply::Ack
            ]
        );
    }

    #[test]
    fn sent_messages_are_numbered_staged_and_the_number_kept() {
        let store = MemoryStore::default();
        let mut batch = Batch::default();
        batch.put(SEQ_KEY, "41");
        store.write(batch, Durability::Synced).unwrap();
        let me = PeerId::random();
        let mut seq = Sequencer::load(&store, me).unwrap();
        let partner = PeerId::random();
        let location = Location::parse(format!("/ip4/127.0.0.1/tcp/1/p2p/{partner}")).unwrap();
        let mut group = Group::default();
        for to in [
            Destination::Location(location.clone()),
            Destination::Location(location.clone()),
            Destination::Location(Location::lenient("not an address")),
        ] {
            group.send(&mut seq, to, Peer::Partner, notify()).unwrap();
        }
        assert_eq!(seq.last(), 44);
        let outgoing: Vec<(String, u64)> = group
            .outgoing
            .iter()
            .map(|m| (m.to.to_string(), m.envelope.id.seq))
            .collect();
        assert_eq!(
            outgoing,
            vec![
                (partner.to_string(), 42),
                (partner.to_string(), 43),
                ("not an address".to_owned(), 44)
            ]
        );
        assert!(
            group
                .outgoing
                .iter()
                .all(|m| m.envelope.id.origin == me.to_string().as_str())
        );
        let (batch, _) = finish(group, &mut seq);
        assert_eq!(
            keys(&batch),
            vec![
                "out/00000000000000000042",
                "out/00000000000000000043",
                "out/00000000000000000044",
                SEQ_KEY
            ]
        );
        // Nothing new: the number is not written again.
        let (batch, _) = finish(Group::default(), &mut seq);
        assert!(batch.is_empty());
    }

    #[test]
    fn a_callers_answer_is_given_with_the_written_group_never_before() {
        let store = MemoryStore::default();
        let mut seq = Sequencer::load(&store, PeerId::random()).unwrap();
        let mut group = Group::default();
        let (to, mut waiting) = oneshot::channel();
        group.answer(to, 7_u64);
        assert!(
            waiting.try_recv().is_err(),
            "not while the group is applied"
        );
        let (_, written) = group.finish(&mut seq);
        assert!(waiting.try_recv().is_err(), "not before the write");
        let owed = Owed(written.answers);
        assert!(waiting.try_recv().is_err(), "not before they are given");
        owed.give();
        assert_eq!(waiting.try_recv().unwrap(), 7);
    }
}
