//! Loops as the controller sees them (the SERIAL_NO of *A lightweight workflow engine based on
//! a relational structure* (He, Li, Jiao, Liu), §3.2.3): every node's word about an activity
//! names its pass (a report or a partition's result, a request for its task class, a pause).
//! A word of a later pass than the book's starts that pass in the activity's view (it waits
//! again: `ActivityEvent::NewPass`, a history event); a word of an earlier one is stale and
//! changes nothing. An instance is not over while an activity of a loop's body is known in an
//! earlier pass than its loop's final end: its partition's last result is on its way
//! (partitions report each pass, and their words race).
//!
//! The book hears of a pass only from such words, so an activity it knows final may be under
//! way again in a later pass: an operator's pause of it goes to its node, which knows
//! ([`may_run_again`]).

use mobiwf_proto::{ActivityId, ActivityRecord, ActivityState, InstanceId, Pass};
use mobiwf_xml_schema::{WorkflowDefinition, loop_body};

use crate::history::{Event, Label};
use crate::recovery::view_mut;
use crate::{ActivityEvent, ActivityView, Book, Instance};

/// What a node's `record` means for the pass of activity view `a`: `None` when it is of an
/// earlier pass (stale: the caller ignores it); else the history event of a new pass it
/// started, if it did (the view then waits again, in that pass, its facts of the earlier pass
/// forgotten).
pub(crate) fn take_pass(a: &mut ActivityView, record: &ActivityRecord) -> Option<Option<Event>> {
    enter_pass(a, record.pass)
}

impl Book {
    /// A node's word about `activity` of `instance` other than a report names `pass` (a
    /// request for its class, a pause): a later pass than the book's starts in its view, as a
    /// report of it would, with its history event at `now_ms`. False when the word is of an
    /// earlier pass (stale).
    pub(crate) fn word_pass(
        &mut self,
        now_ms: u64,
        instance: InstanceId,
        activity: ActivityId,
        pass: Pass,
    ) -> bool {
        let Some(a) = self
            .instances
            .get_mut(&instance)
            .and_then(|inst| view_mut(inst, activity))
        else {
            return true;
        };
        let Some(new_pass) = enter_pass(a, pass) else {
            return false;
        };
        if let Some(event) = new_pass {
            let node = a.node.clone();
            self.history
                .push(instance, now_ms, Some(activity), node.as_ref(), event);
            self.dirty_instances.insert(instance);
        }
        true
    }
}

/// Whether activity `activity` of `inst`, which the book knows final, may be under way again in
/// a later pass it has not heard of yet: it is in a loop's body whose end has not ended the
/// loop (the end is not final, or it succeeded with the loop's `while` flag before its `max`th
/// pass).
pub(crate) fn may_run_again(
    inst: &Instance,
    def: Option<&WorkflowDefinition>,
    activity: ActivityId,
) -> bool {
    let Some(def) = def else {
        return false;
    };
    def.activities.iter().any(|end| {
        let Some(l) = &end.loop_back else {
            return false;
        };
        let Some(v) = inst.activities.iter().find(|v| v.id == end.id) else {
            return false;
        };
        let again = v.state() == ActivityState::Succeeded
            && v.flag.as_deref() == Some(l.while_flag.as_str())
            && v.pass.0 < l.max;
        (!v.state().is_final() || again) && loop_body(def, l.to, end.id).contains(&activity)
    })
}

/// What a word of `pass` means for activity view `a` (see [`take_pass`]).
fn enter_pass(a: &mut ActivityView, pass: Pass) -> Option<Option<Event>> {
    if pass < a.pass {
        return None;
    }
    if pass == a.pass {
        return Some(None);
    }
    if a.state().is_final() {
        // Only a succeeded or released activity ends a pass; any other final view is the
        // controller's own decision, which a later word does not undo.
        if a.step(&ActivityEvent::NewPass).is_err() {
            return None;
        }
    }
    a.pass = pass;
    a.synchronized_ms = None;
    a.ready_ms = None;
    a.started_ms = None;
    a.finished_ms = None;
    a.finished_us = None;
    a.flag = None;
    a.detail = None;
    a.retried = 0;
    a.emergency = false;
    a.pause_word_ms = None;
    Some(Some(Event::NewPass {
        activity: Label {
            id: a.id,
            name: a.name.clone(),
            pass: a.pass,
        },
    }))
}

/// True when no activity of a loop's body is known in an earlier pass than the loop's end,
/// once that end is final (its last pass is then every body activity's last), but on a
/// partition given up (whose node will not say more).
pub(crate) fn loops_settled(inst: &Instance, def: Option<&WorkflowDefinition>) -> bool {
    let Some(def) = def else {
        return true;
    };
    let pass_of = |id| inst.activities.iter().find(|a| a.id == id);
    def.activities.iter().all(|end| {
        let Some(l) = &end.loop_back else {
            return true;
        };
        let Some(last) = pass_of(end.id).filter(|v| v.state().is_final()) else {
            return true;
        };
        loop_body(def, l.to, end.id)
            .into_iter()
            .filter_map(pass_of)
            .all(|v| v.pass >= last.pass || given_up(inst, v))
    })
}

/// Whether the partition that runs activity view `v` was given up.
fn given_up(inst: &Instance, v: &ActivityView) -> bool {
    v.partition
        .and_then(|p| crate::recovery::partition(inst, p))
        .is_some_and(|p| p.abandoned().is_some())
}
