//! The controller process in the world: a start (the book loaded from the disk, the outbox
//! resumed, the failure detector's rounds), a group (applied, written synced, then its
//! messages handed to the outbox and its answers given; the deadline and the watched nodes
//! published), and the detector's probes.

use mobiwf_proto::{Envelope, Message, MessageId};

use super::net::Purpose;
use super::{CONTROLLER, Event, World};
use crate::controller::detector::PROBE_EVERY_US;
use crate::controller::{ControllerProc, CtlEvent};
use crate::outbox::{OUTBOX_PREFIX, Outgoing};

impl World {
    /// Starts the controller's daemon (`controller::daemon::start`).
    pub fn start_controller(&mut self) {
        let fresh = self.rng.u64();
        let m = &mut self.machines[CONTROLLER];
        m.run += 1;
        m.wake_at = None;
        m.timer_at = None;
        m.book.clear();
        let me = m.peer.clone();
        let first_seq = self.clock_us(CONTROLLER);
        let m = &mut self.machines[CONTROLLER];
        let proc = match ControllerProc::start(me, &mut m.disk, fresh, first_seq) {
            Ok(proc) => proc,
            Err(e) => {
                let line = format!("C: cannot start: {e}");
                self.log(&line);
                self.checks.fail(line);
                return;
            }
        };
        // `learn_registered`: the address book knows where each registered node last said
        // it is before anything is delivered.
        for node in proc.book.nodes() {
            let book = self.machines[CONTROLLER].book.entry(node.peer.clone());
            book.or_default().extend(node.addrs.iter().cloned());
        }
        self.controller = Some(proc);
        let addr = self.machines[CONTROLLER].addr(CONTROLLER);
        let line = format!("C: started at {addr}");
        self.log(&line);
        let stored = self.machines[CONTROLLER]
            .disk
            .scan(OUTBOX_PREFIX.as_bytes());
        let pending: Vec<Outgoing> = stored
            .iter()
            .filter_map(|(_, v)| serde_json::from_slice(v).ok())
            .collect();
        let now = self.now;
        if let Some(c) = self.controller.as_mut() {
            c.outbox.dispatch(now, pending);
        }
        self.pump(CONTROLLER);
        let deadline = self
            .controller
            .as_ref()
            .and_then(|c| c.book.next_deadline());
        self.set_timer(CONTROLLER, deadline);
        let run = self.machines[CONTROLLER].run;
        self.after(PROBE_EVERY_US, Event::DetectorRound(run));
    }

    /// The controller takes its waiting events as one group.
    pub(super) fn controller_group(&mut self) {
        let now_ms = self.clock_ms(CONTROLLER);
        let names = self.peer_names();
        let Some(proc) = self.controller.as_mut() else {
            return;
        };
        let events = std::mem::take(&mut proc.pending);
        let summary = summary(&events, &|peer| {
            names.get(peer).cloned().unwrap_or_default()
        });
        let applied = proc.apply(&self.machines[CONTROLLER].disk, now_ms, events);
        let mut group = match applied {
            Ok(group) => group,
            Err(e) => {
                let line = format!("C: stopping: {e}");
                self.log(&line);
                self.checks.fail(line);
                self.controller = None;
                self.close_connections_of(CONTROLLER, false);
                return;
            }
        };
        let batch = group.finish(&mut proc.seq);
        let log = std::mem::take(&mut proc.log);
        let answers = std::mem::take(&mut proc.answers);
        let changed = std::mem::take(&mut proc.changed);
        let reruns = std::mem::take(&mut proc.reruns);
        self.log(&format!("C: group [{summary}]"));
        for note in log {
            self.log(&format!("C:   {note}"));
        }
        if !batch.is_empty() {
            self.machines[CONTROLLER].disk.write_synced(batch);
        }
        for (instance, activities) in &reruns {
            self.checks.rerun(*instance, activities);
        }
        self.checks.controller_wrote(&changed);
        self.checks.applied(CONTROLLER, &group.applied);
        if let Some(c) = &self.controller {
            self.checks.holders(c.book.sync_state());
        }
        for (tag, answer) in answers {
            match answer {
                Ok(id) => {
                    self.workload.instances.insert(tag, id);
                }
                Err(why) => {
                    self.workload.refused.insert(tag, why);
                }
            }
        }
        if self.crash_after_write(CONTROLLER) {
            return;
        }
        let now = self.now;
        if let Some(proc) = self.controller.as_mut() {
            proc.outbox.release(&group.answered);
            proc.outbox
                .dispatch(now, std::mem::take(&mut group.outgoing));
        }
        self.pump(CONTROLLER);
        self.reply_all(std::mem::take(&mut group.acks));
        let deadline = self
            .controller
            .as_ref()
            .and_then(|c| c.book.next_deadline());
        self.set_timer(CONTROLLER, deadline);
        if self
            .controller
            .as_ref()
            .is_some_and(|c| !c.pending.is_empty())
        {
            self.wake_soon(CONTROLLER);
        }
    }

    /// A round of the failure detector: its verdicts to the actor, its probes out.
    pub(super) fn detector_round(&mut self, run: u32) {
        if !self.alive(CONTROLLER, run) {
            return;
        }
        let now = self.now;
        let Some(c) = self.controller.as_mut() else {
            return;
        };
        let (verdicts, probes) = c.detector.round(now);
        if !verdicts.is_empty() {
            c.pending
                .extend(verdicts.into_iter().map(CtlEvent::Verdict));
            self.wake_soon(CONTROLLER);
        }
        let me = self.machines[CONTROLLER].peer.clone();
        for out in probes {
            let envelope = Envelope::new(
                MessageId {
                    origin: me.clone(),
                    incarnation: 0,
                    seq: 0,
                },
                Message::Probe(out.probe),
            );
            let purpose = Purpose::Probe(out.peer.clone(), out.probe.seq);
            self.request(CONTROLLER, &out.peer, &out.addrs, &envelope, purpose);
        }
        self.after(PROBE_EVERY_US, Event::DetectorRound(run));
    }
}

/// The events of a group, in words.
fn summary(events: &[CtlEvent], name: &dyn Fn(&mobiwf_proto::NodeId) -> String) -> String {
    let words: Vec<String> = events
        .iter()
        .map(|e| match e {
            CtlEvent::Inbound(i) => format!(
                "{} {}#{}",
                i.envelope.message.kind(),
                name(&i.from),
                i.envelope.id.seq
            ),
            CtlEvent::Delivered { msg, .. } => {
                format!(
                    "answered {}#{}",
                    msg.envelope.message.kind(),
                    msg.envelope.id.seq
                )
            }
            CtlEvent::Tick => "tick".to_owned(),
            CtlEvent::Verdict(v) => format!("{v:?}"),
            CtlEvent::Operator(op) => match op {
                crate::controller::Operator::Submit { source, .. } => format!("submit {source}"),
                other => format!("{other:?}").chars().take(60).collect(),
            },
        })
        .collect();
    words.join(", ")
}
