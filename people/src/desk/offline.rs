//! Work without the network (*Synchronization and Disconnected Operation in WorkToDo* (IC-03-006),
//! §5.1; *WorkToDo: um sistema de gerenciamento de workflows para ambientes de comunicação sem
//! fio*, §3.3.3-3.3.5): a user disconnects and later reconnects; while away only the items they
//! locked can be worked on, and what they do waits on this device until it can reach the items'
//! hosts. Beside it, the copies of what a lockable item reads (its instance data, asked of its
//! host; the files those values name, fetched by the daemon), so that the user can work it with the
//! network gone.
//!
//! The desk decides who may go (a user holding a selected item may not: the WorkToDo report, §5.1.2
//! step 2) and what is copied; the daemon measures what is left to copy against the time and disk
//! the user allows, fetches, and tells the controller (`Message::Presence`).

use std::collections::BTreeSet;

use mobiwf_proto::{DataValue, Datum, FileRef, Hold, ItemAction, Presence, UserId};
use serde::{Deserialize, Serialize};

use super::{Applied, Desk, DeskItem, DeskRefusal, ItemKey};
use crate::Directory;
use mobiwf_proto::NodeName;

/// What a lockable item reads, copied from its host while the device was connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemCopy {
    /// The values of the activity's `<reads>` the host knew, by name.
    pub data: Vec<Datum>,
    /// The files those values name that are not on this device yet (the daemon fetches
    /// them and says so with [`super::DeskInput::FileHeld`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<FileRef>,
    /// When the values were copied, in ms since the epoch.
    pub at_ms: u64,
}

impl ItemCopy {
    /// The files its values name.
    pub fn files(&self) -> impl Iterator<Item = &FileRef> {
        self.data.iter().filter_map(|d| match &d.value {
            DataValue::File(f) => Some(f),
            _ => None,
        })
    }

    /// Whether everything the item reads is on this device.
    pub fn is_whole(&self) -> bool {
        self.missing.is_empty()
    }

    /// The bytes still to fetch (whole files; the daemon subtracts what a broken-off fetch
    /// already has).
    pub fn missing_bytes(&self) -> u64 {
        self.missing.iter().map(|f| f.size).sum()
    }
}

/// Whether an item can be worked on without the network, as a worklist shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Offline {
    /// Its data and files are on this device.
    Ready,
    /// Its data is here, some files are still being fetched.
    Copying,
    /// Nothing copied yet.
    NotCopied,
}

impl DeskItem {
    /// Whether the item may be locked (`<disconnected>`) and is still open.
    pub fn is_lockable(&self) -> bool {
        self.is_open() && self.info.disconnected
    }

    /// How far the copy for offline work got.
    pub fn offline(&self) -> Offline {
        match &self.copy {
            Some(c) if c.is_whole() => Offline::Ready,
            Some(_) => Offline::Copying,
            None => Offline::NotCopied,
        }
    }
}

impl Desk {
    /// A user goes away: refused while they hold a selected (not locked) item (they would
    /// take it offline without the host's consent); their other items stay on the host's
    /// lists, only the locked ones can be worked on until they reconnect. Going away twice is
    /// going away once.
    pub(super) fn disconnect(
        &mut self,
        now_ms: u64,
        dir: &Directory,
        me: &NodeName,
        user: &UserId,
    ) -> Result<Applied, DeskRefusal> {
        super::here(dir, me, user.as_str())?;
        self.may_go(user)?;
        if !self.away.contains_key(user) {
            self.away.insert(user.clone(), now_ms);
            self.dirty.meta = true;
        }
        Ok(Applied::default())
    }

    /// A user comes back: every item of theirs can be worked on again. What they did while
    /// away is on its way to the hosts already (the outbox sends it as soon as a host can be
    /// reached).
    pub(super) fn reconnect(
        &mut self,
        dir: &Directory,
        me: &NodeName,
        user: &UserId,
    ) -> Result<Applied, DeskRefusal> {
        super::here(dir, me, user.as_str())?;
        if self.away.remove(user).is_some() {
            self.dirty.meta = true;
        }
        Ok(Applied::default())
    }

    /// The host answered what an item reads: kept with the item (an item that ended or left
    /// this device meanwhile keeps nothing). `held` tells which of the files it names are on
    /// this device already.
    pub(super) fn copied(
        &mut self,
        now_ms: u64,
        key: ItemKey,
        data: Vec<Datum>,
        held: &dyn Fn(&FileRef) -> bool,
    ) -> Applied {
        let Some(item) = self.items.get_mut(&key).filter(|i| i.is_open()) else {
            return Applied::default();
        };
        let mut copy = ItemCopy {
            data,
            missing: Vec::new(),
            at_ms: now_ms,
        };
        let files: BTreeSet<FileRef> = copy.files().cloned().collect();
        copy.missing = files.into_iter().filter(|f| !held(f)).collect();
        if item.copy.as_ref() != Some(&copy) {
            item.copy = Some(copy);
            self.dirty.item_written(key);
        }
        Applied::default()
    }

    /// A file is on this device now: no copy waits for it any more.
    pub(super) fn file_held(&mut self, file: &FileRef) -> Applied {
        for (key, item) in &mut self.items {
            if let Some(copy) = item.copy.as_mut()
                && copy.missing.contains(file)
            {
                copy.missing.retain(|f| f != file);
                self.dirty.item_written(*key);
            }
        }
        Applied::default()
    }

    /// Whether `user` may go away: not while they hold a selected item, nor while a select or
    /// lock of theirs is under way (the host may grant it while they are away).
    pub fn may_go(&self, user: &UserId) -> Result<(), DeskRefusal> {
        let selected: Vec<String> = self
            .items
            .values()
            .filter(|i| i.is_open())
            .filter(|i| {
                i.holder(user.as_str())
                    .is_some_and(|h| h.hold == Hold::Selected)
            })
            .map(|i| super::label(&i.info))
            .chain(
                self.pending
                    .values()
                    .filter(|p| &p.user == user)
                    .filter(|p| matches!(p.action, ItemAction::Select | ItemAction::Lock))
                    .map(|p| {
                        format!(
                            "activity {} of instance {} ({} under way)",
                            p.activity,
                            p.instance,
                            p.action.as_str()
                        )
                    }),
            )
            .collect();
        if selected.is_empty() {
            Ok(())
        } else {
            Err(DeskRefusal::Selected {
                user: user.clone(),
                items: selected,
            })
        }
    }

    /// The presence to tell the controller now: the users away and the next number (stored
    /// with the desk's changes; the controller takes the highest it hears).
    pub fn presence(&mut self) -> Presence {
        self.presence_seq += 1;
        self.dirty.meta = true;
        Presence {
            away: self.away.keys().cloned().collect(),
            seq: self.presence_seq,
        }
    }

    /// Whether the user disconnected and has not reconnected.
    pub fn is_away(&self, user: &str) -> bool {
        self.away.keys().any(|u| u.as_str() == user)
    }

    /// The users away, with when they went, in ms since the epoch.
    pub fn away(&self) -> impl Iterator<Item = (&UserId, u64)> {
        self.away.iter().map(|(u, at)| (u, *at))
    }

    /// The open lockable items, and those that start an application, offered to or held by
    /// this device's users, in the order the daemon copies them: locked first, then selected,
    /// then offered; each by arrival.
    pub fn to_copy(&self) -> Vec<&DeskItem> {
        let mut items: Vec<&DeskItem> = self
            .items
            .values()
            .filter(|i| i.is_lockable() || (i.is_open() && i.info.application.is_some()))
            .filter(|i| !i.offered.is_empty() || !i.holders.is_empty())
            .collect();
        items.sort_by_key(|i| {
            let rank = if i.holders.iter().any(|h| h.hold == Hold::Locked) {
                0
            } else if i.holders.is_empty() {
                2
            } else {
                1
            };
            (rank, i.info.ready_ms, i.key())
        });
        items
    }

    /// The open items `user` locked.
    pub fn locked_by(&self, user: &str) -> Vec<&DeskItem> {
        self.items
            .values()
            .filter(|i| i.is_open())
            .filter(|i| i.holder(user).is_some_and(|h| h.hold == Hold::Locked))
            .collect()
    }
}
