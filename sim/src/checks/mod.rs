//! The invariants, checked after every step on what the step changed, and once faults stop on
//! everything (`settled`):
//!
//! - a message is applied at most once by its receiver (once its group is written);
//! - an activity's command try starts once, on one node (its run directory is claimed once,
//!   and no other node runs the same try of the same activity);
//! - nothing final changes: an activity's final state on its node, for its pass; an activity's
//!   final state at the controller (but the changes its table allows: a node's own word after
//!   an operator's cancel, a failed one replaced by its contingency activity); an instance's
//!   final state (but a failed or cancelled one going on to its compensations). An operator's
//!   rerun the controller accepted lets the instance leave its failed state once, and each
//!   activity it names leave its failed or cancelled state once at the controller and once on
//!   each node that ran it (its new tries count on, so a try's run is still started once);
//! - no work item has two holders (a copy held or done by two users at once), and no item is
//!   completed twice; its deadline's thresholds pass on time, not before, and at its hand-over
//!   the responsible user holds it (`deadlines`);
//! - a command started is never new work of an interrupted or cancelled instance or of a
//!   paused activity (the core's state right after the input that asked for it);
//! - no two activities of conflicting task classes hold the synchronization manager's grant at
//!   once, and no two of their commands run at once on the mesh's machines;
//! - once faults stop, within a bound: every instance is final, every outbox empty, no
//!   command runs, no user's claim waits for an answer, and every user's worklist on their
//!   device agrees with the items' hosts.

pub mod deadlines;

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_book::{Instance, InstanceState, SyncRecord};
use mobiwf_engine::{CopyLife, Item, RunKey};
use mobiwf_proto::{ActivityId, ActivityRecord, InstanceId, MessageId};
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
    applied: BTreeSet<(Pid, MessageId)>,
    /// The deadlines' memory.
    pub deadlines: deadlines::Deadlines,
    /// How many reruns the controller accepted that name each activity.
    reruns: BTreeMap<(InstanceId, ActivityId), u32>,
    /// How many times each activity run on a node left a final state for a rerun.
    node_reruns: BTreeMap<(Pid, RunKey, ActivityId, u32), u32>,
    /// How many reruns may still take each instance out of its failed state.
    instance_reruns: BTreeMap<InstanceId, u32>,
    /// Messages refused by their receivers, in words (worth a look, not a violation).
    pub refusals: Vec<String>,
}

impl Checks {
    /// Something broke.
    pub fn fail(&mut self, what: String) {
        self.violations.push(what);
    }

    /// Machine `pid` wrote a group that applied the messages `ids`: none applied before.
    pub fn applied(&mut self, pid: Pid, ids: &[MessageId]) {
        for id in ids {
            if !self.applied.insert((pid, id.clone())) {
                let what = format!(
                    "a message applied twice on machine {pid}: #{} of {} (incarnation {})",
                    id.seq, id.origin, id.incarnation
                );
                self.fail(what);
            }
        }
    }

    /// The controller accepted an operator's rerun of `instance`: `activities` go back to
    /// waiting.
    pub fn rerun(&mut self, instance: InstanceId, activities: &[ActivityId]) {
        for &a in activities {
            *self.reruns.entry((instance, a)).or_default() += 1;
        }
        self.ctl_final
            .retain(|(i, a, _), _| *i != instance || !activities.contains(a));
        *self.instance_reruns.entry(instance).or_default() += 1;
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

    /// Node `pid` wrote these runs and items at `now_ms` on its clock.
    pub fn node_wrote(
        &mut self,
        pid: Pid,
        runs: &[(RunKey, Vec<ActivityRecord>)],
        items: &[Item],
        now_ms: u64,
    ) {
        for (key, records) in runs {
            for r in records {
                self.node_record(pid, *key, r);
            }
        }
        for item in items {
            self.item(pid, item);
            if let Some(what) = self.deadlines.wrote(pid, item, now_ms) {
                self.fail(what);
            }
        }
    }

    fn node_record(&mut self, pid: Pid, key: RunKey, r: &ActivityRecord) {
        let id = (pid, key, r.activity, r.pass.0);
        let state = format!("{:?}", r.state);
        let Some(was) = self.node_final.get(&id) else {
            if r.state.is_final() {
                self.node_final.insert(id, state);
            }
            return;
        };
        if *was == state {
            return;
        }
        // It changed (rare): only now is what it was copied out.
        let was = was.clone();
        if self.rerun_on_node(id, &was) {
            self.node_final.remove(&id);
            if r.state.is_final() {
                self.node_final.insert(id, state);
            }
            return;
        }
        let what = format!(
            "a final state changed on machine {pid}: instance {} activity {} (pass {}) was \
             {was}, is {state}",
            key.instance, r.activity, r.pass.0
        );
        self.fail(what);
    }

    /// Whether an activity run on a node whose final state was `was` may leave it now: it
    /// failed or was cancelled, and a rerun the controller accepted names it that this run
    /// did not take yet (then it is taken).
    fn rerun_on_node(&mut self, id: (Pid, RunKey, ActivityId, u32), was: &str) -> bool {
        let (_, key, activity, _) = id;
        let allowed = self
            .reruns
            .get(&(key.instance, activity))
            .copied()
            .unwrap_or(0);
        let taken = self.node_reruns.entry(id).or_default();
        if !matches!(was, "Failed" | "Cancelled") || *taken >= allowed {
            return false;
        }
        *taken += 1;
        true
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
                && !(was == InstanceState::Failed && self.take_instance_rerun(inst.id))
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

    /// Whether a rerun the controller accepted may take `instance` out of its failed state
    /// (then it is taken).
    fn take_instance_rerun(&mut self, instance: InstanceId) -> bool {
        match self.instance_reruns.get_mut(&instance) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
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

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_proto::{ActivityState, PartitionId, Pass};

    fn record(state: ActivityState) -> ActivityRecord {
        ActivityRecord {
            activity: ActivityId(2),
            state,
            synchronized_ms: None,
            ready_ms: None,
            started_ms: None,
            finished_ms: None,
            started_us: None,
            finished_us: None,
            detail: None,
            emergency: false,
            retried: 0,
            flag: None,
            pass: Pass::default(),
        }
    }

    fn key() -> RunKey {
        RunKey {
            instance: InstanceId(1),
            partition: PartitionId(1),
        }
    }

    fn dir(attempt: u32) -> RunDir {
        RunDir {
            instance: InstanceId(1),
            partition: PartitionId(1),
            activity: ActivityId(2),
            kind: RunKind::Try(attempt),
        }
    }

    #[test]
    fn a_final_state_that_changes_on_its_node_is_caught() {
        let mut checks = Checks::default();
        for state in [ActivityState::Running, ActivityState::Succeeded] {
            checks.node_wrote(1, &[(key(), vec![record(state)])], &[], 0);
        }
        assert!(checks.violations.is_empty(), "{:?}", checks.violations);
        checks.node_wrote(1, &[(key(), vec![record(ActivityState::Failed)])], &[], 0);
        assert_eq!(checks.violations.len(), 1, "{:?}", checks.violations);
        // Another machine's run of the same activity is its own.
        checks.node_wrote(2, &[(key(), vec![record(ActivityState::Failed)])], &[], 0);
        assert_eq!(checks.violations.len(), 1);
    }

    #[test]
    fn a_message_applied_twice_by_its_receiver_is_caught() {
        let mut checks = Checks::default();
        let id = |seq| MessageId {
            origin: mobiwf_proto::NodeId::new("a"),
            incarnation: 1,
            seq,
        };
        checks.applied(1, &[id(1), id(2)]);
        // Another receiver applies it once too.
        checks.applied(2, &[id(1)]);
        assert!(checks.violations.is_empty(), "{:?}", checks.violations);
        checks.applied(1, &[id(3), id(2)]);
        assert_eq!(checks.violations.len(), 1, "{:?}", checks.violations);
    }

    #[test]
    fn a_try_started_twice_and_conflicting_classes_at_once_are_caught() {
        let mut checks = Checks::default();
        checks.started(1, dir(0), None, 10);
        checks.started(1, dir(1), None, 20);
        assert!(checks.violations.is_empty());
        checks.started(2, dir(1), None, 30);
        assert_eq!(checks.violations.len(), 1, "{:?}", checks.violations);

        let doc = "<classes><class id=\"press\"><conflicts>press</conflicts></class>\
                   <class id=\"paint\"/></classes>";
        let mut checks = Checks {
            classes: mobiwf_xml_schema::load_classes(doc.as_bytes())
                .expect("a class document")
                .value,
            ..Checks::default()
        };
        let other = |n| RunDir {
            instance: InstanceId(n),
            ..dir(0)
        };
        checks.started(1, other(1), Some(ClassName::from("paint")), 10);
        checks.started(2, other(2), Some(ClassName::from("paint")), 11);
        checks.started(1, other(3), Some(ClassName::from("press")), 12);
        assert!(checks.violations.is_empty(), "{:?}", checks.violations);
        checks.started(2, other(4), Some(ClassName::from("press")), 13);
        assert_eq!(checks.violations.len(), 1);
        checks.stopped(1, other(3), 14);
        checks.started(2, other(5), Some(ClassName::from("press")), 15);
        assert_eq!(checks.violations.len(), 2, "4 runs still");
        checks.stopped(2, other(4), 16);
        checks.started(1, other(6), Some(ClassName::from("press")), 17);
        assert_eq!(checks.violations.len(), 3, "5 runs still");
        assert_eq!(checks.commands_running(), 4);
    }
}
