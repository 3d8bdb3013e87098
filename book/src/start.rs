//! Starting an instance of a deployed definition by name (`start NAME`): the version asked for
//! (the latest by default), checked against the definition's creator role, then the same
//! submission as `submit` ([`Book::instantiate`]) with the registry's parsed definition:
//! nothing is parsed, and the instance stores the name and version, not the document.

use mobiwf_proto::GivenInputs;
use mobiwf_xml_schema::{DefinitionName, UserId, WorkflowDefinition};

use crate::StartWith;
use crate::definitions::{DefinitionRef, DefinitionVersion};
use crate::directory::which;
use crate::submit::{NewInstance, Origin};
use crate::{Applied, Book, BookError};

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

impl Book {
    /// Starts an instance of a deployed definition (see [`Start`]).
    pub(crate) fn start(&mut self, now_ms: u64, start: Start) -> Result<Applied, BookError> {
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
        let creator = self.may_start(&at, &def, &starter)?;
        self.instantiate(
            now_ms,
            NewInstance {
                def,
                source: at.name.to_string(),
                origin: Origin::Deployed(at),
                with: StartWith {
                    responsible: responsible.or(creator),
                    inputs,
                },
            },
        )
    }

    /// Whether `starter` may start `def` (version `at`): anyone may, unless it names a creator
    /// role (`<creatorRole>`), which the token's user must hold in the organisation
    /// directory. The starter's user when the directory has them: the responsible user
    /// unless another is given.
    fn may_start(
        &self,
        at: &DefinitionRef,
        def: &WorkflowDefinition,
        starter: &Starter,
    ) -> Result<Option<UserId>, BookError> {
        let user = match starter {
            Starter::Anyone => None,
            Starter::Token { user } => user.as_ref(),
        };
        let dir = &self.directory;
        let known = user.filter(|u| dir.user(u.as_str()).is_some()).cloned();
        let Some(role) = &def.creator_role else {
            return Ok(known);
        };
        match (starter, user) {
            (Starter::Anyone, _) => Ok(None),
            (Starter::Token { .. }, None) => Err(BookError::NotCreator(format!(
                "definition {at} is started only by members of role {role} (its \
                 <creatorRole>), and this token speaks for no user: start it with a token made \
                 for a user who holds the role (`mobiwf-controller api-tokens create --role \
                 operator --user USER`)"
            ))),
            (Starter::Token { .. }, Some(u)) => {
                let holds = dir
                    .user(u.as_str())
                    .is_some_and(|x| x.roles.iter().any(|g| &g.role == role));
                if holds {
                    Ok(known)
                } else {
                    Err(BookError::NotCreator(format!(
                        "user {u} may not start definition {at}: it needs role {role} (its \
                         <creatorRole>), which {u} does not hold in {}",
                        which(dir)
                    )))
                }
            }
        }
    }
}
