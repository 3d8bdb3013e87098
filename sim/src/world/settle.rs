//! Whether the world has settled once faults stopped: every instance submitted is final at
//! the controller, every daemon runs with nothing waiting, every outbox is empty, no command
//! runs, no user's claim waits for an answer, and every user's worklist on their device shows
//! what the items' hosts hold for them.
//! What is not settled yet, in words (the liveness check reports it when the bound passes).

use std::collections::BTreeSet;

use mobiwf_engine::CopyLife;
use mobiwf_people::{EntryState, Order};
use mobiwf_proto::{ActivityId, Hold, InstanceId};

use super::{CONTROLLER, World};

/// An item as a user sees it: (instance, activity, offered / selected / locked).
type Seen = BTreeSet<(InstanceId, ActivityId, &'static str)>;

impl World {
    /// What is not settled yet; `None` when everything is.
    pub fn unsettled(&self) -> Option<String> {
        for (tag, def) in self.workload.defs.iter().enumerate() {
            if self.workload.refused.contains_key(&tag) {
                continue;
            }
            let Some(id) = self.workload.instances.get(&tag) else {
                return Some(format!("{} ({tag}) not submitted yet", def.shape));
            };
            match self.checks.instances.get(id) {
                Some(state) if state.is_final() => {}
                state => {
                    let state = state.map_or("unknown", |s| s.as_str());
                    let seen = self.describe(*id);
                    return Some(format!("instance {id} ({}) is {state}: {seen}", def.shape));
                }
            }
        }
        for pid in 0..self.machines.len() {
            if let Some(why) = self.busy(pid) {
                return Some(why);
            }
        }
        if self.checks.commands_running() > 0 {
            return Some(format!("{} commands run", self.checks.commands_running()));
        }
        if let Some(why) = self.claim_waiting() {
            return Some(why);
        }
        self.worklists_disagree()
    }

    /// What the controller and the nodes hold of instance `id`, in words.
    fn describe(&self, id: InstanceId) -> String {
        let disk = &self.machines[CONTROLLER].disk;
        let inst = match self.controller.as_ref().and_then(|c| c.book.instance(id)) {
            Some(inst) => Some(inst.clone()),
            None => crate::controller::store::recall(disk, id)
                .ok()
                .flatten()
                .map(|r| r.instance),
        };
        let mut words = Vec::new();
        if let Some(inst) = inst {
            for p in &inst.partitions {
                words.push(format!(
                    "partition {} on {}: {:?}",
                    p.id,
                    p.node,
                    p.lifecycle().kind()
                ));
            }
            for a in &inst.activities {
                words.push(format!(
                    "{} pass {}: {:?}",
                    a.id,
                    a.pass.0,
                    a.lifecycle().kind()
                ));
            }
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(node) = node else { continue };
            let disk = &self.machines[i + 1].disk;
            let Ok(stored) = crate::node::store::load_instance(disk, id) else {
                continue;
            };
            for run in stored.runs.iter() {
                let records: Vec<String> = run
                    .records()
                    .iter()
                    .map(|r| format!("{} pass {}: {:?}", r.activity, r.pass.0, r.state))
                    .collect();
                let live = node.core.engine().holds(id);
                words.push(format!(
                    "on {} (in memory: {live}): {}",
                    self.name(i + 1),
                    records.join(", ")
                ));
            }
            for item in node.core.engine().items().filter(|i| i.instance == id) {
                let copies: Vec<String> = item
                    .copies
                    .iter()
                    .map(|c| format!("{:?}", c.life()))
                    .collect();
                words.push(format!(
                    "item {} on {}: {copies:?}",
                    item.activity,
                    self.name(i + 1)
                ));
            }
        }
        for user in &self.workload.users {
            let Some(Some(node)) = self.nodes.get(user.device) else {
                continue;
            };
            let shown: Vec<String> = node
                .core
                .desk()
                .worklist(user.id.as_str(), Order::Arrival)
                .into_iter()
                .filter(|e| e.info.instance == id)
                .map(|e| format!("{} {:?} pending {:?}", e.info.activity, e.state, e.pending))
                .collect();
            words.push(format!("{}'s worklist: {shown:?}", user.id));
        }
        words.join("; ")
    }

    /// Why machine `pid` is not idle, if it is not.
    fn busy(&self, pid: usize) -> Option<String> {
        if !self.running(pid) {
            return Some(format!("{} is down", self.name(pid)));
        }
        let (depth, pending, first) = if pid == CONTROLLER {
            let c = self.controller.as_ref()?;
            let first = c.outbox.pending().next().cloned();
            (c.outbox.depth(), c.pending.len(), first)
        } else {
            let n = self.nodes[pid - 1].as_ref()?;
            let first = n.outbox.pending().next().cloned();
            (n.outbox.depth(), n.pending.len(), first)
        };
        if depth > 0 {
            let first = first.map(|m| {
                let to = self
                    .pid_of(&m.to)
                    .map_or_else(|| m.to.to_string(), |p| self.name(p));
                format!(
                    "{} #{} to {to}",
                    m.envelope.message.kind(),
                    m.envelope.id.seq
                )
            });
            return Some(format!(
                "{}'s outbox holds {depth} (first: {})",
                self.name(pid),
                first.unwrap_or_default()
            ));
        }
        (pending > 0).then(|| format!("{} has {pending} events waiting", self.name(pid)))
    }

    /// A user's claim its device still waits for an answer to, if any: once the faults
    /// stopped and the outboxes emptied, every claim was answered by its host, or refused and
    /// answered so by the device itself.
    fn claim_waiting(&self) -> Option<String> {
        for (i, node) in self.nodes.iter().enumerate() {
            let Some(node) = node else { continue };
            if let Some(claim) = node.core.desk().pending().next() {
                return Some(format!(
                    "{}'s {:?} of {} {} on {} waits for an answer since {} ms",
                    claim.user,
                    claim.action,
                    claim.instance,
                    claim.activity,
                    self.name(i + 1),
                    claim.sent_ms
                ));
            }
        }
        None
    }

    /// A user whose device shows other items than their hosts hold for them, if any.
    fn worklists_disagree(&self) -> Option<String> {
        for user in &self.workload.users {
            let node = self.nodes.get(user.device)?.as_ref()?;
            let shown: Seen = node
                .core
                .desk()
                .worklist(user.id.as_str(), Order::Arrival)
                .into_iter()
                .map(|e| {
                    let state = match e.state {
                        EntryState::Offered => "offered",
                        EntryState::Selected => "selected",
                        EntryState::Locked => "locked",
                    };
                    (e.info.instance, e.info.activity, state)
                })
                .collect();
            let mut held: Seen = BTreeSet::new();
            for host in self.nodes.iter().flatten() {
                for item in host.core.engine().items().filter(|i| i.is_open()) {
                    for copy in &item.copies {
                        let state = match copy.life() {
                            CopyLife::Held { holder } if holder.user == user.id => {
                                match holder.hold {
                                    Hold::Selected => "selected",
                                    Hold::Locked => "locked",
                                }
                            }
                            CopyLife::Offered { to } if to.contains(&user.id) => "offered",
                            _ => continue,
                        };
                        held.insert((item.instance, item.activity, state));
                    }
                }
            }
            if shown != held {
                return Some(format!(
                    "{}'s worklist shows {shown:?}, its hosts hold {held:?}",
                    user.id
                ));
            }
        }
        None
    }
}
