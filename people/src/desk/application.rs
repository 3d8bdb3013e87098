//! Semi-automatic work items (*A Workflow Management System for Mobile Devices*; WorkToDo's
//! `APPLICATION`): the user selects the item, and this device runs its application with what
//! the item reads; the application's exit 0 completes the item with what it wrote, as the
//! user's completion would; another exit leaves the item selected and tells the user, who may
//! complete it by hand.
//!
//! The desk decides what is certain here: a select of an item whose application is for
//! another operating system than this device's is refused; which items' applications run now
//! ([`Desk::to_launch`]: selected by a user of this device, with the item's inputs copied, not
//! ended yet); what an application's end means ([`DeskInput::ApplicationEnded`]: one completion
//! claim, or one notice; the item keeps that its application ended, so that it never runs
//! again on this device); and what a disconnection takes along
//! ([`Desk::applications_to_take`]). The daemon runs the applications (at most once each, as
//! commands) and kills one whose item is no longer selected by its user here (the user
//! completed or released it by hand, or it was taken away).
//!
//! [`DeskInput::ApplicationEnded`]: super::DeskInput::ApplicationEnded

use std::collections::BTreeSet;

use mobiwf_proto::{Hold, ItemAction, ItemApplication, Notice, UserId, Verdict, Written};
use mobiwf_xml_schema::ApplicationId;
use serde::{Deserialize, Serialize};

use super::{Applied, Desk, DeskItem, ItemKey, LocalClaim};
use crate::Directory;
use mobiwf_proto::NodeName;

/// What this device is, for the applications of its items: its operating system and the
/// applications installed on it. Given by the daemon's configuration at each start, never
/// stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceProfile {
    /// The operating system, as Rust names it (`std::env::consts::OS`: `linux`, `macos`, ...).
    pub os: String,
    /// The applications installed here (`mobiwf-node run --application NAME`): a disconnection
    /// does not count them among what it takes along.
    pub installed: BTreeSet<ApplicationId>,
}

/// How an application that ran for an item ended, as the daemon saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppEnd {
    /// Exit 0: the instance data it wrote (files already in the node's file store).
    Succeeded(Written),
    /// Any other end (exit status, refused by the command policy, killed), and why.
    Failed(String),
}

/// What the desk keeps of an item's application on this device once it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppEnded {
    /// The user it ran for.
    pub user: UserId,
    /// Whether it exited 0 (its completion was claimed).
    pub succeeded: bool,
}

/// An application to run now: the item, the user it runs for, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The item.
    pub key: ItemKey,
    /// Who selected it.
    pub user: UserId,
    /// The application and what it may write.
    pub application: ItemApplication,
}

/// One application a disconnection takes along: not installed here, read by locked items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppToTake {
    /// Its name.
    pub name: ApplicationId,
    /// Its size in KiB.
    pub size_kib: u64,
}

impl DeskItem {
    /// The user of this device who holds it selected, if one does.
    fn selected_by(&self) -> Option<&UserId> {
        self.holders
            .iter()
            .find(|h| h.hold == Hold::Selected)
            .map(|h| &h.user)
    }
}

impl Desk {
    /// What this device is (the daemon's configuration).
    pub fn set_device(&mut self, profile: DeviceProfile) {
        self.device = profile;
    }

    /// What this device is.
    pub fn device(&self) -> &DeviceProfile {
        &self.device
    }

    /// A select refused here: the item's application runs on another operating system.
    pub(super) fn wrong_os(&self, item: &DeskItem, action: &ItemAction) -> Option<Verdict> {
        if *action != ItemAction::Select {
            return None;
        }
        let application = &item.info.application.as_ref()?.application;
        let os = application.os.as_deref()?;
        (os != self.device.os).then(|| Verdict::Invalid {
            reason: format!(
                "{} starts application {}, which runs on {os}, and this device runs {}: \
                 select it from a {os} device",
                super::label(&item.info),
                application.id,
                self.device.os
            ),
        })
    }

    /// The applications to run now: of the open items a user of this device holds selected
    /// (and is not away), not paused, whose inputs are copied here whole, whose application
    /// has not ended on this device, and that no claim of that user is under way on.
    pub fn to_launch(&self) -> Vec<Launch> {
        self.items
            .values()
            .filter(|i| i.is_open() && i.app_ended.is_none() && i.info.paused_ms.is_none())
            .filter(|i| i.copy.as_ref().is_some_and(super::ItemCopy::is_whole))
            .filter_map(|i| {
                let user = i.selected_by()?;
                let application = i.info.application.as_deref()?;
                let claiming = self
                    .pending
                    .values()
                    .any(|p| &p.user == user && (p.instance, p.activity) == i.key());
                (!claiming && !self.is_away(user.as_str())).then(|| Launch {
                    key: i.key(),
                    user: user.clone(),
                    application: application.clone(),
                })
            })
            .collect()
    }

    /// An application ran for `user` on item `key` and ended: on exit 0 its completion is the
    /// user's claim (sent to the host like theirs); otherwise the user is told and keeps the
    /// item selected. Either way it never runs again for this item on this device. An item
    /// that is no longer the user's (they completed or released it, or it ended) is left as
    /// it is: the application's result is ignored.
    pub(super) fn application_ended(
        &mut self,
        now_ms: u64,
        dir: &Directory,
        me: &NodeName,
        (key, user): (ItemKey, UserId),
        end: AppEnd,
    ) -> Applied {
        let Some(item) = self.items.get_mut(&key) else {
            return Applied::default();
        };
        if !item.is_open() || item.selected_by() != Some(&user) || item.app_ended.is_some() {
            return Applied::default();
        }
        if item.info.paused_ms.is_some() {
            // Stopped because its item was paused (or ended while it was): it runs again,
            // from the start, once the item is resumed.
            return Applied::default();
        }
        let name = item
            .info
            .application
            .as_ref()
            .map(|a| a.application.id.to_string())
            .unwrap_or_default();
        item.app_ended = Some(AppEnded {
            user: user.clone(),
            succeeded: matches!(end, AppEnd::Succeeded(_)),
        });
        self.dirty.item_written(key);
        let label = super::label(&item.info);
        match end {
            AppEnd::Succeeded(data) => {
                let claim = LocalClaim {
                    user,
                    instance: key.0,
                    activity: key.1,
                    action: ItemAction::Complete {
                        succeeded: true,
                        detail: Some(format!("completed by application {name}")),
                        flag: None,
                        data,
                    },
                };
                self.claim(now_ms, dir, me, claim).unwrap_or_default()
            }
            AppEnd::Failed(why) => {
                self.push_notice(Notice {
                    user,
                    instance: key.0,
                    activity: Some(key.1),
                    kind: "application_failed".to_owned(),
                    text: format!(
                        "application {name} of {label} did not finish: {why}; the item stays \
                         selected: complete it by hand (complete --set NAME=VALUE), or release it"
                    ),
                    at_ms: now_ms,
                });
                Applied::default()
            }
        }
    }

    /// The applications a disconnection of `user` takes along: those of the items they
    /// locked that this device does not have installed, each once, by name.
    pub fn applications_to_take(&self, user: &str) -> Vec<AppToTake> {
        let mut names = BTreeSet::new();
        self.locked_by(user)
            .into_iter()
            .filter_map(|i| i.info.application.as_deref())
            .map(|a| &a.application)
            .filter(|a| !self.device.installed.contains(&a.id))
            .filter(|a| names.insert(a.id.clone()))
            .map(|a| AppToTake {
                name: a.id.clone(),
                size_kib: a.size_kib,
            })
            .collect()
    }
}
