//! An operator's words on the deployed definitions: deploy a document (a new version, or
//! nothing when it reads as the latest version), remove a name (refused while instances of it
//! run), what `definitions` and `definitions show` answer; and the retention sweep's word that
//! stored instances naming versions were deleted. None of these sends anything, so each is a
//! method with its own answer rather than an `Input`.

use std::collections::BTreeMap;

use mobiwf_proto::InstanceId;
use mobiwf_xml_schema::{DefinitionName, Language, WorkflowDefinition, definition_name_problem};

use super::{
    DefinitionRef, DefinitionSummary, DefinitionVersion, DeployedVersion, MAX_DEFINITION_VERSIONS,
    Registry, UnreadableSummary, VersionRole,
};
use crate::submit::Parsed;
use crate::{Book, BookError};

/// An operator deploys a definition (`mobiwf-controller deploy FILE [--name N]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deploy {
    /// The document, in any of the three languages.
    pub document: Vec<u8>,
    /// Its name for error messages and for telling its language (a file name).
    pub source: String,
    /// The name to deploy it under; none: the definition's own `<name>`.
    pub name: Option<String>,
}

/// What a deployment did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deployment {
    /// The version the name now starts.
    pub definition: DefinitionRef,
    /// True when the document made a new version; false when it reads as the latest one
    /// (the same model: a change of layout, comments, language or its own `<name>` only), so
    /// nothing changed.
    pub new_version: bool,
}

/// What a removal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    /// The definition's name.
    pub name: DefinitionName,
    /// The versions gone.
    pub dropped: Vec<DefinitionVersion>,
    /// The versions kept, retired, for the finished instances in the store that name them
    /// (gone when the last of those is deleted).
    pub kept: Vec<DefinitionVersion>,
}

impl Book {
    /// The deployed definitions.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The book with the deployed definitions the store holds.
    pub fn with_registry(mut self, registry: Registry) -> Book {
        self.registry = registry;
        self
    }

    /// What a deploy of `def` would refuse beyond the document itself: the classes its
    /// activities name that the class document does not have.
    pub fn check_definition(&self, def: &WorkflowDefinition) -> Result<(), BookError> {
        self.check_classes(def)
    }

    /// An operator deploys a definition: stored under its name as a new version, unless it
    /// reads as the latest version already (then nothing changes). Refused with the
    /// document's problems, without a name, or past [`MAX_DEFINITION_VERSIONS`].
    pub fn deploy_definition(
        &mut self,
        now_ms: u64,
        request: Deploy,
    ) -> Result<Deployment, BookError> {
        let language = Language::of(&request.source, &request.document);
        let Parsed { def, stored } = self.parsed(language, &request.document, &request.source)?;
        self.check_classes(&def)?;
        let name = match request.name {
            Some(name) => name,
            None => def.name.as_ref().map(ToString::to_string).ok_or_else(|| {
                BookError::Invalid(format!(
                    "{}: the definition has no <name>: give it one (deploy --name NAME, or \
                     <name> in the document)",
                    request.source
                ))
            })?,
        };
        if let Some(problem) = definition_name_problem(&name) {
            return Err(BookError::Invalid(problem));
        }
        // `.` and `..` are path steps to any HTTP client: the API could not name them.
        if name.chars().all(|c| c == '.') {
            return Err(BookError::Invalid(format!(
                "a definition cannot be named {name:?}: a name of dots only cannot be named \
                 in the API's paths; give it another (deploy --name NAME)"
            )));
        }
        let name = DefinitionName::new(name);
        if let Some((latest, current)) = self.registry.startable(&name, None)
            && same_model(&current.definition, &def)
        {
            return Ok(Deployment {
                definition: latest,
                new_version: false,
            });
        }
        if self.registry.stored_versions() >= MAX_DEFINITION_VERSIONS {
            return Err(BookError::RegistryFull(format!(
                "the controller keeps {MAX_DEFINITION_VERSIONS} definition versions already \
                 (MAX_DEFINITION_VERSIONS), retired ones included: remove definitions no \
                 longer needed (`mobiwf-controller definitions remove NAME`); a removed \
                 version still named by finished instances goes once retention deletes them \
                 (`serve --retain-finished`)"
            )));
        }
        let at = DefinitionRef {
            version: self.registry.next_version(&name),
            name,
        };
        let version = DeployedVersion {
            deployed_ms: now_ms,
            definition: def,
            document: stored,
            instances: 0,
            retired: false,
        };
        self.registry.insert(at.clone(), version);
        Ok(Deployment {
            definition: at,
            new_version: true,
        })
    }

    /// An operator removes a definition, every version of it: refused while instances of it
    /// run (they are named); the versions finished instances in the store name are kept for
    /// them, retired.
    pub fn remove_definition(&mut self, name: &DefinitionName) -> Result<Removal, BookError> {
        if self.registry.versions(name).is_empty()
            && self.registry.unreadable_of(name).next().is_none()
        {
            return Err(unknown(name));
        }
        let running: Vec<InstanceId> = self
            .live()
            .filter(|i| i.definition.as_ref().is_some_and(|d| &d.name == name))
            .map(|i| i.id)
            .collect();
        if !running.is_empty() {
            return Err(BookError::DefinitionRunning {
                name: name.clone(),
                instances: running,
            });
        }
        let (dropped, kept) = self.registry.remove(name);
        Ok(Removal {
            name: name.clone(),
            dropped,
            kept,
        })
    }

    /// The retention sweep deleted stored instances naming these versions (one entry per
    /// instance): a removed version named by none goes.
    pub fn released(&mut self, named: &[DefinitionRef]) {
        for at in named {
            self.registry.unnamed(at);
        }
    }

    /// Every definition that can be started, by name.
    pub fn definitions(&self) -> Vec<DefinitionSummary> {
        let running = self.running_by_name();
        self.registry
            .names()
            .filter_map(|name| self.summary(name, running.get(name).copied().unwrap_or(0)))
            .collect()
    }

    /// One definition: its summary, and `version` of it (the latest when none) with its
    /// document. Refused when there is no such definition or version to start.
    pub fn definition(
        &self,
        name: &DefinitionName,
        version: Option<DefinitionVersion>,
    ) -> Result<(DefinitionSummary, DefinitionRef, &DeployedVersion), BookError> {
        let (at, deployed) = self
            .registry
            .startable(name, version)
            .ok_or_else(|| self.not_startable(name, version))?;
        let running = self.running_by_name().get(name).copied().unwrap_or(0);
        let summary = self.summary(name, running).ok_or_else(|| unknown(name))?;
        Ok((summary, at, deployed))
    }

    /// Why `version` of `name` (or its latest) cannot be started.
    pub(crate) fn not_startable(
        &self,
        name: &DefinitionName,
        version: Option<DefinitionVersion>,
    ) -> BookError {
        if let Some(v) = version
            && let Some(u) = self.registry.unreadable_version(name, v)
        {
            return BookError::Unreadable(format!(
                "definition {name} version {v} cannot be started: its stored document does not \
                 read back ({}); deploy the document again to make a new version",
                u.problem
            ));
        }
        if let Some((v, problem)) = self.registry.blocked(name) {
            return BookError::Unreadable(format!(
                "definition {name} cannot be started: its latest version {v}, whose creator \
                 role governs every start, does not read back ({problem}); deploy the document \
                 again to make a new version, or remove the definition"
            ));
        }
        let versions = self.registry.versions(name);
        match (versions.first(), versions.last(), version) {
            (Some(first), Some(last), Some(v)) => BookError::UnknownDefinition(format!(
                "definition {name} has no version {v} to start: its versions are {first} to \
                 {last} (`mobiwf-controller definitions` lists them)"
            )),
            _ => unknown(name),
        }
    }

    fn summary(&self, name: &DefinitionName, running: usize) -> Option<DefinitionSummary> {
        let unreadable: Vec<UnreadableSummary> = self
            .registry
            .unreadable_of(name)
            .map(|(version, u)| UnreadableSummary {
                version,
                problem: u.problem.clone(),
            })
            .collect();
        if let Some((version, _)) = self.registry.blocked(name) {
            let deployed_ms = self
                .registry
                .unreadable_version(name, version)
                .map_or(0, |u| u.record.deployed_ms);
            return Some(DefinitionSummary {
                name: name.clone(),
                latest: version,
                versions: Vec::new(),
                deployed_ms,
                creator_role: None,
                version_roles: Vec::new(),
                running,
                unreadable,
            });
        }
        let (latest, deployed) = self.registry.startable(name, None)?;
        let creator_role = deployed.definition.creator_role.clone();
        let versions = self.registry.versions(name);
        let version_roles = versions
            .iter()
            .filter_map(|&version| {
                let at = DefinitionRef {
                    name: name.clone(),
                    version,
                };
                let role = self.registry.get(&at)?.definition.creator_role.clone()?;
                (Some(&role) != creator_role.as_ref()).then_some(VersionRole { version, role })
            })
            .collect();
        Some(DefinitionSummary {
            name: name.clone(),
            latest: latest.version,
            versions,
            deployed_ms: deployed.deployed_ms,
            creator_role,
            version_roles,
            running,
            unreadable,
        })
    }

    /// How many instances not over each definition name has.
    fn running_by_name(&self) -> BTreeMap<&DefinitionName, usize> {
        let mut running = BTreeMap::new();
        for d in self.live().filter_map(|i| i.definition.as_ref()) {
            *running.entry(&d.name).or_insert(0) += 1;
        }
        running
    }
}

/// Whether two definitions are the same but for their own `<name>`: the name a definition is
/// deployed under is the registry's, the document's only says it when the operator does not.
fn same_model(a: &WorkflowDefinition, b: &WorkflowDefinition) -> bool {
    if a.name == b.name {
        return a == b;
    }
    let unnamed = |d: &WorkflowDefinition| WorkflowDefinition {
        name: None,
        ..d.clone()
    };
    unnamed(a) == unnamed(b)
}

/// No definition `name` can be started.
fn unknown(name: &DefinitionName) -> BookError {
    BookError::UnknownDefinition(format!(
        "no definition is deployed as {name} (`mobiwf-controller definitions` lists them; \
         `mobiwf-controller deploy FILE` deploys one)"
    ))
}
