//! The deployed definitions: each workflow definition an operator deployed under a name, with
//! a version for each changed document, which instances are started from by name (`start`)
//! instead of sending the whole document each time (`submit`).
//!
//! The registry keeps every stored version parsed, once, shared by its instances
//! (`Arc<WorkflowDefinition>`): a start parses nothing. An instance started by name stores the
//! name and version it came from (`Instance::definition`), not the document. So a version
//! stays as long as an instance in the store names it: each version counts the stored
//! instances that name it (one more at each start, one less when the retention sweep deletes
//! one: [`crate::Book::released`]). An operator's removal retires the versions still named
//! (they can no longer be started, nor are they listed) and drops the others; a retired
//! version goes once its last instance is deleted. Numbers go on from the highest version
//! stored, so a name deployed again after a removal never reuses a version an old instance
//! names.
//!
//! What the registry changed is written with the book's other changes ([`RegistryChanges`]
//! in `Changes`): the record of each version (`VersionRecord`, small) and, once, its document.
//!
//! A stored document that does not read back (a damaged store, or a document an older
//! controller wrote that this one refuses) does not stop the controller: the version is kept
//! aside as stored ([`UnreadableVersion`]: nothing is deleted), `definitions` lists it with the
//! reason, and it is never started. While it is the newest version of its name, no version of
//! the name starts (its creator role, which governs every start, is unknown); deploying the
//! document again makes a readable newest version, and removing the name retires it.

mod operators;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mobiwf_xml_schema::{DefinitionName, RoleId, WorkflowDefinition};
use serde::{Deserialize, Serialize};

pub use operators::{Deploy, Deployment, Removal};

/// The most versions the controller keeps, all names together: a deployment past it is
/// refused (remove definitions no longer needed).
pub const MAX_DEFINITION_VERSIONS: usize = 4096;

/// A version of a deployed definition: 1 for the first document deployed under a name, one
/// more for each changed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DefinitionVersion(pub u64);

impl std::fmt::Display for DefinitionVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The deployed definition an instance was started from: its name and version.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DefinitionRef {
    /// The name it was deployed under.
    pub name: DefinitionName,
    /// Its version.
    pub version: DefinitionVersion,
}

impl std::fmt::Display for DefinitionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} version {}", self.name, self.version)
    }
}

/// One version as the registry keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeployedVersion {
    /// When it was deployed, ms since the epoch.
    pub deployed_ms: u64,
    /// The definition, parsed once.
    pub definition: Arc<WorkflowDefinition>,
    /// Its document as MobiWfMS XML (as deployed when deployed in that language, else the
    /// MobiWfMS XML it reads as).
    pub document: Arc<[u8]>,
    /// How many instances in the store name it.
    pub instances: u64,
    /// True once an operator removed it while stored instances still named it: it is kept
    /// for them, but neither listed nor started.
    pub retired: bool,
}

/// What the store keeps of one version besides its document: `deployed/<name>/<version>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRecord {
    /// The name and version.
    #[serde(flatten)]
    pub at: DefinitionRef,
    /// When it was deployed, ms since the epoch.
    pub deployed_ms: u64,
    /// How many instances in the store name it.
    #[serde(default)]
    pub instances: u64,
    /// Removed by an operator, kept for the instances that name it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retired: bool,
}

/// What the registry changed since its changes were last taken.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RegistryChanges {
    /// Version records to write.
    pub records: Vec<VersionRecord>,
    /// Documents of new versions to write (each once).
    pub documents: Vec<(DefinitionRef, Arc<[u8]>)>,
    /// Versions to delete, record and document.
    pub deleted: Vec<DefinitionRef>,
}

impl RegistryChanges {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.documents.is_empty() && self.deleted.is_empty()
    }
}

/// A deployed definition as `definitions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionSummary {
    /// Its name.
    pub name: DefinitionName,
    /// Its latest version: what `start` starts unless told.
    pub latest: DefinitionVersion,
    /// Every version that can be started, oldest first.
    pub versions: Vec<DefinitionVersion>,
    /// When the latest version was deployed, ms since the epoch.
    pub deployed_ms: u64,
    /// The role whose members may start it (the latest version's), if any: every start, of
    /// any version, needs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator_role: Option<RoleId>,
    /// The older versions that name another creator role, which their starts need too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub version_roles: Vec<VersionRole>,
    /// How many of its instances (any version) are not over.
    pub running: usize,
    /// Its stored versions whose document cannot be read back: never started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<UnreadableSummary>,
}

/// A version's own creator role, when it differs from the latest version's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRole {
    /// The version.
    pub version: DefinitionVersion,
    /// Its `<creatorRole>`.
    pub role: RoleId,
}

/// A stored version that cannot be read back, as `definitions` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnreadableSummary {
    /// The version.
    pub version: DefinitionVersion,
    /// Why its document does not read.
    pub problem: String,
}

/// A stored version whose document does not read back: kept as the store holds it, never
/// started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnreadableVersion {
    /// Its record, as stored (its instance count still kept).
    pub record: VersionRecord,
    /// Why its document does not read.
    pub problem: String,
}

/// Every deployed definition, by name and version.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Registry {
    names: BTreeMap<DefinitionName, BTreeMap<DefinitionVersion, DeployedVersion>>,
    /// Versions whose record changed (written) or that went (deleted).
    dirty: BTreeSet<DefinitionRef>,
    /// Documents of versions deployed since the changes were last taken.
    new_documents: Vec<(DefinitionRef, Arc<[u8]>)>,
    /// Stored versions whose document does not read back.
    unreadable: BTreeMap<DefinitionRef, UnreadableVersion>,
}

impl Registry {
    /// The registry as the store holds it: each version's record with its document (MobiWfMS
    /// XML, parsed here; none when the store lost it). A version whose document does not read
    /// is kept aside ([`Registry::unreadable`]), never started.
    pub fn restore(stored: Vec<(VersionRecord, Option<Vec<u8>>)>) -> Registry {
        let mut registry = Registry::default();
        for (record, document) in stored {
            let source = format!("stored definition {}", record.at);
            let read = match document {
                None => Err(format!("{source}: its document is missing from the store")),
                Some(document) => mobiwf_xml_schema::load_definition_in(
                    mobiwf_xml_schema::Language::MobiWfMs,
                    &document,
                )
                .map(|read| (read.value, document))
                .map_err(|d| d.render(&source)),
            };
            let (definition, document) = match read {
                Ok(read) => read,
                Err(problem) => {
                    let at = record.at.clone();
                    registry
                        .unreadable
                        .insert(at, UnreadableVersion { record, problem });
                    continue;
                }
            };
            let version = DeployedVersion {
                deployed_ms: record.deployed_ms,
                definition: Arc::new(definition),
                document: document.into(),
                instances: record.instances,
                retired: record.retired,
            };
            registry
                .names
                .entry(record.at.name)
                .or_default()
                .insert(record.at.version, version);
        }
        registry
    }

    /// The stored versions whose document does not read back, by name and version.
    pub fn unreadable(&self) -> impl Iterator<Item = (&DefinitionRef, &UnreadableVersion)> {
        self.unreadable.iter()
    }

    /// The unreadable versions of `name` not retired, oldest first.
    fn unreadable_of<'a>(
        &'a self,
        name: &'a DefinitionName,
    ) -> impl Iterator<Item = (DefinitionVersion, &'a UnreadableVersion)> + 'a {
        self.unreadable
            .iter()
            .filter(move |(at, u)| &at.name == name && !u.record.retired)
            .map(|(at, u)| (at.version, u))
    }

    /// Why no version of `name` starts, when its newest version not retired is unreadable:
    /// that version and its problem.
    pub fn blocked<'a>(&'a self, name: &'a DefinitionName) -> Option<(DefinitionVersion, &'a str)> {
        let (v, u) = self.unreadable_of(name).last()?;
        let newest_readable = self.versions(name).last().copied();
        (newest_readable < Some(v)).then_some((v, u.problem.as_str()))
    }

    /// Version `version` of `name` as kept aside, when its document does not read back.
    pub fn unreadable_version(
        &self,
        name: &DefinitionName,
        version: DefinitionVersion,
    ) -> Option<&UnreadableVersion> {
        self.unreadable.get(&DefinitionRef {
            name: name.clone(),
            version,
        })
    }

    /// A stored version, retired or not: what an instance naming it runs.
    pub fn get(&self, at: &DefinitionRef) -> Option<&DeployedVersion> {
        self.names.get(&at.name)?.get(&at.version)
    }

    /// The version of `name` to start: `version`, or the latest; `None` when there is none
    /// (unknown, removed, or no such version).
    pub fn startable(
        &self,
        name: &DefinitionName,
        version: Option<DefinitionVersion>,
    ) -> Option<(DefinitionRef, &DeployedVersion)> {
        if self.blocked(name).is_some() {
            return None;
        }
        let versions = self.names.get(name)?;
        let (v, d) = match version {
            Some(v) => (v, versions.get(&v)?),
            None => versions
                .iter()
                .rev()
                .find(|(_, d)| !d.retired)
                .map(|(v, d)| (*v, d))?,
        };
        let at = DefinitionRef {
            name: name.clone(),
            version: v,
        };
        (!d.retired).then_some((at, d))
    }

    /// The versions of `name` that can be started, oldest first (empty: none).
    pub fn versions(&self, name: &DefinitionName) -> Vec<DefinitionVersion> {
        self.names.get(name).map_or_else(Vec::new, |versions| {
            versions
                .iter()
                .filter(|(_, d)| !d.retired)
                .map(|(v, _)| *v)
                .collect()
        })
    }

    /// The names that have a version not retired (to start, or unreadable), in order.
    pub fn names(&self) -> impl Iterator<Item = &DefinitionName> {
        let readable = self
            .names
            .iter()
            .filter(|(_, versions)| versions.values().any(|d| !d.retired))
            .map(|(name, _)| name);
        let unreadable = self
            .unreadable
            .iter()
            .filter(|(_, u)| !u.record.retired)
            .map(|(at, _)| &at.name);
        readable
            .chain(unreadable)
            .collect::<BTreeSet<_>>()
            .into_iter()
    }

    /// How many versions are stored, retired and unreadable ones included.
    pub fn stored_versions(&self) -> usize {
        self.names.values().map(BTreeMap::len).sum::<usize>() + self.unreadable.len()
    }

    /// The version after the highest stored one of `name` (1 for a new name).
    fn next_version(&self, name: &DefinitionName) -> DefinitionVersion {
        let last = self
            .names
            .get(name)
            .and_then(|versions| versions.keys().next_back())
            .map_or(0, |v| v.0);
        let last_unreadable = self
            .unreadable
            .keys()
            .rfind(|at| &at.name == name)
            .map_or(0, |at| at.version.0);
        DefinitionVersion(last.max(last_unreadable) + 1)
    }

    /// Adds a new version.
    fn insert(&mut self, at: DefinitionRef, version: DeployedVersion) {
        self.new_documents
            .push((at.clone(), version.document.clone()));
        self.names
            .entry(at.name.clone())
            .or_default()
            .insert(at.version, version);
        self.dirty.insert(at);
    }

    /// One more stored instance names `at` (a start).
    pub(crate) fn named(&mut self, at: &DefinitionRef) {
        if let Some(d) = self.version_mut(at) {
            d.instances += 1;
            self.dirty.insert(at.clone());
        }
    }

    /// One stored instance naming `at` was deleted: a retired version named by none goes.
    pub(crate) fn unnamed(&mut self, at: &DefinitionRef) {
        if let Some(u) = self.unreadable.get_mut(at) {
            // Kept aside as it is, never dropped: only its count follows the store.
            u.record.instances = u.record.instances.saturating_sub(1);
            self.dirty.insert(at.clone());
            return;
        }
        let Some(d) = self.version_mut(at) else {
            return;
        };
        d.instances = d.instances.saturating_sub(1);
        if d.retired && d.instances == 0 {
            self.drop_version(at);
        }
        self.dirty.insert(at.clone());
    }

    /// Retires the versions of `name` that stored instances name and drops the others: the
    /// versions dropped, and those kept. Unreadable versions are retired and kept as stored.
    fn remove(
        &mut self,
        name: &DefinitionName,
    ) -> (Vec<DefinitionVersion>, Vec<DefinitionVersion>) {
        let (mut dropped, mut kept) = (Vec::new(), Vec::new());
        for (at, u) in self.unreadable.iter_mut() {
            if &at.name == name && !u.record.retired {
                u.record.retired = true;
                kept.push(at.version);
                self.dirty.insert(at.clone());
            }
        }
        for v in self.versions(name) {
            let at = DefinitionRef {
                name: name.clone(),
                version: v,
            };
            match self.version_mut(&at) {
                Some(d) if d.instances > 0 => {
                    d.retired = true;
                    kept.push(v);
                }
                _ => {
                    self.drop_version(&at);
                    dropped.push(v);
                }
            }
            self.dirty.insert(at);
        }
        kept.sort();
        (dropped, kept)
    }

    fn version_mut(&mut self, at: &DefinitionRef) -> Option<&mut DeployedVersion> {
        self.names.get_mut(&at.name)?.get_mut(&at.version)
    }

    fn drop_version(&mut self, at: &DefinitionRef) {
        if let Some(versions) = self.names.get_mut(&at.name) {
            versions.remove(&at.version);
            if versions.is_empty() {
                self.names.remove(&at.name);
            }
        }
    }

    /// Hands over what changed since the last call.
    pub(crate) fn take_changes(&mut self) -> RegistryChanges {
        let mut changes = RegistryChanges {
            documents: std::mem::take(&mut self.new_documents),
            ..RegistryChanges::default()
        };
        for at in std::mem::take(&mut self.dirty) {
            match self.get(&at) {
                Some(d) => changes.records.push(VersionRecord {
                    at,
                    deployed_ms: d.deployed_ms,
                    instances: d.instances,
                    retired: d.retired,
                }),
                None => match self.unreadable.get(&at) {
                    Some(u) => changes.records.push(u.record.clone()),
                    None => changes.deleted.push(at),
                },
            }
        }
        // A version deployed and dropped before its changes were taken is never written (nor
        // is the document of one dropped and deployed again, but the last).
        changes.documents.retain(|(at, document)| {
            self.get(at)
                .is_some_and(|d| Arc::ptr_eq(&d.document, document))
        });
        changes
    }
}
