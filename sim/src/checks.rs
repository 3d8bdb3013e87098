//! The invariants, checked after every step on what the step changed, and once faults stop on
//! everything (`settled`):
//!
//! - an activity's command try starts once, on one node (its run directory is claimed once,
//!   and no other node runs the same try of the same activity);
//! - nothing final changes: an activity's final state on its node, for its pass; an activity's
//!   final state at the controller (but the changes its table allows: a node's own word after
//!   an operator's cancel, a failed one replaced by its contingency activity); an instance's
//!   final state (but a failed or cancelled one going on to its compensations);
//! - no work item has two holders (a copy held or done by two users at once), and no item is
//!   completed twice;
//! - no two activities of conflicting task classes hold the synchronization manager's grant at
//!   once, and no two of their commands run at once on the mesh's machines;
//! - once faults stop, within a bound: every instance is final, every outbox empty, no
//!   command runs, and every user's worklist on their device agrees with the items' hosts.

use std::collections::BTreeMap;

use mobiwf_book::{Instance, InstanceState, SyncRecord};
use mobiwf_engine::{CopyLife, Item, RunKey};
use mobiwf_proto::{ActivityId, ActivityRecord, InstanceId};
use mobiwf_xml_schema::{ClassDocument, ClassName};

use crate::node::executor::{RunDir, RunKind};
use crate::outbox::Outgoing;
use crate::world::Pid;

/// The invariants' memory of what they saw, and what broke.
#[derive(Debug, Default)]
pub struct Checks {
    /// What broke, in words, first first.
    pub violations: Vec<String>,
    /// The class document the classes are decided by.
    pub classes: ClassDocument,
    node_final: BTreeMap<(Pid, RunKey, ActivityId, u32), String>,
    ctl_final: BTreeMap<(InstanceId, ActivityId, u32), String>,
    /// The state each instance was last written with.
    pub instances: BTreeMap<InstanceId, InstanceState>,
    running: BTreeMap<(Pid, RunDir), (Option<ClassName>, u64)>,
    tries: BTreeMap<(InstanceId, ActivityId, RunKind), Pid>,
    /// Messages refused by their receivers, in words (worth a look, not a violation).
    pub refusals: Vec<String>,
}

impl Checks {
    /// Something broke.
    pub fn fail(&mut self, what: String) {
        self.violations.push(what);
    }

    /// A command started on machine `pid` (its class, if any) at `now`.
    pub fn started(&mut self, pid: Pid, dir: RunDir, class: Option<ClassName>, now: u64) {
        let key = (dir.instance, dir.activity, dir.kind);
        if let Some(&other) = self.tries.get(&key) {
            self.fail(format!(
                "the effect twice: {dir} started on machine {pid}, already started on machine \
                 {other}"
            ));
        }
        self.tries.insert(key, pid);
        if let Some(class) = &class {
            let clash = self.running.iter().find(|((p, d), (c, _))| {
                (*p, *d) != (pid, dir)
                    && c.as_ref().is_some_and(|c| self.classes.conflict(class, c))
            });
            if let Some(((p, d), (c, since))) = clash {
                let what = format!(
                    "conflicting classes at once: {dir} ({class}) started on machine {pid} while \
                     {d} ({}) runs on machine {p} since {since} µs",
                    c.as_ref().map_or("", |c| c.as_str())
                );
                self.fail(what);
            }
        }
        self.running.insert((pid, dir), (class, now));
    }

    /// A command on machine `pid` stopped (ended, killed, its machine down).
    pub fn stopped(&mut self, pid: Pid, dir: RunDir, _now: u64) {
        self.running.remove(&(pid, dir));
    }

    /// Commands running on the machines.
    pub fn commands_running(&self) -> usize {
        self.running.len()
    }

    /// Node `pid` wrote these runs and items.
    pub fn node_wrote(&mut self, pid: Pid, runs: &[(RunKey, Vec<ActivityRecord>)], items: &[Item]) {
        for (key, records) in runs {
            for r in records {
                self.node_record(pid, *key, r);
            }
        }
        for item in items {
            self.item(pid, item);
        }
    }

    fn node_record(&mut self, pid: Pid, key: RunKey, r: &ActivityRecord) {
        let id = (pid, key, r.activity, r.pass.0);
        let state = format!("{:?}", r.state);
        match self.node_final.get(&id) {
            Some(was) if *was != state => {
                let what = format!(
                    "a final state changed on machine {pid}: instance {} activity {} (pass {}) \
                     was {was}, is {state}",
                    key.instance, r.activity, r.pass.0
                );
                self.fail(what);
            }
            Some(_) => {}
            None if r.state.is_final() => {
                self.node_final.insert(id, state);
            }
            None => {}
        }
    }

    fn item(&mut self, pid: Pid, item: &Item) {
        let held: Vec<String> = item
            .copies
            .iter()
            .filter_map(|c| match c.life() {
                CopyLife::Held { holder } => Some(holder.user.to_string()),
                _ => None,
            })
            .collect();
        if held.len() > 1 {
            let what = format!(
                "two holders of one item on machine {pid}: instance {} activity {}: {held:?}",
                item.instance, item.activity
            );
            self.fail(what);
        }
        let done = item.copies.iter().filter(|c| c.done().is_some()).count();
        if done > 1 {
            let what = format!(
                "an item completed twice on machine {pid}: instance {} activity {}",
                item.instance, item.activity
            );
            self.fail(what);
        }
    }

    /// The controller wrote these instances.
    pub fn controller_wrote(&mut self, instances: &[Instance]) {
        for inst in instances {
            for a in &inst.activities {
                let kind = format!("{:?}", a.lifecycle().kind());
                let id = (inst.id, a.id, a.pass.0);
                match self.ctl_final.get(&id) {
                    Some(was) if *was != kind && !allowed(was, &kind) => {
                        let what = format!(
                            "a final state changed at the controller: instance {} activity {} \
                             (pass {}) was {was}, is {kind}",
                            inst.id, a.id, a.pass.0
                        );
                        self.fail(what);
                    }
                    _ if a.state().is_final() => {
                        self.ctl_final.insert(id, kind);
                    }
                    _ => {}
                }
            }
            let state = inst.state();
            if let Some(&was) = self.instances.get(&inst.id)
                && was.is_final()
                && was != state
                && !(matches!(was, InstanceState::Failed | InstanceState::Cancelled)
                    && state == InstanceState::Compensating)
            {
                let what = format!(
                    "a final instance changed: {} was {}, is {}",
                    inst.id,
                    was.as_str(),
                    state.as_str()
                );
                self.fail(what);
            }
            self.instances.insert(inst.id, state);
        }
    }

    /// The synchronization manager's holders: no two of conflicting classes.
    pub fn holders(&mut self, sync: &SyncRecord) {
        for (i, a) in sync.holders.iter().enumerate() {
            for b in &sync.holders[i + 1..] {
                if self.classes.conflict(&a.class, &b.class) {
                    let what = format!(
                        "conflicting classes held at once: {:?} ({}) and {:?} ({})",
                        a.ticket, a.class, b.ticket, b.class
                    );
                    self.fail(what);
                }
            }
        }
    }

    /// A receiver refused a message (kept for the report).
    pub fn refused(&mut self, sender: &str, msg: &Outgoing, reason: &str) {
        self.refusals.push(format!(
            "{sender}: {} #{} refused: {reason}",
            msg.envelope.message.kind(),
            msg.envelope.id.seq
        ));
    }
}

/// The changes of a final activity the controller's table allows: a node's own word after an
/// operator's cancel, a failed one replaced by its contingency activity (or blocked because
/// that one is in use).
fn allowed(was: &str, is: &str) -> bool {
    match was {
        "CancelledByOperator" => matches!(is, "Succeeded" | "Failed" | "Cancelled" | "Skipped"),
        "Failed" => matches!(is, "Replaced" | "BlockedInstead"),
        _ => false,
    }
}
