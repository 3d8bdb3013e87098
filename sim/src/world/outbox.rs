//! What the processes' outboxes ask of the world, and what the world tells them back: a try
//! goes out as a request, a wake-up is scheduled, the controller is asked where a peer is, a
//! node hears a peer became unreachable or answers again, and an answered entry leaves (a
//! node writes its removal itself, lazily for an acknowledgement and synced for a refusal,
//! but for a claim refused outright, which its actor removes in its next group with the desk's
//! answer; the controller removes every answered entry in its next group).

use mobiwf_delivery::LinkError;
use mobiwf_proto::{Envelope, Locate, Message, MessageId, NodeId, Reply};

use super::net::Purpose;
use super::{CONTROLLER, Event, Pid, World};
use crate::controller::CtlEvent;
use crate::disk::Batch;
use crate::node::NodeEvent;
use crate::outbox::{Action, Outbox, stage_answered};

impl World {
    fn outbox_mut(&mut self, pid: Pid) -> Option<&mut Outbox> {
        if pid == CONTROLLER {
            self.controller.as_mut().map(|c| &mut c.outbox)
        } else {
            self.nodes[pid - 1].as_mut().map(|n| &mut n.outbox)
        }
    }

    /// Lets `pid`'s outbox give every delivery that may go its try.
    pub fn pump(&mut self, pid: Pid) {
        let now = self.now;
        let actions = self
            .outbox_mut(pid)
            .map(|o| o.pump(now))
            .unwrap_or_default();
        self.act(pid, actions);
    }

    /// What came of a try of `pid`'s entry `seq`.
    pub(super) fn outbox_tried(&mut self, pid: Pid, seq: u64, result: Result<Reply, LinkError>) {
        let now = self.now;
        let actions = self
            .outbox_mut(pid)
            .map(|o| o.tried(now, seq, result))
            .unwrap_or_default();
        self.act(pid, actions);
    }

    /// `pid` is connected to `peer` again: its lane starts over.
    pub(super) fn outbox_seen(&mut self, pid: Pid, peer: &NodeId) {
        let now = self.now;
        let actions = self
            .outbox_mut(pid)
            .map(|o| o.seen(now, peer))
            .unwrap_or_default();
        self.act(pid, actions);
    }

    /// The controller answered where `peer` is (`MeshLink::relocate`): the addresses are
    /// learnt; the lane starts over when one was new.
    pub(super) fn outbox_located(
        &mut self,
        pid: Pid,
        seq: u64,
        peer: &NodeId,
        result: Result<Reply, LinkError>,
    ) {
        let moved = match result {
            Ok(Reply::Located { addrs }) => {
                let book = self.machines[pid].book.entry(peer.clone()).or_default();
                let new = addrs.iter().any(|a| !book.contains(a));
                book.extend(addrs);
                new
            }
            _ => false,
        };
        let now = self.now;
        let actions = self
            .outbox_mut(pid)
            .map(|o| o.located(now, seq, moved))
            .unwrap_or_default();
        self.act(pid, actions);
    }

    /// Carries out what `pid`'s outbox asked for.
    pub(super) fn act(&mut self, pid: Pid, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Try {
                    seq,
                    to,
                    addrs,
                    envelope,
                } => self.request(pid, &to, &addrs, &envelope, Purpose::Outbox(seq)),
                Action::Wake(at) => {
                    let run = self.machines[pid].run;
                    self.at(at, Event::OutboxWake(pid, run));
                }
                Action::Locate { seq, peer } => self.locate(pid, seq, peer),
                Action::News { peer, reachable } => {
                    let name = self
                        .pid_of(&peer)
                        .map_or_else(|| peer.to_string(), |p| self.name(p));
                    let what = if reachable {
                        "reachable again"
                    } else {
                        "unreachable"
                    };
                    let line = format!("{}: {name} {what}", self.name(pid));
                    self.log(&line);
                    if pid != CONTROLLER
                        && let Some(n) = &mut self.nodes[pid - 1]
                    {
                        n.pending.push(NodeEvent::Link { peer, reachable });
                        self.wake_soon(pid);
                    }
                }
                Action::Settled { msg, reply } => self.settled(pid, msg, reply),
            }
        }
    }

    /// A node asks its controller where `peer` is now (never stored, like a probe).
    fn locate(&mut self, pid: Pid, seq: u64, peer: NodeId) {
        let controller = self.machines[CONTROLLER].peer.clone();
        let addrs: Vec<String> = self.machines[pid]
            .book
            .get(&controller)
            .map(|b| b.iter().cloned().collect())
            .unwrap_or_default();
        let envelope = Envelope::new(
            MessageId {
                origin: self.machines[pid].peer.clone(),
                incarnation: 0,
                seq: 0,
            },
            Message::Locate(Locate { peer: peer.clone() }),
        );
        self.request(
            pid,
            &controller,
            &addrs,
            &envelope,
            Purpose::Locate(seq, peer),
        );
    }

    /// An entry of `pid`'s outbox was answered.
    fn settled(&mut self, pid: Pid, msg: crate::outbox::Outgoing, reply: Reply) {
        if let Reply::Refused { reason } = &reply {
            let line = format!(
                "{}: {} {} refused: {reason}",
                self.name(pid),
                msg.envelope.message.kind(),
                msg.envelope.id.seq
            );
            self.log(&line);
            self.checks.refused(&self.name(pid), &msg, reason);
        }
        if pid == CONTROLLER {
            if let Some(c) = &mut self.controller {
                c.pending.push(CtlEvent::Delivered { msg, reply });
                self.wake_soon(pid);
            }
            return;
        }
        // A claim refused outright goes to the node's actor, which removes its entry with
        // the desk's answer in its next group (`OutboxNews`).
        if crate::node::refused_claim(&msg, &reply) {
            if let Some(n) = &mut self.nodes[pid - 1] {
                n.pending.push(NodeEvent::Refused { msg, reply });
                self.wake_soon(pid);
            }
            return;
        }
        // `Inner::finish`: the removal written as the answer says, then the number leaves
        // the count of the unanswered (the simulated disk never fails a write).
        let removal = Outbox::removal(&reply);
        let mut batch = Batch::default();
        stage_answered(&mut batch, &msg, &reply);
        let disk = &mut self.machines[pid].disk;
        if removal.synced() {
            disk.write_synced(batch);
        } else {
            disk.write_lazy(batch);
        }
        if let Some(n) = &mut self.nodes[pid - 1] {
            n.outbox.forget(&msg.to, msg.envelope.id.seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use mobiwf_proto::{Message, Reply};

    use crate::node::NodeEvent;
    use crate::outbox::{OUTBOX_PREFIX, REFUSED_PREFIX};

    /// A claim its host refuses outright goes back to its device's core, as the node
    /// daemon's outbox hands it to its actor: in the node's next group the desk answers the
    /// user, and the entry leaves the outbox with the refusal recorded. (No workload makes a
    /// host refuse a claim yet: the refusal is given to a claim's try in flight here.)
    #[test]
    fn a_claim_refused_outright_is_answered_by_its_device() {
        for seed in 0..2_000 {
            let mut world = crate::build(seed, false);
            world.weather.crash_after_write = 0;
            let deadline = world.setup.quiet_at + world.setup.settle_within;
            while world.checks.violations.is_empty() && world.step(deadline) {
                for pid in 1..world.machines.len() {
                    let claims: Vec<_> = world.nodes[pid - 1]
                        .iter()
                        .flat_map(|n| n.outbox.pending())
                        .filter(|m| matches!(m.envelope.message, Message::Claim(_)))
                        .cloned()
                        .collect();
                    for msg in claims {
                        let Message::Claim(claim) = &msg.envelope.message else {
                            continue;
                        };
                        let seq = msg.envelope.id.seq;
                        let reason = "the sender is not a device here".to_owned();
                        world.outbox_tried(pid, seq, Ok(Reply::Refused { reason }));
                        let handed = world.nodes[pid - 1].as_ref().is_some_and(|n| {
                            n.pending.iter().any(|e| {
                                matches!(e, NodeEvent::Refused { msg, .. } if msg.envelope.id.seq == seq)
                            })
                        });
                        if !handed {
                            // Not in flight: the outbox took no answer for it.
                            continue;
                        }
                        let waited = world.nodes[pid - 1].as_ref().is_some_and(|n| {
                            n.core.desk().pending().any(|c| c.request == claim.request)
                        });
                        assert!(waited, "seed {seed}: the desk waited for the claim");
                        world.node_group(pid);
                        let node = world.nodes[pid - 1].as_ref().expect("the node runs");
                        assert!(
                            node.core
                                .desk()
                                .pending()
                                .all(|c| c.request != claim.request),
                            "seed {seed}: the claim still waits"
                        );
                        assert!(node.outbox.pending().all(|m| m.envelope.id.seq != seq));
                        let disk = &world.machines[pid].disk;
                        let entry = format!("{OUTBOX_PREFIX}{seq:020}");
                        let record = format!("{REFUSED_PREFIX}{seq:020}");
                        assert!(disk.get(entry.as_bytes()).is_none(), "seed {seed}: kept");
                        assert!(
                            disk.get(record.as_bytes()).is_some(),
                            "seed {seed}: no record"
                        );
                        return;
                    }
                }
            }
        }
        panic!("none of the first 2,000 seeds had a claim in flight to its host");
    }
}
