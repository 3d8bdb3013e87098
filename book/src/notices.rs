//! Notices to an instance's responsible user: the instance started (was submitted), an activity of
//! it failed or was cancelled, the instance ended. Each is tied to a transition that happens once
//! (an instance joining or leaving the live set, an activity becoming final, which it never stops
//! being), so a report that comes again tells nobody twice. A notice goes to the user's device
//! (`Message::Notice`); a user without a registered device gets a history event instead.

use mobiwf_proto::{ActivityId, InstanceId, Message, NodeId, Notice, Tell};
use mobiwf_xml_schema::UserId;

use crate::history::Event;
use crate::recovery::label_text;
use crate::{ActivityLifecycle, Book, Effect, Instance, InstanceState};

/// The kind of notice sent when an instance is submitted.
pub(crate) const STARTED: &str = "started";
/// The kind of notice sent when an activity fails or is cancelled.
pub(crate) const FAILED: &str = "failed";
/// The kind of notice sent when an instance reaches its final state.
pub(crate) const ENDED: &str = "ended";

impl Book {
    /// Tells instance `id`'s responsible user (if it has one) something: a notice to their
    /// device, or, when they have none registered, a history event saying so.
    pub(crate) fn notice(
        &mut self,
        now_ms: u64,
        id: InstanceId,
        activity: Option<ActivityId>,
        kind: &str,
        text: String,
        effects: &mut Vec<Effect>,
    ) {
        let Some(user) = self.instances.get(&id).and_then(|i| i.responsible.clone()) else {
            return;
        };
        match self.device_of(&user) {
            Ok((to, addrs)) => effects.push(Effect::Send {
                to,
                addrs,
                message: Message::Notice(Tell {
                    notice: Notice {
                        user,
                        instance: id,
                        activity,
                        kind: kind.to_owned(),
                        text,
                        at_ms: now_ms,
                    },
                }),
            }),
            Err(why) => {
                let what = Event::NoticeUndelivered {
                    user,
                    notice: kind.to_owned(),
                    text,
                    why,
                };
                self.history.push(id, now_ms, activity, None, what);
            }
        }
    }

    /// Where a user's device is reached (its peer id and addresses), or why it cannot be.
    pub(crate) fn device_of(&self, user: &UserId) -> Result<(NodeId, Vec<String>), String> {
        let dir = &self.directory;
        let which = crate::directory::which(dir);
        let Some(u) = dir.user(user.as_str()) else {
            return Err(format!("no user '{user}' in {which}"));
        };
        let Some(device) = u.device.as_deref() else {
            return Err(format!("user '{user}' has no device in {which}"));
        };
        let Some(entry) = dir.device_of(user.as_str()) else {
            return Err(format!(
                "device '{device}' of user '{user}' has not registered with the controller"
            ));
        };
        let addrs = self
            .nodes
            .get(&entry.node)
            .map_or_else(|| vec![entry.location.to_string()], |n| n.addrs.clone());
        Ok((entry.node.clone(), addrs))
    }
}

/// The activities that became failed or cancelled since `was_final` (their finality before,
/// in order), with the notice's words. An operator's cancel is not noticed activity by
/// activity: the instance's end says it.
pub(crate) fn newly_ended(inst: &Instance, was_final: &[bool]) -> Vec<(ActivityId, String)> {
    inst.activities
        .iter()
        .zip(was_final)
        .filter(|(a, was)| !**was && a.state().is_final())
        .filter_map(|(a, _)| {
            let verb = match a.lifecycle() {
                ActivityLifecycle::Failed { .. } => "failed",
                ActivityLifecycle::Cancelled => "was cancelled",
                _ => return None,
            };
            let why = a.detail.as_deref().unwrap_or("no reason given");
            let text = format!(
                "{} of instance {} {verb}: {why}",
                label_text(inst, a.id),
                inst.id
            );
            Some((a.id, text))
        })
        .collect()
}

/// An instance as notices name it: `instance 3 (workflow 77: description)`.
fn named(inst: &Instance) -> String {
    if inst.description.is_empty() {
        format!("instance {} (workflow {})", inst.id, inst.workflow)
    } else {
        format!(
            "instance {} (workflow {}: {})",
            inst.id, inst.workflow, inst.description
        )
    }
}

/// The words of the notice that an instance started.
pub(crate) fn started_text(inst: &Instance) -> String {
    format!("{} started; you are responsible for it", named(inst))
}

/// The words of the notice that an instance ended.
pub(crate) fn ended_text(inst: &Instance) -> String {
    let why = inst.detail.as_deref().unwrap_or("no reason given");
    match inst.state() {
        InstanceState::Succeeded => format!("{} succeeded", named(inst)),
        InstanceState::Cancelled => format!("{} was cancelled: {why}", named(inst)),
        InstanceState::Compensated => {
            format!("{} was compensated (its work undone): {why}", named(inst))
        }
        InstanceState::CompensationFailed => {
            format!("{} could not be compensated: {why}", named(inst))
        }
        _ => format!("{} failed: {why}", named(inst)),
    }
}
