//! Loops as the controller sees them (the SERIAL_NO of *A lightweight workflow engine based on
//! a relational structure* (He, Li, Jiao, Liu), §3.2.3): every node's word about an activity
//! names its pass. A word of a later pass than the book's starts that pass in the activity's
//! view (it waits again: `ActivityEvent::NewPass`, a history event); a word of an earlier one
//! is stale and changes nothing. An instance is not over while an activity of a loop's body
//! is known in an earlier pass than its loop's final end: its partition's last result is on
//! its way (partitions report each pass, and their words race).

use mobiwf_proto::ActivityRecord;
use mobiwf_xml_schema::{WorkflowDefinition, loop_body};

use crate::history::{Event, Label};
use crate::{ActivityEvent, ActivityView, Instance};

/// What a node's `record` means for the pass of activity view `a`: `None` when it is of an
/// earlier pass (stale: the caller ignores it); else the history event of a new pass it
/// started, if it did (the view then waits again, in that pass, its facts of the earlier pass
/// forgotten).
pub(crate) fn take_pass(a: &mut ActivityView, record: &ActivityRecord) -> Option<Option<Event>> {
    if record.pass < a.pass {
        return None;
    }
    if record.pass == a.pass {
        return Some(None);
    }
    if a.state().is_final() {
        // Only a succeeded or released activity ends a pass; any other final view is the
        // controller's own decision, which a later word does not undo.
        if a.step(&ActivityEvent::NewPass).is_err() {
            return None;
        }
    }
    a.pass = record.pass;
    a.synchronized_ms = None;
    a.ready_ms = None;
    a.started_ms = None;
    a.finished_ms = None;
    a.finished_us = None;
    a.flag = None;
    a.detail = None;
    a.retried = 0;
    a.emergency = false;
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
