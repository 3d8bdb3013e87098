//! Pausing one activity (the PAUSING state of *A lightweight workflow engine based on a
//! relational structure* (He, Li, Jiao, Liu)): an operator's `pause` and `resume` of an
//! activity go to the node that runs it (`Message::Pause`), which decides (it alone knows
//! whether the activity is ready or running now) and tells the controller what it did, as it
//! does when the holder of a work item pauses or resumes it (`Message::PauseReport`). The
//! book refuses at once what it knows cannot be: an instance that is over, an activity that
//! ended, is not placed, or (for a resumption) is not paused; the node refuses the rest, and
//! its refusal is in the history. The order goes to the activity's node even when its
//! partition was given up on: that node may run a loop's later pass, and pause it.
//!
//! What the node did moves the activity's lifecycle (`paused`, then `resumed` to waiting or
//! running) and is kept in the history with who and when; a word said before the latest one
//! applied (they may arrive in any order) moves nothing. An activity of a loop's body the
//! book knows final may be under way in a later pass it has not heard of: its pause goes to its
//! node all the same, and the node's word names the pass (`crate::passes`).

use mobiwf_proto::{
    ActivityId, InstanceId, Message, NodeId, PauseAction, PauseOrder, PauseOutcome, PauseReport,
};

use crate::history::Event;
use crate::passes::may_run_again;
use crate::recovery::{label_text, placed_on, view, view_mut};
use crate::{
    ActivityEvent, ActivityLifecycle, Applied, Book, BookError, Effect, PausedBy, Subject,
};

impl Book {
    /// An operator pauses or resumes `activity` of instance `id`: the order goes to its node.
    pub(crate) fn pause(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        activity: ActivityId,
        action: PauseAction,
        by: String,
    ) -> Result<Applied, BookError> {
        let inst = self
            .instances
            .get(&id)
            .ok_or(BookError::UnknownInstance(id))?;
        let what = action.as_str();
        let refuse = |why: String| Err(BookError::Pause(format!("cannot {what} {why}")));
        if inst.state().is_final() {
            return refuse(format!(
                "an activity of instance {id}: the instance is {}",
                inst.state().as_str()
            ));
        }
        let Some(a) = view(inst, activity) else {
            return refuse(format!(
                "activity {activity}: instance {id} has no such activity (`mobiwf-controller \
                 status {id}` lists them)"
            ));
        };
        let name = label_text(inst, activity);
        // An activity of a loop's body may be under way in a pass the book has not heard of:
        // its node knows.
        let again = || may_run_again(inst, self.definitions.get(&id).map(AsRef::as_ref), activity);
        match (a.lifecycle(), action) {
            (l, PauseAction::Pause { .. }) if l.is_final() && again() => {}
            (l, _) if l.is_final() => {
                return refuse(format!(
                    "{name} of instance {id}: it is {}; only a ready or running activity \
                     (or a selected work item) can be paused",
                    a.state().as_str()
                ));
            }
            (ActivityLifecycle::Paused { .. }, PauseAction::Pause { .. }) => {
                return refuse(format!(
                    "{name} of instance {id}: it is paused already; `mobiwf-controller resume \
                     {id} {activity}` resumes it"
                ));
            }
            (l, PauseAction::Resume) if !matches!(l, ActivityLifecycle::Paused { .. }) => {
                return refuse(format!(
                    "{name} of instance {id}: it is not paused (it is {})",
                    a.state().as_str()
                ));
            }
            _ => {}
        }
        // A given-up partition's node is told too: a loop's later pass it runs is paused and
        // resumed there (what it paused, only it resumes).
        let Some((node, partition)) = placed_on(inst, &self.nodes, activity) else {
            return refuse(format!(
                "{name} of instance {id}: it is not placed on a registered node that runs it"
            ));
        };
        let send = Effect::Send {
            to: node.peer.clone(),
            addrs: node.addrs.clone(),
            message: Message::Pause(PauseOrder {
                instance: id,
                activity,
                action,
                by: by.clone(),
            }),
        };
        let partner = inst
            .partitions
            .iter()
            .find(|p| p.id == partition)
            .map(|p| p.node.clone());
        let what = Event::PauseAsked { action, by };
        self.history
            .push(id, now_ms, Some(activity), partner.as_ref(), what);
        self.dirty_instances.insert(id);
        Ok(Applied {
            effects: vec![send],
            instance: None,
        })
    }

    /// A node says an activity of its partition was paused or resumed, or that an
    /// operator's order was refused.
    pub(crate) fn pause_report(
        &mut self,
        peer: &NodeId,
        report: &PauseReport,
    ) -> Result<Applied, BookError> {
        let id = report.instance;
        let inst = self
            .instances
            .get(&id)
            .ok_or(BookError::UnknownInstance(id))?;
        let partition = view(inst, report.activity)
            .and_then(|a| a.partition)
            .ok_or(BookError::Unexpected("pause_report"))?;
        crate::check_sender(inst, peer, partition)?;
        // A pause of a loop's later pass starts that pass in the activity's view; one of an
        // earlier pass than the view's changes nothing but the history.
        let current = self.word_pass(report.at_ms, id, report.activity, report.pass);
        let inst = self
            .instances
            .get_mut(&id)
            .ok_or(BookError::UnknownInstance(id))?;
        let event = match &report.outcome {
            PauseOutcome::Paused { state, .. } => Some(ActivityEvent::Paused {
                pause: PausedBy {
                    by: report.by.clone(),
                    since_ms: report.at_ms,
                },
                state: *state,
            }),
            PauseOutcome::Resumed { state, .. } => Some(ActivityEvent::Resumed(*state)),
            PauseOutcome::Refused { .. } => None,
        };
        if let Some(event) = event.filter(|_| current)
            && let Some(a) = view_mut(inst, report.activity)
        {
            // A word about an activity that ended meanwhile (its node's end came first)
            // changes nothing, nor does one its node said before the latest word it applied
            // (a resumption overtaken by the next pause would leave the activity paused on its
            // node and not in the book, which then refuses the operator's resumption): the
            // history keeps them. Words said in the same millisecond go in arrival order.
            let stale = a.pause_word_ms.is_some_and(|last| report.at_ms < last);
            if !a.lifecycle().is_final() && !stale {
                a.pause_word_ms = Some(report.at_ms);
                // Paused again, or resumed while the book had it going (its earlier words
                // overtaken): it is where the word says already.
                let paused = matches!(a.lifecycle(), ActivityLifecycle::Paused { .. });
                if paused != matches!(event, ActivityEvent::Paused { .. }) {
                    let step = a.step(&event);
                    self.refused
                        .report(id, Subject::Activity(report.activity), step);
                }
            }
        }
        let partner = inst
            .partitions
            .iter()
            .find(|p| p.id == partition)
            .map(|p| p.node.clone());
        let what = Event::Pause {
            by: report.by.clone(),
            outcome: report.outcome.clone(),
        };
        self.history.push(
            id,
            report.at_ms,
            Some(report.activity),
            partner.as_ref(),
            what,
        );
        self.dirty_instances.insert(id);
        Ok(Applied {
            effects: Vec::new(),
            instance: None,
        })
    }
}
