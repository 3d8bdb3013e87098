//! The host's state as the daemon stores it: each changed work item
//! (`item/<instance>/<activity>`), each moved round-robin token (`token/<role>`) and the
//! directory replica (`directory`), encoded by the engine; and the engine given them back
//! after a restart ([`Engine::with_people`]).

use mobiwf_people::Directory;
use mobiwf_proto::{ActivityId, DeviceEntry, DirectoryVersion, InstanceId, RoleId, UserId};
use serde::{Deserialize, Serialize};

use super::Item;
use crate::store::EncodeError;
use crate::{Changes, Engine};

/// A changed work item, as the store keeps it (`item/<instance>/<activity>`).
#[derive(Debug, Clone)]
pub struct StoredItem {
    /// The instance.
    pub instance: InstanceId,
    /// The activity.
    pub activity: ActivityId,
    /// The [`Item`] as JSON.
    pub state: Vec<u8>,
}

impl StoredItem {
    /// The item back from its stored JSON.
    pub fn decode(state: &[u8]) -> Result<Item, String> {
        serde_json::from_slice(state).map_err(|e| e.to_string())
    }
}

/// A round-robin token, as the store keeps it (`token/<role>`): the last user the role's
/// items went to on this host.
#[derive(Debug, Clone)]
pub struct StoredToken {
    /// The role.
    pub role: RoleId,
    /// The user id as JSON (a string).
    pub state: Vec<u8>,
}

impl StoredToken {
    /// The user back from the stored JSON.
    pub fn decode(state: &[u8]) -> Result<UserId, String> {
        serde_json::from_slice(state).map_err(|e| e.to_string())
    }
}

/// The directory replica, as the store keeps it (`directory`): what the controller sent
/// (version, organisation document, devices), read again on restore.
#[derive(Debug, Clone)]
pub struct StoredDirectory {
    /// JSON of `{version, document, devices}`.
    pub state: Vec<u8>,
}

/// The directory's stored form.
#[derive(Serialize, Deserialize)]
struct DirectoryRepr {
    version: u64,
    document: String,
    devices: Vec<DeviceEntry>,
}

impl StoredDirectory {
    fn of(dir: &Directory) -> Result<StoredDirectory, EncodeError> {
        let repr = DirectoryRepr {
            version: dir.version,
            document: dir.document.clone(),
            devices: dir.devices.values().cloned().collect(),
        };
        let state = serde_json::to_vec(&repr).map_err(|e| EncodeError::Directory {
            reason: e.to_string(),
        })?;
        Ok(StoredDirectory { state })
    }

    /// The directory back from its stored JSON; its organisation document is read again
    /// (`Directory::parse`).
    pub fn decode(state: &[u8]) -> Result<Directory, String> {
        let repr: DirectoryRepr = serde_json::from_slice(state).map_err(|e| e.to_string())?;
        let sent = DirectoryVersion {
            version: repr.version,
            document: repr.document,
            devices: repr.devices,
        };
        Directory::parse(sent).map_err(|e| e.to_string())
    }
}

/// The host's state read back from the store, for [`Engine::with_people`].
#[derive(Debug, Clone, Default)]
pub struct RestoredPeople {
    /// Every stored work item (`item/...`, decoded with [`StoredItem::decode`]).
    pub items: Vec<Item>,
    /// Every stored token (`token/<role>`, decoded with [`StoredToken::decode`]).
    pub tokens: Vec<(RoleId, UserId)>,
    /// The stored directory (`directory`, decoded with [`StoredDirectory::decode`]), if any.
    pub directory: Option<Directory>,
}

impl Engine {
    /// Gives a restored engine ([`Engine::restore`]) its work items, round-robin tokens and
    /// directory replica back: `Engine::restore(runs, known).with_people(people)`. The
    /// node's own address is not stored: set it again with [`Engine::set_location`].
    pub fn with_people(mut self, people: RestoredPeople) -> Engine {
        self.host.items = people.items.into_iter().map(|i| (i.key(), i)).collect();
        self.host.tokens = people.tokens.into_iter().collect();
        if let Some(directory) = people.directory {
            self.host.directory = directory;
        }
        self.rebuild_item_deadlines();
        self
    }

    /// Adds the host's changes to `changes`, encoded; on an error nothing is marked clean.
    pub(crate) fn people_changes(&self, changes: &mut Changes) -> Result<(), EncodeError> {
        for id in &self.host.dirty_items {
            let Some(item) = self.host.items.get(id) else {
                continue;
            };
            let state = serde_json::to_vec(item).map_err(|e| EncodeError::Item {
                instance: id.0,
                activity: id.1,
                reason: e.to_string(),
            })?;
            changes.items.push(StoredItem {
                instance: id.0,
                activity: id.1,
                state,
            });
        }
        for role in &self.host.dirty_tokens {
            let Some(user) = self.host.tokens.get(role) else {
                continue;
            };
            let state = serde_json::to_vec(user).map_err(|e| EncodeError::Token {
                role: role.clone(),
                reason: e.to_string(),
            })?;
            changes.tokens.push(StoredToken {
                role: role.clone(),
                state,
            });
        }
        if self.host.dirty_directory {
            changes.directory = Some(StoredDirectory::of(&self.host.directory)?);
        }
        Ok(())
    }

    /// The host's changes were handed over.
    pub(crate) fn people_written(&mut self) {
        self.host.dirty_items.clear();
        self.host.dirty_tokens.clear();
        self.host.dirty_directory = false;
    }
}
