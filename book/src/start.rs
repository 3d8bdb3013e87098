//! Starting an instance of a deployed definition by name (`start NAME`): the version asked for
//! (the latest by default), checked against the creator roles (that version's and the latest
//! version's, which governs every start of the name), then the same
//! submission as `submit` ([`Book::instantiate`]) with the registry's parsed definition:
//! nothing is parsed, and the instance stores the name and version, not the document.

use mobiwf_proto::{GivenInputs, InstanceId};
use mobiwf_xml_schema::{DefinitionName, RoleId, UserId, WorkflowDefinition};

use crate::StartWith;
use crate::definitions::{DefinitionRef, DefinitionVersion};
use crate::directory::which;
use crate::submit::{NewInstance, Origin};
use crate::{Applied, Book, BookError, Effect};

/// Who asks for a start, as the API's token check saw them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Starter {
    /// The API checks no tokens (`serve --insecure-no-auth`): whoever reaches it may do
    /// anything, so a creator role is not checked (there is nobody to check it against).
    Anyone,
    /// A token the API checked, and the organisation user it speaks for, if it names one.
    Token {
        /// The token's user (`api-tokens create --user U`).
        user: Option<UserId>,
    },
}

/// An operator starts an instance of a deployed definition (`Input::Start`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The definition's name.
    pub name: DefinitionName,
    /// The version to start; none: the latest.
    pub version: Option<DefinitionVersion>,
    /// The user told when it starts, when an activity of it fails and when it ends; none:
    /// the starter's user, when the organisation directory has them.
    pub responsible: Option<UserId>,
    /// Who asks.
    pub starter: Starter,
    /// The inputs given (`--data name=value`), checked against the definition's inputs.
    pub inputs: GivenInputs,
}

/// A start by name done: what to send, the new instance, and the version it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct StartedByName {
    /// Messages to send (the deployments).
    pub effects: Vec<Effect>,
    /// The new instance.
    pub instance: InstanceId,
    /// The deployed version it runs.
    pub definition: DefinitionRef,
}

impl Book {
    /// Starts an instance of a deployed definition (`Input::Start`).
    pub(crate) fn start(&mut self, now_ms: u64, start: Start) -> Result<Applied, BookError> {
        let started = self.start_by_name(now_ms, start)?;
        Ok(Applied {
            effects: started.effects,
            instance: Some(started.instance),
        })
    }

    /// Starts an instance of a deployed definition (see [`Start`]): the new instance and the
    /// version it runs, as types (the daemon answers with both).
    pub fn start_by_name(&mut self, now_ms: u64, start: Start) -> Result<StartedByName, BookError> {
        let Start {
            name,
            version,
            responsible,
            starter,
            inputs,
        } = start;
        let (at, deployed) = self
            .registry
            .startable(&name, version)
            .ok_or_else(|| self.not_startable(&name, version))?;
        let def = deployed.definition.clone();
        let needed = self.needed_roles(&at, &def);
        let creator = self.may_start(&format!("definition {at}"), &needed, &starter)?;
        let (effects, instance) = self.instantiate(
            now_ms,
            NewInstance {
                def,
                source: at.name.to_string(),
                origin: Origin::Deployed(at.clone()),
                with: StartWith {
                    responsible: responsible.or(creator),
                    inputs,
                },
            },
        )?;
        Ok(StartedByName {
            effects,
            instance,
            definition: at,
        })
    }

    /// The creator roles a start of `def` (version `at`) needs: its own `<creatorRole>`, and
    /// the latest version's, which governs every start of the name (so a role added in a new
    /// version closes the older ones too).
    fn needed_roles(&self, at: &DefinitionRef, def: &WorkflowDefinition) -> Vec<Needed> {
        let mut needed = Needed::own(def);
        let latest = self.registry.startable(&at.name, None);
        if let Some((latest, deployed)) = latest
            && let Some(role) = &deployed.definition.creator_role
            && def.creator_role.as_ref() != Some(role)
        {
            needed.push(Needed {
                role: role.clone(),
                whose: format!(
                    "the <creatorRole> of its latest version {}, which every start of {} needs",
                    latest.version, at.name
                ),
            });
        }
        needed
    }

    /// Whether `starter` may start `what`, which needs the `needed` creator roles: the
    /// token's user must hold each in the organisation directory (with no token check,
    /// nobody is checked). The starter's user when the directory has them: the responsible
    /// user unless another is given.
    pub(crate) fn may_start(
        &self,
        what: &str,
        needed: &[Needed],
        starter: &Starter,
    ) -> Result<Option<UserId>, BookError> {
        let user = match starter {
            Starter::Anyone => None,
            Starter::Token { user } => user.as_ref(),
        };
        let dir = &self.directory;
        let known = user.filter(|u| dir.user(u.as_str()).is_some()).cloned();
        let Some(first) = needed.first() else {
            return Ok(known);
        };
        let Starter::Token { .. } = starter else {
            return Ok(None);
        };
        let Some(u) = user else {
            return Err(BookError::NotCreator(format!(
                "{what} is started only by members of role {} ({}), and this token speaks for \
                 no user: start it with a token made for a user who holds the role \
                 (`mobiwf-controller api-tokens create --role operator --user USER`)",
                first.role, first.whose
            )));
        };
        let Some(member) = dir.user(u.as_str()) else {
            return Err(BookError::NotCreator(format!(
                "user {u} may not start {what}: it needs role {} ({}), and {u} is not in {}",
                first.role,
                first.whose,
                which(dir)
            )));
        };
        for n in needed {
            if !member.roles.iter().any(|g| g.role == n.role) {
                return Err(BookError::NotCreator(format!(
                    "user {u} may not start {what}: it needs role {} ({}), which {u} does not \
                     hold in {}",
                    n.role,
                    n.whose,
                    which(dir)
                )));
            }
        }
        Ok(known)
    }
}

/// A creator role a start needs, and whose role it is (for the refusal's words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Needed {
    pub(crate) role: RoleId,
    pub(crate) whose: String,
}

impl Needed {
    /// The role `def` names itself (`<creatorRole>`), if it names one.
    pub(crate) fn own(def: &WorkflowDefinition) -> Vec<Needed> {
        def.creator_role
            .iter()
            .map(|role| Needed {
                role: role.clone(),
                whose: "its <creatorRole>".to_owned(),
            })
            .collect()
    }
}
