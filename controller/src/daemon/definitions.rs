//! The deployed definitions on the actor: an operator's deploy, remove and start by name (each
//! applied in its group and answered after its write, as every command), what `definitions`
//! and `definitions show` ask (answered from the book), and the client's calls for them.

use mobiwf_book::{
    BookError, DefinitionRef, DefinitionSummary, DefinitionVersion, Deploy, Deployment, Effect,
    Removal, Start, StartedByName,
};
use mobiwf_proto::InstanceId;
use mobiwf_runtime::daemon::Group;
use mobiwf_xml_schema::{DefinitionName, RoleId, WorkflowDefinition};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::actor::ControllerActor;
use super::{Command, ControllerClient, Event, Query};

/// An operator's word on the deployed definitions.
pub(crate) enum DefinitionCommand {
    /// Deploy a document under its name.
    Deploy {
        request: Deploy,
        reply: oneshot::Sender<Result<Deployment, BookError>>,
    },
    /// Remove a definition, every version of it.
    Remove {
        name: DefinitionName,
        reply: oneshot::Sender<Result<Removal, BookError>>,
    },
    /// Start an instance of one.
    Start {
        start: Start,
        reply: oneshot::Sender<Result<Started, BookError>>,
    },
}

/// What the API asks of the deployed definitions.
pub(crate) enum DefinitionQuery {
    /// Every one that can be started.
    List(oneshot::Sender<Vec<DefinitionSummary>>),
    /// What a deploy of this definition would refuse beyond its document (its classes).
    Check {
        definition: Box<WorkflowDefinition>,
        reply: oneshot::Sender<Result<(), BookError>>,
    },
    /// One version of one, with its document.
    Show {
        name: DefinitionName,
        version: Option<DefinitionVersion>,
        reply: oneshot::Sender<Result<ShownDefinition, BookError>>,
    },
}

/// An instance started by name: its id and the version it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// The new instance.
    pub instance: InstanceId,
    /// The version it was started from.
    pub definition: DefinitionRef,
}

/// One version of a deployed definition as `GET /definitions/{name}` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownDefinition {
    /// The definition's name.
    pub name: DefinitionName,
    /// The version shown.
    pub version: DefinitionVersion,
    /// When it was deployed, ms since the epoch.
    pub deployed_ms: u64,
    /// The role whose members may start it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creator_role: Option<RoleId>,
    /// The latest version.
    pub latest: DefinitionVersion,
    /// Every version that can be started, oldest first.
    pub versions: Vec<DefinitionVersion>,
    /// How many instances of the definition (any version) are not over.
    pub running: usize,
    /// The document, MobiWfMS XML: as deployed when it was deployed so in UTF-8, else the
    /// MobiWfMS XML it reads as.
    pub document: String,
}

impl ControllerActor {
    /// An operator's word on the deployed definitions, answered after the group's write.
    pub(super) fn definitions(
        &mut self,
        now: u64,
        command: DefinitionCommand,
        effects: &mut Vec<Effect>,
        group: &mut Group,
    ) {
        match command {
            DefinitionCommand::Deploy { request, reply } => {
                let result = self.book.deploy_definition(now, request);
                if let Ok(d) = &result {
                    let (name, version, new) =
                        (&d.definition.name, d.definition.version, d.new_version);
                    tracing::info!(%name, %version, new, "definition deployed");
                }
                group.answer(reply, result);
            }
            DefinitionCommand::Remove { name, reply } => {
                let result = self.book.remove_definition(&name);
                if let Ok(r) = &result {
                    tracing::info!(%name, dropped = r.dropped.len(), kept = r.kept.len(), "definition removed");
                }
                group.answer(reply, result);
            }
            DefinitionCommand::Start { start, reply } => {
                let result = self.start(now, start, effects);
                group.answer(reply, result);
            }
        }
    }

    /// A start by name: the new instance and the version it runs.
    fn start(
        &mut self,
        now: u64,
        start: Start,
        effects: &mut Vec<Effect>,
    ) -> Result<Started, BookError> {
        // A start names no stored instance: nothing to recall first (`apply_book`).
        let StartedByName {
            effects: sent,
            instance,
            definition,
        } = self.book.start_by_name(now, start)?;
        effects.extend(sent);
        tracing::info_span!("instance", %instance)
            .in_scope(|| tracing::info!(%definition, "instance started"));
        Ok(Started {
            instance,
            definition,
        })
    }

    /// Answers what the API asks of the deployed definitions.
    pub(super) fn answer_definitions(&self, query: DefinitionQuery) {
        match query {
            DefinitionQuery::List(reply) => {
                let _ = reply.send(self.book.definitions());
            }
            DefinitionQuery::Check { definition, reply } => {
                let _ = reply.send(self.book.check_definition(&definition));
            }
            DefinitionQuery::Show {
                name,
                version,
                reply,
            } => {
                let _ = reply.send(self.shown(&name, version));
            }
        }
    }

    fn shown(
        &self,
        name: &DefinitionName,
        version: Option<DefinitionVersion>,
    ) -> Result<ShownDefinition, BookError> {
        let (summary, at, deployed) = self.book.definition(name, version)?;
        let document = String::from_utf8(deployed.document.to_vec())
            .unwrap_or_else(|_| mobiwf_xml_schema::write_definition(&deployed.definition));
        Ok(ShownDefinition {
            name: at.name,
            version: at.version,
            deployed_ms: deployed.deployed_ms,
            creator_role: deployed.definition.creator_role.clone(),
            latest: summary.latest,
            versions: summary.versions,
            running: summary.running,
            document,
        })
    }
}

impl ControllerClient {
    async fn definition_command<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> DefinitionCommand,
    ) -> anyhow::Result<T> {
        self.ask(|reply| Event::Command(Command::Definitions(make(reply))))
            .await
    }

    /// Deploys a definition: the version its name now starts, and whether it is new.
    pub async fn deploy(&self, request: Deploy) -> anyhow::Result<Result<Deployment, BookError>> {
        self.definition_command(|reply| DefinitionCommand::Deploy { request, reply })
            .await
    }

    /// Removes a definition, or says why not (instances of it run).
    pub async fn remove_definition(
        &self,
        name: DefinitionName,
    ) -> anyhow::Result<Result<Removal, BookError>> {
        self.definition_command(|reply| DefinitionCommand::Remove { name, reply })
            .await
    }

    /// Starts an instance of a deployed definition.
    pub async fn start(&self, start: Start) -> anyhow::Result<Result<Started, BookError>> {
        self.definition_command(|reply| DefinitionCommand::Start { start, reply })
            .await
    }

    /// What a deploy of `definition` would refuse beyond its document: classes the class
    /// document does not have.
    pub async fn check_definition(
        &self,
        definition: WorkflowDefinition,
    ) -> anyhow::Result<Result<(), BookError>> {
        let definition = Box::new(definition);
        self.ask(|reply| {
            Event::Query(Query::Definitions(DefinitionQuery::Check {
                definition,
                reply,
            }))
        })
        .await
    }

    /// Every deployed definition that can be started.
    pub async fn definitions(&self) -> anyhow::Result<Vec<DefinitionSummary>> {
        self.ask(|reply| Event::Query(Query::Definitions(DefinitionQuery::List(reply))))
            .await
    }

    /// One version of a deployed definition (the latest unless `version`), with its document.
    pub async fn definition(
        &self,
        name: DefinitionName,
        version: Option<DefinitionVersion>,
    ) -> anyhow::Result<Result<ShownDefinition, BookError>> {
        self.ask(|reply| {
            Event::Query(Query::Definitions(DefinitionQuery::Show {
                name,
                version,
                reply,
            }))
        })
        .await
    }
}
