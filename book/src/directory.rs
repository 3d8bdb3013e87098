//! The organisation directory as the controller keeps it: the organisation document an operator
//! applied and the registered devices, versioned. Every change (a document applied, a node
//! registering) makes the next version, which goes to every registered node; hosts assign work from
//! it, devices learn from it which users they serve. Submissions are checked against it: the
//! responsible user and the roles, departments and teams the activities name must be in it.

use std::collections::{BTreeMap, BTreeSet};

use mobiwf_people::{Directory, DirectoryError};
use mobiwf_proto::{
    DeviceEntry, DirectoryVersion, InstanceId, Location, Message, NodeId, Presence,
};
use mobiwf_xml_schema::{Organisation, UserId, WorkflowDefinition};
use serde::{Deserialize, Serialize};

use crate::{Applied, Book, BookError, Effect, NodeInfo};

/// The people side of the book as the store keeps it (one value): the directory, its
/// organisation as the document it was read from, and the last number the controller gave a
/// claim of its own (`Input::Worklist`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PeopleRecord {
    /// The directory's version (0: nothing happened yet).
    pub version: u64,
    /// The organisation document applied last (empty: none yet).
    pub document: String,
    /// The registered nodes, by name.
    pub devices: Vec<DeviceEntry>,
    /// The last request number of the controller's claims.
    #[serde(default)]
    pub last_request: u64,
}

impl PeopleRecord {
    /// The directory it holds, its document read again (`Directory::parse`).
    pub fn directory(&self) -> Result<Directory, DirectoryError> {
        Directory::parse(DirectoryVersion {
            version: self.version,
            document: self.document.clone(),
            devices: self.devices.clone(),
        })
    }
}

impl Book {
    /// The organisation directory as it is now.
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// The book restored with its stored people side: the directory (from
    /// [`PeopleRecord::directory`]) and the record's `last_request`.
    pub fn with_people(mut self, directory: Directory, last_request: u64) -> Book {
        self.directory = directory;
        self.last_request = last_request;
        self
    }

    /// The people side as the store keeps it.
    pub(crate) fn people_record(&self) -> PeopleRecord {
        PeopleRecord {
            version: self.directory.version,
            document: self.directory.document.clone(),
            devices: self.directory.devices.values().cloned().collect(),
            last_request: self.last_request,
        }
    }

    /// An operator applies an organisation document: the directory's next version, sent to
    /// every registered node. Refused when it leaves out a user who is responsible for an
    /// instance not over (their notices would have nowhere to go).
    pub(crate) fn organisation(
        &mut self,
        document: String,
        org: Organisation,
    ) -> Result<Applied, BookError> {
        let kept: BTreeSet<&str> = org.users.iter().map(|u| u.id.as_str()).collect();
        let mut orphaned: BTreeMap<&UserId, Vec<InstanceId>> = BTreeMap::new();
        for inst in self.live() {
            if let Some(user) = inst.responsible.as_ref()
                && !kept.contains(user.as_str())
            {
                orphaned.entry(user).or_default().push(inst.id);
            }
        }
        if !orphaned.is_empty() {
            let lines: Vec<String> = orphaned
                .iter()
                .map(|(user, ids)| {
                    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
                    let s = if ids.len() == 1 { "" } else { "s" };
                    format!(
                        "the organisation document leaves out user '{user}', the responsible \
                         user of unfinished instance{s} {}; keep them in the document until \
                         {} over, or cancel {}",
                        ids.join(", "),
                        if ids.len() == 1 { "it is" } else { "they are" },
                        if ids.len() == 1 { "it" } else { "them" },
                    )
                })
                .collect();
            return Err(BookError::People(lines.join("\n")));
        }
        self.directory.version += 1;
        self.directory.document = document;
        self.directory.org = org;
        self.prune_away();
        self.dirty_people = true;
        Ok(Applied {
            effects: self.send_directory(),
            instance: None,
        })
    }

    /// A node registered (again): its device entry is updated (a node renamed leaves its old
    /// name), the directory's next version goes to every registered node once an
    /// organisation was applied (before, no user names a device: nothing to tell).
    pub(crate) fn device_registered(&mut self, now_ms: u64, node: &NodeInfo) -> Vec<Effect> {
        let devices = &mut self.directory.devices;
        devices.retain(|name, d| d.node != node.peer || *name == node.name);
        let old = devices.get(&node.name);
        let connections = old.map_or(0, |d| d.connections).saturating_add(1);
        // Registering again is not reconnecting a user: that is `Message::Presence`. A node
        // under this name with another key starts afresh.
        let (away, presence_seq) = old
            .filter(|d| d.node == node.peer)
            .map(|d| (d.away.clone(), d.presence_seq))
            .unwrap_or_default();
        let entry = DeviceEntry {
            name: node.name.clone(),
            node: node.peer.clone(),
            // The registration's first address, checked as it came in; the empty text when
            // there is none (a node registered before registrations had to give one).
            location: Location::registered(&node.addrs),
            connections,
            last_connected_ms: now_ms,
            away,
            presence_seq,
        };
        devices.insert(node.name.clone(), entry);
        self.directory.version += 1;
        self.dirty_people = true;
        if self.directory.document.is_empty() {
            Vec::new()
        } else {
            self.send_directory()
        }
    }

    /// A device says which of its users are disconnected now (*Synchronization and Disconnected
    /// Operation in WorkToDo* (IC-03-006), §5.1.2 step 11, §5.1.3 step 1): the directory's next
    /// version, with them marked, goes to every node (hosts offer an away user no new work; the
    /// failure detector leaves a node with an away user alone). Only a registered device speaks for
    /// its users, only for those whose device it is, and an older presence than the last taken
    /// (`seq`) changes nothing.
    pub(crate) fn presence(
        &mut self,
        peer: &NodeId,
        presence: Presence,
    ) -> Result<Applied, BookError> {
        let Presence { away, seq } = presence;
        let dir = &self.directory;
        let Some(name) = dir
            .devices
            .values()
            .find(|d| &d.node == peer)
            .map(|d| d.name.clone())
        else {
            return Err(BookError::People(format!(
                "a presence from {peer}, which is not a registered node"
            )));
        };
        let strangers: Vec<&str> = away
            .iter()
            .filter(|u| {
                dir.user(u.as_str()).and_then(|x| x.device.as_deref()) != Some(name.as_str())
            })
            .map(UserId::as_str)
            .collect();
        if !strangers.is_empty() {
            return Err(BookError::People(format!(
                "a presence from {name} for {}, whose device it is not",
                strangers.join(", ")
            )));
        }
        let Some(entry) = self.directory.devices.get_mut(&name) else {
            return Ok(Applied::default());
        };
        if seq <= entry.presence_seq {
            return Ok(Applied::default());
        }
        entry.presence_seq = seq;
        let mut away = away;
        away.sort();
        away.dedup();
        if entry.away == away {
            self.dirty_people = true;
            return Ok(Applied::default());
        }
        entry.away = away;
        self.directory.version += 1;
        self.dirty_people = true;
        Ok(Applied {
            effects: self.send_directory(),
            instance: None,
        })
    }

    /// Drops the away marks no device can clear any more: users no longer in the organisation
    /// or whose device is now another.
    fn prune_away(&mut self) {
        let dir = &mut self.directory;
        let org = &dir.org;
        for entry in dir.devices.values_mut() {
            entry.away.retain(|u| {
                org.users
                    .iter()
                    .any(|x| &x.id == u && x.device.as_deref() == Some(entry.name.as_str()))
            });
        }
    }

    /// The directory as it is, to every registered node.
    fn send_directory(&self) -> Vec<Effect> {
        let message = Message::Directory(DirectoryVersion {
            version: self.directory.version,
            document: self.directory.document.clone(),
            devices: self.directory.devices.values().cloned().collect(),
        });
        self.nodes
            .values()
            .map(|n| Effect::Send {
                to: n.peer.clone(),
                addrs: n.addrs.clone(),
                message: message.clone(),
            })
            .collect()
    }

    /// A submission's people: its responsible user is in the directory, and so is every
    /// role, department and team its activities name. Every problem at once.
    pub(crate) fn check_people(
        &self,
        def: &WorkflowDefinition,
        responsible: Option<&UserId>,
    ) -> Result<(), BookError> {
        let dir = &self.directory;
        let which = which(dir);
        let mut problems = Vec::new();
        if let Some(user) = responsible
            && dir.user(user.as_str()).is_none()
        {
            problems.push(format!(
                "no user '{user}' in {which}; apply an organisation that has them, or leave \
                 --responsible out"
            ));
        }
        let org = &dir.org;
        for a in &def.activities {
            let p = &a.people;
            let missing = [
                p.role
                    .as_ref()
                    .filter(|r| !org.roles.iter().any(|x| &x.id == *r))
                    .map(|r| ("role", r.as_str())),
                p.department
                    .as_ref()
                    .filter(|d| !org.departments.iter().any(|x| &x.id == *d))
                    .map(|d| ("department", d.as_str())),
                p.team
                    .as_ref()
                    .filter(|t| !org.teams.iter().any(|x| &x.id == *t))
                    .map(|t| ("team", t.as_str())),
            ];
            for (what, name) in missing.into_iter().flatten() {
                problems.push(format!(
                    "activity {} needs {what} '{name}', which {which} does not have; apply an \
                     organisation that has it, or change the activity's <{what}>",
                    a.id
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(BookError::People(problems.join("\n")))
        }
    }
}

/// The directory as error messages name it.
pub(crate) fn which(dir: &Directory) -> String {
    if dir.document.is_empty() {
        format!(
            "the organisation directory (version {}; no organisation applied yet)",
            dir.version
        )
    } else {
        format!("the organisation directory (version {})", dir.version)
    }
}
