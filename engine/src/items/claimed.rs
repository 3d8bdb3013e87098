//! Which work item a claim is about, and the answer to a claim about none: a device is
//! answered so its user does not wait, the controller told through the item's events.

use mobiwf_proto::{
    ActivityId, Answer, DeviceEntry, InstanceId, ItemAnswer, ItemEvent, ItemEvents, Message, Pass,
    Verdict,
};
use mobiwf_xml_schema::People;

use crate::Claimed;
use crate::run::RunKey;
use crate::{Effect, Engine, Refusal, Target};

impl Engine {
    /// A claim on something that is no work item here: a device is answered (so its user
    /// is not left waiting), the controller told through the item's events when the activity
    /// is here; otherwise the claim is refused to its sender.
    pub(super) fn no_item(
        &self,
        claimed: &Claimed,
        refusal: Refusal,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let reason = refusal.to_string();
        let (instance, activity) = (claimed.claim.instance, claimed.claim.activity);
        match &claimed.from {
            Some(node) => {
                let Some(device) = self.host.directory.device_by_node(node) else {
                    return Err(refusal);
                };
                let answer = Answer {
                    user: claimed.claim.user.clone(),
                    request: claimed.claim.request,
                    verdict: Verdict::Invalid { reason },
                };
                fx.push(Effect::Send {
                    to: Target::Partner(device.location.clone()),
                    message: Message::Answer(ItemAnswer {
                        instance,
                        activity,
                        answer,
                    }),
                });
                Ok(())
            }
            None if matches!(refusal, Refusal::NotAnItem { .. }) => {
                fx.push(Effect::Send {
                    to: Target::Controller,
                    message: Message::ItemEvents(ItemEvents {
                        instance,
                        activity,
                        at_ms: self.now_ms(),
                        events: vec![ItemEvent::Refused {
                            user: claimed.claim.user.clone(),
                            action: claimed.claim.action.as_str().to_owned(),
                            reason,
                        }],
                        pass: Some(self.pass_of(instance, activity)),
                    }),
                });
                Ok(())
            }
            None => Err(refusal),
        }
    }

    pub(super) fn claimed(
        &self,
        claimed: &Claimed,
    ) -> Result<(People, Option<DeviceEntry>), Refusal> {
        let (instance, activity) = (claimed.claim.instance, claimed.claim.activity);
        let key = self.run_of(instance, activity)?;
        let not_item = |reason: &str| Refusal::NotAnItem {
            instance,
            activity,
            reason: reason.to_owned(),
        };
        let people = self.people_of(key, activity).ok_or_else(|| {
            not_item("it has no people extensions (anyone on its node completes it)")
        })?;
        if !self.host.items.contains_key(&(instance, activity)) {
            return Err(not_item("it has not started (nobody was offered it yet)"));
        }
        let dir = &self.host.directory;
        let device =
            match &claimed.from {
                None => None,
                Some(node) => Some(dir.device_by_node(node).cloned().ok_or_else(|| {
                    Refusal::UnknownDevice {
                        node: node.clone(),
                        version: dir.version,
                    }
                })?),
            };
        Ok((people, device))
    }

    /// The pass `activity` of `instance` is in here (the first when it is not run here).
    pub(crate) fn pass_of(&self, instance: InstanceId, activity: ActivityId) -> Pass {
        self.run_of(instance, activity)
            .ok()
            .and_then(|k| self.runs.get(&k)?.progress(activity).map(|p| p.pass))
            .unwrap_or_default()
    }

    /// The run that holds `activity` of `instance`.
    pub(crate) fn run_of(
        &self,
        instance: InstanceId,
        activity: ActivityId,
    ) -> Result<RunKey, Refusal> {
        self.keys_of(instance)
            .into_iter()
            .find(|k| {
                self.runs
                    .get(k)
                    .is_some_and(|r| r.activity(activity).is_some())
            })
            .ok_or(Refusal::UnknownActivity { instance, activity })
    }
}
