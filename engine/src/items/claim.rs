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
use mobiwf_proto::{
    ActivityId, Answer, InstanceId, ItemAction, ItemEvent, NodeId, UserId, Verdict,
};
use mobiwf_xml_schema::People;

use super::send::Reply;
use super::status::overall;
use super::{Involved, Item};
use crate::lifecycle::{Event, Life};
use crate::{Effect, Engine, Refusal};

/// Why work is not taken up while its instance is interrupted.
pub(crate) const INTERRUPTED: &str =
    "its instance is interrupted: nothing new starts until an operator resumes it";

/// A user's action on a work item, as [`crate::Input::Claim`] says it.
pub(crate) struct Claim {
    pub(crate) instance: InstanceId,
    pub(crate) activity: ActivityId,
    pub(crate) user: UserId,
    pub(crate) action: ItemAction,
    pub(crate) request: u64,
    /// The device it came from; `None` from the controller.
    pub(crate) from: Option<NodeId>,
    /// The files a completion names whose content is not here, and where to fetch them.
    pub(crate) missing: Vec<crate::data::Missing>,
    /// When the user acted, when they did it disconnected.
    pub(crate) offline_ms: Option<u64>,
    /// Which offer of the item the user acted on (`Item::ready_ms` as their device saw it).
    pub(crate) offered_ms: Option<u64>,
}

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
    pub(crate) fn claim(&mut self, claim: Claim, fx: &mut Vec<Effect>) -> Result<(), Refusal> {
        let (people, device) = match self.claimed(&claim) {
            Ok(found) => found,
            Err(refusal @ (Refusal::NotAnItem { .. } | Refusal::UnknownActivity { .. })) => {
                return self.no_item(&claim, refusal, fx);
            }
            Err(refusal) => return Err(refusal),
        };
        let id = (claim.instance, claim.activity);
        let Some(item) = self.host.items.get(&id) else {
            return Ok(());
        };
        let dir = &self.host.directory;
        let ctx = Ctx {
            dir,
            people: &people,
            user: &claim.user,
            admin: claim.from.is_none() || dir.is_administrator(claim.user.as_str()),
            now_ms: self.now_ms(),
        };
        let before = item.involved();
        let mut after = item.clone();
        let decided = self.judge(&claim, item, &ctx, &mut after);
        let reply = |verdict: Verdict| {
            device.clone().map(|device| Reply {
                device,
                answer: Answer {
                    user: claim.user.clone(),
                    request: claim.request,
                    verdict,
                },
            })
        };
        match decided {
            Decided::Refused(verdict) => {
                let event = ItemEvent::Refused {
                    user: claim.user.clone(),
                    action: claim.action.as_str().to_owned(),
                    reason: reason_of(&verdict),
                };
                self.answer(id, reply(verdict), vec![event], fx);
            }
            Decided::Unchanged => self.answer(id, reply(Verdict::Done), Vec::new(), fx),
            Decided::Changed => {
                let reply = reply(Verdict::Done);
                self.fetch_claimed(&claim, fx);
                self.commit_claim(&claim, &before, after, reply, fx);
            }
        }
        Ok(())
    }

    /// What the host decides on a claim about `item`: refused (the claimant's device is not
    /// theirs, what they write does not fit, the item was handed away from them, or taking it
    /// up while the instance is interrupted), or `decide`'s verdict with the change made to
    /// `after`.
    fn judge(&self, claim: &Claim, item: &Item, ctx: &Ctx, after: &mut Item) -> Decided {
        let decided = match (&claim.from, self.claimed_writes(claim)) {
            (Some(node), _) if !self.host.is_device_of(&claim.user, node) => {
                Decided::Refused(Verdict::Forbidden {
                    reason: format!("{}'s worklist is not on this device", claim.user),
                })
            }
            (_, Err(reason)) => Decided::Refused(Verdict::Invalid { reason }),
            // Acted on an earlier offer of it (its activity was rerun since): that item is gone.
            (Some(_), _) if claim.offered_ms.is_some_and(|at| at != item.ready_ms) => {
                Decided::Refused(Verdict::Unavailable {
                    reason: "no longer available: it was offered again since you acted on it"
                        .to_owned(),
                })
            }
            (Some(_), _) if let Some(reason) = super::handed_away(item, &claim.user) => {
                Decided::Refused(Verdict::Unavailable { reason })
            }
            (_, Ok(written)) => super::decide::decide(ctx, after, &claim.action, written),
        };
        // Taking up work that nobody had taken starts its activity: not while an operator
        // holds the instance.
        let interrupted = self
            .known
            .get(&claim.instance)
            .is_some_and(|k| k.interrupted);
        match decided {
            Decided::Changed if interrupted && !item.taken() && after.taken() => {
                Decided::Refused(Verdict::Invalid {
                    reason: INTERRUPTED.to_owned(),
                })
            }
            other => other,
        }
    }

    /// A granted claim changed the item (to `after`): it is kept and published; when it
    /// finished the last open copy, the activity ends.
    fn commit_claim(
        &mut self,
        claim: &Claim,
        before: &Involved,
        mut after: Item,
        reply: Option<Reply>,
        fx: &mut Vec<Effect>,
    ) {
        let id = after.key();
        // It ends when its last open copy is done; when every copy was taken off its users'
        // worklists instead, it waits, unassigned, for an insert or a newer directory.
        let ends = after.is_open() && !after.any_open_copy() && after.any_done_copy();
        if ends {
            after.status = overall(&after);
        }
        let (user, action) = (&claim.user, claim.action.as_str());
        after.settle(|| format!("nobody left to offer it to after {user}'s {action}"));
        after.version += 1;
        let taken = after.taken();
        self.host.items.insert(id, after);
        self.host.dirty_items.insert(id);
        self.follow_item(id, taken, fx);
        let acted = ItemEvent::Acted {
            user: claim.user.clone(),
            // Told to the controller: without the values, which never pass through it.
            action: claim.action.without_data(),
            offline_ms: claim.offline_ms,
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

/// The words of a refusal.
fn reason_of(verdict: &Verdict) -> String {
    match verdict {
        Verdict::Done => "done".to_owned(),
        Verdict::Unavailable { reason }
        | Verdict::Forbidden { reason }
        | Verdict::Invalid { reason } => reason.clone(),
    }
}
