//! The node processes in the world: a start (the core loaded from the disk, the outbox
//! resumed, the registration written and sent, the running commands asked for again), a group
//! (applied, written synced, then its messages handed to the outbox, its answers given, its
//! commands started and killed), and the commands' lives on the machine: their ends, their
//! watchdogs, and the lease files the node keeps up on its round trips with its controller.

use mobiwf_engine::Effect;
use mobiwf_proto::DataValue;
use mobiwf_xml_schema::DataKind;

use super::{Event, Pid, World};
use crate::node::executor::{Asked, Ended, Plan, RunDir};
use crate::node::{After, NodeProc};
use crate::outbox::{OUTBOX_PREFIX, Outgoing};

/// How often a node keeps its held commands' lease files up (`LEASE_REFRESH`), µs.
const LEASE_REFRESH_US: u64 = 100_000;

impl World {
    /// Starts node `pid`'s daemon on its machine (`node::daemon::start`).
    pub fn start_node(&mut self, pid: Pid) {
        let config = self.setup.nodes[pid - 1].clone();
        let fresh = self.rng.u64();
        let m = &mut self.machines[pid];
        m.run += 1;
        m.wake_at = None;
        m.timer_at = None;
        m.book.clear();
        let controller = self.setup.nodes[pid - 1].controller.clone();
        let controller_addr = config.controller_addr.clone();
        m.book
            .entry(controller)
            .or_default()
            .insert(controller_addr);
        let addr = m.addr(pid);
        let proc = match NodeProc::start(config, &mut m.disk, &addr, fresh) {
            Ok(proc) => proc,
            Err(e) => {
                let line = format!("{}: cannot start: {e}", self.name(pid));
                self.log(&line);
                self.checks
                    .fail(format!("{line} (the disk holds what it cannot read)"));
                return;
            }
        };
        self.nodes[pid - 1] = Some(proc);
        let line = format!("{}: started at {addr}", self.name(pid));
        self.log(&line);
        // The outbox resumes first (`Outbox::start`), then the registration is written and
        // sent, then the running commands are asked for again.
        let stored = self.machines[pid].disk.scan(OUTBOX_PREFIX.as_bytes());
        let pending: Vec<Outgoing> = stored
            .iter()
            .filter_map(|(_, v)| serde_json::from_slice(v).ok())
            .collect();
        let now = self.now;
        let Some(proc) = self.nodes[pid - 1].as_mut() else {
            return;
        };
        proc.outbox.dispatch(now, pending);
        let mut group = proc.register(&addr);
        let batch = group.finish(&mut proc.seq);
        let resumed = proc.core.resume();
        self.machines[pid].disk.write_synced(batch);
        if let Some(proc) = self.nodes[pid - 1].as_mut() {
            proc.outbox
                .dispatch(now, std::mem::take(&mut group.outgoing));
        }
        self.pump(pid);
        self.carry_out(pid, resumed);
        let deadline = self.nodes[pid - 1]
            .as_ref()
            .and_then(|n| n.core.next_deadline());
        self.set_timer(pid, deadline);
        let run = self.machines[pid].run;
        self.after(LEASE_REFRESH_US, Event::LeaseRefresh(pid, run));
        if let Some(proc) = self.nodes[pid - 1].as_mut() {
            proc.refreshing = true;
        }
    }

    /// Node `pid` takes its waiting events as one group.
    pub(super) fn node_group(&mut self, pid: Pid) {
        let now_us = self.clock_us(pid);
        let names = self.peer_names();
        let Some(proc) = self.nodes[pid - 1].as_mut() else {
            return;
        };
        let events = std::mem::take(&mut proc.pending);
        let summary = summary(&events, &|peer| {
            names.get(peer).cloned().unwrap_or_default()
        });
        let applied = proc.apply(&self.machines[pid].disk, now_us, events);
        let (mut group, after) = match applied {
            Ok(done) => done,
            Err(e) => {
                let line = format!("{}: stopping: {e}", self.name(pid));
                self.log(&line);
                self.checks.fail(line);
                self.nodes[pid - 1] = None;
                self.close_connections_of(pid, false);
                return;
            }
        };
        let batch = group.finish(&mut proc.seq);
        let log = std::mem::take(&mut proc.log);
        if !summary.is_empty() {
            let line = format!("{}: group [{summary}]", self.name(pid));
            self.log(&line);
        }
        for note in log {
            let line = format!("{}:   {note}", self.name(pid));
            self.log(&line);
        }
        if !batch.is_empty() {
            self.machines[pid].disk.write_synced(batch);
        }
        let now_ms = now_us / 1000;
        self.checks
            .node_wrote(pid, &after.touched.runs, &after.touched.items, now_ms);
        self.thresholds_on_time(pid, now_ms);
        self.checks.applied(pid, &group.applied);
        if self.crash_after_write(pid) {
            return;
        }
        let now = self.now;
        if let Some(proc) = self.nodes[pid - 1].as_mut() {
            proc.outbox.release(&group.answered);
            proc.outbox
                .dispatch(now, std::mem::take(&mut group.outgoing));
        }
        self.pump(pid);
        self.reply_all(std::mem::take(&mut group.acks));
        self.node_committed(pid, after);
    }

    /// On a running host, no open item's deadline threshold waits long past its time (while
    /// its activity is not paused).
    fn thresholds_on_time(&mut self, pid: Pid, now_ms: u64) {
        let Some(proc) = self.nodes[pid - 1].as_ref() else {
            return;
        };
        let engine = proc.core.engine();
        let late = engine.items().find_map(|item| {
            let key = mobiwf_engine::RunKey {
                instance: item.instance,
                partition: item.partition,
            };
            let life = engine.run(&key).and_then(|r| r.life(item.activity));
            let paused = matches!(life, Some(mobiwf_engine::Life::Paused { .. }));
            crate::checks::deadlines::overdue(item, paused, now_ms)
        });
        if let Some(what) = late {
            self.checks.fail(format!("{what} on machine {pid}"));
        }
    }

    /// Once a group is written (`NodeActor::committed`): the deadline, the commands.
    fn node_committed(&mut self, pid: Pid, after: After) {
        let deadline = self.nodes[pid - 1]
            .as_ref()
            .and_then(|n| n.core.next_deadline());
        self.set_timer(pid, deadline);
        self.carry_out(pid, after.effects);
        if self
            .nodes
            .get(pid - 1)
            .is_some_and(|n| n.as_ref().is_some_and(|n| !n.pending.is_empty()))
        {
            self.wake_soon(pid);
        }
    }

    /// Starts and kills the commands the engine asked for (`NodeActor::carry_out`).
    pub(super) fn carry_out(&mut self, pid: Pid, effects: Vec<Effect>) {
        for effect in effects {
            match &effect {
                Effect::Execute { .. } | Effect::Compensate { .. } => self.spawn(pid, &effect),
                Effect::Kill { .. } => {
                    let Some((dir, _)) = NodeProc::run_dir(&effect) else {
                        continue;
                    };
                    let now = self.clock_us(pid);
                    let line = format!("{}: kill {dir}", self.name(pid));
                    self.log(&line);
                    if let Some(ended) = self.machines[pid].runs.kill(dir, now) {
                        self.checks.stopped(pid, dir, self.now);
                        self.tell_ended(pid, dir, ended);
                    }
                }
                Effect::Fetch { file, .. } => {
                    let line =
                        format!("{}: fetch of {} not simulated", self.name(pid), file.sha256);
                    self.log(&line);
                }
                Effect::Refused { reason, .. } => {
                    let line = format!("{}: a kept word refused: {reason}", self.name(pid));
                    self.log(&line);
                }
                Effect::Send { .. } => {}
            }
        }
    }

    /// Runs an execution (`NodeActor::spawn`, `executor::execute`).
    fn spawn(&mut self, pid: Pid, effect: &Effect) {
        let Some((dir, hold)) = NodeProc::run_dir(effect) else {
            return;
        };
        let now_ms = self.clock_ms(pid);
        let Some(proc) = self.nodes[pid - 1].as_mut() else {
            return;
        };
        let until = hold.map(|h| proc.due_at_hold(h, now_ms));
        let mut refresh = false;
        if let Some(h) = hold {
            proc.held.insert(dir, h);
            refresh = !std::mem::replace(&mut proc.refreshing, true);
        }
        proc.watching.insert(dir);
        let class = class_of(proc, &dir);
        if refresh {
            let run = self.machines[pid].run;
            self.after(LEASE_REFRESH_US, Event::LeaseRefresh(pid, run));
        }
        let plan = plan(&mut self.rng, effect);
        let now = self.clock_us(pid);
        let asked = self.machines[pid].runs.execute(dir, until, now, || plan);
        let line = format!("{}: execute {dir}: {asked:?}", self.name(pid));
        self.log(&line);
        match asked {
            Asked::Ended(ended) => self.tell_ended(pid, dir, ended),
            Asked::Running => {}
            Asked::Started {
                pid: process,
                ends_at,
            } => {
                if let Some(why) = self.nodes[pid - 1]
                    .as_ref()
                    .and_then(|n| n.forbidden.get(&dir))
                {
                    let what = format!("new work where none may start: {dir} started: {why}");
                    self.checks.fail(what);
                }
                self.checks.started(pid, dir, class, self.now);
                // Its end is on the machine's clock.
                let when = ends_at.saturating_add_signed(-self.machines[pid].skew_us);
                let when = when.saturating_sub(super::EPOCH_US);
                self.at(when, Event::ProcessEnd(pid, dir, process));
                if let Some(h) = hold {
                    let period = mobiwf_proto::watchdog_period_ms(h.lease_ms) * 1000;
                    self.after(period, Event::Watchdog(pid, dir, process, period));
                }
            }
        }
    }

    /// A command's process ended as planned.
    pub(super) fn process_end(&mut self, pid: Pid, dir: RunDir, process: u64) {
        if let Some(ended) = self.machines[pid].runs.process_ended(dir, process) {
            self.checks.stopped(pid, dir, self.now);
            let line = format!("{}: {dir} exited: {}", self.name(pid), ended_text(&ended));
            self.log(&line);
            self.tell_ended(pid, dir, ended);
        }
    }

    /// A held command's watchdog looks at its lease file.
    pub(super) fn watchdog(&mut self, pid: Pid, dir: RunDir, process: u64, period: u64) {
        if !self.machines[pid].runs.alive(dir, process) {
            return;
        }
        let now = self.clock_us(pid);
        match self.machines[pid].runs.watchdog(dir, process, now) {
            Some(ended) => {
                self.checks.stopped(pid, dir, self.now);
                let line = format!(
                    "{}: {dir} killed by its watchdog: lease out",
                    self.name(pid)
                );
                self.log(&line);
                self.tell_ended(pid, dir, ended);
            }
            None => self.after(period, Event::Watchdog(pid, dir, process, period)),
        }
    }

    /// The node keeps its held commands' lease files up (`Leases::refresh`).
    pub(super) fn lease_refresh(&mut self, pid: Pid, run: u32) {
        if !self.alive(pid, run) {
            return;
        }
        if let Some(proc) = self.nodes[pid - 1].as_mut()
            && proc.held.is_empty()
        {
            // Nothing held: it looks again once a held command starts.
            proc.refreshing = false;
            return;
        }
        let now_ms = self.clock_ms(pid);
        if let Some(proc) = &self.nodes[pid - 1] {
            let held: Vec<(RunDir, u64)> = proc
                .held
                .iter()
                .map(|(d, h)| (*d, proc.lease_until(*h)))
                .collect();
            for (dir, due) in held {
                self.machines[pid].runs.refresh_lease(dir, due, now_ms);
            }
        }
        self.after(LEASE_REFRESH_US, Event::LeaseRefresh(pid, run));
    }

    /// The failure detector's probe `seq` of `peer` came back.
    pub(super) fn probed(
        &mut self,
        peer: &mobiwf_proto::NodeId,
        seq: u64,
        result: Result<mobiwf_proto::Reply, mobiwf_delivery::LinkError>,
    ) {
        let now = self.now;
        let result = match result {
            Ok(mobiwf_proto::Reply::Ack) => Ok(()),
            Ok(other) => Err(format!("not an acknowledgement: {other:?}")),
            Err(e) => Err(e.to_string()),
        };
        if let Some(c) = &mut self.controller {
            c.detector.heard(peer, seq, now, result);
        }
    }
}

/// The task class of the activity `dir` runs, from its partition document.
fn class_of(proc: &NodeProc, dir: &RunDir) -> Option<mobiwf_xml_schema::ClassName> {
    let key = mobiwf_engine::RunKey {
        instance: dir.instance,
        partition: dir.partition,
    };
    let run = proc.core.engine().run(&key)?;
    let act = run.doc().activities.iter().find(|a| a.id == dir.activity)?;
    act.class.clone()
}

/// What a command does, drawn from its command line (`sim ok=90 ms=100-900 flags=a:70|b:30`;
/// anything else: it mostly succeeds within a second or so).
fn plan(rng: &mut crate::rng::Rng, effect: &Effect) -> Plan {
    let (command, writes) = match effect {
        Effect::Execute {
            command, writes, ..
        } => (command.as_str(), writes.clone()),
        Effect::Compensate { command, .. } => (command.as_str(), Vec::new()),
        _ => ("", Vec::new()),
    };
    let spec = crate::workload::CommandSpec::parse(command);
    let duration_us = rng.range(spec.min_ms, spec.max_ms) * 1000;
    let succeeded = rng.chance(spec.ok_per_mille);
    let flag = spec.flag(rng);
    let written = if succeeded {
        writes
            .into_iter()
            .filter_map(|(name, kind)| match kind {
                DataKind::Number => Some((name, DataValue::Number(rng.range(1, 9).to_string()))),
                DataKind::String => Some((name, DataValue::String(format!("v{}", rng.below(9))))),
                DataKind::File => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let finish = mobiwf_engine::Finish::of(
        succeeded,
        (!succeeded).then(|| "command exited with status 1".to_owned()),
        flag,
    );
    Plan {
        duration_us,
        end: Ended {
            finish,
            written,
            lost: false,
        },
    }
}

fn ended_text(ended: &Ended) -> String {
    match (&ended.finish, ended.lost) {
        (_, true) => "lost".to_owned(),
        (f, _) if f.succeeded() => format!("ok {}", f.flag().unwrap_or("")),
        (f, _) => format!("failed {}", f.detail().unwrap_or("")),
    }
}

/// The events of a group, in words (probes left out: they change nothing).
fn summary(
    events: &[crate::node::NodeEvent],
    name: &dyn Fn(&mobiwf_proto::NodeId) -> String,
) -> String {
    use crate::node::NodeEvent;
    let words: Vec<String> = events
        .iter()
        .filter(|e| !matches!(e, NodeEvent::Inbound(i) if i.envelope.message.kind() == "probe"))
        .map(|e| match e {
            NodeEvent::Inbound(i) => format!(
                "{} {}#{}",
                i.envelope.message.kind(),
                name(&i.from),
                i.envelope.id.seq
            ),
            NodeEvent::Tick => "tick".to_owned(),
            NodeEvent::Ended { dir, .. } => format!("ended {dir}"),
            NodeEvent::Claim(c) => format!("claim {} {}", c.user, c.activity),
            NodeEvent::Link { reachable, .. } => format!("link {reachable}"),
            NodeEvent::Refused { msg, .. } => format!("refused #{}", msg.envelope.id.seq),
            NodeEvent::Away(u) => format!("away {u}"),
            NodeEvent::Back(u) => format!("back {u}"),
        })
        .collect();
    words.join(", ")
}
