//! A user acts on a work item (`Input::Claim`): the host decides (`decide`), once and
//! durably, on a copy of the item as it stands, keeps and publishes the change, and moves the
//! item's activity along with it.
//!
//! The decision works on a copy of the item: a refusal leaves the item as it was.
//!
//! A device's claim names the offer it acted on (`offered_ms`, the item's `ready_ms` there):
//! one made on an earlier offer (the activity was rerun since) is "no longer available", and a
//! repeat of a completion is done only when it says the same.

use mobiwf_people::Directory;
use mobiwf_proto::{Answer, ItemAction, ItemEvent, PauseAction, UserId, Verdict};
use mobiwf_xml_schema::People;

use super::send::Reply;
use super::{Involved, Item};
use crate::lifecycle::{Event, Life};
use crate::{Claimed, Effect, Engine, Refusal};

/// Why work is not taken up while its instance is interrupted.
pub(crate) const INTERRUPTED: &str =
    "its instance is interrupted: nothing new starts until an operator resumes it";

/// What the host decided.
pub(super) enum Decided {
    /// The item changed.
    Changed,
    /// Nothing to do: the claim was granted before (a repeat).
    Unchanged,
    /// Refused, with the answer.
    Refused(Verdict),
}

/// What a decision needs to know.
pub(super) struct Ctx<'a> {
    pub(super) dir: &'a Directory,
    pub(super) people: &'a People,
    pub(super) user: &'a UserId,
    /// The controller sent the claim, or the user is an administrator.
    pub(super) admin: bool,
    pub(super) now_ms: u64,
}

impl Engine {
    /// Decides on a claim. When there is no such work item here (no such activity, no people
    /// extensions, not started), a device gets a `Message::Answer` saying so and the
    /// controller an item event; refused (the node replies so to the sender) only when the
    /// sending node is not a registered device, or the controller names an activity this node
    /// does not run. Every other verdict is the answer sent to the claimant's device, and told
    /// to the controller when it is a refusal.
    pub(crate) fn claim(&mut self, claimed: Claimed, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        let (people, device) = match self.claimed(&claimed) {
            Ok(found) => found,
            Err(refusal @ (Refusal::NotAnItem { .. } | Refusal::UnknownActivity { .. })) => {
                return self.no_item(&claimed, refusal, fx);
            }
            Err(refusal) => return Err(refusal),
        };
        let id = (claimed.claim.instance, claimed.claim.activity);
        let Some(item) = self.host.items.get(&id) else {
            return Ok(());
        };
        let dir = &self.host.directory;
        let ctx = Ctx {
            dir,
            people: &people,
            user: &claimed.claim.user,
            admin: claimed.from.is_none() || dir.is_administrator(claimed.claim.user.as_str()),
            now_ms: self.now_ms(),
        };
        let before = item.involved();
        let mut after = item.clone();
        let decided = self.judge(&claimed, item, &ctx, &mut after);
        let decided = self.pause_claimed(&claimed, decided, &mut after, fx);
        let reply = |verdict: Verdict| {
            device.clone().map(|device| Reply {
                device,
                answer: Answer {
                    user: claimed.claim.user.clone(),
                    request: claimed.claim.request,
                    verdict,
                },
            })
        };
        match decided {
            Decided::Refused(verdict) => {
                let event = ItemEvent::Refused {
                    user: claimed.claim.user.clone(),
                    action: claimed.claim.action.as_str().to_owned(),
                    reason: reason_of(&verdict),
                };
                self.answer(id, reply(verdict), vec![event], fx);
            }
            Decided::Unchanged => self.answer(id, reply(Verdict::Done), Vec::new(), fx),
            Decided::Changed => {
                let reply = reply(Verdict::Done);
                self.fetch_claimed(&claimed, fx);
                self.commit_claim(&claimed, &before, after, reply, fx);
            }
        }
        Ok(())
    }

    /// What the host decides on a claim about `item`: refused (the claimant's device is not
    /// theirs, what they write does not fit, the item was handed away from them, or taking it
    /// up while the instance is interrupted), or `decide`'s verdict with the change made to
    /// `after`.
    fn judge(&self, claimed: &Claimed, item: &Item, ctx: &Ctx, after: &mut Item) -> Decided {
        let decided = match (&claimed.from, self.claimed_writes(claimed)) {
            (Some(node), _) if !self.host.is_device_of(&claimed.claim.user, node) => {
                Decided::Refused(Verdict::Forbidden {
                    reason: format!("{}'s worklist is not on this device", claimed.claim.user),
                })
            }
            (_, Err(reason)) => Decided::Refused(Verdict::Invalid { reason }),
            // Acted on an earlier offer of it (its activity was rerun since): that item is gone.
            (Some(_), _)
                if claimed
                    .claim
                    .offered_ms
                    .is_some_and(|at| at != item.ready_ms) =>
            {
                Decided::Refused(Verdict::Unavailable {
                    reason: "no longer available: it was offered again since you acted on it"
                        .to_owned(),
                })
            }
            (Some(_), _) if let Some(reason) = super::handed_away(item, &claimed.claim.user) => {
                Decided::Refused(Verdict::Unavailable { reason })
            }
            (_, Ok(written)) => super::decide::decide(ctx, after, &claimed.claim.action, written),
        };
        // Taking up work that nobody had taken starts its activity: not while an operator
        // holds the instance.
        let interrupted = self
            .known
            .get(&claimed.claim.instance)
            .is_some_and(|k| k.interrupted);
        let paused = self.is_paused(claimed.claim.instance, claimed.claim.activity);
        match decided {
            Decided::Changed if interrupted && !item.taken() && after.taken() => {
                Decided::Refused(Verdict::Invalid {
                    reason: INTERRUPTED.to_owned(),
                })
            }
            Decided::Changed if paused && !while_paused(&claimed.claim.action) => {
                Decided::Refused(Verdict::Invalid {
                    reason: crate::pause::PAUSED.to_owned(),
                })
            }
            other => other,
        }
    }

    /// A granted pause or resume claim pauses or resumes the item's activity (its holder's
    /// word, told to the controller); refused when the activity cannot be.
    fn pause_claimed(
        &mut self,
        claimed: &Claimed,
        decided: Decided,
        after: &mut Item,
        fx: &mut Vec<Effect>,
    ) -> Decided {
        let action = match (&decided, &claimed.claim.action) {
            (Decided::Changed, ItemAction::Pause) => PauseAction::Pause { kill: false },
            (Decided::Changed, ItemAction::Resume) => PauseAction::Resume,
            _ => return decided,
        };
        let (instance, activity) = (claimed.claim.instance, claimed.claim.activity);
        let Ok(key) = self.run_of(instance, activity) else {
            return decided;
        };
        match self.pause_or_resume(key, activity, action, fx) {
            Ok(outcome) => {
                // The deadline the pause moved, on the item the claim goes on with.
                if let Some(item) = self.host.items.get(&(instance, activity)) {
                    after.due.clone_from(&item.due);
                    after.version = item.version;
                }
                let by = claimed.claim.user.to_string();
                self.tell_pause(instance, activity, by, outcome, fx);
                Decided::Changed
            }
            Err(reason) => Decided::Refused(Verdict::Invalid { reason }),
        }
    }

    /// A granted claim changed the item (to `after`): it is kept and published; when it
    /// finished the last open copy, the activity ends.
    fn commit_claim(
        &mut self,
        claimed: &Claimed,
        before: &Involved,
        mut after: Item,
        reply: Option<Reply>,
        fx: &mut Vec<Effect>,
    ) {
        let id = after.key();
        let ends = after.conclude();
        let (user, action) = (&claimed.claim.user, claimed.claim.action.as_str());
        after.settle(|| format!("nobody left to offer it to after {user}'s {action}"));
        after.version += 1;
        let taken = after.taken();
        self.host.items.insert(id, after);
        self.host.dirty_items.insert(id);
        self.follow_item(id, taken, fx);
        let acted = ItemEvent::Acted {
            user: claimed.claim.user.clone(),
            // Told to the controller: without the values, which never pass through it.
            action: claimed.claim.action.without_data(),
            offline_ms: claimed.claim.offline_ms,
        };
        self.publish(id, before, reply, vec![acted], fx);
        if ends {
            self.finish_item(id, fx);
        }
    }

    /// The activity of a work item goes with it: running once someone took it up, ready
    /// (offered) again when its holder gave it back; then what waits on its state (a rule
    /// in the same partition) is looked at again.
    pub(super) fn follow_item(
        &mut self,
        (instance, activity): super::ItemKey,
        taken: bool,
        fx: &mut Vec<Effect>,
    ) {
        let Ok(key) = self.run_of(instance, activity) else {
            return;
        };
        let life = self.runs.get(&key).and_then(|r| r.life(activity));
        let moved = match (life, taken) {
            (Some(Life::Ready), true) => self.step(key, activity, Event::Start),
            (Some(Life::Running { .. }), false) => self.step(key, activity, Event::Return),
            _ => false,
        };
        if moved {
            self.advance(key, fx);
        }
    }
}

/// What a paused activity's item still takes: its resumption, and an administrator's
/// insert, removal or extension.
fn while_paused(action: &ItemAction) -> bool {
    matches!(
        action,
        ItemAction::Pause
            | ItemAction::Resume
            | ItemAction::Insert
            | ItemAction::Remove
            | ItemAction::Extend { .. }
    )
}

/// The words of a refusal.
fn reason_of(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Done => "done".to_owned(),
        Verdict::Unavailable { reason }
        | Verdict::Forbidden { reason }
        | Verdict::Invalid { reason } => reason.clone(),
    }
}
