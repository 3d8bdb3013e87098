//! One group of events on its way to the simulated disk, as the daemons' shell stages it
//! (`mobiwf_runtime::daemon`, its `group` and `seen` modules): the changes, the messages they
//! cause (numbered by the process's [`Sequencer`]), the ids of the messages applied, and the
//! replies owed, written in one synced batch before anything of it is sent or answered. The
//! apply-once prelude every inbound message goes through is here, on the runtime's own rule
//! (`mobiwf_delivery::seen`): its floor read from the disk, raised with `answered_below`, the
//! `seen/` keys below it deleted in the same batch.

use mobiwf_delivery::{Ledger, Look, Raise, Verdict, foreign_id};
use mobiwf_proto::{Envelope, Message, MessageId, NodeId, Reply};

use crate::disk::{Batch, Disk};
use crate::outbox::{self, Outgoing};

/// The store key of the last sequence number given (`daemon::SEQ_KEY`).
pub const SEQ_KEY: &str = "meta/seq";
/// The store key of the store's incarnation (`daemon::INCARNATION_KEY`).
pub const INCARNATION_KEY: &str = "meta/incarnation";
/// How many `seen/` keys one read of a raise takes at most (`seen::DELETE_PAGE`).
const DELETE_PAGE: usize = 1024;

/// Numbers outgoing messages: this process's peer id, its store's incarnation, the next
/// number (written with the messages that used it).
#[derive(Debug)]
pub struct Sequencer {
    me: NodeId,
    incarnation: u64,
    seq: u64,
    written: u64,
}

impl Sequencer {
    /// Reads the last number and the incarnation from `disk`; a new store gets `fresh` as its
    /// incarnation, written synced (the runtime draws it at random: here the seed does).
    pub fn load(disk: &mut Disk, me: NodeId, fresh: u64) -> Sequencer {
        let mut incarnation = disk.number(INCARNATION_KEY);
        if incarnation == 0 {
            incarnation = fresh.max(1);
            let mut batch = Batch::default();
            batch.put(INCARNATION_KEY, incarnation.to_string());
            disk.write_synced(batch);
        }
        let seq = disk.number(SEQ_KEY);
        Sequencer {
            me,
            incarnation,
            seq,
            written: seq,
        }
    }

    /// The next message id.
    pub fn next_id(&mut self) -> MessageId {
        self.seq += 1;
        MessageId {
            origin: self.me.clone(),
            incarnation: self.incarnation,
            seq: self.seq,
        }
    }

    fn stage(&mut self, batch: &mut Batch) {
        if self.seq != self.written {
            batch.put(SEQ_KEY, self.seq.to_string());
            self.written = self.seq;
        }
    }
}

/// An inbound request: who sent it (as the transport authenticates it), what, and the
/// network's handle to answer it.
#[derive(Debug, Clone)]
pub struct Inbound {
    /// The sending peer.
    pub from: NodeId,
    /// The request.
    pub envelope: Envelope,
    /// Where the answer goes.
    pub reply: u64,
}

/// Why a message was not applied (`daemon::NotApplied`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotApplied {
    /// Refused for good.
    Refused(String),
    /// Not now: left unanswered, tried again.
    Later(String),
}

/// What the prelude made of one message, for the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Answered at once (a probe).
    Probe,
    /// Applied.
    Applied,
    /// Acknowledged without being applied.
    Duplicate,
    /// Refused.
    Refused,
    /// Left unanswered.
    Unanswered,
}

/// One group until it is on disk.
#[derive(Debug, Default)]
pub struct Group {
    /// The changes to write.
    pub batch: Batch,
    ledger: Ledger,
    /// Replies owed to requests: `None` leaves a request unanswered.
    pub acks: Vec<(u64, Option<Reply>)>,
    /// Messages to send once written.
    pub outgoing: Vec<Outgoing>,
    /// Answered entries this group removed (an owner that removes them itself).
    pub answered: Vec<(NodeId, u64)>,
    /// The ids of the messages it applied, for the checks.
    pub applied: Vec<MessageId>,
}

impl Group {
    /// The apply-once prelude (`Group::receive`), then `apply` for a message not applied
    /// before.
    pub fn receive(
        &mut self,
        disk: &Disk,
        inbound: Inbound,
        apply: impl FnOnce(&NodeId, &MessageId, Message) -> Result<(), NotApplied>,
    ) -> Received {
        let Inbound {
            from,
            envelope,
            reply,
        } = inbound;
        let Envelope {
            id,
            answered_below,
            epoch: _,
            message,
        } = envelope;
        if matches!(message, Message::Probe(_)) {
            self.acks.push((reply, Some(Reply::Ack)));
            return Received::Probe;
        }
        if let Some(reason) = foreign_id(&id, from.as_str()) {
            self.acks.push((reply, Some(Reply::Refused { reason })));
            return Received::Refused;
        }
        match self.judge(disk, &id, answered_below) {
            Verdict::New => {}
            Verdict::Duplicate => {
                self.acks.push((reply, Some(Reply::Ack)));
                return Received::Duplicate;
            }
            Verdict::TooFarAhead => {
                self.acks.push((reply, None));
                return Received::Unanswered;
            }
        }
        match apply(&from, &id, message) {
            Ok(()) => {
                self.batch.put(id.seen_key(), Vec::new());
                self.applied.push(id.clone());
                self.ledger.applied(id);
                self.acks.push((reply, Some(Reply::Ack)));
                Received::Applied
            }
            Err(NotApplied::Refused(reason)) => {
                self.acks.push((reply, Some(Reply::Refused { reason })));
                Received::Refused
            }
            Err(NotApplied::Later(_)) => {
                self.acks.push((reply, None));
                Received::Unanswered
            }
        }
    }

    /// `Seen::judge`: the floor raised first, then the message judged.
    fn judge(&mut self, disk: &Disk, id: &MessageId, answered_below: u64) -> Verdict {
        let floor = match self.ledger.floor(id) {
            Some(floor) => floor,
            None => disk.number(&id.floor_key()),
        };
        let judgement = self.ledger.judge(id, floor, answered_below);
        if let Some(raise) = judgement.raise {
            self.forget_below(disk, id, raise);
        }
        match judgement.look {
            Look::Decided(verdict) => verdict,
            Look::ByRecord(look) => look.verdict(disk.get(id.seen_key().as_bytes()).is_some()),
        }
    }

    /// `seen::forget_below`: the new floor, and the keys in `[from, to)` deleted.
    fn forget_below(&mut self, disk: &Disk, id: &MessageId, raise: Raise) {
        let Raise {
            from,
            to,
            forgotten,
        } = raise;
        self.batch.put(id.floor_key(), to.to_string());
        let prefix = id.seen_prefix();
        let mut next = from;
        'pages: loop {
            let start = MessageId {
                seq: next,
                ..id.clone()
            }
            .seen_key();
            let page = disk.scan_from(prefix.as_bytes(), start.as_bytes(), DELETE_PAGE);
            let full = page.len() == DELETE_PAGE;
            for (key, _) in page {
                let seq = std::str::from_utf8(&key[prefix.len()..])
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok());
                match seq {
                    Some(seq) if seq < to => {
                        self.batch.delete(key);
                        next = seq + 1;
                    }
                    _ => break 'pages,
                }
            }
            if !full {
                break;
            }
        }
        for gone in forgotten {
            self.batch.delete(gone.seen_key());
        }
    }

    /// Stages `message` for `to` (its addresses `addrs`): numbered, and in the outbox in this
    /// group's batch.
    pub fn send(&mut self, seq: &mut Sequencer, to: NodeId, addrs: Vec<String>, message: Message) {
        let msg = Outgoing {
            to,
            addrs,
            envelope: Envelope {
                answered_below: 0,
                epoch: None,
                id: seq.next_id(),
                message,
            },
        };
        outbox::stage(&mut self.batch, &msg);
        self.outgoing.push(msg);
    }

    /// Removes an answered entry in this group's batch (an owner that removes them itself).
    pub fn answered(&mut self, msg: &Outgoing, reply: &Reply) {
        outbox::stage_answered(&mut self.batch, msg, reply);
        self.answered.push((msg.to.clone(), msg.envelope.id.seq));
    }

    /// The batch with the sequence number, ready to write.
    pub fn finish(&mut self, seq: &mut Sequencer) -> Batch {
        seq.stage(&mut self.batch);
        std::mem::take(&mut self.batch)
    }
}
